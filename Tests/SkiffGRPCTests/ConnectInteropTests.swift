import Foundation
import SkiffAPI
import SkiffClient
import SkiffCore
import SkiffGRPC
import SkiffServer
import SkiffStandardServices
import SkiffTesting
import SkiffWire
import SwiftProtobuf
import Testing

/// Where the repository's files are, from this file's path.
private let repository = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

private let interop = repository.appendingPathComponent("Tests/SkiffGRPCTests/Interop")
private let protos = repository.appendingPathComponent("Protos").path

/// Every protocol on one port: skiff/1, HTTP/2 (gRPC, gRPC-Web, Connect), HTTP/1.1 (gRPC-Web, Connect).
private let allProtocols: [any ConnectionProtocol] = [SkiffWireProtocol(), HTTP2Protocol(), HTTP1Protocol()]

/// A response read by `curl -i`: its status line, headers (names lower-cased) and body.
struct CurlResponse {
    var statusLine: String
    var headers: [String: String]
    var body: Data

    /// The body as a JSON object, or an empty one.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
    }
}

/// Runs Debian's `curl -sS -i arguments…` and reads its answer. The test fails (it is never
/// skipped) when curl is missing: `dev/test.sh` installs it.
func runCurl(_ arguments: [String]) throws -> CurlResponse {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["curl", "-sS", "-i", "--max-time", "20"] + arguments
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw CurlFailed(status: process.terminationStatus, output: errorText)
    }
    guard let split = data.firstRange(of: Data("\r\n\r\n".utf8)) else {
        throw CurlFailed(status: 0, output: "no header block in: " + String(decoding: data, as: UTF8.self))
    }
    let lines = String(decoding: data[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return CurlResponse(statusLine: lines.first ?? "", headers: headers, body: Data(data[split.upperBound...]))
}

struct CurlFailed: Error, CustomStringConvertible {
    var status: Int32
    var output: String
    var description: String { "curl failed (\(status)); is curl installed (dev/test.sh)? \(output)" }
}

@Suite("Connect and gRPC-Web with stock clients: connectrpc, curl, and one call over every protocol")
struct ConnectInteropTests {
    @Test("Python connectrpc calls the conformance service over HTTP/1.1 and HTTP/2, JSON and Protobuf")
    func connectrpc() async throws {
        try await withTestServer(services: [TestService(), HealthService()], protocols: allProtocols) { _, port in
            let script = interop.appendingPathComponent("connect_conformance.py")
            let result = try await Task.detached {
                try runPython(script, ["--port", "\(port)", "--protos", protos])
            }.value
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("\n0 failures"), "\(result.output)")
            // Every check ran, on each HTTP version: unary JSON and proto with metadata both ways,
            // EmptyCall, two forced statuses, deadlines (server's and client's), server streaming with
            // metadata and with an error at its end, client streaming, UNIMPLEMENTED twice, GET; and
            // bidirectional streaming on HTTP/2.
            let passed = result.output.split(separator: "\n").filter { $0.hasPrefix("ok ") }
            #expect(passed.count == 23 + 24, "\(result.output)")
        }
    }

    @Test("under TLS, ALPN picks HTTP/1.1 or h2 for curl's Connect calls on the port that also serves skiff/1")
    func tlsALPN() async throws {
        let (cert, key) = try makeCertificate()
        defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: cert).deletingLastPathComponent()) }
        let tls = try ServerConfiguration.TLS(certificatePath: cert, keyPath: key)
        try await withTestServer(
            services: [TestService(), HealthService()],
            protocols: allProtocols,
            configure: { $0.tls = tls }
        ) { _, port in
            let url = "https://127.0.0.1:\(port)/skiff.testing.v1.TestService/UnaryCall"
            for (flag, status) in [("--http1.1", "HTTP/1.1 200"), ("--http2", "HTTP/2 200")] {
                let response = try await Task.detached {
                    try runCurl([
                        flag, "--cacert", cert, "-X", "POST", "-H", "content-type: application/json", "-d",
                        #"{"responseSize":3}"#, url,
                    ])
                }.value
                #expect(response.statusLine.hasPrefix(status), "\(flag): \(response.statusLine)")
                #expect((response.json["payload"] as? [String: String])?["body"] == "AAAA", "\(flag)")
            }
            // skiff/1 by ALPN on the same port.
            try await withClientConnection(
                target: .host("localhost", port: port),
                configuration: ClientConfiguration(tls: .trustRootsPEMFile(cert, serverHostname: "localhost"))
            ) { connection in
                _ = try await Skiff_Testing_V1_TestService.Client(transport: connection).emptyCall(.init())
            }
        }
    }

    @Test("curl: a Connect JSON unary call over HTTP/1.1 and over HTTP/2 (prior knowledge), and its error")
    func curlUnary() async throws {
        try await withTestServer(services: [TestService()], protocols: allProtocols) { _, port in
            let url = "http://127.0.0.1:\(port)/skiff.testing.v1.TestService/UnaryCall"
            for (version, flags) in [("HTTP/1.1", ["--http1.1"]), ("HTTP/2", ["--http2-prior-knowledge"])] {
                let response = try await Task.detached {
                    try runCurl(
                        flags + [
                            "-X", "POST", "-H", "content-type: application/json", "-d", #"{"responseSize":4}"#, url,
                        ]
                    )
                }.value
                #expect(response.statusLine.hasPrefix("\(version) 200"), "\(response.statusLine)")
                #expect(response.headers["content-type"] == "application/json", "\(response.headers)")
                let payload = response.json["payload"] as? [String: Any]
                #expect(payload?["body"] as? String == "AAAAAA==", "\(String(decoding: response.body, as: UTF8.self))")
                #expect((response.json["peerMetadata"] as? String)?.contains("127.0.0.1") == true)

                let failure = try await Task.detached {
                    try runCurl(
                        flags + [
                            "-H", "content-type: application/json", "-d",
                            #"{"responseStatus":{"code":5,"message":"nowhere"},"unknownField":1}"#, url,
                        ]
                    )
                }.value
                #expect(failure.statusLine.hasPrefix("\(version) 404"), "\(failure.statusLine)")
                #expect(failure.headers["content-type"] == "application/json", "\(failure.headers)")
                #expect(failure.json["code"] as? String == "not_found")
                #expect(failure.json["message"] as? String == "nowhere")
            }
        }
    }

    @Test("curl: the README's guest SearchListings with Connect GET and POST against the application")
    func curlSearch() async throws {
        try await withTestApplication { test in
            let seller = try await test.signedInUser(email: "sel@campus.edu", name: "Sel")
            _ = try await test.listings.createListing(
                .with {
                    $0.listing.title = "Red bike"
                    $0.listing.priceCents = 4_000
                    $0.listing.category = .electronics
                    $0.listing.condition = .lightlyUsed
                    $0.listing.location.zipCode = "37235"
                },
                metadata: seller.auth
            )
            let base = "http://127.0.0.1:\(test.port)/skiff.listings.v1.Listings/SearchListings"
            let get = try await Task.detached {
                try runCurl(["\(base)?encoding=json&message=%7B%22query%22%3A%22bike%22%7D"])
            }.value
            let post = try await Task.detached {
                try runCurl(["-X", "POST", "-H", "content-type: application/json", "-d", #"{"query":"bike"}"#, base])
            }.value
            for response in [get, post] {
                #expect(response.statusLine.hasPrefix("HTTP/1.1 200"), "\(response.statusLine)")
                #expect(response.headers["content-type"] == "application/json", "\(response.headers)")
                let results = response.json["results"] as? [[String: Any]] ?? []
                let titles = results.compactMap { ($0["listing"] as? [String: Any])?["title"] as? String }
                #expect(titles == ["Red bike"], "\(String(decoding: response.body, as: UTF8.self))")
            }
            // A search that matches nothing is an empty result, not an error.
            let none = try await Task.detached {
                try runCurl(["\(base)?encoding=json&message=%7B%22query%22%3A%22piano%22%7D"])
            }.value
            #expect(none.statusLine.hasPrefix("HTTP/1.1 200"), "\(none.statusLine)")
            #expect((none.json["results"] as? [Any] ?? []).isEmpty, "\(String(decoding: none.body, as: UTF8.self))")
        }
    }

    @Test("curl: Connect JSON as the README says: enums by name or number, proto names, unknown names ignored")
    func curlJSONMapping() async throws {
        try await withTestApplication { test in
            let seller = try await test.signedInUser(email: "sel@campus.edu", name: "Sel")
            // Older and cheaper first: newest first and cheapest first give opposite orders.
            for (title, price) in [("Red bike", 2_000), ("Blue bike", 4_000)] {
                _ = try await test.listings.createListing(
                    .with {
                        $0.listing.title = title
                        $0.listing.priceCents = Int64(price)
                        $0.listing.category = .electronics
                        $0.listing.condition = .lightlyUsed
                        $0.listing.location.zipCode = "37235"
                    },
                    metadata: seller.auth
                )
            }
            let base = "http://127.0.0.1:\(test.port)/skiff.listings.v1.Listings/SearchListings"
            let cases: [(body: String, titles: [String])] = [
                (#"{"query":"bike"}"#, ["Blue bike", "Red bike"]),
                (#"{"query":"bike","sortOrder":"LISTING_SORT_ORDER_PRICE_ASCENDING"}"#, ["Red bike", "Blue bike"]),
                (#"{"query":"bike","sortOrder":2}"#, ["Red bike", "Blue bike"]),
                (#"{"query":"bike","sort_order":"LISTING_SORT_ORDER_PRICE_ASCENDING"}"#, ["Red bike", "Blue bike"]),
                // Unknown names are ignored: the sort order keeps its default, newest first.
                (#"{"query":"bike","sortOrder":"SORT_ORDER_PRICE_ASCENDING"}"#, ["Blue bike", "Red bike"]),
                (
                    #"{"query":"bike","sortOrdr":"LISTING_SORT_ORDER_PRICE_ASCENDING","future":{"a":[1]}}"#,
                    ["Blue bike", "Red bike"]
                ),
            ]
            for (body, expected) in cases {
                let response = try await Task.detached {
                    try runCurl(["-X", "POST", "-H", "content-type: application/json", "-d", body, base])
                }.value
                #expect(response.statusLine.hasPrefix("HTTP/1.1 200"), "\(body): \(response.statusLine)")
                let results = response.json["results"] as? [[String: Any]] ?? []
                let titles = results.compactMap { ($0["listing"] as? [String: Any])?["title"] as? String }
                #expect(titles == expected, "\(body): \(String(decoding: response.body, as: UTF8.self))")
            }
        }
    }

    @Test("the same UnaryCall has the same response bytes and the same forced status on every protocol")
    func sameBytesSameCodes() async throws {
        try await withTestServer(services: [TestService()], protocols: allProtocols) { _, port in
            let message = "café ∑ 100%"
            // skiff/1, from the Swift client: the reference.
            let (reference, skiffStatus) = try await withClientConnection(target: .host("127.0.0.1", port: port)) {
                connection in
                let client = Skiff_Testing_V1_TestService.Client(transport: connection)
                var response = try await client.unaryCall(
                    .with {
                        $0.responseSize = 1000
                        $0.payload.body = Data(repeating: 7, count: 33)
                    }
                )
                #expect(response.peerMetadata.contains("127.0.0.1"), "\(response.peerMetadata)")
                // The peer differs per connection; everything else must be byte for byte the same.
                response.peerMetadata = ""
                let bytes: [UInt8] = try response.serializedBytes()
                do {
                    _ = try await client.unaryCall(
                        .with {
                            $0.responseSize = 1000
                            $0.responseStatus = .with {
                                $0.code = 5
                                $0.message = message
                            }
                        }
                    )
                    return (bytes, RPCError(code: .ok, message: ""))
                } catch let error as RPCError {
                    return (bytes, error)
                }
            }
            #expect(skiffStatus.code == .notFound && skiffStatus.message == message, "\(skiffStatus)")

            let script = interop.appendingPathComponent("cross_protocol.py")
            let result = try await Task.detached {
                try runPython(
                    script,
                    ["--port", "\(port)", "--protos", protos, "--size", "1000", "--code", "5", "--message", message]
                )
            }.value
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("\n0 failures"), "\(result.output)")
            #expect(result.output.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count == 20, "\(result.output)")
            let lines = result.output.split(separator: "\n").map(String.init)
            let hex = reference.map { String(format: "%02x", $0) }.joined()
            #expect(hex.count > 2000)
            for name in ["grpc", "grpc-web-h1", "grpc-web-h2", "connect-h1", "connect-h2"] {
                #expect(lines.contains("bytes \(name) \(hex)"), "\(name): \(result.output)")
                #expect(
                    lines.contains { $0.hasPrefix("peer \(name) ") && $0.contains("127.0.0.1") },
                    "\(name): \(result.output)"
                )
                #expect(lines.contains("status \(name) 5 \(message)"), "\(name): \(result.output)")
            }
        }
    }
}
