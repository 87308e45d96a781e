import Foundation
import SkiffServer
import SkiffStandardServices
import SkiffTesting
import Testing

/// Where the repository's files are, from this file's path.
private let repository = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// libskiff, the C client runtime (Clients/c), against a real server over a socket. The C tests are
/// built with make (under AddressSanitizer and UndefinedBehaviorSanitizer, leaks checked) and fail
/// here when a C compiler, make or protobuf-c is missing: `dev/test.sh` installs them.
@Suite("The C client runtime against a real server")
struct CClientTests {
    /// Builds `target` of the C client's Makefile; returns the C client's directory.
    static func build(_ target: String) async throws -> String {
        let directory = repository.appendingPathComponent("Clients/c").path
        let build = try await Task.detached {
            try runProcess("make", ["-s", "-C", directory, target])
        }.value
        try #require(build.status == 0, "make failed: \(build.output)")
        return directory
    }

    /// Builds the channel's tests under the sanitizers; returns the C client's directory.
    static func buildChannelTest() async throws -> String { try await build("build/sanitize/channel_test") }

    @Test(
        "The campus example: sign up, verify from the mailed token, log in, post a listing, search it, write to the seller, see it on the live feed"
    )
    func campusStory() async throws {
        let directory = try await Self.build("build/examples/campus")
        // The real server in its own process: the example reads the verification mails from its log,
        // where only the mail outbox logs at debug.
        let server = try ServerProcess(arguments: [
            "--storage", "memory", "--log-level", "info,skiff.mail=debug", "--password-hash-rounds", "1000",
        ])
        defer { server.stop() }
        let run = try await Task.detached {
            try runProcess(
                "timeout",
                ["120", "\(directory)/build/examples/campus", "127.0.0.1", "\(server.port)", server.logFile.path]
            )
        }.value
        #expect(run.status == 0, "\(run.output)")
        for step in [
            "alice signed up, verified", "bob signed up, verified", "alice posted \"Blue rain jacket",
            "1 result(s)", "bob wrote to alice about the listing",
            "a message from bob: \"Hi! Is the jacket still available?\"", "campus story: done",
        ] {
            #expect(run.output.contains(step), "missing \(step): \(run.output)")
        }
        let log = try String(contentsOf: server.logFile, encoding: .utf8)
        #expect(log.contains("Mail body"))
        #expect(!log.contains("call finished"), "the other loggers stay at info")
    }

    @Test(
        "libskiff's channel: the four call kinds, metadata, statuses, deadlines, cancellation, fragments, 1,000 calls from 8 threads, a slow reader, limits"
    )
    func channel() async throws {
        let directory = try await Self.buildChannelTest()
        try await withTestServer(services: [TestService(), HealthService()]) { _, port in
            let result = try await Task.detached {
                try runProcess("timeout", ["300", "\(directory)/build/sanitize/channel_test", "127.0.0.1", "\(port)"])
            }.value
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains(", 0 failed"), "\(result.output)")
            // Every check ran (a test that stops early fails here).
            let checks = result.output.split(separator: "\n").last { $0.hasPrefix("channel_test: ") }
            #expect(checks?.hasPrefix("channel_test: 499 checks") == true, "\(result.output)")
        }
    }

    @Test(
        "libskiff over TLS (OpenSSL, ALPN skiff/1): the same calls; a certificate for another name, untrusted roots, a missing roots file, a server not choosing skiff/1 and a plain client are refused"
    )
    func tls() async throws {
        let directory = try await Self.buildChannelTest()
        let (cert, key) = try makeCertificate()
        let (otherCert, _) = try makeCertificate()
        defer {
            for file in [cert, otherCert] {
                try? FileManager.default.removeItem(at: URL(fileURLWithPath: file).deletingLastPathComponent())
            }
        }
        let tls = try ServerConfiguration.TLS(certificatePath: cert, keyPath: key)
        try await withTestServer(services: [TestService(), HealthService()], configure: { $0.tls = tls }) { _, port in
            let result = try await Task.detached {
                try runProcess(
                    "timeout",
                    [
                        "300", "\(directory)/build/sanitize/channel_test", "127.0.0.1", "\(port)", "--tls", cert,
                        otherCert, key,
                    ]
                )
            }.value
            #expect(result.status == 0, "\(result.output)")
            let checks = result.output.split(separator: "\n").last { $0.hasPrefix("channel_test (TLS): ") }
            #expect(checks?.hasPrefix("channel_test (TLS): 284 checks, 0 failed") == true, "\(result.output)")
        }
    }

    @Test("libskiff allocates nothing per call on a warm channel (2,000 unary calls, raw and typed, with metadata)")
    func noAllocationPerCall() async throws {
        let directory = try await Self.build("build/allocation_test")
        try await withTestServer(services: [TestService(), HealthService()]) { _, port in
            let result = try await Task.detached {
                try runProcess("timeout", ["120", "\(directory)/build/allocation_test", "127.0.0.1", "\(port)"])
            }.value
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("allocations in libskiff over 2,000 warm calls: 0"), "\(result.output)")
        }
    }

    @Test("libskiff leaks nothing across 100,000 calls from 4 threads (LeakSanitizer)")
    func noLeak() async throws {
        let directory = try await Self.buildChannelTest()
        try await withTestServer(services: [TestService(), HealthService()]) { _, port in
            let result = try await Task.detached {
                try runProcess(
                    "timeout",
                    [
                        "600", "\(directory)/build/sanitize/channel_test", "127.0.0.1", "\(port)", "--leak-calls",
                        "100000",
                    ]
                )
            }.value
            // LeakSanitizer reports a leak at exit and makes the status non-zero.
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("leak run: 100000 calls, 100000 succeeded"), "\(result.output)")
            #expect(!result.output.contains("LeakSanitizer"), "\(result.output)")
        }
    }
}
