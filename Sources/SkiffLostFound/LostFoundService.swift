public import Foundation
public import Logging
public import SkiffAPI
public import SkiffCore
public import SkiffDomain
public import SkiffFeed
import SwiftProtobuf

/// The LostFound service: reporting lost and found items, editing them, marking them returned, search,
/// and matches between found and lost items.
///
/// Domain rules live in ``LostFoundRules``, matching in ``LostFoundMatcher``; storage goes through
/// ``LostFoundStore``; match notifications through the injected ``SkiffDomain/FeedPublisher``; the wire
/// types are converted at this edge only.
///
/// Who sees what: guests may read (GetItem, SearchItems) but never see contact instructions; every
/// signed-in user sees them (so that whoever found or lost the item can reach the reporter); the exact point
/// is shown to the reporter only. Writes and ListMatches need a signed-in user; only an item's reporter may
/// change it, mark it returned, or list its matches.
public struct LostFoundService: Skiff_Lostfound_V1_LostFound.ServiceProtocol {
    let store: any LostFoundStore
    let feed: any FeedPublisher
    let matcher: LostFoundMatcher
    let time: any TimeSource
    let logger: Logger
    let reportLimiter: UserRateLimiter

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - store: Where items and matches live.
    ///   - feed: Where match notifications go (Chat's live feed); ``SkiffDomain/NoFeed`` without Chat.
    ///   - matcher: How found and lost items are scored.
    ///   - time: The clock.
    ///   - logger: Where failures to publish notifications are logged.
    ///   - reportLimit: Items one user may report (ReportItem); `nil` for no limit. Default: 30 per
    ///     hour.
    public init(
        store: any LostFoundStore,
        feed: any FeedPublisher,
        matcher: LostFoundMatcher = .standard,
        time: any TimeSource = SystemTimeSource(),
        logger: Logger = Logger(label: "skiff.lostfound", factory: { _ in SwiftLogNoOpLogHandler() }),
        reportLimit: RateLimit? = Self.defaultReportLimit
    ) {
        self.reportLimiter = UserRateLimiter(reportLimit, what: "items reported")
        self.store = store
        self.feed = feed
        self.matcher = matcher
        self.time = time
        self.logger = logger
    }

    /// The default per-user limit on reports: 30 per hour.
    public static let defaultReportLimit = RateLimit(30, per: .seconds(3600))

    public func reportItem(
        request: Skiff_Lostfound_V1_ReportItemRequest,
        context: ServerContext
    ) async throws -> Skiff_Lostfound_V1_ReportItemResponse {
        try LostFoundRequestBounds.check(request)
        let user = try context.requireUser()
        guard request.hasItem else {
            throw DomainError(.invalidArgument, "item is missing: send the item's fields.")
        }
        let now = time.now()
        try reportLimiter.acquire(userID: user.id, now: now)
        let kind = try LostFoundKind(proto: request.item.kind, field: "item.kind")
        let fields = try LostFoundRules.validate(try LostFoundItemFields(proto: request.item), now: now)
        let item = LostFoundItem(
            id: EntityID.make(.lostFoundItem),
            reporterID: user.id,
            kind: kind,
            fields: fields,
            createdAt: now
        )
        let report = try await store.reportItem(item, matcher: matcher)
        if report.item.kind == .found, !report.matches.isEmpty {
            await notifyOwners(of: report)
        }
        return .with {
            $0.item = LostFoundViewer(userID: user.id).proto(report.item)
            $0.matchCount = Int32(report.matches.count)
        }
    }

    /// Tells the reporter of each matching lost item, once per pair (the idempotency key names the pair).
    /// The report is stored whatever happens here: a failure is logged and the matches stay listed (and
    /// the relay, ``republishMatches(since:)``, publishes them later).
    func notifyOwners(of report: LostFoundReport) async {
        do {
            let notifications = try await notifications(found: report.item, matches: report.matches)
            guard !notifications.isEmpty else { return }
            try await feed.publish(notifications)
        } catch {
            logger.warning(
                "lost-and-found match notifications not published",
                metadata: [
                    "found_item_id": "\(report.item.id)",
                    "matches": "\(report.matches.count)",
                    "error": "\(LogText.bounded(error))",
                ]
            )
        }
    }

    /// The feed notifications of a found item's matches: one per matching lost item, to its reporter
    /// (never to the finder).
    func notifications(found: LostFoundItem, matches: [LostFoundMatch]) async throws -> [FeedNotification] {
        var notifications: [FeedNotification] = []
        for match in matches {
            guard let lost = try await store.item(id: match.lostItemID), lost.reporterID != found.reporterID else {
                continue
            }
            notifications.append(
                FeedNotification(
                    userID: lost.reporterID,
                    idempotencyKey: "lostfound-match:\(found.id):\(lost.id)",
                    kind: .lostFoundMatch(
                        .init(
                            lostItemID: lost.id,
                            foundItemID: found.id,
                            foundItemTitle: found.title,
                            score: match.score
                        )
                    ),
                    occurredAt: match.matchedAt
                )
            )
        }
        return notifications
    }

    /// Publishes to the owners' feeds, again, the notifications of every found item reported since
    /// `date` — the relay that makes them at-least-once (a report committed just before a crash, or
    /// whose notifications failed, is announced on the next run; the feed ignores what it already
    /// has). Only matches recorded by a found item's report notify anyone, as at report time.
    ///
    /// - Returns: The number of notifications published.
    public func republishMatches(since date: Date) async throws -> Int {
        let matches = try await store.matches(recordedSince: date, limit: 100_000)
        var published = 0
        for (foundID, group) in Dictionary(grouping: matches, by: \.foundItemID).sorted(by: { $0.key < $1.key }) {
            // A match recorded when the found item was reported carries its report time.
            guard let found = try await store.item(id: foundID) else { continue }
            let announced = group.filter { $0.matchedAt == found.createdAt }
            let notifications = try await notifications(found: found, matches: announced)
            guard !notifications.isEmpty else { continue }
            try await feed.publish(notifications)
            published += notifications.count
        }
        return published
    }

    public func getItem(
        request: Skiff_Lostfound_V1_GetItemRequest,
        context: ServerContext
    ) async throws -> Skiff_Lostfound_V1_GetItemResponse {
        try LostFoundRequestBounds.check(request)
        guard !request.itemID.isEmpty else { throw DomainError(.invalidArgument, "item_id is empty.") }
        guard let item = try await store.item(id: request.itemID) else { throw Self.notFound(request.itemID) }
        return .with { $0.item = Self.viewer(context).proto(item) }
    }

    public func updateItem(
        request: Skiff_Lostfound_V1_UpdateItemRequest,
        context: ServerContext
    ) async throws -> Skiff_Lostfound_V1_UpdateItemResponse {
        try LostFoundRequestBounds.check(request)
        let user = try context.requireUser()
        let id = request.item.itemID
        guard !id.isEmpty else {
            throw DomainError(.invalidArgument, "item.item_id is empty: name the item to change.")
        }
        let now = time.now()
        let changes = try LostFoundRules.validate(try Self.changes(request), now: now)
        let item = try await Self.mapNotFound(id) {
            try await store.updateItem(id: id, reporterID: user.id, changes: changes, now: now)
        }
        return .with { $0.item = LostFoundViewer(userID: user.id).proto(item) }
    }

    static let updatablePaths =
        "title, description, category, building, point, occurred_at, contact_instructions, image_id"

    /// The changes named by the request's mask (not yet validated).
    static func changes(_ request: Skiff_Lostfound_V1_UpdateItemRequest) throws(DomainError) -> LostFoundItemChanges {
        let paths = request.updateMask.paths
        guard !paths.isEmpty else {
            throw DomainError(.invalidArgument, "update_mask is empty: name the fields to change (\(updatablePaths)).")
        }
        let proto = request.item
        var changes = LostFoundItemChanges()
        for path in paths {
            switch path {
            case "title": changes.title = proto.title
            case "description": changes.description = proto.description_p
            case "category": changes.category = try LostFoundCategory(proto: proto.category, field: "item.category")
            case "building": changes.building = proto.building
            case "point": changes.point = .some(proto.hasPoint ? LostFoundPoint(proto: proto.point) : nil)
            case "occurred_at":
                guard proto.hasOccurredAt else {
                    throw DomainError(.invalidArgument, "item.occurred_at is missing: give the new time.")
                }
                changes.occurredAt = proto.occurredAt.checkedDate
            case "contact_instructions": changes.contactInstructions = proto.contactInstructions
            case "image_id": changes.imageID = .some(proto.imageID.isEmpty ? nil : proto.imageID)
            default:
                throw DomainError(
                    .invalidArgument,
                    "update_mask path \"\(path)\" cannot be changed; allowed: \(updatablePaths)."
                )
            }
        }
        return changes
    }

    public func markReturned(
        request: Skiff_Lostfound_V1_MarkReturnedRequest,
        context: ServerContext
    ) async throws -> Skiff_Lostfound_V1_MarkReturnedResponse {
        try LostFoundRequestBounds.check(request)
        let user = try context.requireUser()
        guard !request.itemID.isEmpty else { throw DomainError(.invalidArgument, "item_id is empty.") }
        let item = try await Self.mapNotFound(request.itemID) {
            try await store.markReturned(id: request.itemID, reporterID: user.id, now: time.now())
        }
        return .with { $0.item = LostFoundViewer(userID: user.id).proto(item) }
    }

    public func listMatches(
        request: Skiff_Lostfound_V1_ListMatchesRequest,
        context: ServerContext
    ) async throws -> Skiff_Lostfound_V1_ListMatchesResponse {
        try LostFoundRequestBounds.check(request)
        let user = try context.requireUser()
        guard !request.itemID.isEmpty else { throw DomainError(.invalidArgument, "item_id is empty.") }
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        guard let item = try await store.item(id: request.itemID) else { throw Self.notFound(request.itemID) }
        guard item.reporterID == user.id else {
            throw DomainError(.permissionDenied, "Only the item's reporter can list its matches.")
        }
        let result = try await store.matches(itemID: item.id, page: page)
        let viewer = LostFoundViewer(userID: user.id)
        return .with {
            $0.matches = result.items.map { hit in
                .with {
                    $0.item = viewer.proto(hit.candidate)
                    $0.score = hit.score
                    // Measured between the two items' cells (see LostFoundMatcher), and rounded.
                    if let distance = hit.distanceKm { $0.distanceKm = ApproximateLocation.rounded(distance) }
                    $0.matchedAt = Google_Protobuf_Timestamp(date: hit.matchedAt)
                }
            }
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    public func listMyItems(
        request: Skiff_Lostfound_V1_ListMyItemsRequest,
        context: ServerContext
    ) async throws -> Skiff_Lostfound_V1_ListMyItemsResponse {
        try LostFoundRequestBounds.check(request)
        let user = try context.requireUser()
        var statuses: Set<LostFoundStatus> = []
        for status in request.statuses { statuses.insert(try LostFoundStatus(proto: status, field: "statuses")) }
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let result = try await store.items(reporterID: user.id, statuses: statuses, page: page)
        let viewer = LostFoundViewer(userID: user.id)
        return .with {
            $0.items = result.items.map { own in
                .with {
                    $0.item = viewer.proto(own.item)
                    $0.matchCount = Int32(clamping: own.matchCount)
                }
            }
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    static func viewer(_ context: ServerContext) -> LostFoundViewer {
        // Another Skiff service calling on its own behalf is not a person: it sees what a guest sees.
        LostFoundViewer(userID: context.user?.isService == false ? context.user?.id : nil)
    }

    static func notFound(_ id: String) -> DomainError {
        DomainError(.notFound, "No item has the id \"\(id)\".")
    }

    /// Runs a store call, naming the item in a not-found error.
    static func mapNotFound<T>(_ id: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as DomainError where error == LostFoundStoreError.itemNotFound {
            throw notFound(id)
        }
    }
}
