import Foundation
import SkiffAPI
public import SkiffCore
import SwiftProtobuf
import Synchronization

/// `campus`: the BucketList and LostFound mix over seeded activities, votes and lost-and-found items —
/// 30 % nearby activities (by distance or popularity, 1–2 pages), 15 % trending (campus-wide or near a
/// point), 15 % votes, 5 % new activities, 25 % lost-and-found search (0–2 words, maybe a category, a
/// circle, newest or nearest first; 1–2 pages), 5 % new lost-and-found reports (matched on the way in),
/// 5 % the matches of one of the caller's items.
///
/// ``prepare(_:)`` seeds accounts as `marketplace` does (no listings), then makes sure
/// `seedActivities` activities, `seedVotes` votes and `seedItems` items exist; what it seeded is kept
/// beside the marketplace state, in `<state>.campus.json`.
public final class CampusScenario: MethodTimedScenario {
    public var name: String { "campus" }
    let options: ScenarioOptions
    let domain: String
    private let prepared = Mutex<Prepared?>(nil)
    /// Latency per RPC (a mix operation makes one or two calls).
    public let timings = MethodTimings()

    struct Prepared: Sendable {
        var state: CampusState
        var sessions: [MarketplaceScenario.Session]
    }

    /// Creates the scenario; seeded addresses end in `@domain`.
    public init(options: ScenarioOptions, domain: String = "campus.edu") {
        self.options = options
        self.domain = domain
    }

    public func prepare(_ context: LoadContext) async throws {
        var accountOptions = options
        accountOptions.seedListings = 0
        let marketplace = MarketplaceScenario(options: accountOptions, domain: domain)
        let users = try await marketplace.seed(context, domain: domain)
        let accounts = Skiff_Accounts_V1_Accounts.Client(transport: context.transport)
        let sessions = try await marketplace.logIn(users.users.prefix(32), accounts)
        let state = try await seed(context, sessions: sessions, marketplace: marketplace)
        prepared.withLock { $0 = Prepared(state: state, sessions: sessions) }
    }

    public func perform(_ untimed: any ClientTransport) async throws {
        let transport = MethodTimingTransport(base: untimed, timings: timings)
        guard let data = prepared.withLock({ $0 }) else { throw SeedingError("campus scenario not prepared") }
        var rng = SystemRandomNumberGenerator()
        let bucketList = Skiff_Bucketlist_V1_BucketList.Client(transport: transport)
        let lostFound = Skiff_Lostfound_V1_LostFound.Client(transport: transport)
        let session = data.sessions.randomElement(using: &rng)!
        switch Int.random(in: 0..<100, using: &rng) {
        case ..<30:
            var request = Skiff_Bucketlist_V1_FindNearbyActivitiesRequest.with {
                $0.center = Self.campusPoint(using: &rng)
                $0.radiusKm = Double.random(in: 0.3...3, using: &rng)
                $0.sortOrder = Bool.random(using: &rng) ? .distance : .popularity
                $0.pageSize = 10
            }
            for _ in 0..<Int.random(in: 1...2, using: &rng) {
                let page = try await bucketList.findNearbyActivities(request, metadata: session.auth)
                guard !page.nextPageToken.isEmpty else { break }
                request.pageToken = page.nextPageToken
            }
        case ..<45:
            let near = Bool.random(using: &rng)
            _ = try await bucketList.listTrendingActivities(
                .with {
                    if near {
                        $0.center = Self.campusPoint(using: &rng)
                        $0.radiusKm = Double.random(in: 0.5...3, using: &rng)
                    }
                    $0.limit = 10
                },
                metadata: session.auth
            )
        case ..<60:
            guard let activity = data.state.activities.randomElement(using: &rng) else { return }
            _ = try await bucketList.voteActivity(
                .with {
                    $0.activityID = activity
                    $0.vote = Int.random(in: 0..<4, using: &rng) == 0 ? .down : .up
                },
                metadata: session.auth
            )
        case ..<65:
            _ = try await bucketList.createActivity(Self.newActivity(using: &rng), metadata: session.auth)
        case ..<90:
            var request = Self.randomItemSearch(using: &rng)
            for _ in 0..<Int.random(in: 1...2, using: &rng) {
                let page = try await lostFound.searchItems(request, metadata: session.auth)
                guard !page.nextPageToken.isEmpty else { break }
                request.pageToken = page.nextPageToken
            }
        case ..<95:
            _ = try await lostFound.reportItem(Self.newItem(using: &rng), metadata: session.auth)
        default:
            guard let item = data.state.items.randomElement(using: &rng, where: { $0.reporterID == session.userID })
            else { return }
            _ = try await lostFound.listMatches(
                .with {
                    $0.itemID = item.itemID
                    $0.pageSize = 10
                },
                metadata: session.auth
            )
        }
    }

    // MARK: Seeding

    /// Makes sure the requested activities, votes and items exist, reusing those of the state file.
    func seed(
        _ context: LoadContext,
        sessions: [MarketplaceScenario.Session],
        marketplace: MarketplaceScenario
    ) async throws -> CampusState {
        let path = options.statePath + ".campus.json"
        var state = try CampusState.load(path)
        let bucketList = Skiff_Bucketlist_V1_BucketList.Client(transport: context.transport)
        let lostFound = Skiff_Lostfound_V1_LostFound.Client(transport: context.transport)
        // Stale state (a server with memory storage restarted): start over.
        if let first = state.activities.first {
            do {
                _ = try await bucketList.getActivity(.with { $0.activityID = first }, metadata: sessions[0].auth)
            } catch let error as RPCError where error.code == .notFound {
                state = CampusState()
            }
        }
        let inFlight = options.seedConcurrency
        let missingActivities = max(0, options.seedActivities - state.activities.count)
        if missingActivities > 0 {
            let created = try await marketplace.concurrently(missingActivities, inFlight: inFlight) { i in
                var rng = SystemRandomNumberGenerator()
                let activity = try await bucketList.createActivity(
                    Self.newActivity(using: &rng),
                    metadata: sessions[i % sessions.count].auth
                )
                return activity.activity.activityID
            } progress: { done in
                context.progress.bar("seeding activities", done: done, total: missingActivities)
            }
            state.activities.append(contentsOf: created)
            context.progress.finish()
            try state.save(path)
        }
        let missingVotes = max(0, options.seedVotes - state.votes)
        if missingVotes > 0, !state.activities.isEmpty {
            let activities = state.activities
            _ = try await marketplace.concurrently(missingVotes, inFlight: inFlight) { _ in
                var rng = SystemRandomNumberGenerator()
                _ = try await bucketList.voteActivity(
                    .with {
                        $0.activityID = activities.randomElement(using: &rng)!
                        $0.vote = .up
                    },
                    metadata: sessions.randomElement(using: &rng)!.auth
                )
            } progress: { done in
                context.progress.bar("seeding votes     ", done: done, total: missingVotes)
            }
            state.votes += missingVotes
            context.progress.finish()
            try state.save(path)
        }
        let missingItems = max(0, options.seedItems - state.items.count)
        if missingItems > 0 {
            let created = try await marketplace.concurrently(missingItems, inFlight: inFlight) { i in
                var rng = SystemRandomNumberGenerator()
                let session = sessions[i % sessions.count]
                let item = try await lostFound.reportItem(Self.newItem(using: &rng), metadata: session.auth)
                return CampusState.Item(itemID: item.item.itemID, reporterID: session.userID)
            } progress: { done in
                context.progress.bar("seeding items     ", done: done, total: missingItems)
            }
            state.items.append(contentsOf: created)
            context.progress.finish()
            try state.save(path)
        }
        return state
    }

    // MARK: Requests

    /// Campus: a box about 4 km across.
    static func campusPoint(using rng: inout SystemRandomNumberGenerator) -> Skiff_Bucketlist_V1_GeoPoint {
        .with {
            $0.latitude = 36.1447 + Double.random(in: -0.02...0.02, using: &rng)
            $0.longitude = -86.8027 + Double.random(in: -0.025...0.025, using: &rng)
        }
    }

    static func newActivity(
        using rng: inout SystemRandomNumberGenerator
    ) -> Skiff_Bucketlist_V1_CreateActivityRequest {
        let words = (0..<3).map { _ in campusWords.randomElement(using: &rng)! }
        return .with {
            $0.activity.title = words.joined(separator: " ").capitalized
            $0.activity.description_p = "Load-test activity: \(words.joined(separator: ", "))."
            $0.activity.place.name = "Campus"
            $0.activity.place.point = campusPoint(using: &rng)
            $0.activity.tags = Array(Set(words.prefix(2)))
        }
    }

    /// A lost or found item as people describe them: a colour and an object in the title; the brand and a
    /// distinguishing mark in the description; the category follows the object.
    static func newItem(using rng: inout SystemRandomNumberGenerator) -> Skiff_Lostfound_V1_ReportItemRequest {
        let (object, category) = lostObjects.randomElement(using: &rng)!
        let colour = lostColours.randomElement(using: &rng)!
        let brand = lostBrands.randomElement(using: &rng)!
        let mark = lostMarks.randomElement(using: &rng)!
        let point = campusPoint(using: &rng)
        return .with {
            $0.item.kind = Bool.random(using: &rng) ? .lost : .found
            $0.item.title = "\(colour.capitalized) \(object)"
            $0.item.description_p = "\(brand.capitalized) \(object), \(mark)."
            $0.item.category = category
            $0.item.building = ["Library", "Student Center", "Gym", "Engineering Hall"].randomElement(using: &rng)!
            $0.item.point.latitude = point.latitude
            $0.item.point.longitude = point.longitude
            $0.item.occurredAt = Google_Protobuf_Timestamp(
                date: Date().addingTimeInterval(-Double.random(in: 0...(20 * 86_400), using: &rng))
            )
            $0.item.contactInstructions = "At the front desk"
        }
    }

    static func randomItemSearch(
        using rng: inout SystemRandomNumberGenerator
    ) -> Skiff_Lostfound_V1_SearchItemsRequest {
        .with {
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: $0.query = ""
            case 1: $0.query = lostObjects.randomElement(using: &rng)!.name
            case 2:
                $0.query = lostColours.randomElement(using: &rng)! + " " + lostObjects.randomElement(using: &rng)!.name
            default: $0.query = lostBrands.randomElement(using: &rng)!
            }
            if Bool.random(using: &rng) {
                $0.filter.categories = [
                    Skiff_Lostfound_V1_ItemCategory(rawValue: Int.random(in: 1...7, using: &rng)) ?? .other
                ]
            }
            let near = Bool.random(using: &rng)
            if near {
                let point = campusPoint(using: &rng)
                $0.filter.near.center.latitude = point.latitude
                $0.filter.near.center.longitude = point.longitude
                $0.filter.near.radiusKm = Double.random(in: 0.3...3, using: &rng)
            }
            $0.sortOrder = near && Bool.random(using: &rng) ? .distance : .newest
            $0.pageSize = 10
        }
    }
}

/// Words activity titles are made of.
let campusWords = [
    "sunrise", "hike", "concert", "picnic", "kayak", "museum", "trivia", "karaoke", "yoga", "bonfire",
    "stargazing", "brunch", "climbing", "frisbee", "poetry", "film", "market", "garden", "chess", "dance",
]

/// Objects people lose, with their category.
let lostObjects: [(name: String, category: Skiff_Lostfound_V1_ItemCategory)] = [
    ("phone", .electronics), ("laptop", .electronics), ("charger", .electronics), ("headphones", .electronics),
    ("earbuds", .electronics), ("calculator", .electronics), ("tablet", .electronics), ("watch", .electronics),
    ("jacket", .clothing), ("hoodie", .clothing), ("scarf", .clothing), ("beanie", .clothing), ("gloves", .clothing),
    ("sweater", .clothing), ("cap", .clothing), ("raincoat", .clothing), ("wallet", .idCard), ("badge", .idCard),
    ("passport", .idCard), ("licence", .idCard), ("keys", .keys), ("keyring", .keys), ("fob", .keys),
    ("backpack", .bags), ("tote", .bags), ("purse", .bags), ("duffel", .bags), ("satchel", .bags),
    ("textbook", .books), ("notebook", .books), ("novel", .books), ("planner", .books), ("binder", .books),
    ("umbrella", .other), ("bottle", .other), ("glasses", .other), ("ring", .other), ("bracelet", .other),
    ("mug", .other), ("skateboard", .other),
]

/// Colours people describe things by.
let lostColours = [
    "black", "white", "grey", "navy", "blue", "red", "green", "yellow", "orange", "purple", "pink", "brown",
]

/// Brands people name.
let lostBrands = [
    "apple", "samsung", "sony", "bose", "dell", "lenovo", "nike", "adidas", "patagonia", "northface",
    "jansport", "herschel", "fjallraven", "hydroflask", "yeti", "rayban", "casio", "fossil", "moleskine",
    "pearson", "levis", "uniqlo", "columbia", "timbuk2", "anker", "logitech", "garmin", "fitbit", "kindle",
    "swatch",
]

/// What sets one apart.
let lostMarks = [
    "sticker on the back", "cracked corner", "name tag inside", "scratched lid", "blue keychain",
    "initials engraved", "torn strap", "coffee stain", "pin badge", "rubber case", "frayed edge",
    "missing button", "glitter cover", "university logo", "red lanyard", "dented side", "taped handle",
    "faded print", "padded sleeve", "bike reflector",
]

/// The activities, votes and items the campus scenario seeded, kept between runs.
public struct CampusState: Codable, Sendable, Equatable {
    /// A seeded lost-and-found item.
    public struct Item: Codable, Sendable, Equatable {
        /// The item id.
        public var itemID: String
        /// The reporter's user id.
        public var reporterID: String
    }
    /// Seeded activity ids.
    public var activities: [String] = []
    /// Votes cast while seeding.
    public var votes = 0
    /// Seeded items.
    public var items: [Item] = []

    /// Loads the state at `path`, or an empty state if there is no such file.
    public static func load(_ path: String) throws -> CampusState {
        guard FileManager.default.fileExists(atPath: path) else { return CampusState() }
        return try JSONDecoder().decode(CampusState.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Writes the state to `path`.
    public func save(_ path: String) throws {
        try JSONEncoder().encode(self).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
