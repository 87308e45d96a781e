import SkiffCodeGen
import SwiftProtobufPluginLibrary
import Testing

/// The typed C functions of `Language=C`, from descriptors. That the names match protoc-c's and the
/// code compiles is checked by `make -C Clients/c check` (tests/api_check.c); that the functions
/// work, by the C channel tests against a real server.
@Suite("C generation (Language=C)")
struct CFileGeneratorTests {
    static func header(_ service: String, extra: String = "") throws -> GeneratedFile {
        let text = """
            name: "skiff/campus/v1/campus.proto" package: "skiff.campus.v1" syntax: "proto3"
            message_type { name: "GetURLRequest" }
            message_type { name: "Listing" nested_type { name: "Photo" } }
            \(extra)
            \(service)
            """
        return try #require(try CFileGenerator(file: Fixtures.file([text])).generate())
    }

    @Test("one header per proto with services, named after its path, with protoc-c's header included")
    func fileAndIncludes() throws {
        let file = try Self.header(
            #"service { name: "Campus" method { name: "GetURL" input_type: ".skiff.campus.v1.GetURLRequest" output_type: ".skiff.campus.v1.Listing.Photo" } }"#
        )
        #expect(file.name == "skiff/campus/v1/campus.skiff.h")
        #expect(file.contents.contains("#ifndef SKIFF_GENERATED_SKIFF_CAMPUS_V1_CAMPUS_H\n"))
        #expect(file.contents.contains("#include <skiff/protobuf.h>\n"))
        #expect(file.contents.contains("#include \"skiff/campus/v1/campus.pb-c.h\"\n"))
        // protoc-c's names: types by parts with their first letter up, functions by parts in snake case.
        #expect(
            file.contents.contains(
                "static inline uint32_t skiff_campus_v1_campus_get_url(skiff_channel *channel, "
                    + "const Skiff__Campus__V1__GetURLRequest *request, Skiff__Campus__V1__Listing__Photo **response, "
                    + "const skiff_call_options *options, skiff_status *status) {"
            )
        )
        #expect(file.contents.contains("&skiff__campus__v1__listing__photo__descriptor"))
        #expect(file.contents.contains("skiff__campus__v1__listing__photo__free_unpacked"))
        #expect(
            file.contents.contains("#define SKIFF_CAMPUS_V1_CAMPUS_GET_URL_PATH \"/skiff.campus.v1.Campus/GetURL\"\n")
        )
    }

    @Test("each call kind gets its functions")
    func callKinds() throws {
        let methods = [
            Fixtures.method(
                "Feed",
                serverStreaming: true,
                input: ".skiff.campus.v1.GetURLRequest",
                output: ".skiff.campus.v1.Listing"
            ),
            Fixtures.method(
                "Upload",
                clientStreaming: true,
                input: ".skiff.campus.v1.Listing",
                output: ".skiff.campus.v1.Listing"
            ),
            Fixtures.method(
                "Chat",
                clientStreaming: true,
                serverStreaming: true,
                input: ".skiff.campus.v1.Listing",
                output: ".skiff.campus.v1.Listing"
            ),
        ]
        let file = try Self.header(#"service { name: "CampusFeed" \#(methods.joined(separator: " ")) }"#)
        let text = file.contents
        #expect(
            text.contains(
                "static inline skiff_call *skiff_campus_v1_campus_feed_feed_start(skiff_channel *channel, const Skiff__Campus__V1__GetURLRequest *request, const skiff_call_options *options)"
            )
        )
        #expect(
            text.contains(
                "static inline int skiff_campus_v1_campus_feed_feed_receive(skiff_call *call, Skiff__Campus__V1__Listing **response)"
            )
        )
        #expect(
            text.contains(
                "static inline skiff_call *skiff_campus_v1_campus_feed_upload_start(skiff_channel *channel, const skiff_call_options *options)"
            )
        )
        #expect(
            text.contains(
                "static inline uint32_t skiff_campus_v1_campus_feed_upload_send(skiff_call *call, const Skiff__Campus__V1__Listing *request)"
            )
        )
        #expect(
            text.contains(
                "static inline int skiff_campus_v1_campus_feed_upload_close_and_receive(skiff_call *call, Skiff__Campus__V1__Listing **response)"
            )
        )
        #expect(
            text.contains(
                "static inline uint32_t skiff_campus_v1_campus_feed_chat_send(skiff_call *call, const Skiff__Campus__V1__Listing *request, bool last)"
            )
        )
        #expect(
            text.contains(
                "static inline int skiff_campus_v1_campus_feed_chat_receive(skiff_call *call, Skiff__Campus__V1__Listing **response)"
            )
        )
    }

    @Test("a proto without services generates nothing; Language=C is an option of the plugin")
    func options() throws {
        let file = try Fixtures.file([#"name: "a.proto" package: "a" syntax: "proto3" message_type { name: "M" }"#])
        #expect(try CFileGenerator(file: file).generate() == nil)
        #expect(try GeneratorOptions(parameter: "Language=C").language == .c)
        #expect(try GeneratorOptions(parameter: "").language == .swift)
        #expect(throws: GenerationError.self) { try GeneratorOptions(parameter: "Language=Rust") }
    }
}
