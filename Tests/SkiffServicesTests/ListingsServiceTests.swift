import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffDomain
import SkiffListings
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

typealias ListingsClient = Skiff_Listings_V1_Listings.Client

/// The Listings service through its generated typed client, over a real socket, on both storage backends.
@Suite("Listings end to end")
struct ListingsServiceTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<150_000).map { UInt8($0 % 251) }
    static let campus = (latitude: 36.1447, longitude: -86.8027)

    static func newListing(_ title: String, price: Int64 = 2500, images: [String] = []) -> Skiff_Listings_V1_Listing {
        .with {
            $0.title = title
            $0.description_p = "Barely used, pick up near the library"
            $0.priceCents = price
            $0.category = .furniture
            $0.condition = .lightlyUsed
            $0.tags = ["Dorm", "lamp"]
            $0.location.zipCode = "37235"
            $0.location.point = .with {
                $0.latitude = campus.latitude + 0.001
                $0.longitude = campus.longitude
            }
            $0.imageIds = images
        }
    }

    static func upload(
        _ client: ListingsClient,
        _ auth: Metadata,
        _ bytes: [UInt8]
    ) async throws
        -> Skiff_Listings_V1_ImageInfo
    {
        try await client.uploadImage(metadata: auth) { writer in
            try await writer.write(
                .with {
                    $0.metadata = .with {
                        $0.filename = "lamp.png"
                        $0.declaredContentType = "image/jpeg"
                    }
                }
            )
            var rest = bytes[...]
            while !rest.isEmpty {
                try await writer.write(.with { $0.chunk = Data(rest.prefix(60_000)) })
                rest = rest.dropFirst(60_000)
            }
        }.image
    }

    /// Two signed-in users: a seller and a buyer.
    static func users(
        _ app: Application,
        _ connection: ClientConnection
    ) async throws
        -> (seller: (id: String, auth: Metadata), buyer: (id: String, auth: Metadata))
    {
        let accounts = AccountsClient(transport: connection)
        let seller = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "sam@campus.edu", name: "Sam")
        let buyer = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "bo@campus.edu", name: "Bo")
        return (seller, buyer)
    }

    /// Posts listings (title, tags, description) in this order, a few milliseconds apart; their ids by title.
    static func post(
        _ inputs: [(String, [String], String)],
        _ client: ListingsClient,
        _ auth: Metadata
    ) async throws -> [String: String] {
        var ids: [String: String] = [:]
        for (title, tags, description) in inputs {
            var listing = Self.newListing(title)
            listing.tags = tags
            listing.description_p = description
            ids[title] = try await client.createListing(.with { $0.listing = listing }, metadata: auth).listing
                .listingID
            try await Task.sleep(for: .milliseconds(5))
        }
        return ids
    }

    /// The titles of every page of a search in relevance order for `query`, one listing a page (at most
    /// `limit` pages).
    static func relevanceTitles(
        _ client: ListingsClient,
        _ query: String,
        limit: Int,
        _ configure: (inout Skiff_Listings_V1_SearchListingsRequest) -> Void = { _ in }
    ) async throws -> [String] {
        var request = Skiff_Listings_V1_SearchListingsRequest.with {
            $0.query = query
            $0.sortOrder = .relevance
            $0.pageSize = 1
        }
        configure(&request)
        var titles: [String] = []
        while titles.count <= limit {
            let page = try await client.searchListings(request)
            titles += page.results.map(\.listing.title)
            guard !page.nextPageToken.isEmpty else { break }
            request.pageToken = page.nextPageToken
        }
        return titles
    }

    @Test("post with images → download → search → get → update → withdraw", arguments: Backend.allCases)
    func story(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let listings = ListingsClient(transport: connection)
            let (seller, buyer) = try await Self.users(app, connection)

            let image = try await Self.upload(listings, seller.auth, Self.png)
            #expect(image.contentType == "image/png")
            #expect(image.sizeBytes == Int64(Self.png.count))
            let parts = try await listings.downloadImage(.with { $0.imageID = image.imageID }) { response in
                try await response.messages.collect()
            }
            #expect(parts.first?.info == image)
            let chunks = parts.dropFirst().compactMap { part -> Data? in
                if case .chunk(let data) = part.data { return data } else { return nil }
            }
            #expect(chunks.allSatisfy { $0.count <= 64 * 1024 })
            #expect(chunks.reduce(Data(), +) == Data(Self.png))

            let created = try await listings.createListing(
                .with { $0.listing = Self.newListing("Desk Lamp", images: [image.imageID]) },
                metadata: seller.auth
            ).listing
            #expect(created.sellerID == seller.id)
            #expect(created.status == .active)
            #expect(created.tags == ["dorm", "lamp"])
            #expect(created.location.hasPoint)

            // Others see the zip code, not the exact point.
            let seen = try await listings.getListing(.with { $0.listingID = created.listingID }).listing
            #expect(seen.sellerID == seller.id)
            #expect(!seen.location.hasPoint)
            #expect(seen.location.zipCode == "37235")

            let found = try await listings.searchListings(
                .with {
                    $0.query = "desk LAM"
                    $0.filter.near = .with {
                        $0.center = .with {
                            $0.latitude = Self.campus.latitude
                            $0.longitude = Self.campus.longitude
                        }
                        $0.radiusKm = 5
                    }
                    $0.sortOrder = .distance
                }
            )
            #expect(found.results.map(\.listing.listingID) == [created.listingID])
            // A guest measures to the listing's grid cell (0.48 km away), rounded to 0.5 km.
            #expect(found.results.first?.distanceKm == 0.5)
            #expect(found.results.first?.listing.location.hasPoint == false)

            await expectStatus(.permissionDenied) {
                _ = try await listings.updateListing(
                    .with {
                        $0.listing.listingID = created.listingID
                        $0.listing.priceCents = 1
                        $0.updateMask.paths = ["price_cents"]
                    },
                    metadata: buyer.auth
                )
            }
            let updated = try await listings.updateListing(
                .with {
                    $0.listing.listingID = created.listingID
                    $0.listing.priceCents = 1900
                    $0.listing.title = "ignored: not in the mask"
                    $0.updateMask.paths = ["price_cents"]
                },
                metadata: seller.auth
            ).listing
            #expect(updated.priceCents == 1900)
            #expect(updated.title == "Desk Lamp")

            await expectStatus(.permissionDenied) {
                _ = try await listings.withdrawListing(.with { $0.listingID = created.listingID }, metadata: buyer.auth)
            }
            let withdrawn = try await listings.withdrawListing(
                .with { $0.listingID = created.listingID },
                metadata: seller.auth
            ).listing
            #expect(withdrawn.status == .withdrawn)
            _ = try await listings.withdrawListing(.with { $0.listingID = created.listingID }, metadata: seller.auth)
            await expectStatus(.failedPrecondition) {
                _ = try await listings.markSold(.with { $0.listingID = created.listingID }, metadata: seller.auth)
            }
            await expectStatus(.notFound) {
                _ = try await listings.getListing(.with { $0.listingID = created.listingID })
            }
            let own = try await listings.getListing(.with { $0.listingID = created.listingID }, metadata: seller.auth)
            #expect(own.listing.status == .withdrawn)
            #expect(try await listings.searchListings(.with { $0.query = "lamp" }).results.isEmpty)
            let mine = try await listings.listMyListings(.init(), metadata: seller.auth)
            #expect(mine.listings.map(\.listingID) == [created.listingID])
            #expect(
                try await listings.listMyListings(.with { $0.statuses = [.active] }, metadata: seller.auth).listings
                    .isEmpty
            )
        }
    }

    @Test(
        "relevance order as the README defines it (3 per title word, 2 per tag, 1 per description word, the last query word a prefix, ties newest first), paged one at a time",
        arguments: Backend.allCases
    )
    func relevanceOrder(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let listings = ListingsClient(transport: connection)
            let (seller, _) = try await Self.users(app, connection)
            // Title, tags, description; created in this order, a few milliseconds apart.
            let inputs: [(String, [String], String)] = [
                ("Lamp lamp", [], "Sturdy."),  // 3 + 3
                ("Desk", ["lamp"], "With a lamp"),  // 2 + 1
                ("Lamp", [], "Sturdy."),  // 3
                ("Chair", [], "Next to a lamp"),  // 1
                ("Lampshade", [], "Sturdy."),  // 3: "lamp" is the last word, so a prefix
                ("Sofa", [], "Sturdy."),  // no match
            ]
            _ = try await Self.post(inputs, listings, seller.auth)
            let titles = try await Self.relevanceTitles(listings, "lamp", limit: inputs.count)
            #expect(titles == ["Lamp lamp", "Lampshade", "Lamp", "Desk", "Chair"])
        }
    }

    @Test(
        "relevance counts a repeated query word each time it is written (stores read its words once)",
        arguments: Backend.allCases
    )
    func relevanceRepeatedWords(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let listings = ListingsClient(transport: connection)
            let (seller, _) = try await Self.users(app, connection)
            _ = try await Self.post(
                [
                    ("Desk", [], "lamp lamp lamp lamp"),  // "desk desk lamp": 3 + 3 + 4 = 10
                    ("Lamp lamp", [], "A desk"),  // 1 + 1 + 6 = 8, newer (were "desk" counted once: 7 and 7)
                    ("Sofa", [], "A lamp"),  // no "desk"
                ],
                listings,
                seller.auth
            )
            let titles = try await Self.relevanceTitles(listings, "desk desk lamp", limit: 3)
            #expect(titles == ["Desk", "Lamp lamp"])
            // The longest query of one word (39 times, 195 characters) answers like the word twice.
            let long = Array(repeating: "desk", count: 39).joined(separator: " ")
            #expect(try await Self.relevanceTitles(listings, long, limit: 3) == ["Desk", "Lamp lamp"])
        }
    }

    @Test(
        "relevance order for a word only one stored word begins with (SQLite walks its impact-ordered rows): points, then newest first, one per page, sold listings apart",
        arguments: Backend.allCases
    )
    func relevanceOrderOneWord(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let listings = ListingsClient(transport: connection)
            let (seller, _) = try await Self.users(app, connection)
            let inputs: [(String, [String], String)] = [
                ("Desk desk", [], "Oak."),  // 3 + 3
                ("Oak desk", ["desk"], "A desk"),  // 3 + 2 + 1, newer: first
                ("Desk", [], "Oak."),  // 3
                ("Chair", [], "By the desk"),  // 1
                ("Desk lamp", [], "Oak."),  // 3, newer than "Desk"
                ("Sofa", [], "Oak."),  // no match
                ("Sold desk", [], "Oak."),  // 3, but sold below
            ]
            let ids = try await Self.post(inputs, listings, seller.auth)
            _ = try await listings.markSold(
                .with { $0.listingID = ids["Sold desk"] ?? "" },
                metadata: seller.auth
            )
            let active = try await Self.relevanceTitles(listings, "des", limit: inputs.count)
            #expect(active == ["Oak desk", "Desk desk", "Desk lamp", "Desk", "Chair"])
            let sold = try await Self.relevanceTitles(listings, "des", limit: inputs.count) {
                $0.filter.statuses = [.sold]
            }
            #expect(sold == ["Sold desk"])
        }
    }

    @Test(
        "A circle over 600 listings in distance order: every listing in it once, nearest first then newest, on every page",
        arguments: Backend.allCases
    )
    func distanceOrderAtScale(_ backend: Backend) async throws {
        try await withApp(backend, configure: { $0.rateLimitScale = 0 }) { app, connection in
            let client = ListingsClient(transport: connection)
            let (seller, buyer) = try await Self.users(app, connection)
            // 600 listings on a 4 km square around campus (about 16 grid cells; more than any filter below keeps
            // few of, so distance order walks the circle's cells band by band), one in ten the searcher's own,
            // one in twelve posted with only a zip code (placed at its centroid).
            let created = try await withThrowingTaskGroup(of: [Skiff_Listings_V1_Listing].self) { group in
                for part in 0..<6 {
                    group.addTask {
                        var listings: [Skiff_Listings_V1_Listing] = []
                        for index in stride(from: part, to: 600, by: 6) {
                            var listing = Self.newListing("Lamp \(index)", price: Int64(index % 40) * 100)
                            if index % 12 == 5 {
                                listing.location = .with { $0.zipCode = index % 24 == 5 ? "37212" : "37203" }
                            } else {
                                let north = Double(index % 25) * 160 - 2_000
                                let east = Double(index / 25) * 170 - 2_000
                                listing.location.point.latitude = Self.campus.latitude + north / 111_195
                                listing.location.point.longitude =
                                    Self.campus.longitude + east / (111_195 * cos(Self.campus.latitude * .pi / 180))
                            }
                            let auth = index % 10 == 0 ? seller.auth : buyer.auth
                            let request = Skiff_Listings_V1_CreateListingRequest.with { $0.listing = listing }
                            listings.append(try await client.createListing(request, metadata: auth).listing)
                        }
                        return listings
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(created.count == 600)
            let center = (latitude: Self.campus.latitude + 0.004, longitude: Self.campus.longitude - 0.003)
            let radiusKm = 2.5
            // What the seller must be shown: exact distances to their own listings, cell distances to the others,
            // each at its point or its zip code's centroid.
            func expected(_ keep: (Skiff_Listings_V1_Listing) -> Bool) throws -> [String: Double] {
                var distances: [String: Double] = [:]
                for listing in created where keep(listing) {
                    let point =
                        listing.location.hasPoint
                        ? (listing.location.point.latitude, listing.location.point.longitude)
                        : try #require(ZipCentroids.shared.centroid(of: listing.location.zipCode)).pair
                    let km = ApproximateLocation.distance(
                        from: center,
                        to: point,
                        exact: listing.sellerID == seller.id
                    )
                    if km.measured <= radiusKm { distances[listing.listingID] = km.shown }
                }
                return distances
            }
            let everything = try expected { _ in true }
            #expect(everything.count > 300 && everything.count < 600)
            #expect(created.contains { !$0.location.hasPoint && everything[$0.listingID] != nil })
            let searches: [(Skiff_Listings_V1_SearchListingsRequest, [String: Double])] = [
                (Skiff_Listings_V1_SearchListingsRequest(), everything),
                (
                    .with {
                        $0.query = "lamp"
                        $0.filter.categories = [.furniture]
                        $0.filter.tags = ["dorm"]
                        $0.filter.minPriceCents = 1_000
                        $0.filter.maxPriceCents = 2_900
                    },
                    try expected { $0.priceCents >= 1_000 && $0.priceCents <= 2_900 }
                ),
            ]
            for (var request, expected) in searches {
                request.filter.near.center.latitude = center.latitude
                request.filter.near.center.longitude = center.longitude
                request.filter.near.radiusKm = radiusKm
                request.sortOrder = .distance
                request.pageSize = 37
                var results: [Skiff_Listings_V1_ListingSearchResult] = []
                repeat {
                    let page = try await client.searchListings(request, metadata: seller.auth)
                    #expect(page.results.count <= 37)
                    results += page.results
                    request.pageToken = page.nextPageToken
                } while !request.pageToken.isEmpty
                #expect(results.count == expected.count, "\(request.query)")
                #expect(Set(results.map(\.listing.listingID)) == Set(expected.keys), "\(request.query)")
                for result in results {
                    #expect(result.distanceKm == expected[result.listing.listingID], "\(result.listing.listingID)")
                }
                // Nearest first; at one distance, newest first, then the greater id.
                for (a, b) in zip(results, results.dropFirst()) {
                    let inOrder =
                        a.distanceKm != b.distanceKm
                        ? a.distanceKm < b.distanceKm
                        : a.listing.createdAt.date != b.listing.createdAt.date
                            ? a.listing.createdAt.date > b.listing.createdAt.date
                            : a.listing.listingID > b.listing.listingID
                    #expect(inOrder, "\(a.listing.listingID) before \(b.listing.listingID)")
                }
            }
            // The worst a walk of the cells can be asked: the widest circle the contract allows, every listing in
            // it, and a status none of them has (the circle alone keeps many, so the walk reads every cell). An
            // empty last page, and the connection carries on.
            let page = try await client.searchListings(
                .with {
                    $0.filter.statuses = [.sold]
                    $0.filter.near.center.latitude = center.latitude
                    $0.filter.near.center.longitude = center.longitude
                    $0.filter.near.radiusKm = 500
                    $0.sortOrder = .distance
                    $0.pageSize = 100
                },
                metadata: seller.auth
            )
            #expect(page.results.isEmpty && page.nextPageToken.isEmpty)
            #expect(try await client.searchListings(.with { $0.query = "lamp" }).results.count == 20)
        }
    }

    @Test("anonymous listings hide the seller from everyone but the seller", arguments: Backend.allCases)
    func anonymous(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let listings = ListingsClient(transport: connection)
            let (seller, buyer) = try await Self.users(app, connection)
            var input = Self.newListing("Secret santa gift")
            input.anonymous = true
            let created = try await listings.createListing(.with { $0.listing = input }, metadata: seller.auth).listing
            #expect(created.sellerID == seller.id)
            for auth in [Metadata(), buyer.auth] {
                #expect(
                    try await listings.getListing(.with { $0.listingID = created.listingID }, metadata: auth).listing
                        .sellerID == ""
                )
                let bySeller = try await listings.searchListings(
                    .with { $0.filter.sellerID = seller.id },
                    metadata: auth
                )
                #expect(bySeller.results.isEmpty)
                let byWord = try await listings.searchListings(.with { $0.query = "santa" }, metadata: auth)
                #expect(byWord.results.map(\.listing.sellerID) == [""])
            }
            let own = try await listings.searchListings(.with { $0.filter.sellerID = seller.id }, metadata: seller.auth)
            #expect(own.results.map(\.listing.listingID) == [created.listingID])
        }
    }
}

extension ListingsServiceTests {
    @Test("invalid input, missing sign-in and permissions fail with exact codes", arguments: Backend.allCases)
    func failures(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let listings = ListingsClient(transport: connection)
            let (seller, buyer) = try await Self.users(app, connection)
            func create(
                _ listing: Skiff_Listings_V1_Listing,
                _ auth: Metadata,
                request: String = ""
            ) async throws
                -> Skiff_Listings_V1_Listing
            {
                try await listings.createListing(
                    .with {
                        $0.listing = listing
                        $0.requestID = request
                    },
                    metadata: auth
                ).listing
            }
            await expectStatus(.unauthenticated) { _ = try await create(Self.newListing("Lamp"), [:]) }
            let bad: [(Skiff_Listings_V1_Listing) -> Skiff_Listings_V1_Listing] = [
                {
                    var l = $0
                    l.title = " "
                    return l
                },
                {
                    var l = $0
                    l.title = String(repeating: "x", count: 81)
                    return l
                },
                {
                    var l = $0
                    l.priceCents = -1
                    return l
                },
                {
                    var l = $0
                    l.category = .unspecified
                    return l
                },
                {
                    var l = $0
                    l.condition = .unspecified
                    return l
                },
                {
                    var l = $0
                    l.location.zipCode = ""
                    return l
                },
                {
                    var l = $0
                    l.tags = (0..<11).map { "t\($0)" }
                    return l
                },
                {
                    var l = $0
                    l.location.point.latitude = 95
                    return l
                },
            ]
            for change in bad {
                let error = await expectStatus(.invalidArgument) {
                    _ = try await create(change(Self.newListing("Lamp")), seller.auth)
                }
                #expect(error?.message.isEmpty == false)
            }
            await expectStatus(.notFound) {
                _ = try await create(Self.newListing("Lamp", images: ["img_nope"]), seller.auth)
            }
            let buyersImage = try await Self.upload(listings, buyer.auth, Array(Self.png.prefix(64)))
            await expectStatus(.permissionDenied) {
                _ = try await create(Self.newListing("Lamp", images: [buyersImage.imageID]), seller.auth)
            }
            let first = try await create(Self.newListing("Lamp"), seller.auth, request: "r-1")
            #expect(try await create(Self.newListing("Lamp"), seller.auth, request: "r-1").listingID == first.listingID)
            await expectStatus(.alreadyExists) {
                _ = try await create(Self.newListing("Other"), seller.auth, request: "r-1")
            }

            // Search and paging.
            let searches: [Skiff_Listings_V1_SearchListingsRequest] = [
                .with { $0.query = String(repeating: "q", count: 201) },
                .with {
                    $0.filter.minPriceCents = 10
                    $0.filter.maxPriceCents = 5
                },
                .with { $0.filter.minPriceCents = -1 },
                .with { $0.filter.near.radiusKm = -1 },
                .with { $0.filter.statuses = [.withdrawn] },
                .with { $0.sortOrder = .relevance },
                .with { $0.sortOrder = .distance },
                .with { $0.pageToken = "garbage" },
                .with { $0.pageSize = -1 },
            ]
            for search in searches {
                await expectStatus(.invalidArgument) { _ = try await listings.searchListings(search) }
            }
            // Forged tokens of the compact form (marker 0xA2, the list's kind, a cursor): containers nested
            // 300 deep, a length of 2^60, another list's kind, a cursor of the wrong shape; and a JSON one.
            func forged(_ kind: String, _ cursor: [UInt8]) -> String {
                Base64URL.encode([0xA2, UInt8(kind.utf8.count)] + Array(kind.utf8) + cursor)
            }
            let forgeries = [
                forged("listings.search", Array(repeating: [UInt8(8), 1], count: 300).flatMap { $0 } + [0]),
                forged("listings.search", [6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]),
                forged("bids.listing", [7, 0]),
                forged("listings.search", [7, 1, 1, 0x66, 3, 2]),
                Base64URL.encode(Array(#"{"k":"listings.search","v":1,"c":{"f":7}}"#.utf8)),
            ]
            for token in forgeries {
                await expectStatus(.invalidArgument, "page_token is not valid.") {
                    _ = try await listings.searchListings(.with { $0.pageToken = token })
                }
            }
            _ = try await listings.searchListings(.init())  // the connection carries on
            await expectStatus(.invalidArgument) { _ = try await listings.getListing(.init()) }
            await expectStatus(.notFound) { _ = try await listings.getListing(.with { $0.listingID = "lst_nope" }) }

            // Updates and status changes.
            func update(_ paths: [String], _ auth: Metadata) async throws {
                _ = try await listings.updateListing(
                    .with {
                        $0.listing.listingID = first.listingID
                        $0.listing.title = "New"
                        $0.updateMask.paths = paths
                    },
                    metadata: auth
                )
            }
            await expectStatus(.unauthenticated) { try await update(["title"], [:]) }
            await expectStatus(.invalidArgument) { try await update([], seller.auth) }
            await expectStatus(.invalidArgument) { try await update(["status"], seller.auth) }
            await expectStatus(.invalidArgument) { try await update(["category"], seller.auth) }
            await expectStatus(.permissionDenied) { try await update(["title"], buyer.auth) }
            await expectStatus(.permissionDenied) {
                _ = try await listings.markSold(.with { $0.listingID = first.listingID }, metadata: buyer.auth)
            }
            await expectStatus(.notFound) {
                _ = try await listings.markSold(.with { $0.listingID = "lst_nope" }, metadata: seller.auth)
            }
            _ = try await listings.markSold(.with { $0.listingID = first.listingID }, metadata: seller.auth)
            _ = try await listings.markSold(.with { $0.listingID = first.listingID }, metadata: seller.auth)
            await expectStatus(.failedPrecondition) { try await update(["title"], seller.auth) }
            await expectStatus(.failedPrecondition) {
                _ = try await listings.withdrawListing(.with { $0.listingID = first.listingID }, metadata: seller.auth)
            }
            // Sold listings stay readable, and searchable on request.
            #expect(try await listings.getListing(.with { $0.listingID = first.listingID }).listing.status == .sold)
            let sold = try await listings.searchListings(.with { $0.filter.statuses = [.sold] })
            #expect(sold.results.map(\.listing.listingID) == [first.listingID])

            // Images.
            await expectStatus(.unauthenticated) { _ = try await Self.upload(listings, [:], Self.png) }
            await expectStatus(.invalidArgument) {
                _ = try await Self.upload(listings, seller.auth, Array("GIF89a-not-accepted".utf8))
            }
            await expectStatus(.invalidArgument) { _ = try await listings.uploadImage(metadata: seller.auth) { _ in } }
            await expectStatus(.invalidArgument) {
                _ = try await listings.uploadImage(metadata: seller.auth) { writer in
                    try await writer.write(.with { $0.chunk = Data(Self.png.prefix(32)) })
                    try await writer.write(.with { $0.metadata = .init() })
                }
            }
            await expectStatus(.invalidArgument) {
                _ = try await listings.uploadImage(metadata: seller.auth) { writer in
                    for _ in 0..<6 {
                        try await writer.write(.with { $0.chunk = Data(Self.png.prefix(8)) + Data(count: 1_000_000) })
                    }
                }
            }
            await expectStatus(.invalidArgument) {
                _ = try await listings.downloadImage(.init()) { try await $0.messages.collect() }
            }
            await expectStatus(.notFound) {
                _ = try await listings.downloadImage(.with { $0.imageID = "img_nope" }) {
                    try await $0.messages.collect()
                }
            }

            // Saved items.
            await expectStatus(.unauthenticated) {
                _ = try await listings.saveListing(.with { $0.listingID = first.listingID })
            }
            await expectStatus(.notFound) {
                _ = try await listings.saveListing(.with { $0.listingID = "lst_nope" }, metadata: buyer.auth)
            }
            await expectStatus(.failedPrecondition) {
                _ = try await listings.saveListing(.with { $0.listingID = first.listingID }, metadata: buyer.auth)
            }
            await expectStatus(.invalidArgument) { _ = try await listings.unsaveListing(.init(), metadata: buyer.auth) }
            await expectStatus(.unauthenticated) { _ = try await listings.listSavedListings(.init()) }
            await expectStatus(.unauthenticated) { _ = try await listings.listMyListings(.init()) }
            await expectStatus(.invalidArgument) {
                _ = try await listings.watchSavedListings(.with { $0.resumeToken = "nope" }, metadata: buyer.auth) {
                    try await $0.messages.collect()
                }
            }
            await expectStatus(.unauthenticated) {
                _ = try await listings.watchSavedListings(.init()) { try await $0.messages.collect() }
            }
        }
    }

    @Test(
        "saved items, and a watch that receives a price change and a sold event, then resumes",
        arguments: Backend.allCases
    )
    func savedAndWatch(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let listings = ListingsClient(transport: connection)
            let (seller, buyer) = try await Self.users(app, connection)
            let lamp = try await listings.createListing(
                .with { $0.listing = Self.newListing("Lamp") },
                metadata: seller.auth
            ).listing
            let saved = try await listings.saveListing(.with { $0.listingID = lamp.listingID }, metadata: buyer.auth)
                .savedListing
            #expect(saved.listing.listingID == lamp.listingID)
            _ = try await listings.saveListing(.with { $0.listingID = lamp.listingID }, metadata: buyer.auth)
            let list = try await listings.listSavedListings(.init(), metadata: buyer.auth)
            #expect(list.savedListings.map(\.listing.listingID) == [lamp.listingID])

            let log = ChangeLog()
            let watch = Task {
                try await listings.watchSavedListings(.init(), metadata: buyer.auth) { response in
                    for try await message in response.messages { log.append(message.change) }
                }
            }
            defer { watch.cancel() }
            // The watch subscribes asynchronously: change the price until the first change arrives.
            var price: Int64 = 2400
            while log.all.isEmpty, price > 2000 {
                _ = try await listings.updateListing(
                    .with {
                        $0.listing.listingID = lamp.listingID
                        $0.listing.priceCents = price
                        $0.updateMask.paths = ["price_cents"]
                    },
                    metadata: seller.auth
                )
                price -= 100
                _ = await log.wait(milliseconds: 300) { !$0.isEmpty }
            }
            let priceChange = try #require(log.all.first)
            #expect(priceChange.kind == .priceChanged)
            #expect(priceChange.listingTitle == "Lamp")
            #expect(priceChange.oldPriceCents == priceChange.newPriceCents + 100)
            _ = try await listings.markSold(.with { $0.listingID = lamp.listingID }, metadata: seller.auth)
            #expect(await log.wait(milliseconds: 3000) { $0.contains { $0.kind == .sold } })
            #expect(log.all.last?.kind == .sold)
            #expect(log.all.last?.newPriceCents == price + 100)
            watch.cancel()

            // Resuming after the first change replays what followed, ending with the sale.
            let replay = try await listings.watchSavedListings(
                .with { $0.resumeToken = priceChange.resumeToken },
                metadata: buyer.auth
            ) {
                response in
                var kinds: [Skiff_Listings_V1_ListingChangeKind] = []
                for try await message in response.messages {
                    kinds.append(message.change.kind)
                    if message.change.kind == .sold { break }
                }
                return kinds
            }
            #expect(replay.last == .sold)
            #expect(replay.dropLast().allSatisfy { $0 == .priceChanged })
            let after = try await listings.listSavedListings(.init(), metadata: buyer.auth)
            #expect(after.savedListings.first?.listing.status == .sold)
            _ = try await listings.unsaveListing(.with { $0.listingID = lamp.listingID }, metadata: buyer.auth)
            #expect(try await listings.listSavedListings(.init(), metadata: buyer.auth).savedListings.isEmpty)
        }
    }
}

/// The changes a watch received.
typealias ChangeLog = StreamLog<Skiff_Listings_V1_ListingChange>

extension GeoPoint {
    /// The point as the (latitude, longitude) pair `ApproximateLocation` measures.
    fileprivate var pair: (Double, Double) { (latitude, longitude) }
}
