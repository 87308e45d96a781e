import Foundation
import SkiffDomain
import SkiffListings
import Testing

@Suite("Listing lifecycle")
struct ListingLifecycleTests {
    static let created = Date(millisecondsSince1970: 1_767_225_600_000)
    /// A time with sub-millisecond digits, to see the decisions round it.
    static let now = Date(timeIntervalSince1970: 1_767_229_200.123_456)

    static func listing(
        id: String = "lst_1",
        status: ListingStatus = .active,
        _ configure: (inout ListingFields) -> Void = { _ in }
    ) -> Listing {
        var fields = ListingFields(
            title: "Desk lamp",
            priceCents: 1500,
            category: .furniture,
            condition: .new,
            location: ListingLocation(zipCode: "37235"),
            imageIDs: ["img_a", "img_b"]
        )
        configure(&fields)
        return Listing(id: id, sellerID: "seller", fields: fields, status: status, createdAt: created)
    }

    static let ownImages = ["img_a": "seller", "img_b": "seller"]

    // MARK: Create

    @Test("A new listing is created with its dates rounded and its request id to remember")
    func createNew() throws {
        var asked = Self.listing()
        asked.createdAt = Self.now
        asked.updatedAt = Self.now
        let decision = try ListingLifecycle.create(
            asked,
            requestID: "req-1",
            earlierRequest: nil,
            imageOwners: Self.ownImages,
            listingIDTaken: false
        )
        let request = ListingLifecycle.RequestRecord(
            sellerID: "seller",
            requestID: "req-1",
            listingID: "lst_1",
            fingerprint: asked.fields.fingerprint
        )
        #expect(decision == .create(asked.rounded, request: request))
        #expect(asked.rounded.createdAt != Self.now)
    }

    @Test("A listing worked out before the transaction (NewListing) is decided the same way")
    func createPrepared() throws {
        var asked = Self.listing()
        asked.createdAt = Self.now
        let new = ListingLifecycle.NewListing(asked)
        #expect(new.listing == asked.rounded)
        #expect(new.fingerprint == asked.fields.fingerprint)
        for earlier in [nil, ListingLifecycle.EarlierRequest(fingerprint: new.fingerprint, listing: asked.rounded)] {
            let direct = try ListingLifecycle.create(
                asked,
                requestID: "req-1",
                earlierRequest: earlier,
                imageOwners: Self.ownImages,
                listingIDTaken: false
            )
            let prepared = try ListingLifecycle.create(
                new,
                requestID: "req-1",
                earlierRequest: earlier,
                imageOwners: Self.ownImages,
                listingIDTaken: false
            )
            #expect(prepared == direct)
        }
        #expect(throws: DomainError.self) {
            try ListingLifecycle.create(
                new,
                requestID: "req-1",
                earlierRequest: ListingLifecycle.EarlierRequest(fingerprint: "other", listing: asked.rounded),
                imageOwners: Self.ownImages,
                listingIDTaken: false
            )
        }
    }

    @Test("A fingerprint is the SHA-256 of the fields' canonical text; one kept as that text still recognises a retry")
    func fingerprints() throws {
        let first = Self.listing(id: "lst_first")
        var other = first.fields
        other.priceCents += 1
        let fingerprint = first.fields.fingerprint
        #expect(fingerprint.hasPrefix(ListingFields.fingerprintPrefix) && fingerprint.utf8.count == 71)
        #expect(fingerprint.dropFirst(7).allSatisfy { "0123456789abcdef".contains($0) })
        #expect(fingerprint == Self.listing(id: "lst_second").fields.fingerprint)
        #expect(fingerprint != other.fingerprint)
        // The text is bounded by the fields', not stored: a long description makes the same length.
        var long = first.fields
        long.description = String(repeating: "x", count: 5_000)
        #expect(long.fingerprint.utf8.count == 71)
        #expect(first.fields.canonicalText.hasPrefix("{") && first.fields.canonicalText.contains("\"title\""))
        // A request remembered before fingerprints were hashed (the canonical text itself).
        let legacy = ListingLifecycle.EarlierRequest(fingerprint: first.fields.canonicalText, listing: first)
        let retry = try ListingLifecycle.create(
            Self.listing(id: "lst_second"),
            requestID: "req-1",
            earlierRequest: legacy,
            imageOwners: [:],
            listingIDTaken: false
        )
        #expect(retry == .retry(first))
        var changed = Self.listing(id: "lst_second")
        changed.fields = other
        #expect(throws: ListingsStoreError.requestIDReused) {
            try ListingLifecycle.create(
                changed,
                requestID: "req-1",
                earlierRequest: legacy,
                imageOwners: [:],
                listingIDTaken: false
            )
        }
        // A hashed fingerprint is never compared with the text, nor the text with the hash.
        #expect(throws: ListingsStoreError.requestIDReused) {
            try ListingLifecycle.create(
                Self.listing(id: "lst_second"),
                requestID: "req-1",
                earlierRequest: .init(
                    fingerprint: ListingFields.fingerprintPrefix + first.fields.canonicalText,
                    listing: first
                ),
                imageOwners: [:],
                listingIDTaken: false
            )
        }
    }

    @Test("Without a request id there is nothing to remember")
    func createWithoutRequestID() throws {
        let decision = try ListingLifecycle.create(
            Self.listing(),
            requestID: nil,
            earlierRequest: nil,
            imageOwners: Self.ownImages,
            listingIDTaken: false
        )
        #expect(decision == .create(Self.listing(), request: nil))
    }

    @Test("A retry with the same fields returns the listing created first, before any other check")
    func createRetry() throws {
        let first = Self.listing(id: "lst_first")
        let decision = try ListingLifecycle.create(
            Self.listing(id: "lst_second"),
            requestID: "req-1",
            earlierRequest: .init(fingerprint: first.fields.fingerprint, listing: first),
            imageOwners: [:],
            listingIDTaken: true
        )
        #expect(decision == .retry(first))
    }

    @Test(
        "A reused request id is refused: other fields, or its listing gone",
        arguments: [
            ListingLifecycle.EarlierRequest(fingerprint: "other fields", listing: Self.listing()),
            ListingLifecycle.EarlierRequest(fingerprint: Self.listing().fields.fingerprint, listing: nil),
        ]
    )
    func createReusedRequestID(earlier: ListingLifecycle.EarlierRequest) {
        #expect(throws: ListingsStoreError.requestIDReused) {
            try ListingLifecycle.create(
                Self.listing(),
                requestID: "req-1",
                earlierRequest: earlier,
                imageOwners: Self.ownImages,
                listingIDTaken: false
            )
        }
    }

    @Test("Images are checked in order: the first missing or foreign one is named, before the id")
    func createImageChecks() {
        #expect(throws: ListingsStoreError.imageNotFound("img_a")) {
            try ListingLifecycle.create(
                Self.listing(),
                requestID: nil,
                earlierRequest: nil,
                imageOwners: ["img_b": "someone else"],
                listingIDTaken: true
            )
        }
        #expect(throws: ListingsStoreError.imageNotOwned("img_a")) {
            try ListingLifecycle.create(
                Self.listing(),
                requestID: nil,
                earlierRequest: nil,
                imageOwners: ["img_a": "someone else"],
                listingIDTaken: true
            )
        }
        #expect(throws: ListingsStoreError.imageNotFound("img_b")) {
            try ListingLifecycle.create(
                Self.listing(),
                requestID: nil,
                earlierRequest: nil,
                imageOwners: ["img_a": "seller"],
                listingIDTaken: true
            )
        }
    }

    @Test("A taken listing id is refused")
    func createIDTaken() {
        #expect(throws: ListingsStoreError.listingIDTaken) {
            try ListingLifecycle.create(
                Self.listing(),
                requestID: "req-1",
                earlierRequest: nil,
                imageOwners: Self.ownImages,
                listingIDTaken: true
            )
        }
    }

    // MARK: Update

    static func changes(_ configure: (inout ListingChanges) -> Void) -> ListingChanges {
        var changes = ListingChanges()
        configure(&changes)
        return changes
    }

    @Test("A price change is saved with a price_changed event carrying both prices")
    func updatePrice() throws {
        let change = try ListingLifecycle.update(
            Self.listing(),
            sellerID: "seller",
            changes: Self.changes { $0.priceCents = 900 },
            imageOwners: [:],
            now: Self.now
        )
        #expect(change.listing.priceCents == 900)
        #expect(change.listing.updatedAt == Self.now.roundedToMilliseconds)
        let event = try #require(change.event)
        #expect(event.kind == .priceChanged)
        #expect(event.oldPriceCents == 1500)
        #expect(event.newPriceCents == 900)
        #expect(event.changedAt == Self.now.roundedToMilliseconds)
        #expect(event.numbered(7).sequence == 7)
    }

    @Test("Another change is saved with an updated event")
    func updateOther() throws {
        let change = try ListingLifecycle.update(
            Self.listing(),
            sellerID: "seller",
            changes: Self.changes {
                $0.title = "Floor lamp"
                $0.imageIDs = ["img_c"]
            },
            imageOwners: ["img_c": "seller"],
            now: Self.now
        )
        #expect(change.listing.title == "Floor lamp")
        #expect(change.listing.imageIDs == ["img_c"])
        #expect(change.event?.kind == .updated)
        #expect(change.event?.title == "Floor lamp")
        #expect(change.event?.oldPriceCents == 1500)
    }

    @Test("Changes that change nothing give no event and keep the listing as stored")
    func updateNoOp() throws {
        let change = try ListingLifecycle.update(
            Self.listing(),
            sellerID: "seller",
            changes: Self.changes { $0.priceCents = 1500 },
            imageOwners: [:],
            now: Self.now
        )
        #expect(change == ListingLifecycle.Change(listing: Self.listing(), event: nil))
    }

    @Test("Update checks existence, then seller, then status, then images")
    func updateErrors() {
        let withImage = Self.changes { $0.imageIDs = ["img_x"] }
        #expect(throws: ListingsStoreError.listingNotFound) {
            try ListingLifecycle.update(nil, sellerID: "seller", changes: withImage, imageOwners: [:], now: Self.now)
        }
        #expect(throws: ListingsStoreError.notSeller) {
            try ListingLifecycle.update(
                Self.listing(status: .sold),
                sellerID: "intruder",
                changes: withImage,
                imageOwners: [:],
                now: Self.now
            )
        }
        #expect(throws: ListingsStoreError.notActive) {
            try ListingLifecycle.update(
                Self.listing(status: .withdrawn),
                sellerID: "seller",
                changes: withImage,
                imageOwners: [:],
                now: Self.now
            )
        }
        #expect(throws: ListingsStoreError.imageNotFound("img_x")) {
            try ListingLifecycle.update(
                Self.listing(),
                sellerID: "seller",
                changes: withImage,
                imageOwners: [:],
                now: Self.now
            )
        }
        #expect(throws: ListingsStoreError.imageNotOwned("img_x")) {
            try ListingLifecycle.update(
                Self.listing(),
                sellerID: "seller",
                changes: withImage,
                imageOwners: ["img_x": "intruder"],
                now: Self.now
            )
        }
    }

    // MARK: Status

    @Test(
        "An active listing moves to its final status once, with the matching event",
        arguments: [(ListingStatus.sold, ListingChangeKind.sold), (.withdrawn, .withdrawn)]
    )
    func setStatusFromActive(status: ListingStatus, kind: ListingChangeKind) throws {
        for actor in [StatusActor.seller("seller"), .system] {
            let change = try ListingLifecycle.setStatus(Self.listing(), to: status, by: actor, now: Self.now)
            #expect(change.listing.status == status)
            #expect(change.listing.updatedAt == Self.now.roundedToMilliseconds)
            #expect(change.event?.kind == kind)
            #expect(change.event?.oldPriceCents == 1500)
            #expect(change.event?.newPriceCents == 1500)
        }
    }

    @Test("Asking again for the status a listing has changes nothing", arguments: [ListingStatus.sold, .withdrawn])
    func setStatusAgain(status: ListingStatus) throws {
        let change = try ListingLifecycle.setStatus(
            Self.listing(status: status),
            to: status,
            by: .seller("seller"),
            now: Self.now
        )
        #expect(change == ListingLifecycle.Change(listing: Self.listing(status: status), event: nil))
    }

    @Test("The other final status, a missing listing and another seller are refused")
    func setStatusErrors() {
        #expect(throws: ListingsStoreError.alreadySold) {
            try ListingLifecycle.setStatus(Self.listing(status: .sold), to: .withdrawn, by: .system, now: Self.now)
        }
        #expect(throws: ListingsStoreError.alreadyWithdrawn) {
            try ListingLifecycle.setStatus(Self.listing(status: .withdrawn), to: .sold, by: .system, now: Self.now)
        }
        #expect(throws: ListingsStoreError.listingNotFound) {
            try ListingLifecycle.setStatus(nil, to: .sold, by: .system, now: Self.now)
        }
        // Ownership comes before the status: another seller is refused even when nothing would change.
        #expect(throws: ListingsStoreError.notSeller) {
            try ListingLifecycle.setStatus(Self.listing(status: .sold), to: .sold, by: .seller("x"), now: Self.now)
        }
    }

    // MARK: Images

    @Test("An image is stored with its upload time rounded, unless its id is taken")
    func putImage() throws {
        let image = StoredImage(
            id: "img_a",
            ownerID: "seller",
            contentType: .png,
            bytes: Data([1]),
            createdAt: Self.now
        )
        let stored = try ListingLifecycle.putImage(image, imageIDTaken: false)
        #expect(stored.createdAt == Self.now.roundedToMilliseconds)
        #expect(stored.id == image.id && stored.bytes == image.bytes)
        #expect(throws: ListingsStoreError.imageIDTaken) {
            try ListingLifecycle.putImage(image, imageIDTaken: true)
        }
    }

    // MARK: Saved listings

    @Test("Saving an active listing under the limit saves it now")
    func saveNew() throws {
        let decision = try ListingLifecycle.save(Self.listing(), savedAt: nil, savedCount: 4, limit: 5, now: Self.now)
        #expect(decision == .save(SavedListing(listing: Self.listing(), savedAt: Self.now.roundedToMilliseconds)))
    }

    @Test("Saving again keeps the first save, even past the limit or after the listing ended")
    func saveAgain() throws {
        let first = Self.created
        let decision = try ListingLifecycle.save(
            Self.listing(status: .sold),
            savedAt: first,
            savedCount: 5,
            limit: 5,
            now: Self.now
        )
        #expect(decision == .kept(SavedListing(listing: Self.listing(status: .sold), savedAt: first)))
    }

    @Test("Saving checks existence, then status, then the limit")
    func saveErrors() {
        #expect(throws: ListingsStoreError.listingNotFound) {
            try ListingLifecycle.save(nil, savedAt: Self.created, savedCount: 0, limit: 5, now: Self.now)
        }
        #expect(throws: ListingsStoreError.notActive) {
            try ListingLifecycle.save(Self.listing(status: .sold), savedAt: nil, savedCount: 5, limit: 5, now: Self.now)
        }
        #expect(throws: ListingsStoreError.savedLimit) {
            try ListingLifecycle.save(Self.listing(), savedAt: nil, savedCount: 5, limit: 5, now: Self.now)
        }
    }
}

@Suite("Listing comment rules")
struct ListingCommentRulesTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static func listing(anonymous: Bool = false, status: ListingStatus = .active) -> Listing {
        var listing = Listing(
            id: "lst_1",
            sellerID: "usr_s",
            fields: ListingFields(
                title: "Lamp",
                description: "",
                priceCents: 100,
                category: .furniture,
                condition: .new,
                tags: [],
                madeOnCampus: false,
                anonymous: anonymous,
                location: ListingLocation(zipCode: "37235", point: nil),
                imageIDs: []
            ),
            createdAt: now
        )
        listing.status = status
        return listing
    }

    static func comment(by author: String, replyTo: String? = nil) -> ListingComment {
        ListingComment(
            id: EntityID.make(.listingComment),
            listingID: "lst_1",
            authorID: author,
            replyToID: replyTo,
            text: "Hi",
            createdAt: now
        )
    }

    @Test("Notification excerpts: whole characters, at most 200 of them and 800 bytes")
    func excerpt() {
        #expect(ListingLifecycle.commentExcerpt("Short") == "Short")
        let ascii = ListingLifecycle.commentExcerpt(String(repeating: "a", count: 1_000))
        #expect(ascii.count == 200)
        let flags = ListingLifecycle.commentExcerpt(String(repeating: "🇺🇸", count: 300))  // 8 bytes each
        #expect(flags.utf8.count == 800 && flags.count == 100)
        let family = ListingLifecycle.commentExcerpt(String(repeating: "👨‍👩‍👧‍👦", count: 100))  // 25 bytes each
        #expect(family.utf8.count <= 800 && family.count == 32)
    }

    @Test("Text: trimmed, 1–1000 characters")
    func text() throws {
        #expect(try ListingLifecycle.validateCommentText("  Hi \n") == "Hi")
        #expect(throws: DomainError.self) { _ = try ListingLifecycle.validateCommentText(" \n ") }
        #expect(throws: Never.self) {
            _ = try ListingLifecycle.validateCommentText(String(repeating: "é", count: 1_000))
        }
        #expect(throws: DomainError.self) {
            _ = try ListingLifecycle.validateCommentText(String(repeating: "é", count: 1_001))
        }
    }

    @Test("Who is told: the seller of others' comments; the asker of the seller's reply, unnamed if anonymous")
    func notices() throws {
        let question = Self.comment(by: "usr_a")
        let open = Self.listing()
        #expect(
            ListingLifecycle.commentNotices(question, listing: open, parent: nil)
                == [.init(userID: "usr_s", kind: .commented, showsAuthor: true)]
        )
        #expect(ListingLifecycle.commentNotices(Self.comment(by: "usr_s"), listing: open, parent: nil).isEmpty)
        let reply = Self.comment(by: "usr_s", replyTo: question.id)
        #expect(
            ListingLifecycle.commentNotices(reply, listing: Self.listing(anonymous: true), parent: question)
                == [.init(userID: "usr_a", kind: .replied, showsAuthor: false)]
        )
        // A reply to a deleted comment, or to the seller's own, tells nobody.
        #expect(ListingLifecycle.commentNotices(reply, listing: open, parent: nil).isEmpty)
        let own = Self.comment(by: "usr_s")
        #expect(
            ListingLifecycle.commentNotices(Self.comment(by: "usr_s", replyTo: own.id), listing: open, parent: own)
                .isEmpty
        )
    }

    @Test("Order of checks: listing, active, reply target, seller, not a reply to a reply, the cap, the id")
    func order() throws {
        let question = Self.comment(by: "usr_a")
        func add(
            _ comment: ListingComment,
            listing: Listing? = Self.listing(),
            parent: ListingComment? = nil,
            count: Int = 0,
            taken: Bool = false
        ) throws {
            _ = try ListingLifecycle.addComment(
                comment,
                listing: listing,
                parent: parent,
                commentCount: count,
                latestCommentAt: nil,
                commentIDTaken: taken
            )
        }
        #expect(throws: ListingsStoreError.listingNotFound) { try add(question, listing: nil) }
        #expect(throws: ListingsStoreError.listingNotFound) {
            try add(question, listing: Self.listing(status: .withdrawn))
        }
        #expect(throws: ListingsStoreError.commentsClosed) {
            try add(Self.comment(by: "usr_s"), listing: Self.listing(status: .withdrawn))
        }
        #expect(throws: ListingsStoreError.commentsClosed) {
            try add(question, listing: Self.listing(status: .sold), count: 999)
        }
        #expect(throws: ListingsStoreError.replyTargetNotFound) { try add(Self.comment(by: "usr_b", replyTo: "lcm_x")) }
        #expect(throws: ListingsStoreError.notSellerReply) {
            try add(Self.comment(by: "usr_b", replyTo: question.id), parent: question)
        }
        let reply = Self.comment(by: "usr_s", replyTo: question.id)
        #expect(throws: ListingsStoreError.replyToReply) {
            try add(Self.comment(by: "usr_s", replyTo: reply.id), parent: reply)
        }
        #expect(throws: ListingsStoreError.tooManyComments) { try add(question, count: 500) }
        #expect(throws: ListingsStoreError.commentIDTaken) { try add(question, count: 499, taken: true) }
        #expect(throws: Never.self) { try add(reply, parent: question, count: 499) }
    }
}
