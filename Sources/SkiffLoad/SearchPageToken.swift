import SkiffAPI
import SwiftProtobuf

/// `SearchListingsResponse` as the marketplace mix reads it: only `next_page_token` (field 2).
///
/// The mix follows page tokens and never looks at the listings, so decoding every result into
/// messages was a third of the load generator's CPU, taken from the cores the server under test
/// shares with it. The results (field 1) are kept as unknown bytes, never decoded; the call, its
/// status and the bytes on the wire are those of a full client.
struct SearchPageToken: Message, _MessageImplementationBase, Sendable {
    static let protoMessageName = Skiff_Listings_V1_SearchListingsResponse.protoMessageName

    var nextPageToken = ""
    var unknownFields = UnknownStorage()

    init() {}

    mutating func decodeMessage<D: Decoder>(decoder: inout D) throws {
        while let fieldNumber = try decoder.nextFieldNumber() {
            if fieldNumber == 2 { try decoder.decodeSingularStringField(value: &nextPageToken) }
        }
    }

    func traverse<V: Visitor>(visitor: inout V) throws {
        if !nextPageToken.isEmpty { try visitor.visitSingularStringField(value: nextPageToken, fieldNumber: 2) }
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.nextPageToken == rhs.nextPageToken }
}
