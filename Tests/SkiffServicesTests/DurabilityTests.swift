import Foundation
import GRDB
import SkiffAPI
import SkiffAccounts
import SkiffClient
import SkiffCore
import SkiffDomain
import SkiffSQLite
import SkiffTesting
import SwiftProtobuf
import Synchronization
import Testing

extension ServerProcess {
    /// A server on the SQLite file at `databasePath`.
    convenience init(databasePath: String) throws {
        try self.init(arguments: [
            "--storage", "sqlite:\(databasePath)", "--password-hash-rounds", "1000", "--log-level", "info",
            "--rate-limit-scale", "0",
        ])
    }
}

final class Acknowledged: Sendable {
    let emails = Mutex<[String]>([])
    let listings = Mutex<[String]>([])
    let bids = Mutex<[String]>([])
}

/// Creates a verified account with a live session straight in the database (the server runs
/// in another process, so its outbox cannot be read); returns the bearer metadata.
func seedUser(_ database: SQLiteDatabase, email: String, name: String) async throws -> Metadata {
    let store = database.accountsStore()
    let now = Date()
    let account = try await store.createAccount(
        Account(
            id: EntityID.make(.account),
            email: email,
            displayName: name,
            passwordHash: try await PasswordHasher(rounds: 1_000).hash("seeded password"),
            verified: true,
            createdAt: now
        )
    )
    let token = SecretToken.generate()
    try await store.createSession(
        Session(tokenHash: token.hash, accountID: account.id, expiresAt: now.addingTimeInterval(3600), createdAt: now)
    )
    return ["authorization": "Bearer \(token.value)"]
}

@Suite("Durability")
struct DurabilityTests {
    @Test("A skiff-server process on SQLite keeps no SQLite memory statistics, so allocations take no global lock")
    func noMemoryStatistics() async throws {
        try await withTemporaryDatabasePath { path in
            let server = try ServerProcess(databasePath: path)
            defer { server.stop() }
            // The first file opened turned them off, before anything else in the process used SQLite; the
            // server says so where it reports the storage it opened, which it does before it listens.
            let log = try String(contentsOf: server.logFile, encoding: .utf8)
            let opened = log.split(separator: "\n").filter { $0.contains("storage opened") }
            #expect(opened.count == 1, "\(log.prefix(2_000))")
            #expect(opened.allSatisfy { $0.contains("memoryStatistics=off") }, "\(opened)")
        }
    }

    @Test("every acknowledged sign-up, listing and bid survives SIGKILL mid-load; the database stays intact")
    func killMidLoad() async throws {
        try await withTemporaryDatabasePath { path in
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            let (sellerAuth, buyerAuth): (Metadata, Metadata)
            do {
                let database = try SQLiteDatabase(path: path)
                sellerAuth = try await seedUser(database, email: "seller@campus.edu", name: "Seller")
                buyerAuth = try await seedUser(database, email: "buyer@campus.edu", name: "Buyer")
                try database.close()
            }
            let acknowledged = Acknowledged()
            for round in 0..<3 {
                let server = try ServerProcess(databasePath: path)
                let pool = ClientConnectionPool(
                    target: .host("127.0.0.1", port: server.port),
                    size: 2,
                    configuration: ClientConfiguration(maxTransparentRetries: 0)
                )
                let accounts = AccountsClient(transport: pool)
                let listings = Skiff_Listings_V1_Listings.Client(transport: pool)
                let bids = Skiff_Bids_V1_Bids.Client(transport: pool)
                await withTaskGroup(of: Void.self) { group in
                    for worker in 0..<4 {
                        group.addTask {
                            for i in 0..<10_000 {
                                do {
                                    let listing = try await listings.createListing(
                                        .with {
                                            $0.listing.title = "Item \(round)-\(worker)-\(i)"
                                            $0.listing.priceCents = 100
                                            $0.listing.category = .books
                                            $0.listing.condition = .lightlyUsed
                                            $0.listing.biddingEnabled = true
                                            $0.listing.location.zipCode = "37235"
                                        },
                                        metadata: sellerAuth
                                    ).listing
                                    acknowledged.listings.withLock { $0.append(listing.listingID) }
                                    let bid = try await bids.placeBid(
                                        .with {
                                            $0.listingID = listing.listingID
                                            $0.amountCents = 100
                                        },
                                        metadata: buyerAuth
                                    ).bid
                                    acknowledged.bids.withLock { $0.append(bid.bidID) }
                                } catch {
                                    return  // the server died: stop this worker
                                }
                            }
                        }
                    }
                    for worker in 0..<8 {
                        group.addTask {
                            for i in 0..<10_000 {
                                let email = "r\(round)w\(worker)n\(i)@campus.edu"
                                do {
                                    _ = try await accounts.signUp(
                                        .with {
                                            $0.email = email
                                            $0.password = "durable password"
                                            $0.displayName = "User \(i)"
                                        }
                                    )
                                    acknowledged.emails.withLock { $0.append(email) }
                                } catch {
                                    return  // the server died: stop this worker
                                }
                            }
                        }
                    }
                    try? await Task.sleep(for: .milliseconds(400 + 150 * round))
                    server.kill()
                }
                await pool.close()
            }
            let emails = acknowledged.emails.withLock { $0 }
            #expect(emails.count > 5, "the load produced too few writes to prove anything")

            // Restarted on the same file: every acknowledged account exists (right password, not yet
            // verified → FAILED_PRECONDITION; a missing account would be UNAUTHENTICATED).
            let server = try ServerProcess(databasePath: path)
            defer { server.kill() }
            try await withClientConnection(target: .host("127.0.0.1", port: server.port)) { connection in
                let accounts = AccountsClient(transport: connection)
                let missing = await missingSignUps(emails, password: "durable password", on: accounts)
                #expect(missing.isEmpty, "acknowledged but lost: \(missing)")

                let listings = Skiff_Listings_V1_Listings.Client(transport: connection)
                let ackedListings = acknowledged.listings.withLock { $0 }
                #expect(!ackedListings.isEmpty)
                for id in ackedListings {
                    let listing = try await listings.getListing(.with { $0.listingID = id }).listing
                    #expect(listing.listingID == id)
                }
                let bids = Skiff_Bids_V1_Bids.Client(transport: connection)
                var stored = Set<String>()
                var token = ""
                repeat {
                    let page = try await bids.listMyBids(
                        .with {
                            $0.pageSize = 100
                            $0.pageToken = token
                        },
                        metadata: buyerAuth
                    )
                    stored.formUnion(page.bids.map(\.bidID))
                    token = page.nextPageToken
                } while !token.isEmpty
                let lostBids = Set(acknowledged.bids.withLock { $0 }).subtracting(stored)
                #expect(lostBids.isEmpty, "acknowledged but lost bids: \(lostBids.prefix(5))")
            }
            server.kill()
            let database = try SQLiteDatabase(path: path)
            let check = try await database.pool.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") }
            #expect(check == "ok")
        }
    }
}
