import Foundation
import Logging
import SkiffAccounts
import SkiffCore
import SkiffDomain
import SkiffTesting
import Testing

@Suite("Domain primitives")
struct DomainPrimitivesTests {
    // MARK: DomainError

    @Test("Domain errors map to wire statuses in one place, message intact")
    func errorMapping() {
        let cases: [(DomainError.Code, StatusCode)] = [
            (.invalidArgument, .invalidArgument), (.notFound, .notFound), (.alreadyExists, .alreadyExists),
            (.permissionDenied, .permissionDenied), (.failedPrecondition, .failedPrecondition),
            (.unauthenticated, .unauthenticated), (.resourceExhausted, .resourceExhausted), (.aborted, .aborted),
        ]
        for (code, status) in cases {
            let mapped = RPCError(mapping: DomainError(code, "Do this instead."))
            #expect(mapped == RPCError(code: status, message: "Do this instead."))
        }
        #expect(!RPCError.isOpaque(DomainError(.notFound, "x")))
    }

    @Test("Equality ignores the cause; the description shows it")
    func errorEquality() {
        struct Underlying: Error {}
        let plain = DomainError(.aborted, "Try again.")
        let caused = DomainError(.aborted, "Try again.", cause: Underlying())
        #expect(plain == caused)
        #expect(plain != DomainError(.aborted, "Other."))
        #expect(plain.description == "ABORTED: \"Try again.\"")
        #expect(caused.description.contains("cause: Underlying"))
    }

    // MARK: Paging

    @Test("Page size policy: 0 → 20, capped at 100, negative rejected")
    func pageSize() throws {
        #expect(try PageRequest().size == 20)
        #expect(try PageRequest(size: 0).size == 20)
        #expect(try PageRequest(size: 1).size == 1)
        #expect(try PageRequest(size: 100).size == 100)
        #expect(try PageRequest(size: 1000).size == 100)
        #expect(PageRequest.first.size == 20)
        #expect(throws: DomainError(.invalidArgument, "page_size must not be negative.")) { try PageRequest(size: -1) }
        #expect(try PageRequest(token: "").token == nil)
        #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
            try PageRequest(token: String(repeating: "A", count: 1025))
        }
    }

    struct Cursor: Codable, Equatable {
        var name: String
        var id: String
    }

    @Test("Page tokens round-trip, are URL-safe, and reject tampering and other lists")
    func pageTokens() throws {
        let cursor = Cursor(name: "zoë / adams", id: "usr_1")
        let token = PageToken.encode(cursor, kind: "test.list")
        #expect(token.utf8.allSatisfy(Base64URL.isAlphabet))
        #expect(try PageToken.decode(token, as: Cursor.self, kind: "test.list") == cursor)
        #expect(PageToken.encode(cursor, kind: "test.list") == token, "deterministic")

        let invalid = DomainError(.invalidArgument, "page_token is not valid.")
        for bad in ["", "%%%", "AAAA", String(token.dropFirst(2)), token + "A", String(repeating: "A", count: 2000)] {
            #expect(throws: invalid) { try PageToken.decode(bad, as: Cursor.self, kind: "test.list") }
        }
        #expect(throws: invalid) { try PageToken.decode(token, as: Cursor.self, kind: "other.list") }
        let otherVersion = Base64URL.encode(Array(#"{"c":{"id":"usr_1","name":"x"},"k":"test.list","v":2}"#.utf8))
        #expect(throws: invalid) { try PageToken.decode(otherVersion, as: Cursor.self, kind: "test.list") }
    }

    @Test("Base64url round-trips every length and rejects foreign characters")
    func base64url() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) }
            let encoded = Base64URL.encode(bytes)
            #expect(!encoded.contains("=") && !encoded.contains("+") && !encoded.contains("/"))
            #expect(Base64URL.decode(encoded) == Data(bytes))
        }
        #expect(Base64URL.decode("ab+/") == nil)
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("QUJD") == Data("ABC".utf8))
        #expect(Base64URL.decode("QUI=") == Data("AB".utf8), "padding is accepted")
    }

    @Test("Base64url is Foundation's base64 with the URL alphabet and no padding")
    func base64urlMatchesFoundation() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0..<64, using: &random)).map { _ in UInt8.random(in: .min ... .max) }
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == foundation)
            #expect(Base64URL.decode(foundation) == Data(bytes))
        }
    }

    // MARK: Time

    @Test("A manual time source moves only when told")
    func manualTime() {
        let clock = ManualTimeSource()
        let start = clock.now()
        #expect(clock.now() == start)
        clock.advance(by: .seconds(90))
        #expect(clock.now() == start.addingTimeInterval(90))
        clock.advance(by: .milliseconds(-500))
        #expect(clock.now() == start.addingTimeInterval(89.5))
        clock.set(start)
        #expect(clock.now() == start)
        #expect(abs(SystemTimeSource().now().timeIntervalSinceNow) < 5)
    }

    @Test("Millisecond rounding is stable for any date")
    func millisecondRounding() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 {
            let date = Date(timeIntervalSince1970: Double.random(in: 0...4_102_444_800, using: &generator))
            let milliseconds = date.millisecondsSince1970
            #expect(Date(millisecondsSince1970: milliseconds).millisecondsSince1970 == milliseconds)
            #expect(date.roundedToMilliseconds.roundedToMilliseconds == date.roundedToMilliseconds)
            #expect(abs(date.roundedToMilliseconds.timeIntervalSince(date)) <= 0.000_501)
        }
    }

    // MARK: Accounts helpers

    @Test("Search keys fold case, diacritics and width; e-mails normalize")
    func keys() {
        #expect(Account.searchKey("José Ñandú") == Account.searchKey("jose nandu"))
        #expect(Account.searchKey("ZOË") == "zoe")
        #expect(Account.searchKey("Ｚｏｅ") == "zoe")
        #expect(Account.searchKey("Cafe\u{0301}") == Account.searchKey("Café"))
        #expect(Account.normalizedEmail("  Ada@School.EDU\n") == "ada@school.edu")
    }

    @Test("Applying profile changes: nil keeps, empty clears")
    func applying() {
        let account = Account(
            id: "usr_1",
            email: "a@s.edu",
            displayName: "A",
            bio: "bio",
            avatarImageID: "img",
            paymentHandle: "@a",
            zipCode: "12345",
            passwordHash: "h",
            createdAt: Date(millisecondsSince1970: 0)
        )
        let changed = account.applying(ProfileChanges(displayName: "B", avatarImageID: "", zipCode: "54321"))
        #expect(changed.displayName == "B")
        #expect(changed.bio == "bio")
        #expect(changed.avatarImageID == nil)
        #expect(changed.paymentHandle == "@a")
        #expect(changed.zipCode == "54321")
        #expect(!"\(account)".contains("a@s.edu") && !"\(account)".contains("passwordHash"))
    }

    // MARK: Mail

    @Test("The outbox keeps what was sent, for tests to read")
    func outbox() async throws {
        let mailer = OutboxMailer(logger: Logger(label: "test.outbox"))
        try await mailer.send(MailMessage(to: "a@s.edu", subject: "Verify", body: "https://x/verify?t=1"))
        try await mailer.send(MailMessage(to: "b@s.edu", subject: "Reset", body: "https://x/reset?t=2"))
        #expect(mailer.messages.map(\.subject) == ["Verify", "Reset"])
        #expect(
            mailer.messages(to: "b@s.edu") == [
                MailMessage(to: "b@s.edu", subject: "Reset", body: "https://x/reset?t=2")
            ]
        )
        #expect(mailer.removeAll().count == 2)
        #expect(mailer.messages.isEmpty)
    }

    @Test("The outbox keeps at most its capacity, the latest messages")
    func outboxBounded() async throws {
        let mailer = OutboxMailer(capacity: 50)
        for index in 0..<1_000 {
            try await mailer.send(MailMessage(to: "a@s.edu", subject: "\(index)", body: ""))
        }
        let kept = mailer.messages.map(\.subject)
        #expect(kept.count <= 50 && kept.count >= 45)
        #expect(kept.last == "999")
        #expect(kept == (1_000 - kept.count..<1_000).map { "\($0)" })
    }
}
