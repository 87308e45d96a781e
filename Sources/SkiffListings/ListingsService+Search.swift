import Foundation
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SwiftProtobuf

extension ListingsService {
    public func searchListings(
        request: Skiff_Listings_V1_SearchListingsRequest,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_SearchListingsResponse {
        try ListingsRequestBounds.check(request)
        let query = try Self.query(request, viewerID: context.user?.id, now: time.now())
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let result = try await store.search(query, page: page)
        let viewer = context.user?.id
        return .with {
            $0.results = result.items.map { hit in
                .with {
                    $0.listing = hit.listing.proto(viewerID: viewer)
                    if let distance = hit.distanceKm { $0.distanceKm = distance }
                }
            }
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    /// The domain query of a search request, validated.
    static func query(
        _ request: Skiff_Listings_V1_SearchListingsRequest,
        viewerID: String?,
        now: Date
    ) throws(DomainError) -> ListingQuery {
        let text = try ListingRules.validateQuery(request.query)
        let proto = request.filter
        var filter = ListingFilter()
        for category in proto.categories {
            filter.categories.insert(try ListingCategory(proto: category, field: "filter.categories"))
        }
        for condition in proto.conditions {
            filter.conditions.insert(try ListingCondition(proto: condition, field: "filter.conditions"))
        }
        if proto.hasMinPriceCents {
            guard proto.minPriceCents >= 0 else {
                throw DomainError(.invalidArgument, "filter.min_price_cents is negative: use 0 or more.")
            }
            filter.minPriceCents = proto.minPriceCents
        }
        if proto.hasMaxPriceCents {
            guard proto.maxPriceCents >= 0 else {
                throw DomainError(.invalidArgument, "filter.max_price_cents is negative: use 0 or more.")
            }
            filter.maxPriceCents = proto.maxPriceCents
        }
        if let min = filter.minPriceCents, let max = filter.maxPriceCents, min > max {
            throw DomainError(
                .invalidArgument,
                "filter.min_price_cents is above filter.max_price_cents: swap them or widen the range."
            )
        }
        filter.tags = proto.tags.map(ListingRules.normalizedTag).filter { !$0.isEmpty }
        if proto.hasMadeOnCampus { filter.madeOnCampus = proto.madeOnCampus }
        if !proto.sellerID.isEmpty { filter.sellerID = proto.sellerID }
        for status in proto.statuses {
            switch status {
            case .active: filter.statuses.insert(.active)
            case .sold: filter.statuses.insert(.sold)
            case .withdrawn:
                throw DomainError(
                    .invalidArgument,
                    "filter.statuses contains WITHDRAWN, which search never shows: use ACTIVE and/or SOLD."
                )
            case .unspecified, .UNRECOGNIZED:
                throw DomainError(
                    .invalidArgument,
                    "filter.statuses contains an unspecified status: use ACTIVE or SOLD."
                )
            }
        }
        guard proto.postedWithinDays >= 0 else {
            throw DomainError(.invalidArgument, "filter.posted_within_days is negative: use 0 (any time) or more.")
        }
        if proto.postedWithinDays > 0 {
            filter.postedSince = now.addingTimeInterval(-Double(proto.postedWithinDays) * 86_400)
        }
        if proto.hasNear {
            let center: GeoPoint
            if proto.near.centerZipCode.isEmpty {
                center = GeoPoint(latitude: proto.near.center.latitude, longitude: proto.near.center.longitude)
            } else {
                guard !proto.near.hasCenter else {
                    throw DomainError(
                        .invalidArgument,
                        "filter.near sets both center and center_zip_code: set only one of them."
                    )
                }
                center = try ListingRules.validateCenterZipCode(proto.near.centerZipCode)
            }
            guard proto.near.radiusKm >= 0 else {
                throw DomainError(.invalidArgument, "filter.near.radius_km is negative: use above 0 and at most 500.")
            }
            try ListingRules.validateCircle(center: center, radiusKm: proto.near.radiusKm)
            filter.near = GeoCircle(center: center, radiusKm: proto.near.radiusKm)
        }
        let sort: ListingSort
        switch request.sortOrder {
        case .unspecified, .newest: sort = .newest
        case .priceAscending: sort = .priceAscending
        case .priceDescending: sort = .priceDescending
        case .title: sort = .title
        case .relevance:
            guard !SearchText.tokens(text).isEmpty else {
                throw DomainError(.invalidArgument, "sort_order RELEVANCE needs a query with at least one word.")
            }
            sort = .relevance
        case .distance:
            guard filter.near != nil else {
                throw DomainError(.invalidArgument, "sort_order DISTANCE needs filter.near (a centre and a radius).")
            }
            sort = .distance
        case .UNRECOGNIZED:
            throw DomainError(.invalidArgument, "sort_order is unknown: use one of the ListingSortOrder values.")
        }
        return ListingQuery(
            text: text,
            filter: filter,
            sort: sort,
            viewerID: viewerID,
            postedWithinDays: Int(proto.postedWithinDays)
        )
    }

    public func listMyListings(
        request: Skiff_Listings_V1_ListMyListingsRequest,
        context: ServerContext
    ) async throws -> Skiff_Listings_V1_ListMyListingsResponse {
        try ListingsRequestBounds.check(request)
        let user = try context.requireUser()
        var statuses: Set<ListingStatus> = []
        for status in request.statuses {
            switch status {
            case .active: statuses.insert(.active)
            case .sold: statuses.insert(.sold)
            case .withdrawn: statuses.insert(.withdrawn)
            case .unspecified, .UNRECOGNIZED:
                throw DomainError(
                    .invalidArgument,
                    "statuses contains an unspecified status: use ACTIVE, SOLD or WITHDRAWN."
                )
            }
        }
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let result = try await store.sellerListings(sellerID: user.id, statuses: statuses, page: page)
        return .with {
            $0.listings = result.items.map { $0.proto(viewerID: user.id) }
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }
}
