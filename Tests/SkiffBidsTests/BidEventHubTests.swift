import Foundation
import SkiffBids
import Testing

@Suite("Bid event hub")
struct BidEventHubTests {
    static func event(_ user: String, _ sequence: Int64) -> BidEvent {
        BidEvent(
            userID: user,
            sequence: sequence,
            kind: .placed,
            bidID: "bid_1",
            listingID: "lst_1",
            amountCents: 1,
            createdAt: Date(timeIntervalSince1970: 0)
        )
    }

    @Test("Events reach their user's subscribers only; dropped subscriptions are removed")
    func delivery() async throws {
        let hub = BidEventHub()
        var ann: AsyncStream<BidEvent>? = hub.subscribe(userID: "usr_ann")
        let bob = hub.subscribe(userID: "usr_bob")
        #expect(hub.subscriberCount == 2)
        hub.publish([Self.event("usr_ann", 1), Self.event("usr_bob", 1), Self.event("usr_ann", 2)])
        var annIterator = try #require(ann).makeAsyncIterator()
        #expect(await annIterator.next()?.sequence == 1)
        #expect(await annIterator.next()?.sequence == 2)
        var bobIterator = bob.makeAsyncIterator()
        #expect(await bobIterator.next() == Self.event("usr_bob", 1))
        ann = nil
        annIterator = AsyncStream<BidEvent> { $0.finish() }.makeAsyncIterator()
        #expect(hub.subscriberCount == 1)
    }
}
