import Foundation
import SkiffDomain
import SkiffLostFound
import SkiffPostgres
import SkiffSQLite
import Testing

/// Runs `body` with a fresh, empty LostFound store of the given kind (see ``withAccountsStore(_:_:)``).
func withLostFoundStore(
    _ kind: StoreKind,
    _ body: (any LostFoundStore) async throws -> Void
) async throws {
    try await withStore(
        kind,
        memory: { InMemoryLostFoundStore() },
        sqlite: { $0.lostFoundStore() },
        postgres: { $0.lostFoundStore() },
        body
    )
}

/// Builders for lost-and-found test data.
enum LostFoundFixture {
    static let t0 = Fixture.t0
    static let owner = "usr_owner"
    static let finder = "usr_finder"
    static let library = LostFoundPoint(latitude: 36.1447, longitude: -86.8027)

    /// A point `metres` north of the library.
    static func north(metres: Double) -> LostFoundPoint {
        LostFoundPoint(latitude: library.latitude + metres / 111_195, longitude: library.longitude)
    }

    static func item(
        _ kind: LostFoundKind,
        _ title: String,
        id: String = EntityID.make(.lostFoundItem),
        reporter: String? = nil,
        at seconds: Double = 0,
        _ configure: (inout LostFoundItemFields) -> Void = { _ in }
    ) -> LostFoundItem {
        var fields = LostFoundItemFields(
            title: title,
            description: "",
            category: .other,
            building: "Main Library",
            point: library,
            occurredAt: t0,
            contactInstructions: "Front desk"
        )
        configure(&fields)
        return LostFoundItem(
            id: id,
            reporterID: reporter ?? (kind == .lost ? owner : finder),
            kind: kind,
            fields: fields,
            createdAt: t0.addingTimeInterval(seconds)
        )
    }
}

extension LostFoundStore {
    /// Reports items with the standard matcher and returns them as stored.
    func report(_ items: [LostFoundItem]) async throws -> [LostFoundItem] {
        var stored: [LostFoundItem] = []
        for item in items { stored.append(try await reportItem(item, matcher: .standard).item) }
        return stored
    }

    /// Walks every page of a search and returns all hits in order.
    func searchAll(_ query: LostFoundQuery, pageSize: Int) async throws -> [LostFoundSearchHit] {
        var items: [LostFoundSearchHit] = []
        var token: String?
        repeat {
            let page = try await search(query, page: PageRequest(size: pageSize, token: token))
            #expect(page.items.count <= pageSize)
            items += page.items
            token = page.nextPageToken
        } while token != nil
        return items
    }

    /// The ids of every result of a search, in order.
    func ids(_ query: LostFoundQuery, pageSize: Int = 100) async throws -> [String] {
        try await searchAll(query, pageSize: pageSize).map(\.item.id)
    }

    /// Walks every page of an item's matches.
    func allMatches(itemID: String, pageSize: Int) async throws -> [LostFoundMatchHit] {
        var hits: [LostFoundMatchHit] = []
        var token: String?
        repeat {
            let page = try await matches(itemID: itemID, page: PageRequest(size: pageSize, token: token))
            #expect(page.items.count <= pageSize)
            hits += page.items
            token = page.nextPageToken
        } while token != nil
        return hits
    }
}
