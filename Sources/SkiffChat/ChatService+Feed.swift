import Foundation
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SwiftProtobuf

/// What a feed subscriber receives: events from the hub, and on a Connect stream the failures of
/// its own requests.
public enum FeedDelivery: Sendable {
    case event(FeedEvent)
    case requestFailed(requestID: String, error: RPCError)
    /// On a Connect stream: the client closed its side and everything its requests produced is
    /// ahead of this mark; the call ends once it is reached.
    case endOfRequests
}

extension ChatService {
    public func subscribeFeed(
        request: Skiff_Chat_V1_SubscribeFeedRequest,
        response: RPCWriter<Skiff_Chat_V1_FeedEvent>,
        context: ServerContext
    ) async throws {
        let user = try context.requireUser()
        let follower = try await FeedFollower.start(
            service: self,
            userID: user.id,
            request: request,
            drain: context.drain
        )
        defer { hub.unsubscribe(follower.subscription) }
        let draining = follower.endOnDrain(context.drain)
        defer { context.drain.cancel(draining) }
        try await follower.run { delivery in
            if case .event(let event) = delivery { try await response.write(event.proto) }
        }
    }

    public func connect(
        requests: RPCAsyncSequence<Skiff_Chat_V1_ConnectRequest>,
        response: RPCWriter<Skiff_Chat_V1_ConnectResponse>,
        context: ServerContext
    ) async throws {
        let user = try context.requireUser()
        guard let first = try await Self.firstRequest(of: requests, drain: context.drain) else { return }
        try ChatRequestBounds.check(first)
        guard case .subscribe(let subscribe) = first.request else {
            throw DomainError(.invalidArgument, "The first request on Connect must be subscribe.")
        }
        let follower = try await FeedFollower.start(
            service: self,
            userID: user.id,
            request: subscribe,
            drain: context.drain
        )
        defer { hub.unsubscribe(follower.subscription) }
        let draining = follower.endOnDrain(context.drain)
        defer { context.drain.cancel(draining) }
        // One task reads requests and acts on them; this one writes everything the client receives,
        // so writes never overlap. Answers come back through the subscription, in feed order.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer {
                    if context.drain.isDraining {
                        // Draining: the call ends with UNAVAILABLE and its resume point, never as if the
                        // client had closed its side (the drain's own action may not have run yet).
                        follower.subscription.finish(throwing: FeedFollower.drained)
                    } else {
                        // The client closed its side (or its stream failed): the answers to what it
                        // sent go out first, then the call ends.
                        follower.subscription.enqueue(.endOfRequests)
                    }
                }
                for try await request in requests {
                    // Once the connection drains the call is ending: requests not yet handled are left
                    // (the client resumes and sends them again on a new connection).
                    guard !context.drain.isDraining else { break }
                    do {
                        try ChatRequestBounds.check(request)
                        try await handle(request, from: user.id)
                    } catch {
                        // The request id is echoed only when it is within its bound.
                        let requestID =
                            request.requestID.utf8.count <= ChatRequestBounds.idBytes ? request.requestID : ""
                        follower.subscription.enqueue(
                            .requestFailed(requestID: requestID, error: RPCError(mapping: error))
                        )
                    }
                }
            }
            group.addTask {
                try await follower.run { delivery in
                    switch delivery {
                    case .event(let event): try await response.write(.with { $0.event = event.proto })
                    case .requestFailed(let requestID, let error):
                        try await response.write(
                            .with {
                                $0.requestFailed = .with {
                                    $0.requestID = requestID
                                    $0.code = Int32(error.code.rawValue)
                                    $0.message = error.message
                                }
                            }
                        )
                    case .endOfRequests:
                        break  // `run` returns at the mark
                    }
                }
            }
            // The call ends once the client has closed its side and everything its requests produced
            // has been written (or when either task fails).
            try await group.next()
            try await group.next()
        }
    }

    /// The first request of a Connect stream, or `nil` if the client closed its side first; a drain while
    /// waiting for it ends the call with UNAVAILABLE (nothing was subscribed yet).
    private static func firstRequest(
        of requests: RPCAsyncSequence<Skiff_Chat_V1_ConnectRequest>,
        drain: DrainSignal
    ) async throws -> Skiff_Chat_V1_ConnectRequest? {
        let (drained, fire) = AsyncStream.makeStream(of: Void.self)
        let registration = drain.onDrain { fire.finish() }
        defer { drain.cancel(registration) }
        return try await withThrowingTaskGroup(of: Skiff_Chat_V1_ConnectRequest?.self) { group in
            // The sequence is one stream: iterating it again later goes on after this request.
            group.addTask {
                var iterator = requests.makeAsyncIterator()
                return try await iterator.next()
            }
            group.addTask {
                for await _ in drained {}
                guard !Task.isCancelled else { return nil }
                throw RPCError(
                    code: .unavailable,
                    message: "The server is restarting: open Connect again on a new connection."
                )
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// Acts on one request of a Connect stream after the first.
    private func handle(_ request: Skiff_Chat_V1_ConnectRequest, from userID: String) async throws {
        switch request.request {
        case .sendMessage(let send): _ = try await self.send(send, from: userID)
        case .markRead(let mark): _ = try await markRead(mark, by: userID)
        case .subscribe: throw DomainError(.invalidArgument, "subscribe may only be the first request on Connect.")
        case nil: throw DomainError(.invalidArgument, "The request is empty: set send_message or mark_read.")
        }
    }
}

/// Follows one user's feed without gaps or duplicates: replays the store after the client's
/// sequence, then delivers live events, filling from the store any hole the hub leaves (events of
/// concurrent transactions can reach the hub out of order) and skipping what was already sent.
struct FeedFollower: Sendable {
    let service: ChatService
    let userID: String
    /// The connection's drain: a replay stops between batches once it fires.
    let drain: DrainSignal
    let subscription: LiveSubscription<FeedDelivery>
    /// Where the client's sequence starts.
    let start: Int64
    /// Whether to replay from the store before following the hub.
    let replay: Bool

    /// Validates the request and subscribes to the hub (before reading the store, so nothing
    /// committed meanwhile is missed).
    static func start(
        service: ChatService,
        userID: String,
        request: Skiff_Chat_V1_SubscribeFeedRequest,
        drain: DrainSignal
    ) async throws -> FeedFollower {
        guard request.afterSequence >= 0 else {
            throw DomainError(.invalidArgument, "after_sequence must not be negative.")
        }
        let subscription = service.hub.subscribe(
            userID: userID,
            fellBehind: DomainError(.aborted, "This feed fell too far behind.")
        )
        do {
            let head = try await service.store.lastFeedSequence(userID: userID)
            if request.fromLatest {
                return FeedFollower(
                    service: service,
                    userID: userID,
                    drain: drain,
                    subscription: subscription,
                    start: head,
                    replay: false
                )
            }
            guard request.afterSequence <= head else {
                throw DomainError(
                    .outOfRange,
                    "after_sequence \(request.afterSequence) is beyond your feed's last event (\(head))."
                )
            }
            return FeedFollower(
                service: service,
                userID: userID,
                drain: drain,
                subscription: subscription,
                start: request.afterSequence,
                replay: request.afterSequence < head
            )
        } catch {
            service.hub.unsubscribe(subscription)
            throw error
        }
    }

    /// What a subscription is finished with when its connection drains.
    static let drained = DomainError(.unavailable, "The server is draining this connection.")

    /// What the client gets when the connection drains after it was sent everything up to `last`.
    static func drainedError(after last: Int64) -> RPCError {
        RPCError(
            code: .unavailable,
            message: "The server is restarting: subscribe again on a new connection with after_sequence \(last).",
            metadata: ["skiff-resume-after": .string("\(last)")]
        )
    }

    /// Ends the feed when the connection drains (the server restarts): after what is buffered, ``run(_:)``
    /// throws UNAVAILABLE with `skiff-resume-after`.
    func endOnDrain(_ signal: DrainSignal) -> DrainSignal.Registration {
        signal.onDrain { [subscription] in subscription.finish(throwing: Self.drained) }
    }

    /// Delivers until cancelled, cut off or drained, or until the ``FeedDelivery/endOfRequests`` mark.
    ///
    /// - Throws: ABORTED with `skiff-resume-after` when the subscriber fell behind; UNAVAILABLE with
    ///   `skiff-resume-after` when the connection drains; FAILED_PRECONDITION when the events to replay were
    ///   deleted.
    func run(_ emit: (FeedDelivery) async throws -> Void) async throws {
        var last = start
        if replay {
            try await catchUp(from: &last, through: nil, isInitial: true, emit)
        }
        while true {
            let delivery: FeedDelivery
            do {
                delivery = try await subscription.next()
            } catch let error as DomainError where error.code == .aborted {
                throw RPCError(
                    code: .aborted,
                    message:
                        "This feed fell too far behind (the client reads too slowly): subscribe again with after_sequence \(last).",
                    metadata: ["skiff-resume-after": .string("\(last)")]
                )
            } catch let error as DomainError where error == Self.drained {
                throw Self.drainedError(after: last)
            }
            guard case .event(let event) = delivery else {
                if case .endOfRequests = delivery { return }
                try await emit(delivery)
                continue
            }
            guard event.sequence > last else { continue }
            if event.sequence > last + 1 {
                try await catchUp(from: &last, through: event.sequence - 1, isInitial: false, emit)
            }
            try await emit(delivery)
            last = event.sequence
        }
    }

    /// Sends the stored events after `last` (up to `through`, or all), advancing `last`.
    private func catchUp(
        from last: inout Int64,
        through end: Int64?,
        isInitial: Bool,
        _ emit: (FeedDelivery) async throws -> Void
    ) async throws {
        let batchSize = service.configuration.replayBatchSize
        while end.map({ last < $0 }) ?? true {
            // A long replay does not hold up a drain: it stops between batches, at a resume point.
            if drain.isDraining { throw Self.drainedError(after: last) }
            let wanted = end.map { min(Int($0 - last), batchSize) } ?? batchSize
            let batch = try await service.store.feedEvents(userID: userID, after: last, limit: wanted)
            let deleted = batch.first.map { $0.sequence != last + 1 } ?? (isInitial && last == start)
            if deleted {
                throw DomainError(
                    .failedPrecondition,
                    "Events after sequence \(last) were deleted (the feed keeps 30 days): reload your data, then subscribe with from_latest."
                )
            }
            for event in batch {
                try await emit(.event(event))
                last = event.sequence
            }
            if batch.count < wanted { break }
        }
    }
}
