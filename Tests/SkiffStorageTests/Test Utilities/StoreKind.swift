import Foundation
import SkiffAccounts
import SkiffDomain
import SkiffPostgres
import SkiffSQLite
import SkiffTesting
import Testing

/// The backends every store-conformance test runs against.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inMemory
    case sqlite
    /// A fresh database on the cluster `SKIFF_TEST_POSTGRES_URL` names (dev/test.sh starts one).
    case postgres

    /// The backends of the services whose PostgreSQL store is not built yet (issue 15).
    static let embedded: [StoreKind] = [.inMemory, .sqlite]

    var testDescription: String { rawValue }
}

/// A directory under the system's temporary directory, removed by ``remove()``.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("skiff-storage-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Runs `body` with a fresh, empty store of the given kind: `memory()`, the store `sqlite` opens
/// on a new SQLite file in a fresh temporary directory (closed and removed afterwards), or the store
/// `postgres` opens on a new database of the test cluster (dropped afterwards).
func withStore<Store>(
    _ kind: StoreKind,
    memory: () -> Store,
    sqlite: (SQLiteDatabase) -> Store,
    postgres: ((PostgresStorage) -> Store)? = nil,
    _ body: (Store) async throws -> Void
) async throws {
    switch kind {
    case .postgres:
        let postgres = try #require(postgres, "this store has no PostgreSQL backend yet: use StoreKind.embedded")
        try await TestPostgres.withDatabase { database in try await body(postgres(database)) }
    case .inMemory:
        try await body(memory())
    case .sqlite:
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        do {
            try await body(sqlite(database))
        } catch {
            try? database.close()
            throw error
        }
        try database.close()
    }
}

/// Runs `body` with a fresh, empty accounts store of the given kind: a new in-memory store, or a new
/// SQLite file in a fresh temporary directory (removed afterwards).
func withAccountsStore(
    _ kind: StoreKind,
    _ body: (any AccountsStore) async throws -> Void
) async throws {
    try await withStore(
        kind,
        memory: { InMemoryAccountsStore() },
        sqlite: { $0.accountsStore() },
        postgres: { $0.accountsStore() },
        body
    )
}

/// Builders for test data. Dates are millisecond-aligned unless a test is about rounding.
enum Fixture {
    /// A fixed instant (2026-01-01T00:00:00Z).
    static let t0 = Date(millisecondsSince1970: 1_767_225_600_000)

    static func date(plusSeconds seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    static func account(
        _ name: String,
        email: String? = nil,
        id: String = EntityID.make(.account),
        createdAt: Date = t0
    ) -> Account {
        let local = name.lowercased().filter { $0.isLetter || $0.isNumber }
        return Account(
            id: id,
            email: email ?? "\(local)-\(id.suffix(6))@school.edu",
            displayName: name,
            passwordHash: "pbkdf2-sha256$1$AAAA$hash",
            createdAt: createdAt
        )
    }

    static func session(for accountID: String, token: SecretToken = .generate(), expiresAt: Date) -> Session {
        Session(tokenHash: token.hash, accountID: accountID, expiresAt: expiresAt, createdAt: t0)
    }

    static func oneTimeToken(
        _ kind: OneTimeToken.Kind,
        for accountID: String,
        token: SecretToken = .generate(),
        expiresAt: Date = date(plusSeconds: 3600)
    ) -> OneTimeToken {
        OneTimeToken(tokenHash: token.hash, kind: kind, accountID: accountID, expiresAt: expiresAt, createdAt: t0)
    }

    static func rating(
        sale: String,
        seller: String,
        buyer: String,
        stars: Int,
        at date: Date = t0
    ) -> Rating {
        Rating(saleID: sale, sellerID: seller, buyerID: buyer, stars: stars, comment: "Thanks!", createdAt: date)
    }
}

extension AccountsStore {
    /// Creates accounts with the given names, in order, and returns them as stored.
    func createAccounts(_ names: [String]) async throws -> [Account] {
        var created: [Account] = []
        for name in names {
            created.append(try await createAccount(Fixture.account(name)))
        }
        return created
    }

    /// Walks every page of a user search and returns all items in order.
    func searchAll(_ query: String, pageSize: Int) async throws -> [Account] {
        var items: [Account] = []
        var token: String?
        repeat {
            let page = try await searchUsers(nameQuery: query, page: PageRequest(size: pageSize, token: token))
            #expect(page.items.count <= pageSize)
            items += page.items
            token = page.nextPageToken
        } while token != nil
        return items
    }
}
