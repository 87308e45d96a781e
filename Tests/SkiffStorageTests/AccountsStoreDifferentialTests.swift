import Foundation
import SkiffAccounts
import SkiffDomain
import SkiffTesting
import Testing

/// Runs the same pseudo-random sequence of operations against every backend and requires identical
/// transcripts (results and errors, field by field). This catches differences no hand-written case thought of.
@Suite("AccountsStore differential")
struct AccountsStoreDifferentialTests {
    @Test("Every backend produces the same transcript", arguments: [1, 2, 3] as [UInt64])
    func sameTranscript(seed: UInt64) async throws {
        var transcripts: [StoreKind: [String]] = [:]
        for kind in StoreKind.allCases {
            try await withAccountsStore(kind) { store in
                transcripts[kind] = await Self.run(store, seed: seed, operations: 150)
            }
        }
        let reference = try #require(transcripts[.inMemory])
        #expect(reference.count == 150)
        for kind in StoreKind.allCases where kind != .inMemory {
            let other = try #require(transcripts[kind])
            for (index, (expected, actual)) in zip(reference, other).enumerated() where expected != actual {
                Issue.record("\(kind) differs at operation \(index):\n  inMemory: \(expected)\n  \(kind): \(actual)")
                break
            }
            #expect(other.count == reference.count)
        }
    }

    private static func describe(_ value: Any) -> String {
        var text = ""
        dump(value, to: &text)
        return text.replacingOccurrences(of: "\n", with: " ")
    }

    /// Applies `operations` random operations; the choices never depend on results, so every backend gets
    /// the same sequence.
    static func run(_ store: any AccountsStore, seed: UInt64, operations: Int) async -> [String] {
        var rng = SeededGenerator(seed: seed)
        let ids = (0..<8).map { _ in EntityID.make(.account, using: &rng) }
        let tokens = (0..<12).map { _ in SecretToken.generate(using: &rng) }
        let names = ["Ana", "ana b", "Bö", "Bo", "Zed", "Ånna", "Cy", "ANA"]
        let emails = ["a@s.edu", "A@S.edu", "b@s.edu", "c@s.edu", "d@s.edu", "e@s.edu"]
        var transcript: [String] = []

        func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }
        func time() -> Date { Fixture.date(plusSeconds: Double(Int.random(in: 0...100, using: &rng))) }

        for step in 0..<operations {
            let choice = Int.random(in: 0..<15, using: &rng)
            let result: Result<String, any Error>
            do {
                switch choice {
                case 0, 1:
                    let account = Fixture.account(pick(names), email: pick(emails), id: pick(ids), createdAt: time())
                    result = .success(describe(try await store.createAccount(account)))
                case 2:
                    let changes = ProfileChanges(displayName: pick(names), zipCode: pick(["", "12345", nil]))
                    result = .success(describe(try await store.updateProfile(id: pick(ids), changes: changes)))
                case 3:
                    let session = Session(
                        tokenHash: pick(tokens).hash,
                        accountID: pick(ids),
                        expiresAt: time(),
                        createdAt: Fixture.t0
                    )
                    try await store.createSession(session)
                    result = .success("created")
                case 4:
                    result = .success(
                        describe(try await store.session(tokenHash: pick(tokens).hash, now: time()) as Any)
                    )
                case 5:
                    result = .success(describe(try await store.deleteSession(tokenHash: pick(tokens).hash)))
                case 6:
                    let token = OneTimeToken(
                        tokenHash: pick(tokens).hash,
                        kind: pick([.emailVerification, .passwordReset]),
                        accountID: pick(ids),
                        expiresAt: time(),
                        createdAt: Fixture.t0
                    )
                    try await store.insertOneTimeToken(token)
                    result = .success("inserted")
                case 7:
                    result = .success(describe(try await store.verifyEmail(tokenHash: pick(tokens).hash, now: time())))
                case 8:
                    let account = try await store.resetPassword(
                        tokenHash: pick(tokens).hash,
                        newPasswordHash: "r\(step)",
                        now: time()
                    )
                    result = .success(describe(account))
                case 9:
                    let kept = pick([nil, pick(tokens).hash])
                    let ended = try await store.changePassword(
                        accountID: pick(ids),
                        newPasswordHash: "c\(step)",
                        keepingSession: kept
                    )
                    result = .success(describe(ended))
                case 10:
                    let rating = Fixture.rating(
                        sale: "sale_\(Int.random(in: 0..<6, using: &rng))",
                        seller: pick(ids),
                        buyer: pick(ids),
                        stars: Int.random(in: 1...5, using: &rng),
                        at: time()
                    )
                    try await store.addRating(rating)
                    result = .success("rated")
                case 11:
                    let query = pick(["", "a", "AN", "bo", "ö", "z"])
                    let pageSize = Int.random(in: 1...4, using: &rng)
                    result = .success(describe(try await store.searchAll(query, pageSize: pageSize).map(\.id)))
                case 12:
                    let seller = pick(ids)
                    var items: [Rating] = []
                    var token: String?
                    repeat {
                        let page = try await store.ratings(sellerID: seller, page: PageRequest(size: 2, token: token))
                        items += page.items
                        token = page.nextPageToken
                    } while token != nil
                    result = .success(describe((items, try await store.ratingSummary(sellerID: seller))))
                case 13:
                    result = .success(describe(try await store.incrementItemsSold(accountID: pick(ids))))
                default:
                    result = .success(describe(try await store.deleteExpired(now: time())))
                }
            } catch {
                result = .failure(error)
            }
            switch result {
            case .success(let text): transcript.append("\(step) op\(choice): \(text)")
            case .failure(let error as DomainError):
                transcript.append("\(step) op\(choice): error \(error.code) \(error.message)")
            case .failure(let error): transcript.append("\(step) op\(choice): unexpected \(type(of: error))")
            }
        }
        return transcript
    }
}
