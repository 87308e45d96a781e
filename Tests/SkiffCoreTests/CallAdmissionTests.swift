import Testing

@testable import SkiffCore

@Suite("CallAdmission: what every transport decides before a handler runs")
struct CallAdmissionTests {
    static let echo = MethodDescriptor(service: "skiff.test.Echo", method: "Say", kind: .unary)

    static var router: RPCRouter {
        var router = RPCRouter()
        router.register(RPCRouter.Handler(descriptor: echo) { _, _ in })
        return router
    }

    static func rejection(_ path: String, _ metadata: Metadata = [:]) -> CallRejection? {
        guard case .failure(let rejection) = CallAdmission.admit(path: path, metadata: metadata, router: router) else {
            return nil
        }
        return rejection
    }

    @Test("a registered path is admitted with its handler and its grpc-timeout")
    func admitted() throws {
        let call = try CallAdmission.admit(
            path: Self.echo.path,
            metadata: ["grpc-timeout": "250m", "grpc-encoding": "identity"],
            router: Self.router
        ).get()
        #expect(call.handler.descriptor == Self.echo)
        #expect(call.timeout == .milliseconds(250))
        let untimed = try CallAdmission.admit(path: Self.echo.path, metadata: [:], router: Self.router).get()
        #expect(untimed.timeout == nil)
    }

    @Test("an unknown path is UNIMPLEMENTED, counted as \"unknown\", and quoted at most 100 characters")
    func unknownPath() throws {
        let long = "/made.up/" + String(repeating: "x", count: 10_000)
        let rejection = try #require(Self.rejection(long))
        #expect(rejection.status == .unimplemented)
        #expect(rejection.methodLabel == CallRejection.unknownMethodLabel)
        #expect(rejection.message.count < 200)
        #expect(rejection.message.hasPrefix("Method /made.up/xxx"))
        #expect(CallAdmission.methodLabel(forPath: long, router: Self.router) == "unknown")
        #expect(CallAdmission.methodLabel(forPath: Self.echo.path, router: Self.router) == Self.echo.path)
    }

    @Test("a compressed request is UNIMPLEMENTED, counted under its method")
    func encoding() throws {
        let rejection = try #require(Self.rejection(Self.echo.path, ["grpc-encoding": "gzip"]))
        #expect(rejection.status == .unimplemented)
        #expect(rejection.methodLabel == Self.echo.path)
        #expect(rejection.message == "grpc-encoding \"gzip\" is not supported; use identity.")
    }

    @Test("a malformed grpc-timeout is INTERNAL", arguments: ["", "1", "10", "123456789S", "1s", "-1S", "1.5S"])
    func malformedTimeout(_ text: String) throws {
        let rejection = try #require(Self.rejection(Self.echo.path, ["grpc-timeout": .init(stringLiteral: text)]))
        #expect(rejection.status == .internal)
        #expect(rejection.methodLabel == Self.echo.path)
        #expect(rejection.message.contains("grpc-timeout"))
    }
}

@Suite("ResponseState: the response rules every transport keeps")
struct ResponseStateTests {
    @Test("HEADERS carry the initial metadata before the first message only; later settings do nothing")
    func headersBeforeMessages() {
        var response = ResponseState()
        response.setInitialMetadata(["a": "1"])
        response.setInitialMetadata(["a": "2"])
        #expect(response.willSendMessage() == ["a": "2"])
        response.setInitialMetadata(["a": "3"])
        #expect(response.willSendMessage() == nil)
        response.addTrailingMetadata(["t": "1"])
        let end = response.end(.ok, message: "", metadata: ["s": "1"])
        #expect(end?.metadata == ["t": "1", "s": "1"])
        #expect(end?.trailersOnly == false)
    }

    @Test("a response that ends before any message is trailers-only, with the initial metadata first")
    func trailersOnly() {
        for status in [StatusCode.ok, .notFound] {
            var response = ResponseState()
            response.setInitialMetadata(["h": "1"])
            response.addTrailingMetadata(["t": "1"])
            let end = response.end(status, message: "m", metadata: ["s": "1"])
            #expect(end?.trailersOnly == true)
            #expect(end?.metadata == ["h": "1", "t": "1", "s": "1"])
            #expect(end?.status == status)
        }
    }

    @Test("a response ends once: later ends, metadata and settings do nothing")
    func endsOnce() {
        var response = ResponseState()
        #expect(response.end(.cancelled, message: "first", metadata: [:]) != nil)
        #expect(response.ended)
        response.addTrailingMetadata(["late": "1"])
        response.setInitialMetadata(["late": "1"])
        #expect(response.end(.ok, message: "second", metadata: [:]) == nil)
        #expect(response.trailingMetadata.isEmpty)
        #expect(response.initialMetadata.isEmpty)
    }

    @Test("a transport that writes HEADERS when a message reaches the wire freezes them there")
    func headersOnTheWire() {
        var response = ResponseState()
        response.setInitialMetadata(["h": "1"])
        #expect(response.headers() == ["h": "1"])
        response.setInitialMetadata(["h": "2"])
        #expect(response.headers() == ["h": "1"])
        #expect(response.end(.ok, message: "", metadata: [:])?.trailersOnly == false)
    }
}
