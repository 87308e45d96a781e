public import Logging
import Synchronization

/// An e-mail to send.
public struct MailMessage: Hashable, Sendable {
    /// The recipient's address.
    public var to: String
    /// The subject line.
    public var subject: String
    /// The plain-text body.
    public var body: String

    /// Creates a message.
    public init(to: String, subject: String, body: String) {
        self.to = to
        self.subject = subject
        self.body = body
    }
}

/// Sends e-mail (verification links, password resets).
///
/// ## Implementation requirements
/// `send` may be called concurrently. It should return once the message is accepted for delivery (queued),
/// not delivered, and throw only if it could not be accepted. Messages carry secrets (one-time links):
/// never log bodies at levels enabled in production.
public protocol Mailer: Sendable {
    /// Accepts a message for delivery.
    func send(_ message: MailMessage) async throws
}

/// A mailer that keeps messages in memory instead of sending them; for tests, demos and development.
///
/// Tests read ``messages`` to follow links. Each message is also logged: recipient and subject at `info`,
/// the body (which holds one-time links) at `debug` only. The outbox keeps the latest ``capacity`` messages
/// (older ones are dropped), so a long-running development server's memory does not grow with every
/// sign-up.
public final class OutboxMailer: Mailer {
    private let outbox = Mutex<[MailMessage]>([])
    private let logger: Logger?
    /// The most messages kept.
    public let capacity: Int

    /// Creates an empty outbox.
    ///
    /// - Parameters:
    ///   - logger: Where to log each message; `nil` logs nothing.
    ///   - capacity: The most messages kept (default 10,000, at least 1); the oldest go first.
    public init(logger: Logger? = nil, capacity: Int = 10_000) {
        self.logger = logger
        self.capacity = max(1, capacity)
    }

    public func send(_ message: MailMessage) async throws {
        outbox.withLock { outbox in
            outbox.append(message)
            // Drop a tenth at a time, so appending stays amortized O(1).
            if outbox.count > capacity { outbox.removeFirst(outbox.count - capacity + capacity / 10) }
        }
        logger?.info(
            "Mail queued in outbox",
            metadata: ["mail.to": "\(message.to)", "mail.subject": "\(message.subject)"]
        )
        logger?.debug("Mail body", metadata: ["mail.to": "\(message.to)", "mail.body": "\(message.body)"])
    }

    /// Every message sent so far, oldest first.
    public var messages: [MailMessage] { outbox.withLock { $0 } }

    /// The messages sent to one address, oldest first.
    public func messages(to address: String) -> [MailMessage] {
        outbox.withLock { $0.filter { $0.to == address } }
    }

    /// Empties the outbox and returns what it held.
    @discardableResult
    public func removeAll() -> [MailMessage] {
        outbox.withLock { messages in
            defer { messages.removeAll() }
            return messages
        }
    }
}
