import Foundation
import PostgresNIO
import SkiffBids
import SkiffDomain

// How the Bids values map to rows (see `PostgresSchema.bidsMigrations`). Internal: no PostgreSQL type
// crosses the `BidsStore` protocol. Instants are bigint milliseconds since 1970.

enum PostgresBidRows {
    /// The columns ``bids(_:)`` decodes, in its order.
    static let columns = """
        id, listing_id, seller_id, bidder_id, amount_cents, state, counter_amount_cents, rejection_reason, \
        accepted_amount_cents, sale_id, request_id, created_at, updated_at
        """

    static func bids(_ rows: PostgresRowSequence) async throws -> [Bid] {
        var bids: [Bid] = []
        let decoded = rows.decode(
            (String, String, String, String, Int64, String, Int64, String, Int64, String?, String?, Int64, Int64).self
        )
        for try await (
            id, listing, seller, bidder, amount, state, counter, reason, accepted, sale, request, created, updated
        )
            in decoded
        {
            bids.append(
                Bid(
                    id: id,
                    listingID: listing,
                    sellerID: seller,
                    bidderID: bidder,
                    amountCents: amount,
                    state: BidState(rawValue: state) ?? .withdrawn,
                    counterAmountCents: counter,
                    rejectionReason: reason,
                    acceptedAmountCents: accepted,
                    saleID: sale,
                    requestID: request,
                    createdAt: Date(millisecondsSince1970: created),
                    updatedAt: Date(millisecondsSince1970: updated)
                )
            )
        }
        return bids
    }

    /// Inserts `bid` unless a row conflicts with it (returning a row only when inserted). A conflicting
    /// row this transaction cannot see (a concurrent insert) aborts it for a serialization failure, so it
    /// runs again and then sees that row.
    static func insert(_ bid: Bid) -> PostgresQuery {
        """
        INSERT INTO bid (\(unescaped: columns))
        VALUES (\(bid.id), \(bid.listingID), \(bid.sellerID), \(bid.bidderID), \(bid.amountCents),
            \(bid.state.rawValue), \(bid.counterAmountCents), \(bid.rejectionReason), \(bid.acceptedAmountCents),
            \(bid.saleID), \(bid.requestID), \(bid.createdAt.millisecondsSince1970),
            \(bid.updatedAt.millisecondsSince1970))
        ON CONFLICT DO NOTHING
        RETURNING 1
        """
    }

    /// Saves every column of each bid (by id) in one statement.
    static func update(_ bids: [Bid]) -> PostgresQuery {
        """
        UPDATE bid SET listing_id = u.listing_id, seller_id = u.seller_id, bidder_id = u.bidder_id,
            amount_cents = u.amount_cents, state = u.state, counter_amount_cents = u.counter_amount_cents,
            rejection_reason = u.rejection_reason, accepted_amount_cents = u.accepted_amount_cents,
            sale_id = CASE WHEN u.has_sale THEN u.sale_id END,
            request_id = CASE WHEN u.has_request THEN u.request_id END,
            created_at = u.created_at, updated_at = u.updated_at
        FROM unnest(\(bids.map(\.id))::text[], \(bids.map(\.listingID))::text[], \(bids.map(\.sellerID))::text[],
            \(bids.map(\.bidderID))::text[], \(bids.map(\.amountCents))::bigint[],
            \(bids.map(\.state.rawValue))::text[], \(bids.map(\.counterAmountCents))::bigint[],
            \(bids.map(\.rejectionReason))::text[], \(bids.map(\.acceptedAmountCents))::bigint[],
            \(bids.map { $0.saleID ?? "" })::text[], \(bids.map { $0.saleID != nil })::boolean[],
            \(bids.map { $0.requestID ?? "" })::text[], \(bids.map { $0.requestID != nil })::boolean[],
            \(bids.map(\.createdAt.millisecondsSince1970))::bigint[],
            \(bids.map(\.updatedAt.millisecondsSince1970))::bigint[])
            AS u(id, listing_id, seller_id, bidder_id, amount_cents, state, counter_amount_cents, rejection_reason,
                accepted_amount_cents, sale_id, has_sale, request_id, has_request, created_at, updated_at)
        WHERE bid.id = u.id
        """
    }
}

enum PostgresSaleRows {
    /// The columns ``sales(_:)`` decodes, in its order.
    static let columns = """
        id, listing_id, listing_title, category, bid_id, buyer_id, seller_id, amount_cents, state, \
        conversation_id, created_at, buyer_confirmed_at, seller_confirmed_at, completed_at, handoff_place_id, \
        handoff_place_name, handoff_place_latitude, handoff_place_longitude, handoff_place_hours
        """

    static func sales(_ rows: PostgresRowSequence) async throws -> [Sale] {
        var sales: [Sale] = []
        let decoded = rows.decode(
            (
                String, String, String, String, String, String, String, Int64, String, String, Int64, Int64?, Int64?,
                Int64?, String?, String?, Double?, Double?, String?
            ).self
        )
        for try await row in decoded {
            let (id, listing, title, category, bid, buyer, seller, amount, state, conversation, created) =
                (row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7, row.8, row.9, row.10)
            var place: HandoffPlace?
            if let placeID = row.14, let name = row.15, let latitude = row.16, let longitude = row.17 {
                place = HandoffPlace(
                    id: placeID,
                    name: name,
                    latitude: latitude,
                    longitude: longitude,
                    hours: row.18 ?? ""
                )
            }
            sales.append(
                Sale(
                    id: id,
                    listingID: listing,
                    listingTitle: title,
                    category: ItemCategory(rawValue: category) ?? .other,
                    bidID: bid,
                    buyerID: buyer,
                    sellerID: seller,
                    amountCents: amount,
                    state: SaleState(rawValue: state) ?? .pendingHandoff,
                    conversationID: conversation,
                    createdAt: Date(millisecondsSince1970: created),
                    buyerConfirmedAt: row.11.map(Date.init(millisecondsSince1970:)),
                    sellerConfirmedAt: row.12.map(Date.init(millisecondsSince1970:)),
                    completedAt: row.13.map(Date.init(millisecondsSince1970:)),
                    handoffPlace: place
                )
            )
        }
        return sales
    }

    /// Inserts `sale` unless a row conflicts with it (returning a row only when inserted); as
    /// ``PostgresBidRows/insert(_:)``.
    static func insert(_ sale: Sale) -> PostgresQuery {
        """
        INSERT INTO sale (\(unescaped: columns))
        VALUES (\(sale.id), \(sale.listingID), \(sale.listingTitle), \(sale.category.rawValue), \(sale.bidID),
            \(sale.buyerID), \(sale.sellerID), \(sale.amountCents), \(sale.state.rawValue), \(sale.conversationID),
            \(sale.createdAt.millisecondsSince1970), \(sale.buyerConfirmedAt?.millisecondsSince1970),
            \(sale.sellerConfirmedAt?.millisecondsSince1970), \(sale.completedAt?.millisecondsSince1970),
            \(sale.handoffPlace?.id), \(sale.handoffPlace?.name), \(sale.handoffPlace?.latitude),
            \(sale.handoffPlace?.longitude), \(sale.handoffPlace?.hours))
        ON CONFLICT DO NOTHING
        RETURNING 1
        """
    }

    /// Saves every column of `sale` (by id).
    static func update(_ sale: Sale) -> PostgresQuery {
        """
        UPDATE sale SET listing_id = \(sale.listingID), listing_title = \(sale.listingTitle),
            category = \(sale.category.rawValue), bid_id = \(sale.bidID), buyer_id = \(sale.buyerID),
            seller_id = \(sale.sellerID), amount_cents = \(sale.amountCents), state = \(sale.state.rawValue),
            conversation_id = \(sale.conversationID), created_at = \(sale.createdAt.millisecondsSince1970),
            buyer_confirmed_at = \(sale.buyerConfirmedAt?.millisecondsSince1970),
            seller_confirmed_at = \(sale.sellerConfirmedAt?.millisecondsSince1970),
            completed_at = \(sale.completedAt?.millisecondsSince1970),
            handoff_place_id = \(sale.handoffPlace?.id), handoff_place_name = \(sale.handoffPlace?.name),
            handoff_place_latitude = \(sale.handoffPlace?.latitude),
            handoff_place_longitude = \(sale.handoffPlace?.longitude),
            handoff_place_hours = \(sale.handoffPlace?.hours)
        WHERE id = \(sale.id)
        """
    }
}

enum PostgresBidEventRows {
    /// The columns ``events(_:)`` decodes, in its order.
    static let columns = "user_id, sequence, kind, bid_id, listing_id, sale_id, amount_cents, created_at"

    /// The events of `rows`, skipping kinds this version does not know (as the SQLite store does).
    static func events(_ rows: PostgresRowSequence) async throws -> [BidEvent] {
        var events: [BidEvent] = []
        let decoded = rows.decode((String, Int64, String, String, String, String?, Int64, Int64).self)
        for try await (user, sequence, kind, bid, listing, sale, amount, created) in decoded {
            guard let kind = BidEvent.Kind(rawValue: kind) else { continue }
            events.append(
                BidEvent(
                    userID: user,
                    sequence: sequence,
                    kind: kind,
                    bidID: bid,
                    listingID: listing,
                    saleID: sale,
                    amountCents: amount,
                    createdAt: Date(millisecondsSince1970: created)
                )
            )
        }
        return events
    }

    /// Inserts the events in one statement, returning a row for each inserted; as
    /// ``PostgresBidRows/insert(_:)``.
    static func insert(_ events: [BidEvent]) -> PostgresQuery {
        """
        INSERT INTO bid_event (\(unescaped: columns))
        SELECT user_id, sequence, kind, bid_id, listing_id, CASE WHEN has_sale THEN sale_id END, amount_cents,
            created_at
        FROM unnest(\(events.map(\.userID))::text[], \(events.map(\.sequence))::bigint[],
            \(events.map(\.kind.rawValue))::text[], \(events.map(\.bidID))::text[], \(events.map(\.listingID))::text[],
            \(events.map { $0.saleID ?? "" })::text[], \(events.map { $0.saleID != nil })::boolean[],
            \(events.map(\.amountCents))::bigint[], \(events.map(\.createdAt.millisecondsSince1970))::bigint[])
            AS e(user_id, sequence, kind, bid_id, listing_id, sale_id, has_sale, amount_cents, created_at)
        ON CONFLICT DO NOTHING
        RETURNING 1
        """
    }
}
