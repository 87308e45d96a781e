import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffServerApp
import SkiffTesting
import SwiftProtobuf
import Testing

/// Issue 11 (UCSD): questions and comments on a listing, the seller's replies, moderation, the feed
/// and the per-user limit, over a real socket on both backends.
@Suite("Listing comments over a socket")
struct ListingCommentsSocketTests {
    @Test(
        "Comments and seller replies, oldest first for guests; the seller and the asker told on the feed; deletions",
        arguments: Backend.allCases
    )
    func commentsAndReplies(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let listings = ListingsClient(transport: connection)
            let chat = ChatClient(transport: connection)
            let seller = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "sel@ucsd.edu", name: "Sel")
            let ann = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "ann@ucsd.edu", name: "Ann")
            let bob = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "bob@ucsd.edu", name: "Bob")
            let sellerFeed = FeedLog()
            let annFeed = FeedLog()
            let feeds = [(seller.auth, sellerFeed), (ann.auth, annFeed)].map { auth, log in
                Task {
                    try await chat.subscribeFeed(.init(), metadata: auth) { response in
                        for try await event in response.messages { log.append(event) }
                    }
                }
            }
            defer { for feed in feeds { feed.cancel() } }
            // An anonymous listing: its seller's replies do not name them to others.
            let listing = try await listings.createListing(
                .with {
                    $0.listing.title = "Mini fridge"
                    $0.listing.priceCents = 4_000
                    $0.listing.category = .electronics
                    $0.listing.condition = .lightlyUsed
                    $0.listing.anonymous = true
                    $0.listing.location.zipCode = "92093"
                },
                metadata: seller.auth
            ).listing

            func add(
                _ who: Metadata,
                _ text: String,
                replyTo: String = ""
            ) async throws -> Skiff_Listings_V1_ListingComment {
                try await listings.addComment(
                    .with {
                        $0.listingID = listing.listingID
                        $0.text = text
                        $0.replyToCommentID = replyTo
                    },
                    metadata: who
                ).comment
            }
            let question = try await add(ann.auth, "  Does it still get cold?  ")
            #expect(question.text == "Does it still get cold?" && question.authorID == ann.id && !question.bySeller)
            #expect(question.commentID.hasPrefix("lcm_") && question.replyToCommentID.isEmpty)
            let other = try await add(bob.auth, "Would you deliver to Revelle?")
            let answer = try await add(seller.auth, "Yes, it works fine.", replyTo: question.commentID)
            #expect(answer.bySeller && answer.authorID == seller.id)  // the seller sees their own id

            // Guests read them oldest first, the anonymous seller unnamed; a page of two, then one.
            let first = try await listings.listComments(
                .with {
                    $0.listingID = listing.listingID
                    $0.pageSize = 2
                }
            )
            #expect(first.comments.map(\.commentID) == [question.commentID, other.commentID])
            let rest = try await listings.listComments(
                .with {
                    $0.listingID = listing.listingID
                    $0.pageSize = 2
                    $0.pageToken = first.nextPageToken
                }
            )
            #expect(rest.comments.map(\.commentID) == [answer.commentID] && rest.nextPageToken.isEmpty)
            #expect(rest.comments[0].authorID.isEmpty && rest.comments[0].bySeller)
            #expect(rest.comments[0].replyToCommentID == question.commentID)

            // The seller was told of both comments (not of their own reply); Ann of the reply, unnamed.
            let told = { (events: [Skiff_Chat_V1_FeedEvent], kind: Skiff_Chat_V1_ListingCommentKind) in
                events.compactMap { event -> Skiff_Chat_V1_ListingCommentUpdate? in
                    guard case .listingComment(let update) = event.event, update.kind == kind else { return nil }
                    return update
                }
            }
            #expect(await sellerFeed.wait(milliseconds: 10_000) { told($0, .commented).count == 2 })
            let toSeller = told(sellerFeed.all, .commented)
            #expect(Set(toSeller.map(\.authorID)) == [ann.id, bob.id])
            #expect(toSeller.allSatisfy { $0.listingTitle == "Mini fridge" && $0.listingID == listing.listingID })
            #expect(await annFeed.wait(milliseconds: 10_000) { told($0, .replied).count == 1 })
            let reply = told(annFeed.all, .replied)[0]
            #expect(
                reply.commentID == answer.commentID && reply.authorID.isEmpty && reply.excerpt == "Yes, it works fine."
            )

            // Errors, with nothing stored.
            await expectStatus(.unauthenticated) { _ = try await add([:], "Hi") }
            await expectStatus(.invalidArgument) { _ = try await add(bob.auth, "   ") }
            let long = await expectStatus(.invalidArgument) {
                _ = try await add(bob.auth, String(repeating: "é", count: 1_001))
            }
            #expect(long?.message.contains("1000") == true || long?.message.contains("1,000") == true)
            let huge = await expectStatus(.invalidArgument) {
                _ = try await add(bob.auth, String(repeating: "x", count: 4_001))
            }
            #expect(huge?.message.contains("text") == true)
            await expectStatus(.permissionDenied) { _ = try await add(bob.auth, "Me too", replyTo: question.commentID) }
            await expectStatus(.invalidArgument) { _ = try await add(seller.auth, "Again", replyTo: answer.commentID) }
            await expectStatus(.notFound) { _ = try await add(seller.auth, "?", replyTo: "lcm_nope") }
            await expectStatus(.notFound) {
                _ = try await listings.listComments(.with { $0.listingID = "lst_nope" })
            }
            await expectStatus(.invalidArgument) {
                _ = try await listings.listComments(
                    .with {
                        $0.listingID = listing.listingID
                        $0.pageToken = "garbage"
                    }
                )
            }

            // Deleting: a stranger may not; the author may (the seller's reply goes with it); so may the seller.
            await expectStatus(.permissionDenied) {
                _ = try await listings.deleteComment(.with { $0.commentID = question.commentID }, metadata: bob.auth)
            }
            let deleted = try await listings.deleteComment(
                .with { $0.commentID = question.commentID },
                metadata: ann.auth
            )
            #expect(deleted.deletedCommentIds == [question.commentID, answer.commentID])
            await expectStatus(.notFound) {
                _ = try await listings.deleteComment(.with { $0.commentID = question.commentID }, metadata: ann.auth)
            }
            _ = try await listings.deleteComment(.with { $0.commentID = other.commentID }, metadata: seller.auth)
            #expect(try await listings.listComments(.with { $0.listingID = listing.listingID }).comments.isEmpty)

            // Sold: the comments stay readable, new ones are refused.
            _ = try await add(bob.auth, "Last question")
            _ = try await listings.markSold(.with { $0.listingID = listing.listingID }, metadata: seller.auth)
            await expectStatus(.failedPrecondition) { _ = try await add(bob.auth, "Too late?") }
            #expect(try await listings.listComments(.with { $0.listingID = listing.listingID }).comments.count == 1)
        }
    }

    @Test(
        "One user posting as fast as they can is stopped at 30 comments per 10 minutes; others carry on",
        arguments: Backend.allCases
    )
    func rateLimited(_ backend: Backend) async throws {
        try await withApp(backend) { app, connection in
            let accounts = AccountsClient(transport: connection)
            let listings = ListingsClient(transport: connection)
            let seller = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "s@ucsd.edu", name: "S")
            let spammer = try await signUpAndLogIn(accounts, mailer: app.mailer, email: "x@ucsd.edu", name: "X")
            let listing = try await ListingBidsSocketTests.newListing(listings, seller.auth)
            let request = Skiff_Listings_V1_AddCommentRequest.with {
                $0.listingID = listing.listingID
                $0.text = "Buy my stuff instead"
            }
            for _ in 0..<30 { _ = try await listings.addComment(request, metadata: spammer.auth) }
            let limited = await expectStatus(.resourceExhausted) {
                _ = try await listings.addComment(request, metadata: spammer.auth)
            }
            #expect(Int(limited?.metadata.first("retry-after") ?? "") ?? 0 > 0)
            _ = try await listings.addComment(request, metadata: seller.auth)
            let stored = try await listings.listComments(
                .with {
                    $0.listingID = listing.listingID
                    $0.pageSize = 100
                }
            )
            #expect(stored.comments.count == 31)
        }
    }
}
