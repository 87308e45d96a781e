import Foundation
import SkiffDomain
import SkiffListings
import Testing

extension ListingsStoreConformanceTests {
    static func comment(
        _ listing: Listing,
        by author: String,
        _ text: String = "Is it still available?",
        replyTo: String? = nil,
        at seconds: Double = 0
    ) -> ListingComment {
        ListingComment(
            id: EntityID.make(.listingComment),
            listingID: listing.id,
            authorID: author,
            replyToID: replyTo,
            text: text,
            createdAt: F.t0.addingTimeInterval(seconds)
        )
    }

    @Test(
        "Comments: oldest first in posting order (same millisecond included), seller replies, who is told",
        arguments: StoreKind.allCases
    )
    func comments(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let created = try await store.create([F.listing("Lamp"), F.listing("Desk", at: 1)])
            let lamp = created[0]
            let ann = try await store.addComment(Self.comment(lamp, by: "usr_ann", at: 10))
            #expect(ann.notices == [.init(userID: F.seller, kind: .commented, showsAuthor: true)])
            #expect(ann.listing.id == lamp.id)
            // Posted within the same millisecond (or with an earlier clock): still listed after Ann's.
            let bob = try await store.addComment(Self.comment(lamp, by: "usr_bob", "Price?", at: 10))
            #expect(bob.comment.createdAt.millisecondsSince1970 == F.t0.millisecondsSince1970 + 10_001)
            let reply = try await store.addComment(
                Self.comment(lamp, by: F.seller, "Yes!", replyTo: ann.comment.id, at: 5)
            )
            #expect(reply.notices == [.init(userID: "usr_ann", kind: .replied, showsAuthor: true)])
            let own = try await store.addComment(Self.comment(lamp, by: F.seller, "Also have a shade.", at: 20))
            #expect(own.notices.isEmpty)
            _ = try await store.addComment(Self.comment(created[1], by: "usr_ann", at: 30))

            let all = [ann.comment, bob.comment, reply.comment, own.comment]
            let first = try await store.comments(listingID: lamp.id, page: PageRequest(size: 3))
            #expect(first.items == Array(all.prefix(3)))
            let second = try await store.comments(
                listingID: lamp.id,
                page: PageRequest(size: 3, token: first.nextPageToken)
            )
            #expect(second.items == [own.comment] && second.nextPageToken == nil)
            #expect(try await store.comment(id: reply.comment.id) == reply.comment)
            // A token is valid only for its listing.
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.comments(
                    listingID: created[1].id,
                    page: PageRequest(size: 3, token: first.nextPageToken)
                )
            }
            // The relay reads them by time, from a date on.
            let since = try await store.comments(since: bob.comment.createdAt, limit: 10)
            #expect(since.map(\.id) == [bob.comment.id, reply.comment.id, own.comment.id, since.last!.id])
            #expect(since.count == 4 && since.last?.listingID == created[1].id)
            #expect(try await store.comments(since: F.t0, limit: 2).map(\.id) == [ann.comment.id, bob.comment.id])
        }
    }

    @Test(
        "Comment rules: replies by the seller to comments of the listing only, not to replies; active listings only; 500 at most",
        arguments: StoreKind.allCases
    )
    func commentRules(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let created = try await store.create([F.listing("Lamp"), F.listing("Desk", at: 1), F.listing("Rug", at: 2)])
            let lamp = created[0]
            let question = try await store.addComment(Self.comment(lamp, by: "usr_ann")).comment
            await #expect(throws: ListingsStoreError.notSellerReply) {
                _ = try await store.addComment(Self.comment(lamp, by: "usr_bob", replyTo: question.id))
            }
            await #expect(throws: ListingsStoreError.replyTargetNotFound) {
                _ = try await store.addComment(Self.comment(lamp, by: F.seller, replyTo: "lcm_missing"))
            }
            await #expect(throws: ListingsStoreError.replyTargetNotFound) {
                _ = try await store.addComment(Self.comment(created[1], by: F.seller, replyTo: question.id))
            }
            let answer = try await store.addComment(Self.comment(lamp, by: F.seller, "Yes", replyTo: question.id))
            await #expect(throws: ListingsStoreError.replyToReply) {
                _ = try await store.addComment(Self.comment(lamp, by: F.seller, replyTo: answer.comment.id))
            }
            await #expect(throws: ListingsStoreError.listingNotFound) {
                _ = try await store.addComment(
                    ListingComment(
                        id: "lcm_x",
                        listingID: "lst_missing",
                        authorID: "usr_ann",
                        text: "Hi",
                        createdAt: F.t0
                    )
                )
            }
            await #expect(throws: ListingsStoreError.commentIDTaken) {
                _ = try await store.addComment(
                    ListingComment(
                        id: question.id,
                        listingID: lamp.id,
                        authorID: "usr_ann",
                        text: "Hi",
                        createdAt: F.t0
                    )
                )
            }
            _ = try await store.setStatus(id: created[1].id, to: .sold, by: .system, now: F.t0)
            await #expect(throws: ListingsStoreError.commentsClosed) {
                _ = try await store.addComment(Self.comment(created[1], by: "usr_ann"))
            }
            _ = try await store.setStatus(id: created[2].id, to: .withdrawn, by: .system, now: F.t0)
            await #expect(throws: ListingsStoreError.listingNotFound) {
                _ = try await store.addComment(Self.comment(created[2], by: "usr_ann"))
            }
            await #expect(throws: ListingsStoreError.commentsClosed) {
                _ = try await store.addComment(Self.comment(created[2], by: F.seller))
            }
            // At most 500 comments and replies per listing (two are there).
            for index in 0..<(ListingLifecycle.maximumCommentsPerListing - 2) {
                _ = try await store.addComment(Self.comment(lamp, by: "usr_u\(index % 7)", "Comment \(index)"))
            }
            await #expect(throws: ListingsStoreError.tooManyComments) {
                _ = try await store.addComment(Self.comment(lamp, by: "usr_ann"))
            }
            // Deleting makes room again.
            _ = try await store.deleteComment(id: question.id, by: "usr_ann")
            _ = try await store.addComment(Self.comment(lamp, by: "usr_ann"))
        }
    }

    @Test(
        "DeleteComment: by its author or the listing's seller, with the replies to it; nobody else",
        arguments: StoreKind.allCases
    )
    func deleteComment(kind: StoreKind) async throws {
        try await withListingsStore(kind) { store in
            let lamp = try await store.create([F.listing("Lamp")])[0]
            let ann = try await store.addComment(Self.comment(lamp, by: "usr_ann", at: 1)).comment
            let bob = try await store.addComment(Self.comment(lamp, by: "usr_bob", at: 2)).comment
            let first = try await store.addComment(Self.comment(lamp, by: F.seller, "Yes", replyTo: ann.id, at: 3))
                .comment
            let second = try await store.addComment(Self.comment(lamp, by: F.seller, "Also", replyTo: ann.id, at: 4))
                .comment
            let toBob = try await store.addComment(Self.comment(lamp, by: F.seller, "No", replyTo: bob.id, at: 5))
                .comment
            await #expect(throws: ListingsStoreError.notCommentAuthor) {
                _ = try await store.deleteComment(id: ann.id, by: "usr_bob")
            }
            await #expect(throws: ListingsStoreError.notCommentAuthor) {
                _ = try await store.deleteComment(id: first.id, by: "usr_ann")
            }
            #expect(try await store.deleteComment(id: ann.id, by: "usr_ann") == [ann.id, first.id, second.id])
            await #expect(throws: ListingsStoreError.commentNotFound) {
                _ = try await store.deleteComment(id: ann.id, by: "usr_ann")
            }
            // The seller moderates: deletes Bob's comment (and the reply with it).
            #expect(try await store.deleteComment(id: bob.id, by: F.seller) == [bob.id, toBob.id])
            #expect(try await store.comments(listingID: lamp.id, page: .first).items.isEmpty)
            #expect(try await store.comments(since: F.t0, limit: 10).isEmpty)
            #expect(try await store.comment(id: first.id) == nil)
        }
    }
}
