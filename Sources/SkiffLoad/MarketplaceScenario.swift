import Foundation
import SkiffAPI
public import SkiffCore
import SwiftProtobuf
import Synchronization

/// `marketplace`: a realistic mix over seeded accounts and listings —
/// 67 % listing search (random keywords, filters and sort; 1–3 pages via page tokens),
/// 12 % get listing, 8 % chat message between two seeded users, 6 % place bid, 5 % create listing,
/// 2 % sign-up of a new address + log-in of a seeded account.
///
/// ``prepare(_:)`` makes sure `seedUsers` verified accounts and `seedListings` listings exist,
/// reusing the ones in the state file (see ``MarketplaceState``) and seeding only the rest.
public final class MarketplaceScenario: MethodTimedScenario {
    public var name: String { "marketplace" }
    let options: ScenarioOptions
    /// The e-mail domain of seeded accounts (must pass the server's `--email-domain` allow-list).
    let domain: String
    private let prepared = Mutex<Prepared?>(nil)
    /// Latency per RPC (a mix operation makes one to three calls).
    public let timings = MethodTimings()

    struct Session: Sendable {
        var userID: String
        var auth: Metadata
    }

    struct Prepared: Sendable {
        var state: MarketplaceState
        var sessions: [Session]
    }

    /// Creates the scenario; seeded addresses end in `@domain`.
    public init(options: ScenarioOptions, domain: String = "campus.edu") {
        self.options = options
        self.domain = domain
    }

    public func prepare(_ context: LoadContext) async throws {
        let state = try await seed(context, domain: domain)
        let accounts = Skiff_Accounts_V1_Accounts.Client(transport: context.transport)
        let sessions = try await logIn(state.users.prefix(32), accounts)
        guard !state.listings.isEmpty else { throw SeedingError("no seeded listings: pass --seed-listings 1 or more") }
        prepared.withLock { $0 = Prepared(state: state, sessions: sessions) }
    }

    public func perform(_ untimed: any ClientTransport) async throws {
        let transport = MethodTimingTransport(base: untimed, timings: timings)
        guard let data = prepared.withLock({ $0 }) else { throw SeedingError("marketplace scenario not prepared") }
        var rng = SystemRandomNumberGenerator()
        let listings = Skiff_Listings_V1_Listings.Client(transport: transport)
        switch Int.random(in: 0..<100, using: &rng) {
        case ..<67:
            var request = Self.randomSearch(using: &rng)
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let page = try await transport.unary(
                    Skiff_Listings_V1_Listings.Method.SearchListings.descriptor,
                    request: request,
                    options: CallOptions(),
                    responseType: SearchPageToken.self
                ).message
                guard !page.nextPageToken.isEmpty else { break }
                request.pageToken = page.nextPageToken
            }
        case ..<79:
            let listing = data.state.listings.randomElement(using: &rng)!
            _ = try await listings.getListing(.with { $0.listingID = listing.listingID })
        case ..<87:
            let sender = data.sessions.randomElement(using: &rng)!
            guard let recipient = data.sessions.randomElement(using: &rng, where: { $0.userID != sender.userID })
            else { return }
            let chat = Skiff_Chat_V1_Chat.Client(transport: transport)
            _ = try await chat.sendMessage(
                .with {
                    $0.recipientID = recipient.userID
                    $0.text = "Is it still available? (\(Int.random(in: 1...999, using: &rng)))"
                },
                metadata: sender.auth
            )
        case ..<93:
            let buyer = data.sessions.randomElement(using: &rng)!
            guard
                let listing = data.state.listings.randomElement(using: &rng, where: { $0.sellerID != buyer.userID })
            else { return }
            try await placeBid(on: listing, as: buyer, transport: transport, using: &rng)
        case ..<98:
            let seller = data.sessions.randomElement(using: &rng)!
            _ = try await listings.createListing(Self.newListing(), metadata: seller.auth)
        default:
            let accounts = Skiff_Accounts_V1_Accounts.Client(transport: transport)
            let name = "load-signup-\(UUID().uuidString.prefix(8).lowercased())"
            _ = try await accounts.signUp(
                .with {
                    $0.email = "\(name)@\(domain)"
                    $0.password = "load-test-password"
                    $0.displayName = name
                }
            )
            let user = data.state.users.randomElement(using: &rng)!
            _ = try await accounts.logIn(
                .with {
                    $0.email = user.email
                    $0.password = user.password
                }
            )
        }
    }

    /// Bids like a person: looks up the highest live bid, then outbids it (and so the caller's own
    /// live bid) by $1–$5. Should a concurrent bid win the race (the amount is then too low), it looks
    /// again and tries again, up to ``bidAttempts`` times in all: with many calls in flight on few
    /// listings, losing twice in a row happens, and is bidding, not an error.
    func placeBid(
        on listing: MarketplaceState.Listing,
        as buyer: Session,
        transport: any ClientTransport,
        using rng: inout SystemRandomNumberGenerator
    ) async throws {
        let bids = Skiff_Bids_V1_Bids.Client(transport: transport)
        for attempt in 0..<Self.bidAttempts {
            let current = try await bids.listBidsForListing(.with { $0.listingID = listing.listingID })
            let amount = max(listing.priceCents, current.highestAmountCents) + Int64.random(in: 100...500, using: &rng)
            do {
                _ = try await bids.placeBid(
                    .with {
                        $0.listingID = listing.listingID
                        $0.amountCents = amount
                        $0.requestID = UUID().uuidString
                    },
                    metadata: buyer.auth
                )
                return
            } catch let error as RPCError where error.code == .invalidArgument && attempt < Self.bidAttempts - 1 {
                continue
            }
        }
    }

    /// How many times one PlaceBid operation bids before a lost race counts as an error.
    static let bidAttempts = 4

    /// A random search: 0–2 keywords, maybe a category, price range or condition, a random sort.
    static func randomSearch(using rng: inout SystemRandomNumberGenerator) -> Skiff_Listings_V1_SearchListingsRequest {
        .with {
            $0.query = (0..<Int.random(in: 0...2, using: &rng)).map { _ in marketplaceWords.randomElement(using: &rng)!
            }
            .joined(separator: " ")
            if Bool.random(using: &rng) {
                $0.filter.categories = [
                    Skiff_Listings_V1_Category(rawValue: Int.random(in: 1...8, using: &rng)) ?? .other
                ]
            }
            if Int.random(in: 0..<3, using: &rng) == 0 {
                let low = Int64.random(in: 0...20_000, using: &rng)
                $0.filter.minPriceCents = low
                $0.filter.maxPriceCents = low + Int64.random(in: 1_000...30_000, using: &rng)
            }
            if Int.random(in: 0..<4, using: &rng) == 0 {
                $0.filter.conditions = [
                    Skiff_Listings_V1_Condition(rawValue: Int.random(in: 1...3, using: &rng)) ?? .new
                ]
            }
            $0.sortOrder = Skiff_Listings_V1_ListingSortOrder(rawValue: Int.random(in: 0...4, using: &rng)) ?? .newest
            $0.pageSize = 10
        }
    }
}
