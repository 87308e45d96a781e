import Foundation
import SkiffAccounts
import SkiffDomain
import Testing

extension AccountsStoreConformanceTests {
    @Test("Search ignores case and diacritics and orders by name", arguments: StoreKind.allCases)
    func searchMatching(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let created = try await store.createAccounts(["Zoë Adams", "zoe baker", "Chloé", "Bob", "ZOEY"])
            let byName = Dictionary(uniqueKeysWithValues: created.map { ($0.displayName, $0) })

            #expect(
                try await store.searchAll("ZOE", pageSize: 10).map(\.displayName) == ["Zoë Adams", "zoe baker", "ZOEY"]
            )
            #expect(
                try await store.searchAll("oe", pageSize: 10).map(\.displayName) == [
                    "Chloé", "Zoë Adams", "zoe baker", "ZOEY",
                ]
            )
            #expect(try await store.searchAll("chloe", pageSize: 10) == [byName["Chloé"]!])
            #expect(try await store.searchAll("x%_", pageSize: 10) == [])
            #expect(
                try await store.searchAll("", pageSize: 10).map(\.displayName) == [
                    "Bob", "Chloé", "Zoë Adams", "zoe baker", "ZOEY",
                ]
            )
        }
    }

    @Test("A renamed account is found by its new name only, in its new place", arguments: StoreKind.allCases)
    func searchAfterRename(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let created = try await store.createAccounts(["Alice", "Mallory", "Zed"])
            var changes = ProfileChanges()
            changes.displayName = "Bob"
            _ = try await store.updateProfile(id: created[1].id, changes: changes)
            #expect(try await store.searchAll("mallory", pageSize: 10).isEmpty)
            #expect(try await store.searchAll("", pageSize: 1).map(\.displayName) == ["Alice", "Bob", "Zed"])
            // Renamed again to the same name: still once.
            _ = try await store.updateProfile(id: created[1].id, changes: changes)
            #expect(try await store.searchAll("b", pageSize: 10).map(\.id) == [created[1].id])
        }
    }

    @Test("Equal names are ordered by id", arguments: StoreKind.allCases)
    func searchTieBreak(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let ids = ["usr_c", "usr_a", "usr_d", "usr_b"]
            for id in ids {
                _ = try await store.createAccount(Fixture.account("Sam", id: id))
            }
            #expect(try await store.searchAll("sam", pageSize: 1).map(\.id) == ids.sorted())
            #expect(try await store.searchAll("sam", pageSize: 3).map(\.id) == ids.sorted())
        }
    }

    @Test("Walking every page returns each match exactly once, in order", arguments: StoreKind.allCases)
    func searchWalk(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let names = (0..<45).map { String(format: "Student %02d", ($0 * 7) % 45) }
            let created = try await store.createAccounts(names)
            let expected = created.sorted { ($0.displayName, $0.id) < ($1.displayName, $1.id) }

            let firstPage = try await store.searchUsers(nameQuery: "student", page: PageRequest(size: 10))
            #expect(firstPage.items == Array(expected.prefix(10)))
            #expect(firstPage.nextPageToken != nil)
            #expect(try await store.searchAll("student", pageSize: 10) == expected)
            #expect(try await store.searchAll("STUDENT", pageSize: 45) == expected)

            // The default size is 20; exactly-full last pages end without an extra empty page.
            let defaultPage = try await store.searchUsers(nameQuery: "", page: PageRequest())
            #expect(defaultPage.items.count == 20)
            let fullPage = try await store.searchUsers(nameQuery: "", page: PageRequest(size: 45))
            #expect(fullPage.items.count == 45)
            #expect(fullPage.nextPageToken == nil)
        }
    }

    @Test("Paging is stable while people sign up: no duplicates, no gaps", arguments: StoreKind.allCases)
    func searchStability(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let original = try await store.createAccounts((0..<30).map { String(format: "user %02d", $0) })
            let page1 = try await store.searchUsers(nameQuery: "user", page: PageRequest(size: 10))
            #expect(page1.items.map(\.displayName) == (0..<10).map { String(format: "user %02d", $0) })

            // One sign-up sorts before the cursor (already passed), one after it (still ahead).
            let before = try await store.createAccount(Fixture.account("user 05b"))
            let after = try await store.createAccount(Fixture.account("user 15b"))

            var rest: [Account] = []
            var token = page1.nextPageToken
            while let current = token {
                let page = try await store.searchUsers(nameQuery: "user", page: PageRequest(size: 10, token: current))
                rest += page.items
                token = page.nextPageToken
            }
            let seen = page1.items + rest
            #expect(Set(seen.map(\.id)).count == seen.count, "no duplicates")
            #expect(Set(original.map(\.id)).isSubset(of: Set(seen.map(\.id))), "no gaps")
            #expect(rest.contains(after))
            #expect(!rest.contains(before))
            #expect(rest.map(\.displayName) == rest.map(\.displayName).sorted())
        }
    }

    @Test("Bad page tokens are invalidArgument", arguments: StoreKind.allCases)
    func searchBadTokens(kind: StoreKind) async throws {
        try await withAccountsStore(kind) { store in
            let seller = try await store.createAccounts(["Ann", "Andy", "Anna"])[0]
            let invalid = DomainError(.invalidArgument, PageToken.invalidMessage)
            let page = try await store.searchUsers(nameQuery: "an", page: PageRequest(size: 1))
            let token = try #require(page.nextPageToken)

            for bad in ["garbage!", "AAAA", String(token.dropLast(3)), Base64URL.encode(Array("{}".utf8))] {
                await #expect(throws: invalid) {
                    _ = try await store.searchUsers(nameQuery: "an", page: PageRequest(size: 1, token: bad))
                }
            }
            // A token belongs to its query, and search tokens are not ratings tokens.
            await #expect(throws: invalid) {
                _ = try await store.searchUsers(nameQuery: "andy", page: PageRequest(size: 1, token: token))
            }
            await #expect(throws: invalid) {
                _ = try await store.ratings(sellerID: seller.id, page: PageRequest(size: 1, token: token))
            }
            // The same query in another case is the same query.
            let next = try await store.searchUsers(nameQuery: "AN", page: PageRequest(size: 1, token: token))
            #expect(next.items.count == 1)
        }
    }
}
