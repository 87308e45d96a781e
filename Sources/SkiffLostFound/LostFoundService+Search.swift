import Foundation
public import SkiffAPI
public import SkiffCore
import SkiffDomain
import SwiftProtobuf

extension LostFoundService {
    public func searchItems(
        request: Skiff_Lostfound_V1_SearchItemsRequest,
        context: ServerContext
    ) async throws -> Skiff_Lostfound_V1_SearchItemsResponse {
        try LostFoundRequestBounds.check(request)
        let viewer = Self.viewer(context)
        let query = try Self.query(request, viewerID: viewer.userID)
        let page = try PageRequest(size: Int(request.pageSize), token: request.pageToken)
        let result = try await store.search(query, page: page)
        return .with {
            $0.results = result.items.map { hit in
                .with {
                    $0.item = viewer.proto(hit.item)
                    if let distance = hit.distanceKm { $0.distanceKm = distance }
                }
            }
            $0.nextPageToken = result.nextPageToken ?? ""
        }
    }

    /// The domain query of a search request, validated.
    static func query(
        _ request: Skiff_Lostfound_V1_SearchItemsRequest,
        viewerID: String? = nil
    ) throws(DomainError) -> LostFoundQuery {
        let text = try LostFoundRules.validateQuery(request.query)
        let proto = request.filter
        var filter = LostFoundFilter()
        for status in proto.statuses {
            filter.statuses.insert(try LostFoundStatus(proto: status, field: "filter.statuses"))
        }
        for category in proto.categories {
            filter.categories.insert(try LostFoundCategory(proto: category, field: "filter.categories"))
        }
        let building = proto.building.trimmingCharacters(in: .whitespacesAndNewlines)
        if !building.isEmpty {
            filter.building = try LostFoundRules.validateBuilding(building, field: "filter.building")
        }
        if proto.hasNear {
            let circle = LostFoundCircle(
                center: LostFoundPoint(proto: proto.near.center),
                radiusKm: proto.near.radiusKm
            )
            try LostFoundRules.validateCircle(circle)
            filter.near = circle
        }
        let sort: LostFoundSort
        switch request.sortOrder {
        case .unspecified, .newest: sort = .newest
        case .distance:
            guard filter.near != nil else {
                throw DomainError(.invalidArgument, "sort_order DISTANCE needs filter.near (a centre and a radius).")
            }
            sort = .distance
        case .UNRECOGNIZED:
            throw DomainError(.invalidArgument, "sort_order is unknown: use one of the ItemSortOrder values.")
        }
        return LostFoundQuery(text: text, filter: filter, sort: sort, viewerID: viewerID)
    }
}
