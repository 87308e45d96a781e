import SkiffCodeGen
import Testing

@Suite("Naming")
struct NamingTests {
    @Test(
        "method names are lowerCamelCase, acronyms included",
        arguments: [
            ("UnaryCall", "unaryCall"), ("GetURL", "getURL"), ("URLFetch", "urlFetch"), ("HTTP2Ping", "http2Ping"),
            ("ABC", "abc"), ("X", "x"), ("check", "check"), ("Get_Thing", "get_Thing"),
        ]
    )
    func lowerCamelCase(rpc: String, swift: String) throws {
        let source = try Fixtures.source(Fixtures.testingFile(#"service { name: "S" \#(Fixtures.method(rpc)) }"#))
        #expect(source.contains("        func \(swift)(request:"))
        #expect(source.contains("        func \(swift)(\n"))
        #expect(source.contains("try await self.\(swift)(request: request, context: context)"))
        #expect(source.contains(#"method: "\#(rpc)""#))
    }

    @Test(
        "Swift keywords are escaped; nested type names that cannot be declared get a suffix",
        arguments: [
            ("Default", "`default`", "Default"), ("Init", "`init`", "Init"), ("Self", "`self`", "Self_"),
            ("Where", "`where`", "Where"), ("Protocol", "`protocol`", "Protocol_"), ("Type", "type", "Type_"),
        ]
    )
    func keywords(rpc: String, function: String, enumName: String) throws {
        let source = try Fixtures.source(Fixtures.testingFile(#"service { name: "S" \#(Fixtures.method(rpc)) }"#))
        #expect(source.contains("        func \(function)(request:"))
        #expect(source.contains("        func \(function)(\n"))
        #expect(source.contains("try await self.\(function)(request:"))
        #expect(source.contains("        enum \(enumName) {\n"))
        #expect(source.contains("Method.\(enumName).descriptor"))
    }

    @Test("two methods mapping to the same Swift name are an error")
    func duplicateFunctionNames() throws {
        let text = Fixtures.testingFile(#"service { name: "S" \#(Fixtures.method("Foo")) \#(Fixtures.method("foo")) }"#)
        #expect(throws: GenerationError.self) { try Fixtures.generate(text) }
    }

    @Test("swift_prefix replaces the package prefix, as in protoc-gen-swift")
    func swiftPrefix() throws {
        let source = try Fixtures.source(
            """
            name: "greeter.proto" package: "some.pkg" syntax: "proto3"
            options { swift_prefix: "SP" }
            message_type { name: "Req" }
            service { name: "Greeter" \(Fixtures.method("SayHello", input: ".some.pkg.Req", output: ".some.pkg.Req")) }
            """
        )
        #expect(source.contains("\nenum SPGreeter {\n"))
        #expect(source.contains(#"static let name = "some.pkg.Greeter""#))
        #expect(source.contains("typealias Input = SPReq\n"))
        #expect(source.contains("extension SPGreeter.ServiceProtocol {"))
    }

    @Test("an invalid swift_prefix is an error")
    func invalidSwiftPrefix() throws {
        let text = """
            name: "x.proto" syntax: "proto3" options { swift_prefix: "9bad" } message_type { name: "M" }
            service { name: "S" \(Fixtures.method("Get", input: ".M", output: ".M")) }
            """
        #expect(throws: GenerationError.self) { try Fixtures.generate(text) }
    }

    @Test("a proto without a package uses bare names")
    func noPackage() throws {
        let source = try Fixtures.source(
            """
            name: "greeter.proto" syntax: "proto3"
            message_type { name: "HelloRequest" } message_type { name: "HelloReply" }
            service { name: "Greeter" \(Fixtures.method("SayHello", input: ".HelloRequest", output: ".HelloReply")) }
            """
        )
        #expect(source.contains("\nenum Greeter {\n"))
        #expect(source.contains(#"static let name = "Greeter""#))
        #expect(source.contains(#"MethodDescriptor(service: "Greeter", method: "SayHello", kind: .unary)"#))
        #expect(
            source.contains(
                "func sayHello(request: HelloRequest, context: SkiffCore.ServerContext) async throws -> HelloReply"
            )
        )
    }

    @Test("a package-less service named like a reserved type gets a suffix")
    func reservedServiceName() throws {
        let source = try Fixtures.source(
            """
            name: "t.proto" syntax: "proto3" message_type { name: "PingRequest" }
            service { name: "Type" \(Fixtures.method("Ping", input: ".PingRequest", output: ".PingRequest")) }
            """
        )
        #expect(source.contains("\nenum TypeService {\n"))
        #expect(source.contains(#"static let name = "Type""#))
    }

    @Test(
        "a package-less message that the generated namespace would shadow is an error",
        arguments: [
            ("Client", "S.Client"), ("Method", "S.Method"), ("ServiceProtocol", "S.ServiceProtocol"),
            ("Result", "S.Client.<Result>"), ("Get", "S.Method.Get"), ("Input", "S.Method.Input"),
        ]
    )
    func shadowedMessage(message: String, shadow: String) throws {
        let text = """
            name: "c.proto" syntax: "proto3" message_type { name: "\(message)" }
            service { name: "S" \(Fixtures.method("Get", input: ".\(message)", output: ".\(message)")) }
            """
        let error = try #require(throws: GenerationError.self) { try Fixtures.generate(text) }
        #expect(error.message.contains("shadowed by the generated '\(shadow)'"))
        #expect(error.message.contains("swift_prefix"))
    }

    @Test("messages named like generated types are fine when the package prefixes them")
    func packagedMessagesNamedLikeGeneratedTypes() throws {
        let source = try Fixtures.source(
            """
            name: "c.proto" package: "p" syntax: "proto3" message_type { name: "Client" } message_type { name: "Method" }
            service { name: "S" \(Fixtures.method("Get", input: ".p.Client", output: ".p.Method")) }
            """
        )
        #expect(
            source.contains("func get(request: P_Client, context: SkiffCore.ServerContext) async throws -> P_Method")
        )
    }

    @Test("nested and well-known message types are fully qualified; SwiftProtobuf is then imported like SkiffCore")
    func qualifiedMessageTypes() throws {
        let source = try Fixtures.source(
            Fixtures.emptyProto,
            """
            name: "n.proto" package: "p" syntax: "proto3" dependency: "google/protobuf/empty.proto"
            message_type { name: "Outer" nested_type { name: "Inner" } }
            service { name: "S" \
            \(Fixtures.method("Get", input: ".p.Outer.Inner", output: ".google.protobuf.Empty")) }
            """,
            options: "Visibility=Public"
        )
        #expect(source.contains("\npublic import SkiffCore\npublic import SwiftProtobuf\n\n"))
        #expect(source.contains("typealias Input = P_Outer.Inner\n"))
        #expect(source.contains("typealias Output = SwiftProtobuf.Google_Protobuf_Empty\n"))
    }

    @Test("every service of a file is generated")
    func severalServices() throws {
        let source = try Fixtures.source(
            Fixtures.testingFile(#"service { name: "A" \#(Fixtures.method("X")) } service { name: "B" }"#)
        )
        #expect(source.contains("\nenum Skiff_Testing_V1_A {\n"))
        #expect(source.contains("\nenum Skiff_Testing_V1_B {\n"))
        #expect(source.contains("static let descriptors: [SkiffCore.MethodDescriptor] = []"))
        #expect(source.contains("extension Skiff_Testing_V1_B.ServiceProtocol {"))
    }
}
