import Foundation
import SkiffDomain
import Testing

@testable import SkiffListings

@Suite("Search text and the change broadcaster")
struct SearchTextTests {
    @Test("Tokens: lowercase, no diacritics, split on anything but letters and numbers")
    func tokens() {
        #expect(SearchText.tokens("Crème-Brûlée x2!") == ["creme", "brulee", "x2"])
        #expect(SearchText.tokens("  ÉCOLE  Straße ") == ["ecole", "strasse"])
        #expect(SearchText.tokens("iPhone 15/Pro, $999") == ["iphone", "15", "pro", "999"])
        #expect(SearchText.tokens("日本語 テキスト") == ["日本語", "テキスト"])
        #expect(SearchText.tokens("🚲 bike") == ["bike"])
        #expect(SearchText.tokens("") == [])
        #expect(SearchText.ftsExpression(["red", "bi"]) == "\"red\" \"bi\"*")
        // A whole term repeated is looked up once; the last term stays a prefix even when it repeats one.
        #expect(SearchText.ftsExpression(["red", "bi", "red", "red"]) == "\"red\" \"bi\" \"red\"*")
        #expect(SearchText.ftsExpression(Array(repeating: "test", count: 39)) == "\"test\" \"test\"*")
    }

    @Test("ASCII text is split without Foundation exactly as the folding path splits it")
    func asciiFastPath() {
        let every = String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self)
        #expect(TextSearch.asciiTokens(every) == TextSearch.foldedTokens(every))
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...24, using: &random)).map { _ in
                UInt8.random(in: 0..<128, using: &random)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(TextSearch.asciiTokens(text) == TextSearch.foldedTokens(text), "\(bytes)")
        }
        #expect(TextSearch.tokens("Desk LAMP, x2") == ["desk", "lamp", "x2"])
        #expect(TextSearch.tokens("Desk Crème") == ["desk", "creme"], "one non-ASCII byte takes the folding path")
    }

    @Test(
        "The in-memory index matches and scores by token ids exactly as the token lists do, entries and columns alike"
    )
    func tokenIDScores() {
        let words = ["bike", "bikes", "bi", "red", "redo", "café", "cafe", "x2", "lamp", "desk", "b", "re"]
        var random = SystemRandomNumberGenerator()
        func text(_ count: Int) -> String {
            (0..<count).map { _ in words.randomElement(using: &random)! }.joined(separator: " ")
        }
        var index = ListingIndex()
        // 200 listings, replaced 20 times over: token ids are freed and given again, and the flat columns'
        // token arena is compacted several times.
        for number in 0..<4_000 {
            let fields = ListingFields(
                title: text(Int.random(in: 1...4, using: &random)),
                description: text(Int.random(in: 0...8, using: &random)),
                priceCents: 0,
                category: .other,
                condition: .new,
                tags: (0..<Int.random(in: 0...3, using: &random)).map { _ in words.randomElement(using: &random)! },
                location: ListingLocation(zipCode: "1")
            )
            let id = "lst_\(number % 200)"
            index.put(
                Listing(
                    id: id,
                    sellerID: "s",
                    fields: fields,
                    status: .active,
                    createdAt: Date(timeIntervalSince1970: 0)
                )
            )
        }
        for _ in 0..<300 {
            let terms = SearchText.tokens(
                text(Int.random(in: 1...3, using: &random)) + " " + ["", "zz", "bik"].randomElement()!
            )
            let resolved = index.termTokens(terms)
            for entry in index.entries.values {
                let matches = SearchText.matches(tokens: entry.tokens, terms: terms)
                #expect(index.columns.isLive(entry.slot))
                let score = index.columns.score(entry.slot, resolved)
                #expect((score != nil) == matches, "\(terms) in \(entry.listing.title) / \(entry.listing.description)")
                if matches { #expect(score == SearchText.score(of: entry.tokens, terms: terms)) }
            }
        }
    }

    @Test("Every word must match; the last as a prefix; scores are integers")
    func matching() {
        let fields = ListingFields(
            title: "Red bike",
            description: "bicycle bike",
            priceCents: 0,
            category: .other,
            condition: .new,
            tags: ["Bike"],
            location: ListingLocation(zipCode: "1")
        )
        let tokens = SearchText.DocumentTokens(fields)
        #expect(SearchText.matches(tokens: tokens, terms: ["bi"]))
        #expect(!SearchText.matches(tokens: tokens, terms: ["bi", "red"]))
        #expect(SearchText.matches(tokens: tokens, terms: ["bike", "re"]))
        #expect(SearchText.score(of: tokens, terms: ["bike"]) == 3 + 2 + 1)
        #expect(SearchText.score(of: tokens, terms: ["bi"]) == 3 + 2 + 2)
    }

    @Test("Haversine distance and a bounding box that contains the circle")
    func geometry() {
        let a = GeoPoint(latitude: 36.1447, longitude: -86.8027)
        let b = GeoPoint(latitude: 36.1627, longitude: -86.7816)
        #expect(abs(ListingSearchEngine.distanceKm(a, b) - 2.77) < 0.05)
        #expect(ListingSearchEngine.distanceKm(a, a) == 0)
        let box = ListingSearchEngine.boundingBox(GeoCircle(center: a, radiusKm: 10))
        #expect(box.latitude.contains(a.latitude + 0.0899))
        #expect(box.longitude?.contains(a.longitude - 0.111) == true)
        #expect(
            ListingSearchEngine.boundingBox(GeoCircle(center: GeoPoint(latitude: 0, longitude: 179.9), radiusKm: 50))
                .longitude == nil
        )
    }

    @Test("A watcher that falls behind is cut off; others are unaffected")
    func broadcaster() async throws {
        let broadcaster = ChangeBroadcaster(bufferSize: 2)
        let slow = broadcaster.subscribe(userID: "usr_slow")
        let fast = broadcaster.subscribe(userID: "usr_fast")
        for sequence: Int64 in 1...3 {
            broadcaster.publish(Self.change(sequence), to: ["usr_slow", "usr_fast", "usr_none"])
            #expect(try await fast.next().sequence == sequence)
        }
        await #expect(throws: ChangeWatcher.fellBehind) { _ = try await slow.next() }
        let waiting = Task { try await fast.next().sequence }
        try await Task.sleep(for: .milliseconds(20))
        broadcaster.publish(Self.change(4), to: ["usr_fast"])
        #expect(try await waiting.value == 4)
        let cancelled = Task { try await fast.next() }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { _ = try await cancelled.value }
        broadcaster.unsubscribe(slow)
        broadcaster.unsubscribe(fast)
        #expect(broadcaster.subscriberCount == 0)
    }

    @Test("A finished watcher hands out what is buffered, then the error; later changes are dropped")
    func finishedWatcher() async throws {
        let broadcaster = ChangeBroadcaster(bufferSize: 8)
        let watcher = broadcaster.subscribe(userID: "usr_1")
        broadcaster.publish(Self.change(1), to: ["usr_1"])
        watcher.finish(throwing: ChangeWatcher.drained)
        broadcaster.publish(Self.change(2), to: ["usr_1"])
        #expect(try await watcher.next().sequence == 1)
        await #expect(throws: ChangeWatcher.drained) { _ = try await watcher.next() }
        await #expect(throws: ChangeWatcher.drained) { _ = try await watcher.next() }
        // (A reader already waiting is woken by the finish: the drain tests over a socket, and Chat's, cover it.)
        broadcaster.unsubscribe(watcher)
    }

    /// A saved-listing change numbered `sequence`.
    static func change(_ sequence: Int64) -> ListingChangeEvent {
        ListingChangeEvent(
            sequence: sequence,
            listingID: "lst_1",
            title: "T",
            kind: .updated,
            newPriceCents: 1,
            oldPriceCents: 1,
            changedAt: Date(millisecondsSince1970: 0)
        )
    }
}
