import Synchronization

/// Tells the handlers of a connection's calls that the connection is draining (the server shuts down
/// gracefully, or closes an idle connection): calls that would otherwise never end — subscriptions, watches,
/// feeds — end promptly with UNAVAILABLE and say how to resume, so a drain does not wait for its grace period.
///
/// A transport fires the signal once, on its event loop; actions registered with ``onDrain(_:)`` then run
/// there, so they must be quick and never block (e.g. enqueue a marker, finish a subscription).
///
/// ```swift
/// let registration = context.drain.onDrain { subscription.finish(throwing: draining) }
/// defer { context.drain.cancel(registration) }
/// ```
public final class DrainSignal: Sendable {
    private struct State {
        var draining = false
        var nextID: UInt64 = 0
        var actions: [UInt64: @Sendable () -> Void] = [:]
    }

    /// A registered action; pass it to ``cancel(_:)`` when the call ends.
    public struct Registration: Hashable, Sendable {
        let id: UInt64
    }

    private let state = Mutex(State())

    /// Creates a signal that has not fired.
    public init() {}

    /// Whether the signal has fired.
    public var isDraining: Bool { state.withLock { $0.draining } }

    /// Runs `action` once when the signal fires, or at once (on the calling task) if it has fired already.
    @discardableResult
    public func onDrain(_ action: @escaping @Sendable () -> Void) -> Registration {
        let (registration, runNow) = state.withLock { state -> (Registration, Bool) in
            state.nextID += 1
            let registration = Registration(id: state.nextID)
            if state.draining { return (registration, true) }
            state.actions[registration.id] = action
            return (registration, false)
        }
        if runNow { action() }
        return registration
    }

    /// Forgets an action that has not run (the call ended first).
    public func cancel(_ registration: Registration) {
        _ = state.withLock { $0.actions.removeValue(forKey: registration.id) }
    }

    /// Fires the signal: runs every registered action once. Firing again does nothing.
    public func fire() {
        let actions = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.draining else { return [] }
            state.draining = true
            defer { state.actions.removeAll() }
            return Array(state.actions.values)
        }
        for action in actions { action() }
    }
}
