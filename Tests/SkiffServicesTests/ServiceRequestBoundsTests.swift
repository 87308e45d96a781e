import SkiffAPI
import SkiffBids
import SkiffBucketList
import SkiffChat
import SkiffCore
import SkiffDomain
import SkiffListings
import SkiffLostFound
import SwiftProtobuf
import Testing

/// The request bounds of Listings, Bids, Chat, BucketList and LostFound, and the shared ``RequestBounds``:
/// pure checks, without a server.
@Suite("Service request bounds")
struct ServiceRequestBoundsTests {
    static func message(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as DomainError {
            #expect(error.code == .invalidArgument)
            return error.message
        } catch {
            Issue.record("expected a DomainError, got \(error)")
            return nil
        }
    }

    @Test("RequestBounds: bytes, counts, pages and masks, with the field and limit in the message")
    func shared() {
        #expect(Self.message { try RequestBounds.check(String(repeating: "é", count: 64), "name", atMost: 128) } == nil)
        #expect(
            Self.message { try RequestBounds.check(String(repeating: "é", count: 65), "name", atMost: 128) }
                == "name is too long: send at most 128 bytes (UTF-8)."
        )
        #expect(Self.message { try RequestBounds.checkID("", "user_id") } == "user_id is empty.")
        #expect(
            Self.message { try RequestBounds.checkCount(17, "filter.statuses", atMost: 16) }
                == "filter.statuses has 17 values: send at most 16."
        )
        #expect(
            Self.message { try RequestBounds.checkEach(["a", ""], "tags", count: 2, bytes: 4, allowEmpty: false) }
                == "tags contains an empty value: remove it."
        )
        #expect(
            Self.message { try RequestBounds.checkEach(["a", "abcde"], "tags", count: 2, bytes: 4) }
                == "each of tags is too long: send at most 4 bytes (UTF-8)."
        )
        #expect(
            Self.message { try RequestBounds.checkPage(size: -1, token: "") }
                == "page_size must not be negative: send 0 for the default (20)."
        )
        #expect(
            Self.message { try RequestBounds.checkPage(size: 0, token: String(repeating: "t", count: 1_025)) }
                == "page_token is too long: send at most 1024 bytes (UTF-8)."
        )
        #expect(
            Self.message { try RequestBounds.checkUpdateMask(["a", "b", "c"], atMost: 2) }
                == "update_mask has 3 paths: name each changeable field at most once (at most 2)."
        )
    }

    @Test("Listings: listing fields, filter lists, upload metadata, tokens")
    func listings() {
        var listing = Skiff_Listings_V1_Listing()
        listing.tags = Array(repeating: "lamp", count: 32)
        #expect(
            Self.message {
                try ListingsRequestBounds.check(Skiff_Listings_V1_CreateListingRequest.with { $0.listing = listing })
            } == nil
        )
        listing.tags.append("lamp")
        #expect(
            Self.message {
                try ListingsRequestBounds.check(Skiff_Listings_V1_CreateListingRequest.with { $0.listing = listing })
            }
                == "listing.tags has 33 tags: send at most 32."
        )
        listing.tags = [String(repeating: "t", count: 129)]
        #expect(
            Self.message {
                try ListingsRequestBounds.check(
                    Skiff_Listings_V1_UpdateListingRequest.with {
                        $0.listing = listing
                        $0.updateMask.paths = ["tags"]
                    }
                )
            } == "each of listing.tags is too long: send at most 128 bytes (UTF-8)."
        )
        #expect(
            Self.message {
                try ListingsRequestBounds.check(
                    Skiff_Listings_V1_CreateListingRequest.with {
                        $0.listing.description_p = String(repeating: "d", count: 8_001)
                    }
                )
            } == "listing.description is too long: send at most 8000 bytes (UTF-8)."
        )
        #expect(
            Self.message {
                try ListingsRequestBounds.check(
                    Skiff_Listings_V1_SearchListingsRequest.with { $0.filter.tags = Array(repeating: "a", count: 20) }
                )
            } == nil
        )
        #expect(
            Self.message {
                try ListingsRequestBounds.check(
                    Skiff_Listings_V1_SearchListingsRequest.with { $0.filter.tags = Array(repeating: "a", count: 21) }
                )
            } == "filter.tags has 21 tags: send at most 20."
        )
        #expect(
            Self.message {
                try ListingsRequestBounds.check(
                    Skiff_Listings_V1_SearchListingsRequest.with {
                        $0.filter.near.centerZipCode = String(repeating: "1", count: 32)
                    }
                )
            } == nil
        )
        #expect(
            Self.message {
                try ListingsRequestBounds.check(
                    Skiff_Listings_V1_SearchListingsRequest.with {
                        $0.filter.near.centerZipCode = String(repeating: "1", count: 33)
                    }
                )
            } == "filter.near.center_zip_code is too long: send at most 32 bytes (UTF-8)."
        )
        #expect(
            Self.message {
                try ListingsRequestBounds.check(
                    Skiff_Listings_V1_UploadImageRequest.with {
                        $0.metadata.filename = String(repeating: "f", count: 1_021)
                    }
                )
            } == "metadata.filename is too long: send at most 1020 bytes (UTF-8)."
        )
        #expect(
            Self.message {
                try ListingsRequestBounds.check(
                    Skiff_Listings_V1_WatchSavedListingsRequest.with {
                        $0.resumeToken = String(repeating: "r", count: 1_025)
                    }
                )
            } == "resume_token is too long: send at most 1024 bytes (UTF-8)."
        )
    }

    @Test("ListingRules.validateTags: duplicates folded in one pass, 10 distinct kept")
    func validateTags() throws {
        let tags = (0..<32).map { $0 % 2 == 0 ? "Tag\($0 % 10)" : "  tag\($0 % 10)  " }
        #expect(try ListingRules.validateTags(tags) == (0..<10).map { "tag\($0)" })
        #expect(throws: DomainError.self) { try ListingRules.validateTags((0..<11).map { "tag\($0)" }) }
        #expect(try BucketListRules.validateTags(["Park", " park ", "PARK", "lake"]) == ["park", "lake"])
    }

    @Test("Bids, Chat, BucketList and LostFound: ids, texts, lists and notifications")
    func otherServices() {
        #expect(
            Self.message {
                try BidsRequestBounds.check(
                    Skiff_Bids_V1_PlaceBidRequest.with { $0.requestID = String(repeating: "r", count: 129) }
                )
            } == "request_id is too long: send at most 128 bytes (UTF-8)."
        )
        #expect(
            Self.message {
                try BidsRequestBounds.check(
                    Skiff_Bids_V1_ListMyBidsRequest.with { $0.states = Array(repeating: .pending, count: 17) }
                )
            } == "states has 17 values: send at most 16."
        )
        #expect(
            Self.message {
                try ChatRequestBounds.check(
                    Skiff_Chat_V1_ConnectRequest.with {
                        $0.requestID = "r1"
                        $0.sendMessage.text = String(repeating: "é", count: 8_001)
                    }
                )
            } == "text is too long: send at most 16000 bytes (UTF-8)."
        )
        #expect(
            Self.message {
                try ChatRequestBounds.check(
                    Skiff_Chat_V1_PublishNotificationsRequest.with {
                        $0.notifications = [.with { $0.listing.title = String(repeating: "t", count: 321) }]
                    }
                )
            } == "notifications.listing.title is too long: send at most 320 bytes (UTF-8)."
        )
        #expect(
            Self.message {
                try BucketListRequestBounds.check(
                    Skiff_Bucketlist_V1_CompleteBucketListEntryRequest.with {
                        $0.note = String(repeating: "n", count: 2_001)
                    }
                )
            } == "note is too long: send at most 2000 bytes (UTF-8)."
        )
        #expect(
            Self.message {
                try BucketListRequestBounds.check(
                    Skiff_Bucketlist_V1_UpdateBucketListRequest.with {
                        $0.bucketList.name = String(repeating: "n", count: 241)
                    }
                )
            } == "bucket_list.name is too long: send at most 240 bytes (UTF-8)."
        )
        #expect(
            Self.message {
                try LostFoundRequestBounds.check(
                    Skiff_Lostfound_V1_ReportItemRequest.with {
                        $0.item.contactInstructions = String(repeating: "c", count: 2_001)
                    }
                )
            } == "item.contact_instructions is too long: send at most 2000 bytes (UTF-8)."
        )
        #expect(
            Self.message {
                try LostFoundRequestBounds.check(
                    Skiff_Lostfound_V1_SearchItemsRequest.with {
                        $0.filter.categories = Array(repeating: .bags, count: 17)
                    }
                )
            } == "filter.categories has 17 values: send at most 16."
        )
    }

    @Test("LogText.bounded: at most 300 characters of an error's description, with its full size")
    func logText() {
        #expect(LogText.bounded("short") == "short")
        let long = String(repeating: "SELECT ", count: 100_000)
        let bounded = LogText.bounded(long)
        #expect(bounded.hasPrefix(String(long.prefix(300))))
        #expect(bounded.hasSuffix("… (700000 bytes)"))
        #expect(bounded.count < 330)
    }

    @Test("ApproximateLocation: cell centres within 0.8 km, fixed per cell; distances rounded to 0.5 km")
    func approximateLocation() throws {
        var farthest = 0.0
        for latitude in stride(from: -89.995, through: 89.995, by: 7.3) {
            for longitude in stride(from: -179.99, through: 179.99, by: 11.7) {
                let cell = ApproximateLocation.cellCenter(latitude: latitude, longitude: longitude)
                let shift = GreatCircle.distanceKm(
                    latitude1: latitude,
                    longitude1: longitude,
                    latitude2: cell.latitude,
                    longitude2: cell.longitude
                )
                farthest = max(farthest, shift)
                // Every point of a cell has the same centre.
                let again = ApproximateLocation.cellCenter(latitude: cell.latitude, longitude: cell.longitude)
                #expect(again.latitude == cell.latitude && again.longitude == cell.longitude)
                // The cell as a row and a column has that centre, bit for bit, and is among the cells a
                // range of longitudes around the point covers.
                let numbered = try #require(ApproximateLocation.cell(latitude: latitude, longitude: longitude))
                let center = ApproximateLocation.center(of: numbered)
                #expect(center.latitude == cell.latitude && center.longitude == cell.longitude)
                let around = max(-180, longitude - 0.05)...min(180, longitude + 0.05)
                #expect(ApproximateLocation.columns(row: numbered.row, longitude: around).contains(numbered.column))
            }
        }
        #expect(farthest < 0.8)
        #expect(farthest < ApproximateLocation.maximumShiftKm)
        #expect(ApproximateLocation.rounded(2.74) == 2.5)
        #expect(ApproximateLocation.rounded(2.76) == 3.0)
        #expect(ApproximateLocation.rounded(0.2) == 0)
        #expect(ApproximateLocation.cell(latitude: .nan, longitude: 0) == nil)
        #expect(ApproximateLocation.cell(latitude: 0, longitude: .infinity) == nil)
    }
}
