import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffDomain
import SkiffLostFound
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

typealias LostFoundClient = Skiff_Lostfound_V1_LostFound.Client

/// The LostFound service through its generated typed client, over a real socket, on both storage backends.
@Suite("LostFound end to end")
struct LostFoundServiceTests {
    static let library = (latitude: 36.1447, longitude: -86.8027)

    static func newItem(
        _ kind: Skiff_Lostfound_V1_ItemKind,
        _ title: String,
        description: String = "Brown leather, student card inside",
        metresNorth: Double = 0,
        daysAgo: Double = 1
    ) -> Skiff_Lostfound_V1_Item {
        .with {
            $0.kind = kind
            $0.title = title
            $0.description_p = description
            $0.category = .bags
            $0.building = "Main Library"
            $0.point = .with {
                $0.latitude = library.latitude + metresNorth / 111_195
                $0.longitude = library.longitude
            }
            $0.occurredAt = Google_Protobuf_Timestamp(date: Date().addingTimeInterval(-daysAgo * 86_400))
            $0.contactInstructions = kind == .lost ? "Text 555-0100" : "Left it at the library front desk"
        }
    }

    /// Two signed-in users: the owner of a lost item and a finder.
    static func users(
        _ app: Application,
        _ connection: ClientConnection
    ) async throws -> (owner: (id: String, auth: Metadata), finder: (id: String, auth: Metadata)) {
        let accounts = AccountsClient(transport: connection)
        let owner = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "olive@campus.edu", name: "Olive")
        let finder = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "finn@campus.edu", name: "Finn")
        return (owner, finder)
    }

    @Test(
        "lost → found matches it → ListMatches both ways → guest browsing → update → returned",
        arguments: Backend.allCases
    )
    func story(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let client = LostFoundClient(transport: connection)
            let (owner, finder) = try await Self.users(app, connection)

            let lost = try await client.reportItem(
                .with { $0.item = Self.newItem(.lost, "Brown leather wallet", daysAgo: 2) },
                metadata: owner.auth
            )
            #expect(lost.matchCount == 0)
            #expect(lost.item.reporterID == owner.id)
            #expect(lost.item.status == .lost)
            #expect(lost.item.kind == .lost)
            #expect(lost.item.hasPoint)
            #expect(lost.item.contactInstructions == "Text 555-0100")

            let found = try await client.reportItem(
                .with { $0.item = Self.newItem(.found, "Found a brown wallet", metresNorth: 120) },
                metadata: finder.auth
            )
            #expect(found.matchCount == 1)
            #expect(found.item.status == .found)

            // The owner sees the found item among their lost item's matches, with the finder's instructions.
            let matches = try await client.listMatches(.with { $0.itemID = lost.item.itemID }, metadata: owner.auth)
            #expect(matches.matches.map(\.item.itemID) == [found.item.itemID])
            let match = try #require(matches.matches.first)
            #expect(match.score >= 0.5 && match.score <= 1)
            #expect(match.item.contactInstructions == "Left it at the library front desk")
            #expect(!match.item.hasPoint)
            // Between the two items' grid cells (the same one), never their exact points.
            #expect(match.distanceKm == 0)
            #expect(matches.nextPageToken.isEmpty)
            let reverse = try await client.listMatches(.with { $0.itemID = found.item.itemID }, metadata: finder.auth)
            #expect(reverse.matches.map(\.item.itemID) == [lost.item.itemID])

            // The owner was told on their live feed (replayed from storage); the finder was not.
            let chat = Skiff_Chat_V1_Chat.Client(transport: connection)
            let told = try await chat.subscribeFeed(.init(), metadata: owner.auth) {
                response -> Skiff_Chat_V1_LostFoundMatch? in
                for try await event in response.messages {
                    if case .lostFoundMatch(let match) = event.event { return match }
                }
                return nil
            }
            #expect(told?.lostItemID == lost.item.itemID)
            #expect(told?.foundItemID == found.item.itemID)
            #expect(told?.foundItemTitle == "Found a brown wallet")
            #expect(told.map { abs($0.score - match.score) < 0.0001 } == true)
            await expectStatus(.outOfRange) {
                _ = try await chat.subscribeFeed(.with { $0.afterSequence = 1 }, metadata: finder.auth) {
                    try await $0.messages.collect()
                }
            }

            // Guests browse without contact instructions or exact points; signed-in users see instructions.
            let guestSearch = try await client.searchItems(
                .with {
                    $0.query = "WALL"
                    $0.filter.near = .with {
                        $0.center = .with {
                            $0.latitude = Self.library.latitude
                            $0.longitude = Self.library.longitude
                        }
                        $0.radiusKm = 1
                    }
                    $0.sortOrder = .distance
                }
            )
            // A guest measures to the items' grid cell (the same for both, 0.48 km away, rounded to 0.5):
            // equally near, so newest first.
            #expect(guestSearch.results.map(\.item.itemID) == [found.item.itemID, lost.item.itemID])
            #expect(guestSearch.results.allSatisfy { $0.item.contactInstructions.isEmpty && !$0.item.hasPoint })
            #expect(guestSearch.results.map(\.distanceKm) == [0.5, 0.5])
            let guestGet = try await client.getItem(.with { $0.itemID = found.item.itemID })
            #expect(guestGet.item.contactInstructions.isEmpty)
            #expect(guestGet.item.title == "Found a brown wallet")
            let ownerGet = try await client.getItem(.with { $0.itemID = found.item.itemID }, metadata: owner.auth)
            #expect(ownerGet.item.contactInstructions == "Left it at the library front desk")
            let browse = try await client.searchItems(.with { $0.filter.categories = [.bags] })
            #expect(Set(browse.results.map(\.item.itemID)) == [found.item.itemID, lost.item.itemID])
            #expect(!browse.results.contains { $0.hasDistanceKm })

            // The finder edits, then marks the item returned; search then hides it unless asked for.
            let updated = try await client.updateItem(
                .with {
                    $0.item.itemID = found.item.itemID
                    $0.item.contactInstructions = "Now at the campus police office"
                    $0.item.building = "Campus Police"
                    $0.updateMask = .with { $0.paths = ["contact_instructions", "building"] }
                },
                metadata: finder.auth
            ).item
            #expect(updated.contactInstructions == "Now at the campus police office")
            #expect(updated.building == "Campus Police")
            #expect(updated.title == found.item.title)
            let returned = try await client.markReturned(.with { $0.itemID = found.item.itemID }, metadata: finder.auth)
            #expect(returned.item.status == .returned)
            #expect(returned.item.hasReturnedAt)
            let open = try await client.searchItems(.with { $0.query = "wallet" })
            #expect(open.results.map(\.item.itemID) == [lost.item.itemID])
            let closed = try await client.searchItems(
                .with {
                    $0.query = "wallet"
                    $0.filter.statuses = [.returned]
                    $0.filter.building = "campus  POLICE"
                }
            )
            #expect(closed.results.map(\.item.itemID) == [found.item.itemID])
            // The owner still sees the match, as the item is now.
            let after = try await client.listMatches(.with { $0.itemID = lost.item.itemID }, metadata: owner.auth)
            #expect(after.matches.first?.item.status == .returned)
        }
    }

    @Test(
        "ListMyItems: the caller's own reports, newest first, every status, exact points, match counts, paged",
        arguments: Backend.allCases
    )
    func myItems(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let client = LostFoundClient(transport: connection)
            let (owner, finder) = try await Self.users(app, connection)
            var mine: [Skiff_Lostfound_V1_Item] = []
            for (title, description) in [
                ("Brown leather wallet", "Student card inside"), ("Blue water bottle", "Dented, with stickers"),
                ("Grey hoodie", "Size M, hood torn"),
            ] {
                let item = Self.newItem(.lost, title, description: description)
                mine.append(try await client.reportItem(.with { $0.item = item }, metadata: owner.auth).item)
            }
            _ = try await client.reportItem(
                .with { $0.item = Self.newItem(.found, "Found a brown wallet", metresNorth: 120) },
                metadata: finder.auth
            )
            _ = try await client.markReturned(.with { $0.itemID = mine[1].itemID }, metadata: owner.auth)

            // Newest first; reports made in the same millisecond (they can be, in memory) by id, descending.
            let newestFirst = mine.sorted { lhs, rhs in
                let (l, r) = (lhs.createdAt, rhs.createdAt)
                return (l.seconds, l.nanos) != (r.seconds, r.nanos)
                    ? (l.seconds, l.nanos) > (r.seconds, r.nanos) : lhs.itemID > rhs.itemID
            }
            let all = try await client.listMyItems(.init(), metadata: owner.auth)
            #expect(all.items.map(\.item.itemID) == newestFirst.map(\.itemID))
            #expect(
                all.items.map(\.item.status) == newestFirst.map { $0.itemID == mine[1].itemID ? .returned : .lost }
            )
            #expect(all.items.map(\.matchCount) == newestFirst.map { $0.itemID == mine[0].itemID ? 1 : 0 })
            // As their reporter sees them: the exact point and the contact instructions.
            #expect(all.items.allSatisfy { $0.item.hasPoint && $0.item.contactInstructions == "Text 555-0100" })
            #expect(all.nextPageToken.isEmpty)
            // Someone else's list holds only their own report.
            #expect(try await client.listMyItems(.init(), metadata: finder.auth).items.count == 1)

            let open = try await client.listMyItems(.with { $0.statuses = [.lost] }, metadata: owner.auth)
            #expect(open.items.map(\.item.itemID) == newestFirst.map(\.itemID).filter { $0 != mine[1].itemID })
            let first = try await client.listMyItems(.with { $0.pageSize = 2 }, metadata: owner.auth)
            #expect(first.items.count == 2)
            let rest = try await client.listMyItems(
                .with {
                    $0.pageSize = 2
                    $0.pageToken = first.nextPageToken
                },
                metadata: owner.auth
            )
            #expect(rest.items.map(\.item.itemID) == [newestFirst[2].itemID])
            #expect(rest.nextPageToken.isEmpty)

            await expectStatus(.unauthenticated) { _ = try await client.listMyItems(.init()) }
            let unspecified = await expectStatus(.invalidArgument) {
                _ = try await client.listMyItems(.with { $0.statuses = [.unspecified] }, metadata: owner.auth)
            }
            #expect(unspecified?.message.contains("statuses") == true)
            await expectStatus(.invalidArgument) {
                _ = try await client.listMyItems(
                    .with { $0.statuses = Array(repeating: .lost, count: 17) },
                    metadata: owner.auth
                )
            }
            // A token is for the request it came from: not another user's, not other statuses.
            await expectStatus(.invalidArgument) {
                _ = try await client.listMyItems(.with { $0.pageToken = first.nextPageToken }, metadata: finder.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.listMyItems(
                    .with {
                        $0.statuses = [.lost]
                        $0.pageToken = first.nextPageToken
                    },
                    metadata: owner.auth
                )
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.listMyItems(.with { $0.pageSize = -1 }, metadata: owner.auth)
            }
        }
    }

    @Test("Every RPC's invalid input and permission failures, with exact status codes", arguments: Backend.allCases)
    func errors(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let client = LostFoundClient(transport: connection)
            let (owner, finder) = try await Self.users(app, connection)
            let badToken: Metadata = ["authorization": "Bearer not-a-session"]
            let item = try await client.reportItem(
                .with { $0.item = Self.newItem(.lost, "Red umbrella") },
                metadata: owner.auth
            ).item

            // ReportItem
            await expectStatus(.unauthenticated) {
                _ = try await client.reportItem(.with { $0.item = Self.newItem(.lost, "Keys") })
            }
            await expectStatus(.unauthenticated) {
                _ = try await client.reportItem(.with { $0.item = Self.newItem(.lost, "Keys") }, metadata: badToken)
            }
            await expectStatus(.invalidArgument) { _ = try await client.reportItem(.init(), metadata: owner.auth) }
            let invalidItems: [(String, (inout Skiff_Lostfound_V1_Item) -> Void)] = [
                ("kind", { $0.kind = .unspecified }),
                ("category", { $0.category = .unspecified }),
                ("title", { $0.title = "  " }),
                ("title", { $0.title = String(repeating: "t", count: 81) }),
                ("description", { $0.description_p = String(repeating: "d", count: 2001) }),
                ("building", { $0.building = "" }),
                ("contact_instructions", { $0.contactInstructions = "" }),
                ("occurred_at", { $0.clearOccurredAt() }),
                (
                    "occurred_at",
                    { $0.occurredAt = Google_Protobuf_Timestamp(date: Date().addingTimeInterval(3 * 86_400)) }
                ),
                // Before the year 1: near the end of what milliseconds since 1970 hold, and past it.
                ("occurred_at", { $0.occurredAt = .with { $0.seconds = -9_223_372_036_854_775 } }),
                ("occurred_at", { $0.occurredAt = .with { $0.seconds = .min } }),
                ("point", { $0.point.latitude = 95 }),
                ("image_id", { $0.imageID = String(repeating: "i", count: 129) }),
            ]
            for (field, breakIt) in invalidItems {
                var broken = Self.newItem(.lost, "Keys")
                breakIt(&broken)
                let error = await expectStatus(.invalidArgument) {
                    _ = try await client.reportItem(.with { $0.item = broken }, metadata: owner.auth)
                }
                #expect(error?.message.contains(field) == true, "\(field): \(String(describing: error))")
            }

            // GetItem
            await expectStatus(.invalidArgument) { _ = try await client.getItem(.init()) }
            await expectStatus(.notFound) { _ = try await client.getItem(.with { $0.itemID = "lfi_missing" }) }
            await expectStatus(.unauthenticated) {
                _ = try await client.getItem(.with { $0.itemID = item.itemID }, metadata: badToken)
            }

            // UpdateItem
            func update(
                _ configure: (inout Skiff_Lostfound_V1_UpdateItemRequest) -> Void
            ) -> Skiff_Lostfound_V1_UpdateItemRequest {
                var request = Skiff_Lostfound_V1_UpdateItemRequest.with {
                    $0.item.itemID = item.itemID
                    $0.item.title = "Red folding umbrella"
                    $0.updateMask = .with { $0.paths = ["title"] }
                }
                configure(&request)
                return request
            }
            await expectStatus(.unauthenticated) { _ = try await client.updateItem(update { _ in }) }
            await expectStatus(.invalidArgument) {
                _ = try await client.updateItem(update { $0.item.itemID = "" }, metadata: owner.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.updateItem(update { $0.clearUpdateMask() }, metadata: owner.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.updateItem(update { $0.updateMask.paths = ["status"] }, metadata: owner.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.updateItem(update { $0.item.title = "" }, metadata: owner.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.updateItem(
                    update { $0.updateMask.paths = ["category"] },
                    metadata: owner.auth
                )
            }
            await expectStatus(.notFound) {
                _ = try await client.updateItem(update { $0.item.itemID = "lfi_missing" }, metadata: owner.auth)
            }
            await expectStatus(.permissionDenied) {
                _ = try await client.updateItem(update { _ in }, metadata: finder.auth)
            }

            // ListMatches
            await expectStatus(.unauthenticated) {
                _ = try await client.listMatches(.with { $0.itemID = item.itemID })
            }
            await expectStatus(.invalidArgument) { _ = try await client.listMatches(.init(), metadata: owner.auth) }
            await expectStatus(.notFound) {
                _ = try await client.listMatches(.with { $0.itemID = "lfi_missing" }, metadata: owner.auth)
            }
            await expectStatus(.permissionDenied) {
                _ = try await client.listMatches(.with { $0.itemID = item.itemID }, metadata: finder.auth)
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.listMatches(
                    .with {
                        $0.itemID = item.itemID
                        $0.pageSize = -1
                    },
                    metadata: owner.auth
                )
            }
            await expectStatus(.invalidArgument) {
                _ = try await client.listMatches(
                    .with {
                        $0.itemID = item.itemID
                        $0.pageToken = "garbage"
                    },
                    metadata: owner.auth
                )
            }

            // SearchItems
            let invalidSearches: [Skiff_Lostfound_V1_SearchItemsRequest] = [
                .with { $0.query = String(repeating: "q", count: 201) },
                .with { $0.filter.statuses = [.unspecified] },
                .with { $0.filter.categories = [.unspecified] },
                .with { $0.filter.building = String(repeating: "b", count: 101) },
                .with { $0.filter.near.radiusKm = 0 },
                .with {
                    $0.filter.near.center.latitude = 91
                    $0.filter.near.radiusKm = 1
                },
                .with { $0.filter.near.radiusKm = 501 },
                .with { $0.sortOrder = .distance },
                .with { $0.pageSize = -1 },
                .with { $0.pageToken = "garbage" },
            ]
            for request in invalidSearches {
                await expectStatus(.invalidArgument) { _ = try await client.searchItems(request) }
            }

            // MarkReturned
            await expectStatus(.unauthenticated) {
                _ = try await client.markReturned(.with { $0.itemID = item.itemID })
            }
            await expectStatus(.invalidArgument) { _ = try await client.markReturned(.init(), metadata: owner.auth) }
            await expectStatus(.notFound) {
                _ = try await client.markReturned(.with { $0.itemID = "lfi_missing" }, metadata: owner.auth)
            }
            await expectStatus(.permissionDenied) {
                _ = try await client.markReturned(.with { $0.itemID = item.itemID }, metadata: finder.auth)
            }
            let returned = try await client.markReturned(.with { $0.itemID = item.itemID }, metadata: owner.auth).item
            let again = try await client.markReturned(.with { $0.itemID = item.itemID }, metadata: owner.auth).item
            #expect(again == returned)
            // A returned item can no longer be edited.
            await expectStatus(.failedPrecondition) {
                _ = try await client.updateItem(update { _ in }, metadata: owner.auth)
            }
        }
    }

    @Test("Search pages with opaque tokens; a page size above 100 is accepted (capped, see the store tests)")
    func paging() async throws {
        try await withApp(.sqlite) { app, connection in
            let client = LostFoundClient(transport: connection)
            let (owner, _) = try await Self.users(app, connection)
            var ids: [String] = []
            for index in 0..<5 {
                ids.append(
                    try await client.reportItem(
                        .with { $0.item = Self.newItem(.lost, "Umbrella \(index)") },
                        metadata: owner.auth
                    ).item.itemID
                )
            }
            var seen: [String] = []
            var token = ""
            repeat {
                let page = try await client.searchItems(
                    .with {
                        $0.query = "umbrella"
                        $0.pageSize = 2
                        $0.pageToken = token
                    }
                )
                #expect(page.results.count <= 2)
                seen += page.results.map(\.item.itemID)
                token = page.nextPageToken
            } while !token.isEmpty
            #expect(Set(seen) == Set(ids))
            #expect(seen.count == 5)
            let big = try await client.searchItems(.with { $0.pageSize = 10_000 })
            #expect(big.results.count == 5)
            #expect(big.nextPageToken.isEmpty)
        }
    }

    @Test(
        "Forged search tokens get INVALID_ARGUMENT over the wire and the connection carries on",
        arguments: Backend.allCases
    )
    func forgedTokens(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let client = LostFoundClient(transport: connection)
            let (owner, _) = try await Self.users(app, connection)
            for index in 0..<5 {
                _ = try await client.reportItem(
                    .with { $0.item = Self.newItem(.lost, "Umbrella \(index)", metresNorth: Double(index) * 900) },
                    metadata: owner.auth
                )
            }
            let newest = Skiff_Lostfound_V1_SearchItemsRequest.with {
                $0.query = "umbrella"
                $0.pageSize = 2
            }
            let near = Skiff_Lostfound_V1_SearchItemsRequest.with {
                $0.filter.near.center.latitude = Self.library.latitude
                $0.filter.near.center.longitude = Self.library.longitude
                $0.filter.near.radiusKm = 10
                $0.sortOrder = .distance
                $0.pageSize = 2
            }
            let newestToken = try await client.searchItems(newest).nextPageToken
            let nearPage = try await client.searchItems(near)
            func forged(_ token: String, distance: Double?) throws -> String {
                var cursor = try PageToken.decode(
                    token,
                    as: LostFoundSearchEngine.Cursor.self,
                    kind: "lostfound.search"
                )
                cursor.d = distance
                return PageToken.encode(cursor, kind: "lostfound.search")
            }
            // A distance in newest order; none, a negative one or an infinite one in distance order; another
            // query's token; not a token at all.
            let forgeries: [(Skiff_Lostfound_V1_SearchItemsRequest, String)] = [
                (newest, try forged(newestToken, distance: 1)),
                (near, try forged(nearPage.nextPageToken, distance: nil)),
                (near, try forged(nearPage.nextPageToken, distance: -1)),
                (near, try forged(nearPage.nextPageToken, distance: .infinity)),
                (near, newestToken),
                (newest, "not-a-token"),
            ]
            for (request, token) in forgeries {
                var forgedRequest = request
                forgedRequest.pageToken = token
                await expectStatus(.invalidArgument, "page_token is not valid.") {
                    _ = try await client.searchItems(forgedRequest)
                }
            }
            // The tokens as issued still work on the same connection.
            var next = near
            next.pageToken = nearPage.nextPageToken
            let second = try await client.searchItems(next)
            #expect(second.results.count == 2)
            #expect(Set(second.results.map(\.item.itemID)).isDisjoint(with: nearPage.results.map(\.item.itemID)))
        }
    }

    @Test(
        "A circle over 600 items: every item in it once, nearest first then newest (or newest first), on every page",
        arguments: Backend.allCases
    )
    func distanceOrderAtScale(_ backend: Backend) async throws {
        try await withApp(backend, configure: { $0.rateLimitScale = 0 }) { app, connection in
            let client = LostFoundClient(transport: connection)
            let (owner, finder) = try await Self.users(app, connection)
            // 600 found items on a 4 km square around the library (about 16 grid cells; on SQLite more than a
            // search estimates, so a circle in distance order walks its cells band by band), one in ten the
            // searcher's own.
            let reported = try await withThrowingTaskGroup(of: [Skiff_Lostfound_V1_Item].self) { group in
                for part in 0..<6 {
                    group.addTask {
                        var items: [Skiff_Lostfound_V1_Item] = []
                        for index in stride(from: part, to: 600, by: 6) {
                            var item = Self.newItem(.found, "Umbrella \(index)")
                            let north = Double(index % 25) * 160 - 2_000
                            let east = Double(index / 25) * 170 - 2_000
                            item.point.latitude = Self.library.latitude + north / 111_195
                            item.point.longitude =
                                Self.library.longitude + east / (111_195 * cos(Self.library.latitude * .pi / 180))
                            let auth = index % 10 == 0 ? owner.auth : finder.auth
                            items.append(try await client.reportItem(.with { $0.item = item }, metadata: auth).item)
                        }
                        return items
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(reported.count == 600)
            let center = (latitude: Self.library.latitude + 0.004, longitude: Self.library.longitude - 0.003)
            let radiusKm = 2.5
            // What the owner must be shown: exact distances to their own items, cell distances to the others.
            var expected: [String: Double] = [:]
            for item in reported {
                let km = ApproximateLocation.distance(
                    from: center,
                    to: (item.point.latitude, item.point.longitude),
                    exact: item.reporterID == owner.id
                )
                if km.measured <= radiusKm { expected[item.itemID] = km.shown }
            }
            #expect(expected.count > 300 && expected.count < 600)
            let requests = [
                Skiff_Lostfound_V1_SearchItemsRequest(),
                .with {
                    $0.query = "umbrella"
                    $0.filter.categories = [.bags]
                    $0.filter.building = "main library"
                },
            ]
            for (var request, order) in requests.flatMap({ request in [(request, .distance), (request, .newest)] })
                as [(Skiff_Lostfound_V1_SearchItemsRequest, Skiff_Lostfound_V1_ItemSortOrder)]
            {
                request.filter.near.center.latitude = center.latitude
                request.filter.near.center.longitude = center.longitude
                request.filter.near.radiusKm = radiusKm
                request.sortOrder = order
                request.pageSize = 37
                var results: [Skiff_Lostfound_V1_ItemSearchResult] = []
                repeat {
                    let page = try await client.searchItems(request, metadata: owner.auth)
                    #expect(page.results.count <= 37)
                    results += page.results
                    request.pageToken = page.nextPageToken
                } while !request.pageToken.isEmpty
                #expect(results.count == expected.count, "\(request.query)")
                #expect(Set(results.map(\.item.itemID)) == Set(expected.keys), "\(request.query)")
                for result in results {
                    #expect(result.distanceKm == expected[result.item.itemID], "\(result.item.itemID)")
                }
                // Nearest first (in distance order); at one distance, newest first, then the greater id.
                for (a, b) in zip(results, results.dropFirst()) {
                    let inOrder =
                        order == .distance && a.distanceKm != b.distanceKm
                        ? a.distanceKm < b.distanceKm
                        : a.item.createdAt.date != b.item.createdAt.date
                            ? a.item.createdAt.date > b.item.createdAt.date : a.item.itemID > b.item.itemID
                    #expect(inOrder, "\(a.item.itemID) before \(b.item.itemID)")
                }
            }
            // The worst a walk of the cells can be asked: the widest circle the contract allows, every item in
            // it, and a filter none of them passes (each status and circle alone keeps many, so the walk reads
            // every cell). An empty last page, and the connection carries on.
            for order in [Skiff_Lostfound_V1_ItemSortOrder.distance, .newest] {
                let page = try await client.searchItems(
                    .with {
                        $0.filter.statuses = [.returned]
                        $0.filter.near.center.latitude = center.latitude
                        $0.filter.near.center.longitude = center.longitude
                        $0.filter.near.radiusKm = 500
                        $0.sortOrder = order
                        $0.pageSize = 100
                    },
                    metadata: owner.auth
                )
                #expect(page.results.isEmpty && page.nextPageToken.isEmpty, "\(order)")
            }
            #expect(try await client.searchItems(.with { $0.query = "umbrella" }).results.count == 20)
        }
    }

    @Test("--storage accepts lostfound=memory and lostfound=sqlite:PATH")
    func storageSelection() throws {
        let selection = try StorageSelection.parse(["sqlite:/tmp/skiff.sqlite", "lostfound=memory"])
        #expect(selection.backend(for: "lostfound") == .memory)
        #expect(selection.backend(for: "listings") == .sqlite(path: "/tmp/skiff.sqlite"))
        let other = try StorageSelection.parse(["memory", "lostfound=sqlite:/tmp/lf.sqlite"])
        #expect(other.backend(for: "lostfound") == .sqlite(path: "/tmp/lf.sqlite"))
    }
}
