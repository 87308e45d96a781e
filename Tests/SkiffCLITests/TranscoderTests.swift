import Foundation
import SkiffAPI
import SkiffReflection
import SkiffStandardServices
import SwiftProtobuf
import Testing

/// The descriptor-driven transcoder against swift-protobuf's generated code: JSON out must equal
/// `jsonString()` (as JSON objects), and JSON in must decode to the same message.
@Suite("ProtoJSONTranscoder")
struct TranscoderTests {
    static let transcoder: ProtoJSONTranscoder = {
        let files =
            Skiff_Listings_V1_Listings.fileDescriptors + Skiff_Accounts_V1_Accounts.fileDescriptors
            + Skiff_Testing_V1_TestService.fileDescriptors + Skiff_Bids_V1_Bids.fileDescriptors
        return ProtoJSONTranscoder(registry: try! DescriptorRegistry(serializedFiles: files))
    }()

    static let listing = Skiff_Listings_V1_Listing.with {
        $0.listingID = "l-1"
        $0.sellerID = "u-9"
        $0.title = "Jacket \"warm\" ✓\n"
        $0.priceCents = 9_007_199_254_740_993  // beyond a double's precision
        $0.category = .clothing
        $0.condition = Skiff_Listings_V1_Condition(rawValue: 2)!
        $0.tags = ["winter", "wool"]
        $0.madeOnCampus = true
        $0.location = .with {
            $0.zipCode = "02139"
            $0.point = .with {
                $0.latitude = 42.36
                $0.longitude = -71.0942
            }
        }
        $0.imageIds = ["a", "b", "c"]
        $0.createdAt = Google_Protobuf_Timestamp(seconds: 1_700_000_000, nanos: 123_000_000)
        $0.updatedAt = Google_Protobuf_Timestamp(seconds: -62_135_596_800, nanos: 1)
    }

    /// Checks both directions for a generated message.
    func roundTrip<M: SwiftProtobuf.Message & Equatable>(_ message: M) throws {
        let name = M.protoMessageName
        let bytes: [UInt8] = try message.serializedBytes()
        let ours = try Self.transcoder.decode(bytes, messageType: name)
        let theirs = try JSONValue(parsing: try message.jsonString())
        #expect(ours.canonical == theirs.canonical, "\(ours.serialized()) vs \(theirs.serialized())")
        let encoded = try Self.transcoder.binary(fromJSON: try message.jsonString(), messageType: name)
        #expect(try M(serializedBytes: encoded) == message)
        let encodedFromOurs = try Self.transcoder.encode(ours, messageType: name)
        #expect(try M(serializedBytes: encodedFromOurs) == message)
    }

    @Test("scalars, enums, nested messages, repeated and Timestamps")
    func createListing() throws {
        try roundTrip(
            Skiff_Listings_V1_CreateListingRequest.with {
                $0.listing = Self.listing
                $0.requestID = "r"
            }
        )
        // Without maps, swift-protobuf's binary form is deterministic: compare bytes too.
        let message = Skiff_Listings_V1_CreateListingRequest.with { $0.listing = Self.listing }
        let encoded = try Self.transcoder.binary(
            fromJSON: try message.jsonString(),
            messageType: "skiff.listings.v1.CreateListingRequest"
        )
        #expect(encoded == (try message.serializedBytes() as [UInt8]))
    }

    @Test("proto3 optional (present with a zero value), packed repeated enums, doubles")
    func searchFilter() throws {
        try roundTrip(
            Skiff_Listings_V1_SearchListingsRequest.with {
                $0.query = "jacket"
                $0.pageSize = -3
                $0.filter = .with {
                    $0.categories = [.clothing, Skiff_Listings_V1_Category(rawValue: 2)!]
                    $0.minPriceCents = 0
                    $0.maxPriceCents = 5000
                    $0.madeOnCampus = false
                    $0.postedWithinDays = 7
                    $0.near = .with {
                        $0.radiusKm = 2.5
                        $0.center = .with { $0.latitude = -0.5 }
                    }
                }
            }
        )
    }

    @Test("oneof members: bytes (base64) and a message")
    func oneof() throws {
        try roundTrip(
            Skiff_Listings_V1_UploadImageRequest.with { $0.chunk = Data([0, 1, 2, 250, 251, 252, 253, 254]) }
        )
        try roundTrip(Skiff_Listings_V1_UploadImageRequest.with { $0.metadata = .with { $0.filename = "a.png" } })
        try roundTrip(Skiff_Listings_V1_UploadImageRequest.with { $0.chunk = Data() })
    }

    @Test("FieldMask as a comma-separated lowerCamelCase string")
    func fieldMask() throws {
        try roundTrip(
            Skiff_Listings_V1_UpdateListingRequest.with {
                $0.listing = Self.listing
                $0.updateMask = .with { $0.paths = ["price_cents", "made_on_campus", "title"] }
            }
        )
        let json = try Self.transcoder.decode(
            try Skiff_Listings_V1_UpdateListingRequest.with { $0.updateMask.paths = ["price_cents"] }.serializedBytes(),
            messageType: "skiff.listings.v1.UpdateListingRequest"
        )
        #expect(json.serialized() == #"{"updateMask":"priceCents"}"#)
    }

    @Test("every message type of the APIs round-trips when empty")
    func emptyMessages() throws {
        try roundTrip(
            Skiff_Testing_V1_SimpleRequest.with {
                $0.responseSize = 3
                $0.responseStatus.code = -1
            }
        )
        try roundTrip(
            Skiff_Testing_V1_StreamingOutputCallRequest.with {
                $0.responseParameters = [.with { $0.size = 1 }, .with { $0.intervalUs = 10 }]
                $0.payload.body = Data("hi".utf8)
            }
        )
    }

    @Test("JSON input accepts proto names, numbers for int64, enum numbers and RFC 3339 offsets")
    func lenientInput() throws {
        let bytes = try Self.transcoder.binary(
            fromJSON: #"{"listing":{"price_cents":12,"category":1,"createdAt":"2023-11-14T23:13:20.5+01:00"}}"#,
            messageType: "skiff.listings.v1.CreateListingRequest"
        )
        let message = try Skiff_Listings_V1_CreateListingRequest(serializedBytes: bytes)
        #expect(message.listing.priceCents == 12)
        #expect(message.listing.category == .clothing)
        #expect(message.listing.createdAt == Google_Protobuf_Timestamp(seconds: 1_700_000_000, nanos: 500_000_000))
    }

    @Test("unknown fields, wrong kinds and bad enum names are clear errors")
    func errors() throws {
        func failure(_ json: String) -> String {
            do {
                _ = try Self.transcoder.binary(fromJSON: json, messageType: "skiff.listings.v1.SearchListingsRequest")
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        #expect(failure(#"{"qurey":"x"}"#).contains("Unknown field 'qurey' in skiff.listings.v1.SearchListingsRequest"))
        #expect(failure(#"{"pageSize":"many"}"#).contains("pageSize"))
        #expect(failure(#"{"filter":{"categories":["HATS"]}}"#).contains("unknown value \"HATS\""))
        #expect(failure(#"{"query":1}"#).contains("expected a string"))
        #expect(failure(#"{"query":"#).contains("Invalid JSON"))
    }

    @Test("Timestamps and Durations format like swift-protobuf")
    func timestamps() throws {
        for (seconds, nanos) in [(0, 0), (1, 10_000), (253_402_300_799, 999_999_999), (-1, 0), (951_782_400, 0)] {
            let timestamp = Google_Protobuf_Timestamp(seconds: Int64(seconds), nanos: Int32(nanos))
            let json = try Self.transcoder.decode(
                try timestamp.serializedBytes(),
                messageType: "google.protobuf.Timestamp"
            )
            #expect(json == .string(String(try timestamp.jsonString().dropFirst().dropLast())))
            let back = try Self.transcoder.encode(json, messageType: "google.protobuf.Timestamp")
            #expect(try Google_Protobuf_Timestamp(serializedBytes: back) == timestamp)
        }
    }
}

/// Features the APIs' protos don't use (maps, Durations, wrappers, other scalar kinds), on a
/// descriptor written by hand and checked against swift-protobuf's own well-known types.
@Suite("ProtoJSONTranscoder: maps and other kinds")
struct TranscoderExtraTests {
    static let transcoder: ProtoJSONTranscoder = {
        let file = try! Google_Protobuf_FileDescriptorProto(
            textFormatString: """
                name: "x.proto" package: "x" syntax: "proto3"
                message_type {
                  name: "M"
                  field { name: "counts" number: 1 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".x.M.CountsEntry" json_name: "counts" }
                  field { name: "s32" number: 2 label: LABEL_OPTIONAL type: TYPE_SINT32 json_name: "s32" }
                  field { name: "f64" number: 3 label: LABEL_OPTIONAL type: TYPE_FIXED64 json_name: "f64" }
                  field { name: "flt" number: 4 label: LABEL_REPEATED type: TYPE_FLOAT json_name: "flt" }
                  field { name: "by_id" number: 5 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".x.M.ByIdEntry" json_name: "byId" }
                  nested_type {
                    name: "CountsEntry" options { map_entry: true }
                    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "key" }
                    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_INT64 json_name: "value" }
                  }
                  nested_type {
                    name: "ByIdEntry" options { map_entry: true }
                    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 json_name: "key" }
                    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".x.M" json_name: "value" }
                  }
                }
                """
        )
        var registry = DescriptorRegistry()
        registry.add(file)
        return ProtoJSONTranscoder(registry: registry)
    }()

    @Test("maps with string and integer keys, sint32, fixed64, packed floats round-trip")
    func maps() throws {
        let json =
            #"{"counts":{"a":"1","b":"-2"},"s32":-5,"f64":"18446744073709551615","flt":[1.5,-0.25,"NaN"],"byId":{"7":{"s32":1}}}"#
        let bytes = try Self.transcoder.binary(fromJSON: json, messageType: "x.M")
        let back = try Self.transcoder.decode(bytes, messageType: "x.M")
        #expect(back.canonical == (try JSONValue(parsing: json)).canonical, "\(back.serialized())")
    }

    @Test("Durations use seconds with 0, 3, 6 or 9 fractional digits")
    func durations() throws {
        for (text, seconds, nanos) in [("1.500s", 1, 500_000_000), ("-0.000001s", 0, -1000), ("3s", 3, 0)] {
            let duration = Google_Protobuf_Duration(seconds: Int64(seconds), nanos: Int32(nanos))
            let bytes = try Self.transcoder.encode(.string(text), messageType: "google.protobuf.Duration")
            #expect(try Google_Protobuf_Duration(serializedBytes: bytes) == duration)
            let json = try Self.transcoder.decode(
                try duration.serializedBytes(),
                messageType: "google.protobuf.Duration"
            )
            #expect(json == .string(String(try duration.jsonString().dropFirst().dropLast())))
        }
    }
}
