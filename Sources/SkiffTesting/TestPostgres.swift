public import Foundation
import Logging
import PostgresNIO
public import SkiffPostgres
import Testing

/// The PostgreSQL cluster the tests use: the one `SKIFF_TEST_POSTGRES_URL` names (dev/test.sh starts
/// a throw-away cluster and sets it). Without it, PostgreSQL tests fail: they are never skipped.
public enum TestPostgres {
    /// The cluster's administrative location (a database that always exists, such as `postgres`).
    public static func administrativeLocation() throws -> PostgresLocation {
        let url = try #require(
            ProcessInfo.processInfo.environment["SKIFF_TEST_POSTGRES_URL"],
            "SKIFF_TEST_POSTGRES_URL is not set: run the tests with dev/test.sh, or dev/postgres-cluster.sh swift test"
        )
        return try PostgresLocation(parsing: url)
    }

    /// Runs `body` with a new, empty database on the cluster, migrated by ``PostgresStorage/open``;
    /// the database is closed and dropped afterwards, whatever `body` does.
    @discardableResult
    public static func withDatabase<R>(_ body: (PostgresStorage) async throws -> R) async throws -> R {
        try await withDatabaseLocation { location in
            let database = try await PostgresStorage.open(location)
            let result: R
            do {
                result = try await body(database)
            } catch {
                await database.close()
                throw error
            }
            await database.close()
            return result
        }
    }

    /// Runs `body` with `count` storages on one new database, each opened as a separate server would
    /// open it, and the database's location; all are closed and the database dropped afterwards.
    public static func withStorages(
        _ count: Int,
        _ body: ([PostgresStorage], PostgresLocation) async throws -> Void
    ) async throws {
        try await withDatabaseLocation { location in
            var storages: [PostgresStorage] = []
            do {
                for _ in 0..<count { storages.append(try await PostgresStorage.open(location)) }
                try await body(storages, location)
            } catch {
                for storage in storages { await storage.close() }
                throw error
            }
            for storage in storages { await storage.close() }
        }
    }

    /// Runs `body` with the location of a new, empty database on the cluster (not migrated: the first
    /// ``PostgresStorage/open`` does that); the database is dropped afterwards, its connections ended.
    @discardableResult
    public static func withDatabaseLocation<R>(_ body: (PostgresLocation) async throws -> R) async throws -> R {
        let name = "skiff_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let location = try administrativeLocation()
        try await administer(location, "CREATE DATABASE \(name)")
        var target = location
        target.database = name
        target.poolSize = 8
        let result: R
        do {
            result = try await body(target)
        } catch {
            try? await administer(location, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            throw error
        }
        try await administer(location, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        return result
    }

    /// Runs one statement on the administrative database (a connection of its own, closed after).
    public static func administer(_ location: PostgresLocation, _ sql: String) async throws {
        var configuration = PostgresConnection.Configuration(
            host: location.host,
            port: location.port,
            username: location.username,
            password: location.password,
            database: location.database,
            tls: .disable
        )
        configuration.options.requireBackendKeyData = true
        let logger = Logger(label: "skiff.tests.postgres")
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }
}
