import Logging
import SkiffPostgres
import SkiffServerApp
import SkiffTesting
import Testing

@Suite("--storage postgres://")
struct PostgresSelectionTests {
    @Test("postgres:// is a backend for every service or per service, options included")
    func parses() throws {
        let location = try PostgresLocation(parsing: "postgres://skiff@db:5433/campus?pool=4")
        let everywhere = try StorageSelection.parse(["postgres://skiff@db:5433/campus?pool=4"])
        #expect(everywhere.backend(for: "chat") == .postgres(location))
        let split = try StorageSelection.parse([
            "sqlite:/tmp/skiff.sqlite", "accounts=postgres://skiff@db:5433/campus?pool=4",
        ])
        #expect(split.backend(for: "accounts") == .postgres(location))
        #expect(split.backend(for: "listings") == .sqlite(path: "/tmp/skiff.sqlite"))
        #expect(StorageSelection.Backend.postgres(location).description == "postgres://skiff@db:5433/campus?pool=4")
    }

    @Test("A bad postgres:// value is refused with the reason, without echoing a password")
    func refusesBadValues() {
        for value in ["postgres://skiff:hunter2@db", "accounts=postgres://skiff:hunter2@db/x?pool=0"] {
            do {
                _ = try StorageSelection.parse([value])
                Issue.record("\(value) was accepted")
            } catch {
                #expect(!error.description.contains("hunter2"), "\(error.description)")
                #expect(error.description.contains("database name") || error.description.contains("pool"))
            }
        }
    }
}
