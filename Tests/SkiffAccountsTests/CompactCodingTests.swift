import Foundation
import SkiffDomain
import Testing

@Suite("Compact coding of page cursors")
struct CompactCodingTests {
    enum Shade: String, Codable, Equatable { case light, dark }

    struct Inner: Codable, Equatable {
        var lat: Double
        var tags: [String]
    }

    /// Every kind of value a cursor may hold, optionals present and absent.
    struct Everything: Codable, Equatable {
        var text: String
        var int: Int
        var small: Int8
        var negative: Int64
        var unsigned: UInt64
        var byte: UInt8
        var flag: Bool
        var ratio: Double
        var float: Float
        var shade: Shade
        var maybe: Int64?
        var missing: String?
        var inner: Inner
        var list: [Int32]
    }

    static let everything = Everything(
        text: "zoë / adams ✓",
        int: Int.max,
        small: -128,
        negative: Int64.min,
        unsigned: UInt64.max,
        byte: 255,
        flag: true,
        ratio: -0.1,
        float: 1.5,
        shade: .dark,
        maybe: -1,
        missing: nil,
        inner: Inner(lat: 52.52, tags: ["", "desk"]),
        list: [0, -1, Int32.max]
    )

    @Test("Values round-trip exactly, deterministically")
    func roundTrip() throws {
        var bytes: [UInt8] = []
        try CompactCoding.encode(Self.everything, into: &bytes)
        #expect(try CompactCoding.decode(Everything.self, from: bytes[...]) == Self.everything)
        var again: [UInt8] = []
        try CompactCoding.encode(Self.everything, into: &again)
        #expect(again == bytes)
    }

    @Test("Every prefix, every extension and every one-byte change of a cursor is refused or decodes cleanly")
    func damagedBytes() throws {
        var bytes: [UInt8] = []
        try CompactCoding.encode(Self.everything, into: &bytes)
        for length in 0..<bytes.count {
            #expect(throws: DecodingError.self) { try CompactCoding.decode(Everything.self, from: bytes[..<length]) }
        }
        #expect(throws: DecodingError.self) { try CompactCoding.decode(Everything.self, from: (bytes + [0])[...]) }
        // A changed byte may still be a valid value (another number); it must never crash or hang.
        for index in bytes.indices {
            for change: UInt8 in [0x01, 0x80, 0xff] {
                var damaged = bytes
                damaged[index] ^= change
                _ = try? CompactCoding.decode(Everything.self, from: damaged[...])
            }
        }
    }

    @Test("Malformed input is refused: unknown tags, long varints, bad UTF-8, deep nesting, wrong types")
    func malformed() {
        let cases: [[UInt8]] = [
            [],
            [9],  // unknown tag
            [3, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00],  // varint over 10 bytes
            [4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],  // past 64 bits
            [6, 2, 0xc3, 0x28],  // invalid UTF-8
            [6, 200, 0x41],  // a length past the end
            [7, 0xff, 0xff, 0xff, 0xff, 0x0f],  // a count past the end
        ]
        /// Reads one value, whatever its shape.
        func read(_ bytes: [UInt8]) throws {
            var reader = CompactCoding.Reader(bytes: bytes[...])
            _ = try reader.value(depth: 0)
        }
        for bytes in cases {
            #expect(throws: DecodingError.self) { try read(bytes) }
        }
        /// `depth` unkeyed containers, each holding the next, the last a nil.
        func nested(_ depth: Int) -> [UInt8] { Array(repeating: [UInt8(8), 1], count: depth).flatMap { $0 } + [0] }
        #expect(throws: Never.self) { try read(nested(CompactCoding.maximumDepth)) }
        #expect(throws: DecodingError.self) { try read(nested(CompactCoding.maximumDepth + 1)) }
        // Right shape, wrong types or ranges.
        var bytes: [UInt8] = []
        try? CompactCoding.encode([300], into: &bytes)
        #expect(throws: DecodingError.self) { try CompactCoding.decode([UInt8].self, from: bytes[...]) }
        #expect(throws: DecodingError.self) { try CompactCoding.decode([String].self, from: bytes[...]) }
        bytes = []
        try? CompactCoding.encode(["x": -1], into: &bytes)
        #expect(throws: DecodingError.self) { try CompactCoding.decode([String: UInt].self, from: bytes[...]) }
    }

    /// Hand-written coding through nested keyed and unkeyed containers and a super encoder.
    struct Nested: Codable, Equatable {
        var point: (x: Int, y: Int)
        var path: [String]
        var base: String

        enum Keys: String, CodingKey { case point, path, x, y }

        init(point: (x: Int, y: Int), path: [String], base: String) {
            self.point = point
            self.path = path
            self.base = base
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            let point = try container.nestedContainer(keyedBy: Keys.self, forKey: .point)
            self.point = (try point.decode(Int.self, forKey: .x), try point.decode(Int.self, forKey: .y))
            var path = try container.nestedUnkeyedContainer(forKey: .path)
            self.path = []
            while !path.isAtEnd { self.path.append(try path.decode(String.self)) }
            self.base = try String(from: container.superDecoder())
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var point = container.nestedContainer(keyedBy: Keys.self, forKey: .point)
            try point.encode(self.point.x, forKey: .x)
            try point.encode(self.point.y, forKey: .y)
            var path = container.nestedUnkeyedContainer(forKey: .path)
            for step in self.path { try path.encode(step) }
            try base.encode(to: container.superEncoder())
        }

        static func == (a: Nested, b: Nested) -> Bool {
            a.point == b.point && a.path == b.path && a.base == b.base
        }
    }

    @Test("Nested containers and super encoders round-trip (Key types without a \"super\" case included)")
    func nestedContainers() throws {
        let value = Nested(point: (3, -4), path: ["a", "", "ü"], base: "root")
        var bytes: [UInt8] = []
        try CompactCoding.encode(value, into: &bytes)
        #expect(try CompactCoding.decode(Nested.self, from: bytes[...]) == value)
    }

    struct Cursor: Codable, Equatable {
        var name: String
        var id: String
    }

    @Test("Page tokens of the earlier JSON form are still read, and checked as before")
    func jsonTokensStillRead() throws {
        let v1 = Base64URL.encode(Array(#"{"c":{"id":"usr_1","name":"x"},"k":"test.list","v":1}"#.utf8))
        #expect(try PageToken.decode(v1, as: Cursor.self, kind: "test.list") == Cursor(name: "x", id: "usr_1"))
        let invalid = DomainError(.invalidArgument, PageToken.invalidMessage)
        #expect(throws: invalid) { try PageToken.decode(v1, as: Cursor.self, kind: "other.list") }
        let token = PageToken.encode(Cursor(name: "x", id: "usr_1"), kind: "test.list")
        #expect(!token.hasPrefix("eyJ"), "new tokens are not JSON")
        #expect(token.count < v1.count)
    }
}
