import Foundation
import SkiffDomain
import SkiffListings
import SkiffPostgres
import SkiffSQLite
import Testing

/// Runs `body` with a fresh, empty listings store of the given kind (see ``withAccountsStore(_:_:)``).
func withListingsStore(
    _ kind: StoreKind,
    _ body: (any ListingsStore) async throws -> Void
) async throws {
    try await withStore(
        kind,
        memory: { InMemoryListingsStore() },
        sqlite: { $0.listingsStore() },
        postgres: { $0.listingsStore() },
        body
    )
}

/// Builders for listing test data.
enum ListingFixture {
    static let t0 = Fixture.t0
    static let seller = "usr_seller"
    static let other = "usr_other"

    static func fields(
        _ title: String,
        description: String = "",
        price: Int64 = 1000,
        category: ListingCategory = .other,
        condition: ListingCondition = .lightlyUsed,
        tags: [String] = [],
        madeOnCampus: Bool = false,
        anonymous: Bool = false,
        point: GeoPoint? = nil,
        imageIDs: [String] = []
    ) -> ListingFields {
        ListingFields(
            title: title,
            description: description,
            priceCents: price,
            category: category,
            condition: condition,
            tags: tags,
            madeOnCampus: madeOnCampus,
            anonymous: anonymous,
            location: ListingLocation(zipCode: "37235", point: point),
            imageIDs: imageIDs
        )
    }

    static func listing(
        _ title: String,
        id: String = EntityID.make(.listing),
        seller: String = seller,
        at seconds: Double = 0,
        _ configure: (inout ListingFields) -> Void = { _ in }
    ) -> Listing {
        var fields = fields(title)
        configure(&fields)
        return Listing(id: id, sellerID: seller, fields: fields, createdAt: t0.addingTimeInterval(seconds))
    }

    static func image(owner: String = seller, id: String = EntityID.make(.image)) -> StoredImage {
        StoredImage(
            id: id,
            ownerID: owner,
            contentType: .png,
            bytes: Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]),
            createdAt: t0
        )
    }
}

extension ListingsStore {
    /// Creates listings and returns them as stored.
    func create(_ listings: [Listing]) async throws -> [Listing] {
        var created: [Listing] = []
        for listing in listings { created.append(try await createListing(listing, requestID: nil)) }
        return created
    }

    /// Walks every page of a search and returns all hits in order.
    func searchAll(_ query: ListingQuery, pageSize: Int) async throws -> [ListingSearchHit] {
        var items: [ListingSearchHit] = []
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
    func ids(_ query: ListingQuery, pageSize: Int = 100) async throws -> [String] {
        try await searchAll(query, pageSize: pageSize).map(\.listing.id)
    }
}
