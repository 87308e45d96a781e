import Foundation
import SkiffAPI
import SkiffAccounts
import SkiffCLI
import SkiffClient
import SkiffCore
import SkiffReflection
import SkiffServerApp
import SwiftProtobuf
import Testing

/// `skiff` end to end against a real server, through ``SkiffMain/run(_:io:)``.
@Suite("skiff commands", .serialized)
struct CLITests {
    @Test("list shows services and method signatures via reflection")
    func list() async throws {
        try await withServer { _, target in
            let result = await skiff(["list", target])
            #expect(result.code == 0, "\(result.stderr)")
            #expect(result.stdout.contains("skiff.listings.v1.Listings\n"))
            #expect(result.stdout.contains("  SearchListings(SearchListingsRequest) returns (SearchListingsResponse)"))
            #expect(result.stdout.contains("  Watch(HealthCheckRequest) returns (stream HealthCheckResponse)"))
            #expect(result.stdout.contains("skiff.reflection.v1.Reflection"))
            #expect(result.stdout.contains("skiff.testing.v1.TestService"))
        }
    }

    @Test("describe shows a method's request and response, field by field")
    func describe() async throws {
        try await withServer { _, target in
            let result = await skiff(["describe", target, "skiff.listings.v1.Listings/SearchListings"])
            #expect(result.code == 0, "\(result.stderr)")
            #expect(result.stdout.contains("message skiff.listings.v1.SearchListingsRequest {"))
            #expect(result.stdout.contains("  string query = 1;  // json: \"query\""))
            #expect(result.stdout.contains("  optional int64 min_price_cents = 3;  // json: \"minPriceCents\""))
            #expect(result.stdout.contains("enum skiff.listings.v1.Category {"))
            let service = await skiff(["describe", target, "skiff.health.v1.Health"])
            #expect(service.stdout.contains("rpc Check(HealthCheckRequest) returns (HealthCheckResponse);"))
            let message = await skiff(["describe", target, "skiff.listings.v1.GeoPoint"])
            #expect(message.stdout.hasPrefix("message skiff.listings.v1.GeoPoint {"))
            let unknown = await skiff(["describe", target, "skiff.Nope"])
            #expect(unknown.code == 5 && unknown.stderr.contains("NOT_FOUND"))
        }
    }

    @Test("call: unary with JSON in and out, and -H metadata echoed with -v")
    func unary() async throws {
        try await withServer { _, target in
            let search = await skiff([
                "call", target, "skiff.listings.v1.Listings/SearchListings", #"{"query":"jacket"}"#, "--compact",
            ])
            #expect(search.code == 0, "\(search.stderr)")
            #expect(search.stdout.hasPrefix("{"))
            let echo = await skiff([
                "call", target, "skiff.testing.v1.TestService/UnaryCall", #"{"responseSize":3}"#,
                "-H", "x-skiff-echo-initial: hello", "-v", "--compact",
            ])
            #expect(echo.code == 0, "\(echo.stderr)")
            #expect(echo.stdout.hasPrefix(#"{"payload":{"body":"AAAA"}"#))
            #expect(echo.stderr.contains("x-skiff-echo-initial: hello"))
        }
    }

    @Test("call --protocol connect (and grpc, grpc-web): reflection and calls over HTTP/2")
    func httpProtocols() async throws {
        try await withServer { _, target in
            let echo = await skiff([
                "call", target, "skiff.testing.v1.TestService/UnaryCall", #"{"responseSize":3}"#,
                "--protocol", "connect", "-H", "x-skiff-echo-initial: hello", "-v", "--compact",
            ])
            #expect(echo.code == 0, "\(echo.stderr)")
            #expect(echo.stdout.hasPrefix(#"{"payload":{"body":"AAAA"}"#))
            #expect(echo.stderr.contains("x-skiff-echo-initial: hello"))
            let failed = await skiff([
                "call", target, "skiff.testing.v1.TestService/UnaryCall",
                #"{"responseStatus":{"code":5,"message":"gone"}}"#, "--protocol", "connect",
            ])
            #expect(failed.code == 5 && failed.stderr.contains("NOT_FOUND"), "\(failed.stderr)")
            for name in ["grpc", "grpc-web"] {
                let stream = await skiff([
                    "call", target, "skiff.testing.v1.TestService/StreamingOutputCall",
                    #"{"responseParameters":[{"size":1},{"size":2}]}"#, "--protocol", name, "--compact",
                ])
                #expect(stream.code == 0, "\(name): \(stream.stderr)")
                #expect(stream.stdout.split(separator: "\n").count == 2)
            }
            let bad = await skiff(["list", target, "--protocol", "http3"])
            #expect(bad.code != 0 && bad.stderr.contains("--protocol"), "\(bad.stderr)")
        }
    }

    @Test("call: server streaming prints each response; client streaming reads NDJSON from stdin")
    func streaming() async throws {
        try await withServer { _, target in
            let result = await skiff([
                "call", target, "skiff.testing.v1.TestService/StreamingOutputCall",
                #"{"responseParameters":[{"size":1},{"size":2},{"size":0}]}"#, "--compact",
            ])
            #expect(result.code == 0, "\(result.stderr)")
            #expect(result.stdout.split(separator: "\n").count == 3)
            #expect(result.stdout.hasPrefix(#"{"payload":{"body":"AA=="}}"#))
            let upload = await skiff(
                ["call", target, "skiff.testing.v1.TestService/StreamingInputCall", "--compact"],
                stdin: [#"{"payload":{"body":"AAA="}}"#, "", #"{"payload":{"body":"AAAAAA=="}}"#]
            )
            #expect(upload.code == 0, "\(upload.stderr)")
            #expect(upload.stdout.contains("6"))
            let duplex = await skiff(
                ["call", target, "skiff.testing.v1.TestService/FullDuplexCall", "--compact"],
                stdin: [#"{"responseParameters":[{"size":1}]}"#, #"{"responseParameters":[{"size":2}]}"#]
            )
            #expect(duplex.code == 0, "\(duplex.stderr)")
            #expect(duplex.stdout.split(separator: "\n").count == 2)
        }
    }

    @Test("errors: a status ends with its number as exit code and `CODE: message` on stderr")
    func errors() async throws {
        try await withServer { _, target in
            let failed = await skiff([
                "call", target, "skiff.testing.v1.TestService/UnaryCall",
                #"{"responseStatus":{"code":9,"message":"nope"}}"#,
            ])
            #expect(failed.code == 9)
            #expect(failed.stderr == "FAILED_PRECONDITION: nope\n")
            let slow = await skiff([
                "call", target, "skiff.testing.v1.TestService/UnaryCall", #"{"sleepMs":2000}"#, "--timeout", "100ms",
            ])
            #expect(slow.code == 4)
            #expect(slow.stderr.hasPrefix("DEADLINE_EXCEEDED"))
            let badJSON = await skiff(["call", target, "skiff.listings.v1.Listings/SearchListings", #"{"qurey":"x"}"#])
            #expect(badJSON.code == 3)
            #expect(badJSON.stderr.contains("Unknown field 'qurey'"))
            let noMethod = await skiff(["call", target, "skiff.listings.v1.Listings/Nope"])
            #expect(noMethod.code == 12)
            let unauthenticated = await skiff(["call", target, "skiff.accounts.v1.Accounts/GetMyAccount"])
            #expect(unauthenticated.code == 16 && unauthenticated.stderr.hasPrefix("UNAUTHENTICATED"))
            let usage = await skiff(["call"])
            #expect(usage.code == 64)
        }
    }

    @Test("--proto DIR works without reflection")
    func protoDirectory() async throws {
        let protos = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Protos").path
        try await withServer { _, target in
            let list = await skiff(["list", target, "--proto", protos])
            #expect(list.code == 0, "\(list.stderr)")
            #expect(list.stdout.contains("skiff.bids.v1.Bids"))
            let call = await skiff([
                "call", target, "--proto", protos, "skiff.health.v1.Health/Check", "{}", "--compact",
            ])
            #expect(call.code == 0, "\(call.stderr)")
            #expect(call.stdout == #"{"status":"SERVING"}"# + "\n")
        }
    }

    @Test("login stores a 0600 token that later calls send")
    func login() async throws {
        let config = FileManager.default.temporaryDirectory.appending(path: "skiff-login-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: config) }
        try await withServer { app, target in
            let (host, port) = (String(target.split(separator: ":")[0]), Int(target.split(separator: ":")[1])!)
            try await withClientConnection(target: .host(host, port: port)) { connection in
                let accounts = Skiff_Accounts_V1_Accounts.Client(transport: connection)
                _ = try await accounts.signUp(
                    .with {
                        $0.email = "ada@example.edu"
                        $0.password = "correct horse battery"
                        $0.displayName = "Ada"
                    }
                )
                let body = app.mailer.messages(to: "ada@example.edu").last?.body ?? ""
                let line = body.split(separator: "\n").first { $0.hasPrefix("Verification token: ") } ?? ""
                _ = try await accounts.verifyEmail(
                    .with { $0.token = String(line.dropFirst("Verification token: ".count)) }
                )
            }
            let wrong = await skiff(
                ["login", target, "--email", "ada@example.edu"],
                stdin: ["wrong password!"],
                configHome: config
            )
            #expect(wrong.code != 0)
            let login = await skiff(
                ["login", target, "--email", "ada@example.edu"],
                stdin: ["correct horse battery"],
                configHome: config
            )
            #expect(login.code == 0, "\(login.stderr)")
            let file = config + "/skiff/sessions.json"
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            #expect(try String(contentsOfFile: file, encoding: .utf8).contains(target))
            let me = await skiff(
                ["call", target, "skiff.accounts.v1.Accounts/GetMyAccount", "--compact"],
                configHome: config
            )
            #expect(me.code == 0, "\(me.stderr)")
            #expect(me.stdout.contains("ada@example.edu"))
        }
    }
}
