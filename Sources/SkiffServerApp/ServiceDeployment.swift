import Foundation
import SkiffAPI
public import SkiffClient

/// One of the campus-app services a `skiff-server` process can run.
public enum CampusService: String, CaseIterable, Sendable, Hashable, Comparable, CustomStringConvertible {
    case accounts
    case listings
    case bids
    case chat
    case lostfound
    case bucketlist

    /// The service's protobuf name, the first part of its methods' paths (`skiff.listings.v1.Listings`).
    public var qualifiedName: String {
        switch self {
        case .accounts: Skiff_Accounts_V1_Accounts.name
        case .listings: Skiff_Listings_V1_Listings.name
        case .bids: Skiff_Bids_V1_Bids.name
        case .chat: Skiff_Chat_V1_Chat.name
        case .lostfound: Skiff_Lostfound_V1_LostFound.name
        case .bucketlist: Skiff_Bucketlist_V1_BucketList.name
        }
    }

    /// The services this one calls: in the same process, or over skiff/1 at an upstream.
    ///
    /// Accounts asks Listings about images and closes a deleted user's listings, asks Bids about sales
    /// and withdraws bids, and asks Chat whom a searching user blocked. Listings asks Bids about a
    /// listing's bids and publishes to the feed (Chat). Bids reads listings and marks them sold, opens
    /// conversations and publishes (Chat), and asks Accounts for payment handles and records sales.
    /// Chat checks that users (Accounts) and listings exist. LostFound publishes matches (Chat).
    /// BucketList checks that users (Accounts) and listings exist. Every service also needs Accounts
    /// to check the session tokens its callers present.
    public var calls: Set<CampusService> {
        switch self {
        case .accounts: [.listings, .bids, .chat]
        case .listings: [.accounts, .bids, .chat]
        case .bids: [.accounts, .listings, .chat]
        case .chat: [.accounts, .listings]
        case .lostfound: [.accounts, .chat]
        case .bucketlist: [.accounts, .listings]
        }
    }

    public var description: String { rawValue }

    public static func < (lhs: CampusService, rhs: CampusService) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// Which services this process runs, and where the ones it calls but does not run live.
///
/// By default a process runs every service and calls them in process. `skiff-server --services
/// accounts,chat --upstream listings=10.0.0.2:7700 --upstream bids=10.0.0.2:7700` runs Accounts and
/// Chat, and calls Listings and Bids over skiff/1 with the service token (every process then needs
/// the same `--service-token`). Several addresses for one service are used round-robin, skipping
/// those whose health check fails, and a call none of them processed moves on to the next.
public struct ServiceDeployment: Sendable, Hashable {
    /// The services this process runs (and serves on its port).
    public var local: Set<CampusService>
    /// Where each service this process does not run is reached: one address or several.
    public var upstreams: [CampusService: [ClientConnection.Target]]

    /// Every service in this process: the default.
    public static let allInProcess = ServiceDeployment(local: Set(CampusService.allCases), upstreams: [:])

    public init(local: Set<CampusService>, upstreams: [CampusService: [ClientConnection.Target]] = [:]) {
        self.local = local
        self.upstreams = upstreams
    }

    /// Whether this process runs `service`.
    public func runs(_ service: CampusService) -> Bool { local.contains(service) }

    /// Whether some service is elsewhere: callers then present the shared service token.
    public var isSplit: Bool { local.count < CampusService.allCases.count }

    /// The services the local ones call that run elsewhere (every one needs an upstream).
    public var remoteDependencies: Set<CampusService> {
        local.reduce(into: Set<CampusService>()) { $0.formUnion($1.calls) }.subtracting(local)
    }

    /// Checks that the deployment can work: at least one service here, an upstream for every service
    /// the local ones call, none for a local service, and a shared service token when split.
    ///
    /// - Throws: ``ApplicationConfigurationError`` saying what to add or remove.
    public func validate(serviceToken: String?) throws(ApplicationConfigurationError) {
        guard !local.isEmpty else {
            throw ApplicationConfigurationError("Run at least one service (--services accounts,listings,…).")
        }
        let misplaced = Set(upstreams.keys).intersection(local).sorted()
        guard misplaced.isEmpty else {
            throw ApplicationConfigurationError(
                "\(Self.list(misplaced)) run in this process (--services): remove their --upstream."
            )
        }
        for (service, addresses) in upstreams where addresses.isEmpty {
            throw ApplicationConfigurationError("--upstream \(service) needs at least one HOST:PORT.")
        }
        let missing = remoteDependencies.subtracting(upstreams.keys).sorted()
        guard missing.isEmpty else {
            let needing = local.filter { !$0.calls.isDisjoint(with: missing) }.sorted()
            throw ApplicationConfigurationError(
                "\(Self.list(needing)) call \(Self.list(missing)), which this process does not run: "
                    + "add --upstream \(missing[0])=HOST:PORT (for each of them), or add them to --services."
            )
        }
        if isSplit, serviceToken == nil {
            throw ApplicationConfigurationError(
                "With the services split over processes, give every process the same --service-token "
                    + "(16 characters or more): the services present it when they call each other."
            )
        }
    }

    /// Parses `--services` (comma-separated names; `nil` = all) and `--upstream NAME=HOST:PORT[,HOST:PORT…]`
    /// values (repeatable; addresses given for the same service add up).
    ///
    /// - Throws: ``ApplicationConfigurationError`` naming the value that does not parse.
    public static func parse(
        services: String?,
        upstreams: [String]
    ) throws(ApplicationConfigurationError)
        -> ServiceDeployment
    {
        var deployment = ServiceDeployment.allInProcess
        if let services {
            deployment.local = []
            for part in services.split(separator: ",", omittingEmptySubsequences: false) {
                let name = part.trimmingCharacters(in: .whitespaces)
                let service = try Self.service(named: name, in: "--services")
                guard deployment.local.insert(service).inserted else {
                    throw ApplicationConfigurationError("--services names \(service) twice.")
                }
            }
        }
        for value in upstreams {
            guard let equals = value.firstIndex(of: "=") else {
                throw ApplicationConfigurationError(
                    "--upstream \(value.prefix(80)): use SERVICE=HOST:PORT[,HOST:PORT…], e.g. listings=10.0.0.2:7700."
                )
            }
            let service = try Self.service(named: String(value[..<equals]), in: "--upstream")
            for address in value[value.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false)
            {
                let target = try Self.target(String(address), of: service)
                if deployment.upstreams[service, default: []].contains(target) {
                    throw ApplicationConfigurationError("--upstream \(service) names \(target) twice.")
                }
                deployment.upstreams[service, default: []].append(target)
            }
        }
        if deployment.upstreams.values.contains(where: { $0.count > 64 }) {
            throw ApplicationConfigurationError("--upstream: at most 64 addresses per service.")
        }
        return deployment
    }

    private static func service(
        named name: String,
        in option: String
    ) throws(ApplicationConfigurationError)
        -> CampusService
    {
        guard let service = CampusService(rawValue: name.lowercased()) else {
            throw ApplicationConfigurationError(
                "\(option): \"\(name.prefix(40))\" is not a service; services: "
                    + CampusService.allCases.map(\.rawValue).joined(separator: ", ") + "."
            )
        }
        return service
    }

    /// `HOST:PORT` or `[IPv6]:PORT`.
    private static func target(
        _ text: String,
        of service: CampusService
    ) throws(ApplicationConfigurationError)
        -> ClientConnection.Target
    {
        let address = text.trimmingCharacters(in: .whitespaces)
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
            (1...65_535).contains(port)
        else {
            throw ApplicationConfigurationError(
                "--upstream \(service)=\(address.prefix(80)): \"\(address.prefix(80))\" is not HOST:PORT (port 1…65535)."
            )
        }
        var host = String(address[..<colon])
        let bracketed = host.hasPrefix("[") && host.hasSuffix("]")
        if bracketed { host = String(host.dropFirst().dropLast()) }
        // An IPv6 address goes in brackets: `[fe80::1]:7700`.
        guard !host.isEmpty, host.utf8.count <= 253, bracketed || !host.contains(":"),
            !host.contains(where: { $0 == "/" || $0 == " " || $0 == "[" || $0 == "]" })
        else {
            throw ApplicationConfigurationError(
                "--upstream \(service)=\(address.prefix(80)): the host is missing or invalid (an IPv6 address goes in brackets: [::1]:7700)."
            )
        }
        return .host(host, port: port)
    }

    private static func list(_ services: [CampusService]) -> String {
        services.map(\.rawValue).joined(separator: ", ")
    }
}
