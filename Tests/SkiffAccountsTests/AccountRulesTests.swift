import SkiffAccounts
import SkiffDomain
import Testing

@Suite("Account rules")
struct AccountRulesTests {
    let anyDomain = AccountRules()

    @Test(
        "Valid e-mail addresses are accepted and normalized",
        arguments: [
            ("ada@school.edu", "ada@school.edu"),
            ("  Ada.Lovelace+market@CS.School.EDU ", "ada.lovelace+market@cs.school.edu"),
            ("o'neil_x-1@sub-domain.example.org", "o'neil_x-1@sub-domain.example.org"),
            ("a@b.io", "a@b.io"),
        ]
    )
    func validEmails(input: String, normalized: String) throws {
        #expect(try anyDomain.validateEmail(input) == normalized)
    }

    @Test(
        "Malformed e-mail addresses are rejected with an example",
        arguments: [
            "plainaddress", "@school.edu", "ada@", "ada@@school.edu", "ada@school", "ada@school.e",
            "ada@school.123", ".ada@school.edu", "ada.@school.edu", "a..b@school.edu", "ada@-school.edu",
            "ada@school-.edu", "ada@school..edu", "ada lovelace@school.edu", "adá@school.edu", "ada@schööl.edu",
            String(repeating: "a", count: 65) + "@school.edu",
            "ada@" + String(repeating: "a", count: 64) + ".edu",
            "ada@" + String(repeating: "abcdefghi.", count: 26) + "edu",
        ]
    )
    func invalidEmails(input: String) {
        #expect(throws: DomainError(.invalidArgument, "Enter an e-mail address like name@school.edu.")) {
            try anyDomain.validateEmail(input)
        }
    }

    @Test("An empty e-mail address asks for one")
    func emptyEmail() {
        #expect(throws: DomainError(.invalidArgument, "Enter your e-mail address.")) {
            try anyDomain.validateEmail("   ")
        }
    }

    @Test("The domain allow-list admits its domains and their subdomains only")
    func allowList() throws {
        let rules = AccountRules(allowedEmailDomains: ["School.edu", "college.ac.uk"])
        #expect(try rules.validateEmail("a@school.edu") == "a@school.edu")
        #expect(try rules.validateEmail("a@CS.School.edu") == "a@cs.school.edu")
        #expect(try rules.validateEmail("a@college.ac.uk") == "a@college.ac.uk")
        let rejection = DomainError(
            .invalidArgument,
            "Sign up with your campus e-mail address (@school.edu, @college.ac.uk)."
        )
        for address in ["a@gmail.com", "a@evilschool.edu", "a@school.edu.evil.com", "a@ac.uk"] {
            #expect(throws: rejection) { try rules.validateEmail(address) }
        }
    }

    @Test("Password length bounds: 9 and 129 fail, 10 and 128 pass")
    func passwordBounds() throws {
        let tooShort = DomainError(.invalidArgument, "Choose a password of at least 10 characters.")
        let tooLong = DomainError(.invalidArgument, "Choose a password of at most 128 characters.")
        #expect(throws: tooShort) { try AccountRules.validatePassword(String(repeating: "p", count: 9)) }
        try AccountRules.validatePassword(String(repeating: "p", count: 10))
        try AccountRules.validatePassword(String(repeating: "p", count: 128))
        #expect(throws: tooLong) { try AccountRules.validatePassword(String(repeating: "p", count: 129)) }
        #expect(throws: tooShort) { try AccountRules.validatePassword("") }
        // Length counts characters, not bytes: ten emoji are ten characters.
        try AccountRules.validatePassword(String(repeating: "🔑", count: 10))
        // …but exotic characters cannot blow up the hashing input.
        #expect(throws: tooLong) { try AccountRules.validatePassword(String(repeating: "👩‍👩‍👧‍👦", count: 100)) }
    }

    @Test("Display names are trimmed, 1–50 characters, without control characters")
    func displayNames() throws {
        #expect(try AccountRules.validateDisplayName("  Ada  ") == "Ada")
        #expect(try AccountRules.validateDisplayName(String(repeating: "n", count: 50)).count == 50)
        #expect(try AccountRules.validateDisplayName("Zoë 👩‍💻") == "Zoë 👩‍💻")
        #expect(throws: DomainError(.invalidArgument, "Enter a display name.")) {
            try AccountRules.validateDisplayName(" \n ")
        }
        #expect(throws: DomainError(.invalidArgument, "Shorten the display name to at most 50 characters.")) {
            try AccountRules.validateDisplayName(String(repeating: "n", count: 51))
        }
        for bad in ["Ada\nLovelace", "Ada\u{0}", "evil\u{202E}txt"] {
            #expect(throws: DomainError.self) { try AccountRules.validateDisplayName(bad) }
        }
    }

    @Test("Bio, payment handle, ZIP code and picture id")
    func profileFields() throws {
        #expect(try AccountRules.validateBio(" Line one\nLine two ") == "Line one\nLine two")
        #expect(try AccountRules.validateBio(String(repeating: "b", count: 500)).count == 500)
        #expect(throws: DomainError(.invalidArgument, "Shorten the bio to at most 500 characters.")) {
            try AccountRules.validateBio(String(repeating: "b", count: 501))
        }
        #expect(try AccountRules.validatePaymentHandle(" @ada-pays ") == "@ada-pays")
        #expect(throws: DomainError(.invalidArgument, "Remove spaces from the payment handle.")) {
            try AccountRules.validatePaymentHandle("@ada pays")
        }
        for zip in ["12345", "12345-6789", ""] {
            #expect(try AccountRules.validateZipCode(zip) == zip)
        }
        for zip in ["1234", "123456", "12345-678", "ABCDE", "12345 6789"] {
            #expect(throws: DomainError(.invalidArgument, "Enter a ZIP code like 12345 or 12345-6789.")) {
                try AccountRules.validateZipCode(zip)
            }
        }
        #expect(try AccountRules.validateImageID("img_3q2-7wEvr2pY0u5BnGxR6A") == "img_3q2-7wEvr2pY0u5BnGxR6A")
        #expect(throws: DomainError.self) { try AccountRules.validateImageID("../etc/passwd") }
    }

    @Test("Profile changes are validated field by field; nothing to change is an error")
    func profileChanges() throws {
        let changes = try AccountRules.validate(ProfileChanges(displayName: " New ", zipCode: ""))
        #expect(changes == ProfileChanges(displayName: "New", zipCode: ""))
        #expect(throws: DomainError(.invalidArgument, "Change at least one profile field.")) {
            try AccountRules.validate(ProfileChanges())
        }
        #expect(throws: DomainError.self) { try AccountRules.validate(ProfileChanges(zipCode: "1")) }
    }

    @Test("Ratings: 1–5 stars, not oneself, short comments")
    func ratings() throws {
        #expect(try AccountRules.validateRating(stars: 1, comment: " ok ", sellerID: "a", buyerID: "b") == "ok")
        #expect(try AccountRules.validateRating(stars: 5, comment: "", sellerID: "a", buyerID: "b") == "")
        for stars in [0, 6, -1] {
            #expect(throws: DomainError(.invalidArgument, "Choose 1 to 5 stars.")) {
                try AccountRules.validateRating(stars: stars, comment: "", sellerID: "a", buyerID: "b")
            }
        }
        #expect(throws: DomainError(.invalidArgument, "You cannot rate yourself.")) {
            try AccountRules.validateRating(stars: 3, comment: "", sellerID: "a", buyerID: "a")
        }
        #expect(throws: DomainError.self) {
            try AccountRules.validateRating(
                stars: 3,
                comment: String(repeating: "c", count: AccountRules.ratingCommentMaximumLength + 1),
                sellerID: "a",
                buyerID: "b"
            )
        }
    }

    @Test("Reports need a reason and may not target oneself")
    func reports() throws {
        let valid = try AccountRules.validateReport(
            reason: " scam ",
            details: " asked for a deposit ",
            reporterID: "a",
            reportedID: "b"
        )
        #expect(valid.reason == "scam")
        #expect(valid.details == "asked for a deposit")
        #expect(throws: DomainError(.invalidArgument, "Choose a reason for the report.")) {
            try AccountRules.validateReport(reason: "  ", details: "", reporterID: "a", reportedID: "b")
        }
        #expect(throws: DomainError(.invalidArgument, "You cannot report yourself.")) {
            try AccountRules.validateReport(reason: "spam", details: "", reporterID: "a", reportedID: "a")
        }
    }

    @Test("Search queries are trimmed and bounded")
    func searchQuery() throws {
        #expect(try AccountRules.validateSearchQuery("  ada ") == "ada")
        #expect(throws: DomainError.self) { try AccountRules.validateSearchQuery(String(repeating: "q", count: 101)) }
    }
}
