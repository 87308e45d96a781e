import Foundation
import SkiffAccounts
import SkiffDomain
import Testing

extension AccountsStoreConformanceTests {
    @Test("A sale is rated once", arguments: StoreKind.allCases)
    func ratingOncePerSale(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let people = try await store.createAccounts(["Seller", "Buyer", "Other"])
            let (seller, buyer, other) = (people[0], people[1], people[2])
            let rating = Fixture.rating(sale: "sale_1", seller: seller.id, buyer: buyer.id, stars: 4)
            try await store.addRating(rating)
            await #expect(throws: AccountsStoreError.saleAlreadyRated) {
                try await store.addRating(Fixture.rating(sale: "sale_1", seller: seller.id, buyer: buyer.id, stars: 1))
            }
            await #expect(throws: AccountsStoreError.saleAlreadyRated) {
                try await store.addRating(Fixture.rating(sale: "sale_1", seller: other.id, buyer: buyer.id, stars: 1))
            }
            #expect(try await store.ratings(sellerID: seller.id, page: .first).items == [rating])
            #expect(try await store.ratingSummary(sellerID: other.id) == RatingSummary(count: 0, totalStars: 0))
        }
    }

    @Test("Ratings come newest first, ties by sale id descending, in stable pages", arguments: StoreKind.allCases)
    func ratingsOrderAndPaging(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let people = try await store.createAccounts(["Seller", "Buyer", "Elsewhere"])
            let (seller, buyer, elsewhere) = (people[0], people[1], people[2])
            var all: [Rating] = []
            for index in 0..<25 {
                // Pairs share a timestamp so the tie-break matters.
                let rating = Fixture.rating(
                    sale: String(format: "sale_%02d", index),
                    seller: seller.id,
                    buyer: buyer.id,
                    stars: index % 5 + 1,
                    at: Fixture.date(plusSeconds: Double(index / 2))
                )
                try await store.addRating(rating)
                all.append(rating)
            }
            try await store.addRating(Fixture.rating(sale: "sale_x", seller: elsewhere.id, buyer: buyer.id, stars: 1))
            let expected = all.sorted { ($0.createdAt, $0.saleID) > ($1.createdAt, $1.saleID) }

            var seen: [Rating] = []
            var token: String?
            var pages = 0
            repeat {
                let page = try await store.ratings(sellerID: seller.id, page: PageRequest(size: 10, token: token))
                seen += page.items
                token = page.nextPageToken
                pages += 1
                if pages == 1 {
                    // A newer rating arriving mid-walk sorts before the cursor and is not repeated or shown.
                    try await store.addRating(
                        Fixture.rating(
                            sale: "sale_new",
                            seller: seller.id,
                            buyer: buyer.id,
                            stars: 5,
                            at: Fixture.date(plusSeconds: 99)
                        )
                    )
                }
            } while token != nil
            #expect(pages == 3)
            #expect(seen == expected)

            let other = try await store.ratings(sellerID: seller.id, page: PageRequest(size: 10))
            let token2 = try #require(other.nextPageToken)
            await #expect(throws: DomainError(.invalidArgument, PageToken.invalidMessage)) {
                _ = try await store.ratings(sellerID: elsewhere.id, page: PageRequest(size: 10, token: token2))
            }
        }
    }

    @Test("Rating summary: count, total and average", arguments: StoreKind.allCases)
    func ratingSummary(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let people = try await store.createAccounts(["Seller", "Buyer", "Other seller"])
            let (seller, buyer, other) = (people[0], people[1], people[2])
            #expect(try await store.ratingSummary(sellerID: seller.id) == RatingSummary(count: 0, totalStars: 0))
            #expect(try await store.ratingSummary(sellerID: seller.id).average == nil)

            for (index, stars) in [5, 4, 4, 2].enumerated() {
                try await store.addRating(
                    Fixture.rating(sale: "s\(index)", seller: seller.id, buyer: buyer.id, stars: stars)
                )
            }
            try await store.addRating(Fixture.rating(sale: "o1", seller: other.id, buyer: buyer.id, stars: 1))

            let summary = try await store.ratingSummary(sellerID: seller.id)
            #expect(summary == RatingSummary(count: 4, totalStars: 15))
            #expect(summary.average == 3.75)
            #expect(try await store.ratingSummary(sellerID: other.id).average == 1.0)
            try await store.addRating(Fixture.rating(sale: "s9", seller: seller.id, buyer: buyer.id, stars: 5))
            #expect(try await store.ratingSummary(sellerID: seller.id).average == 4.0)
        }
    }

    @Test(
        "Reports are kept, oldest first, ids unique, one open report per reporter and reported user",
        arguments: StoreKind.allCases
    )
    func reports(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let people = try await store.createAccounts(["Reporter", "Troll", "Witness", "Bystander"])
            let (reporter, troll, witness, bystander) = (people[0], people[1], people[2], people[3])
            let late = Report(
                id: "rep_b",
                reporterID: reporter.id,
                reportedID: troll.id,
                reason: "scam",
                details: "Asked for a deposit.",
                createdAt: Fixture.date(plusSeconds: 60)
            )
            let early = Report(
                id: "rep_c",
                reporterID: witness.id,
                reportedID: troll.id,
                reason: "harassment",
                details: "",
                createdAt: Fixture.t0
            )
            let tie = Report(
                id: "rep_a",
                reporterID: bystander.id,
                reportedID: troll.id,
                reason: "spam",
                details: "",
                createdAt: Fixture.t0
            )
            for report in [late, early, tie] { try await store.addReport(report) }
            await #expect(throws: AccountsStoreError.reportIDTaken) { try await store.addReport(late) }
            var again = late
            again.id = "rep_d"
            again.reason = "spam"
            await #expect(throws: AccountsStoreError.reportAlreadyOpen) { try await store.addReport(again) }
            // The same reporter about someone else is a new report.
            again.reportedID = witness.id
            try await store.addReport(again)
            #expect(try await store.reports(reportedID: witness.id) == [again])
            #expect(try await store.reports(reportedID: troll.id) == [tie, early, late])
            #expect(try await store.reports(reportedID: reporter.id) == [])
        }
    }
}

extension AccountsStoreConformanceTests {
    @Test(
        "Anonymous ratings keep their flag and public id; ties order by public id; tokens never carry the sale",
        arguments: StoreKind.allCases
    )
    func anonymousRatings(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let people = try await store.createAccounts(["Seller", "Named", "Hidden"])
            let (seller, named, hidden) = (people[0], people[1], people[2])
            let at = Fixture.date(plusSeconds: 10)
            let anonymous = Rating(
                ratingID: "rat_zz",
                saleID: "sale_secret",
                sellerID: seller.id,
                buyerID: hidden.id,
                stars: 2,
                comment: "Late to the hand-off.",
                createdAt: at,
                anonymous: true
            )
            let open = Rating(saleID: "sale_aa", sellerID: seller.id, buyerID: named.id, stars: 5, createdAt: at)
            #expect(open.ratingID == "sale_aa" && !open.anonymous)
            try await store.addRating(anonymous)
            try await store.addRating(open)
            // One rating per sale, whatever the public id.
            var again = anonymous
            again.ratingID = "rat_other"
            await #expect(throws: AccountsStoreError.saleAlreadyRated) { try await store.addRating(again) }

            let first = try await store.ratings(sellerID: seller.id, page: PageRequest(size: 1))
            #expect(first.items == [open])  // "sale_aa" sorts after "rat_zz": the greater id comes first
            let token = try #require(first.nextPageToken)
            let second = try await store.ratings(sellerID: seller.id, page: PageRequest(size: 1, token: token))
            #expect(second.items == [anonymous])
            #expect(second.nextPageToken == nil)
            // A page that ends on the anonymous rating: its token names it by its public id, not its sale.
            let older = Rating(
                saleID: "sale_old",
                sellerID: seller.id,
                buyerID: named.id,
                stars: 4,
                createdAt: Fixture.t0
            )
            try await store.addRating(older)
            let both = try await store.ratings(sellerID: seller.id, page: PageRequest(size: 2))
            #expect(both.items == [open, anonymous])
            let cursor = try #require(
                both.nextPageToken.flatMap(Base64URL.decode).map { String(decoding: $0, as: UTF8.self) }
            )
            #expect(cursor.contains("rat_zz") && !cursor.contains("sale_secret"))
            let rest = try await store.ratings(
                sellerID: seller.id,
                page: PageRequest(size: 2, token: both.nextPageToken)
            )
            #expect(rest.items == [older])
            #expect(try await store.ratingSummary(sellerID: seller.id) == RatingSummary(count: 3, totalStars: 11))
        }
    }
}
