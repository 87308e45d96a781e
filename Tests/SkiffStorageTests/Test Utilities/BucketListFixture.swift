import Foundation
import SkiffBucketList
import SkiffDomain
import SkiffPostgres
import SkiffSQLite
import Testing

/// Runs `body` with a fresh, empty BucketList store of the given kind (see ``withAccountsStore(_:_:)``);
/// with a `collectLimit`, one that walks nearby and trending circles holding that many activities or more
/// (tests set it low to exercise the walks on small data).
func withBucketListStore(
    _ kind: StoreKind,
    collectLimit: Int? = nil,
    _ body: (any BucketListStore) async throws -> Void
) async throws {
    try await withStore(
        kind,
        memory: { collectLimit.map { InMemoryBucketListStore(collectLimit: $0) } ?? InMemoryBucketListStore() },
        sqlite: { database in
            collectLimit.map { database.bucketListStore(collectLimit: $0) } ?? database.bucketListStore()
        },
        postgres: { storage in
            collectLimit.map { storage.bucketListStore(collectLimit: $0) } ?? storage.bucketListStore()
        },
        body
    )
}

/// Builders for BucketList test data.
enum BucketListFixture {
    static let t0 = Fixture.t0
    static let owner = "usr_owner"
    static let other = "usr_other"
    static let campus = Coordinate(latitude: 36.1447, longitude: -86.8027)

    static func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    /// Exactly `milliseconds` after ``t0`` (what stores return after rounding).
    static func ms(_ milliseconds: Int64) -> Date {
        Date(millisecondsSince1970: t0.millisecondsSince1970 + milliseconds)
    }

    /// A point `km` kilometres north of the campus (about; distances are measured, not assumed).
    static func north(_ km: Double, of point: Coordinate = campus) -> Coordinate {
        Coordinate(latitude: point.latitude + km / 111.195, longitude: point.longitude)
    }

    static func activity(
        _ title: String,
        owner: String = owner,
        point: Coordinate = campus,
        at seconds: Double = 0,
        id: String = EntityID.make(.activity),
        configure: (inout ActivityFields) -> Void = { _ in }
    ) -> Activity {
        var fields = ActivityFields(title: title, place: Place(name: "Place of \(title)", point: point))
        configure(&fields)
        return Activity(id: id, ownerID: owner, fields: fields, createdAt: at(seconds))
    }

    static func list(
        _ name: String,
        owner: String = owner,
        visibility: Visibility = .public,
        at seconds: Double = 0,
        id: String = EntityID.make(.bucketList)
    ) -> BucketList {
        BucketList(
            id: id,
            ownerID: owner,
            fields: BucketListFields(name: name, description: "About \(name)", visibility: visibility),
            createdAt: at(seconds)
        )
    }

    static func comment(
        on activityID: String,
        by author: String = other,
        _ text: String = "Nice",
        at seconds: Double = 0,
        id: String = EntityID.make(.comment)
    ) -> SkiffBucketList.Comment {
        SkiffBucketList.Comment(id: id, activityID: activityID, authorID: author, text: text, createdAt: at(seconds))
    }
}

extension BucketListStore {
    /// Walks every page of a paged read and returns all items in order, checking page sizes.
    func all<Item>(
        pageSize: Int,
        _ read: (PageRequest) async throws -> Page<Item>
    ) async throws -> [Item] {
        var items: [Item] = []
        var token: String?
        repeat {
            let page = try await read(try PageRequest(size: pageSize, token: token))
            #expect(page.items.count <= pageSize)
            items += page.items
            token = page.nextPageToken
        } while token != nil
        return items
    }
}

/// Runs `count` copies of `operation` concurrently; returns the successes and the domain errors thrown.
func raceBucketList<T: Sendable>(
    _ count: Int,
    _ operation: @escaping @Sendable (Int) async throws -> T
) async -> (successes: [T], errors: [DomainError]) {
    await withTaskGroup(of: Result<T, any Error>.self) { group in
        for index in 0..<count {
            group.addTask {
                do { return .success(try await operation(index)) } catch { return .failure(error) }
            }
        }
        var successes: [T] = []
        var errors: [DomainError] = []
        for await result in group {
            switch result {
            case .success(let value): successes.append(value)
            case .failure(let error as DomainError): errors.append(error)
            case .failure(let error): Issue.record("Unexpected error: \(error)")
            }
        }
        return (successes, errors)
    }
}
