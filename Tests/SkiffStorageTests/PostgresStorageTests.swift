import Foundation
import SkiffPostgres
import SkiffTesting
import Testing

@Suite("PostgreSQL storage: locations, migrations, failures")
struct PostgresStorageTests {
    @Test("postgres:// locations parse with their defaults and options; the description hides the password")
    func locations() throws {
        let plain = try PostgresLocation(parsing: "postgres://skiff@db.campus.edu/marketplace")
        #expect(plain == PostgresLocation(host: "db.campus.edu", username: "skiff", database: "marketplace"))
        #expect(plain.port == 5432 && plain.tls == .prefer && plain.poolSize == PostgresLocation.defaultPoolSize)
        #expect(plain.description == "postgres://skiff@db.campus.edu:5432/marketplace")

        let full = try PostgresLocation(
            parsing: "postgresql://app%40x:p%2Fss%20word@10.0.0.5:6543/skiff?sslmode=require&pool=32"
        )
        #expect(full.username == "app@x" && full.password == "p/ss word")
        #expect(full.host == "10.0.0.5" && full.port == 6543 && full.database == "skiff")
        #expect(full.tls == .require && full.poolSize == 32)
        #expect(full.description == "postgres://app@x@10.0.0.5:6543/skiff?sslmode=require&pool=32")
        #expect(!full.description.contains("ss word") && !full.description.contains("p%2Fss"))
    }

    @Test(
        "Unusable locations are refused with what to fix, never echoing the password",
        arguments: [
            ("postgres://h/db", "user name"),
            ("postgres://u:hunter2@/db", "host"),
            ("postgres://u:hunter2@h", "database name"),
            ("postgres://u:hunter2@h/", "database name"),
            ("postgres://u:hunter2@h/db?pool=0", "pool"),
            ("postgres://u:hunter2@h/db?pool=many", "pool"),
            ("postgres://u:hunter2@h/db?sslmode=verify-full", "sslmode"),
            ("postgres://u:hunter2@h/db?password=x", "unknown option"),
            ("mysql://u@h/db", "expected postgres://"),
        ]
    )
    func badLocations(text: String, complaint: String) {
        do {
            _ = try PostgresLocation(parsing: text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.message.contains(complaint), "\(error.message)")
            #expect(!error.message.contains("hunter2"))
        }
    }

    @Test("Servers opening a new database at once migrate it exactly once, in order")
    func concurrentMigrations() async throws {
        try await TestPostgres.withDatabaseLocation { location in
            let opened = try await withThrowingTaskGroup(of: PostgresStorage.self) { group in
                for _ in 0..<4 { group.addTask { try await PostgresStorage.open(location) } }
                var opened: [PostgresStorage] = []
                for try await storage in group { opened.append(storage) }
                return opened
            }
            #expect(opened.count == 4)
            #expect(try await opened[0].appliedMigrations() == PostgresStorage.schemaMigrations)
            #expect(!PostgresStorage.schemaMigrations.isEmpty)
            for storage in opened { await storage.close() }
            // Opening again runs nothing new.
            let again = try await PostgresStorage.open(location)
            #expect(try await again.appliedMigrations() == PostgresStorage.schemaMigrations)
            await again.close()
        }
    }

    @Test("A database migrated by a newer Skiff is refused, and left as it is")
    func newerSchemaRefused() async throws {
        try await TestPostgres.withDatabaseLocation { location in
            let storage = try await PostgresStorage.open(location)
            await storage.close()
            try await TestPostgres.administer(
                location,
                "INSERT INTO skiff_migration (position, id) VALUES (999, 'accounts-v999')"
            )
            do {
                let refused = try await PostgresStorage.open(location)
                await refused.close()
                Issue.record("a database with an unknown migration was opened")
            } catch let error as PostgresStorageError {
                #expect(error.message.contains("newer version of Skiff"), "\(error.message)")
                #expect(error.message.contains("accounts-v999"))
            }
        }
    }

    @Test("An unreachable server fails the open with the location (no password) and the reason")
    func unreachable() async throws {
        // A port nothing listens on: bound, then closed again.
        let port = try freeLoopbackPort()
        let location = try PostgresLocation(parsing: "postgres://skiff:hunter2@127.0.0.1:\(port)/skiff?sslmode=disable")
        do {
            let storage = try await PostgresStorage.open(location, connectTimeout: .seconds(2))
            await storage.close()
            Issue.record("opened a database on a port nothing listens on")
        } catch let error as PostgresStorageError {
            #expect(error.message.contains("postgres://skiff@127.0.0.1:\(port)/skiff"), "\(error.message)")
            #expect(!error.message.contains("hunter2"))
        }
    }
}
