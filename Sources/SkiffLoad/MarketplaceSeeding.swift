import Foundation
import SkiffAPI
import SkiffCore
import SwiftProtobuf

/// Where the seeding code gets e-mail verification tokens from.
///
/// Sign-up mails a one-time token that only reaches the server's outbox and, at
/// `--log-level debug`, its log. The CLI reads the log (``MailLogTokenSource``); tests read the
/// in-process outbox (``ClosureTokenSource``).
public protocol VerificationTokenSource: Sendable {
    /// The verification token mailed to `email` (whose display name is `displayName`).
    func verificationToken(email: String, displayName: String) async throws -> String
}

/// Tokens from a closure, e.g. one reading an in-process server's outbox.
public struct ClosureTokenSource: VerificationTokenSource {
    let body: @Sendable (String, String) async throws -> String
    /// Creates a source calling `body(email, displayName)`.
    public init(_ body: @escaping @Sendable (String, String) async throws -> String) { self.body = body }
    public func verificationToken(email: String, displayName: String) async throws -> String {
        try await body(email, displayName)
    }
}

/// Tokens read from the server's log: its standard error redirected to a file, with the server
/// started with `--log-level debug` so that mail bodies are logged.
///
/// The mail body holds `Welcome, <display name>!` and then `Verification token: <token>`; every
/// seeded account has a unique display name, so the token after the newest welcome for that name
/// is the one. The file is polled for up to `timeout`.
public struct MailLogTokenSource: VerificationTokenSource {
    /// The log file.
    public var path: String
    /// How long to wait for the mail to show up.
    public var timeout: Duration

    /// Creates a source reading `path`.
    public init(path: String, timeout: Duration = .seconds(10)) {
        self.path = path
        self.timeout = timeout
    }

    public func verificationToken(email: String, displayName: String) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let text = try? String(contentsOfFile: path, encoding: .utf8),
                let token = Self.token(in: text, displayName: displayName)
            {
                return token
            }
            guard ContinuousClock.now < deadline else {
                throw SeedingError(
                    "no verification token for \(email) in \(path) after \(timeout): start the server with "
                        + "`--log-level debug 2> \(path)`"
                )
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The token following the last `Welcome, <displayName>!` in `text`.
    static func token(in text: String, displayName: String) -> String? {
        guard let welcome = text.range(of: "Welcome, \(displayName)!", options: .backwards),
            let label = text.range(of: "Verification token: ", range: welcome.upperBound..<text.endIndex)
        else { return nil }
        let token = text[label.upperBound...].prefix { !$0.isWhitespace && $0 != "\"" && $0 != "\\" }
        return token.isEmpty ? nil : String(token)
    }
}

/// A seeding problem explained to the user.
public struct SeedingError: Error, CustomStringConvertible {
    /// What went wrong and what to do.
    public var description: String
    /// Creates an error with its explanation.
    public init(description: String) { self.description = description }
    init(_ description: String) { self.description = description }
}

/// The accounts and listings seeded by earlier runs, kept in a small JSON file (`--state`).
///
/// Passwords of throw-away load-test accounts are stored in clear text: do not point the tool at
/// a production server.
public struct MarketplaceState: Codable, Sendable, Equatable {
    /// A seeded account.
    public struct User: Codable, Sendable, Equatable {
        /// The e-mail address.
        public var email: String
        /// The password (clear text: throw-away accounts only).
        public var password: String
        /// The user id.
        public var userID: String
    }
    /// A seeded listing.
    public struct Listing: Codable, Sendable, Equatable {
        /// The listing id.
        public var listingID: String
        /// The seller's user id.
        public var sellerID: String
        /// The asking price in cents.
        public var priceCents: Int64
    }
    /// Seeded accounts, verified.
    public var users: [User] = []
    /// Seeded listings, bidding enabled.
    public var listings: [Listing] = []

    /// Loads the state at `path`, or an empty state if there is no such file.
    public static func load(_ path: String) throws -> MarketplaceState {
        guard FileManager.default.fileExists(atPath: path) else { return MarketplaceState() }
        return try JSONDecoder().decode(MarketplaceState.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Writes the state to `path`.
    public func save(_ path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}

/// Words titles and search queries are made of.
let marketplaceWords = [
    "vintage", "denim", "jacket", "lamp", "desk", "chair", "calculus", "textbook", "bike", "helmet",
    "sneakers", "boots", "hoodie", "scarf", "headphones", "charger", "laptop", "monitor", "keyboard", "mug",
    "poster", "rug", "mirror", "shelf", "kettle", "blender", "tickets", "concert", "jersey", "backpack",
]

extension MarketplaceScenario {
    /// Seeds up to the requested numbers, reusing (and extending) the state file.
    func seed(_ context: LoadContext, domain: String) async throws -> MarketplaceState {
        let accounts = Skiff_Accounts_V1_Accounts.Client(transport: context.transport)
        let listings = Skiff_Listings_V1_Listings.Client(transport: context.transport)
        var state = try MarketplaceState.load(options.statePath)
        // Stale state (e.g. a server with memory storage restarted): start over.
        if let first = state.users.first {
            do {
                _ = try await accounts.logIn(
                    .with {
                        $0.email = first.email
                        $0.password = first.password
                    }
                )
                if let listing = state.listings.first {
                    _ = try await listings.getListing(.with { $0.listingID = listing.listingID })
                }
            } catch let error as RPCError where error.code == .unauthenticated || error.code == .notFound {
                context.progress.update("state in \(options.statePath) does not match this server: seeding afresh")
                context.progress.finish()
                state = MarketplaceState()
            }
        }
        let missingUsers = max(0, options.seedUsers - state.users.count)
        if missingUsers > 0 {
            guard let source = options.tokenSource else {
                throw SeedingError(
                    "\(missingUsers) account(s) to seed need e-mail verification: run the server with "
                        + "`--log-level debug 2> server.log` and pass `--mail-log server.log`"
                )
            }
            let run = UUID().uuidString.prefix(8).lowercased()
            let first = state.users.count
            let created = try await concurrently(missingUsers, inFlight: min(options.seedConcurrency, 8)) { i in
                let name = "load-\(run)-\(first + i)"
                let email = "\(name)@\(domain)"
                let password = "load-test-\(UUID().uuidString.prefix(12))"
                _ = try await accounts.signUp(
                    .with {
                        $0.email = email
                        $0.password = password
                        $0.displayName = name
                    }
                )
                let token = try await source.verificationToken(email: email, displayName: name)
                _ = try await accounts.verifyEmail(.with { $0.token = token })
                let session = try await accounts.logIn(
                    .with {
                        $0.email = email
                        $0.password = password
                    }
                )
                return MarketplaceState.User(email: email, password: password, userID: session.userID)
            } progress: { done in
                context.progress.bar("seeding users   ", done: done, total: missingUsers)
            }
            state.users.append(contentsOf: created)
            try state.save(options.statePath)
        }
        let sellers = try await logIn(state.users.prefix(8), accounts)
        let missingListings = max(0, options.seedListings - state.listings.count)
        if missingListings > 0 {
            let started = ContinuousClock.now
            let created = try await concurrently(missingListings, inFlight: options.seedConcurrency) { i in
                let seller = sellers[i % sellers.count]
                let listing = try await listings.createListing(Self.newListing(), metadata: seller.auth).listing
                return MarketplaceState.Listing(
                    listingID: listing.listingID,
                    sellerID: seller.userID,
                    priceCents: listing.priceCents
                )
            } progress: { done in
                context.progress.bar("seeding listings", done: done, total: missingListings)
            }
            state.listings.append(contentsOf: created)
            let seconds = (ContinuousClock.now - started) / .seconds(1)
            context.progress.update(
                "seeded \(missingListings) listings in \(String(format: "%.1f", seconds)) s "
                    + "(\(Int(Double(missingListings) / max(seconds, 0.001))) listings/s, "
                    + "\(options.seedConcurrency) in flight)"
            )
            context.progress.finish()
        }
        if missingListings > 0 { try state.save(options.statePath) }
        return state
    }

    /// Runs `body` for `0..<count` with at most `inFlight` calls at once; returns the results in completion
    /// order, reporting each completion to `progress`. The first error cancels the rest and is thrown.
    func concurrently<T: Sendable>(
        _ count: Int,
        inFlight: Int,
        _ body: @escaping @Sendable (Int) async throws -> T,
        progress: (Int) -> Void
    ) async throws -> [T] {
        try await withThrowingTaskGroup(of: T.self) { group in
            var results: [T] = []
            results.reserveCapacity(count)
            var next = 0
            while next < min(count, max(1, inFlight)) {
                let index = next
                group.addTask { try await body(index) }
                next += 1
            }
            while let result = try await group.next() {
                results.append(result)
                progress(results.count)
                if next < count {
                    let index = next
                    group.addTask { try await body(index) }
                    next += 1
                }
            }
            return results
        }
    }

    /// Logs `users` in; returns their ids and bearer metadata.
    func logIn(
        _ users: some Collection<MarketplaceState.User>,
        _ accounts: Skiff_Accounts_V1_Accounts.Client
    ) async throws -> [Session] {
        var sessions: [Session] = []
        for user in users {
            let session = try await accounts.logIn(
                .with {
                    $0.email = user.email
                    $0.password = user.password
                }
            )
            sessions.append(
                Session(userID: session.userID, auth: ["authorization": .string("Bearer \(session.sessionToken)")])
            )
        }
        guard !sessions.isEmpty else { throw SeedingError("no seeded accounts: pass --seed-users 1 or more") }
        return sessions
    }

    /// A random listing to create.
    static func newListing() -> Skiff_Listings_V1_CreateListingRequest {
        var rng = SystemRandomNumberGenerator()
        let words = (0..<3).map { _ in marketplaceWords.randomElement(using: &rng)! }
        return .with {
            $0.listing.title = words.joined(separator: " ").capitalized
            $0.listing.description_p = "Load-test listing: \(words.joined(separator: ", "))."
            $0.listing.priceCents = Int64.random(in: 100...50_000, using: &rng)
            $0.listing.category = Skiff_Listings_V1_Category(rawValue: Int.random(in: 1...8, using: &rng)) ?? .other
            $0.listing.condition = Skiff_Listings_V1_Condition(rawValue: Int.random(in: 1...3, using: &rng)) ?? .new
            $0.listing.tags = Array(words.prefix(2))
            $0.listing.biddingEnabled = true
            $0.listing.location.zipCode = ["37235", "37203", "37212", "37240"].randomElement(using: &rng)!
            // A point on or near campus (about 4 km across), so that nearby searches find something.
            $0.listing.location.point.latitude = 36.1447 + Double.random(in: -0.02...0.02, using: &rng)
            $0.listing.location.point.longitude = -86.8027 + Double.random(in: -0.025...0.025, using: &rng)
            $0.requestID = UUID().uuidString
        }
    }
}
