public import SkiffPostgres

/// Which storage backend each service uses, from repeated `--storage` options:
/// `memory`, `sqlite:PATH`, `postgres://USER@HOST[:PORT]/DB`, or per service `listings=memory` /
/// `accounts=sqlite:PATH` / `chat=postgres://…`.
public struct StorageSelection: Sendable, Hashable {
    /// A storage backend.
    public enum Backend: Sendable, Hashable, CustomStringConvertible {
        /// In memory: gone when the process ends (tests, demos).
        case memory
        /// A SQLite file (WAL, synchronous=FULL).
        case sqlite(path: String)
        /// A PostgreSQL database, shared by any number of Skiff processes.
        case postgres(PostgresLocation)

        public var description: String {
            switch self {
            case .memory: "memory"
            case .sqlite(let path): "sqlite:\(path)"
            case .postgres(let location): location.description
            }
        }
    }

    /// The services that keep data.
    public static let services = CampusService.allCases.map(\.rawValue)
    /// The embedded default: one SQLite file under `./data`.
    public static let defaultBackend = Backend.sqlite(path: "./data/skiff.sqlite")

    /// The backend of services not named explicitly.
    public var defaultBackend: Backend
    /// Backends chosen per service.
    public var perService: [String: Backend]

    public init(defaultBackend: Backend = StorageSelection.defaultBackend, perService: [String: Backend] = [:]) {
        self.defaultBackend = defaultBackend
        self.perService = perService
    }

    /// The backend a service uses.
    public func backend(for service: String) -> Backend { perService[service] ?? defaultBackend }

    /// Parses `--storage` values; later values override earlier ones.
    public static func parse(_ values: [String]) throws(StorageSelectionError) -> StorageSelection {
        var selection = StorageSelection()
        for value in values {
            if let equals = value.firstIndex(of: "="), !value.hasPrefix("sqlite:"),
                !PostgresLocation.isLocation(value)
            {
                let service = String(value[..<equals])
                guard services.contains(service) else {
                    throw StorageSelectionError(
                        "unknown service \"\(service.prefix(40))\" in --storage; services: \(services.joined(separator: ", "))"
                    )
                }
                selection.perService[service] = try backend(String(value[value.index(after: equals)...]), in: value)
            } else {
                selection.defaultBackend = try backend(value, in: value)
            }
        }
        return selection
    }

    private static func backend(_ text: String, in option: String) throws(StorageSelectionError) -> Backend {
        if text == "memory" { return .memory }
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw StorageSelectionError("--storage \(option): sqlite: needs a file path") }
            return .sqlite(path: path)
        }
        if PostgresLocation.isLocation(text) {
            do {
                return .postgres(try PostgresLocation(parsing: text))
            } catch {
                // The option is not echoed: it may hold a password.
                throw StorageSelectionError("--storage: \(error.message)")
            }
        }
        throw StorageSelectionError(
            "--storage \(option.prefix(200)): use memory, sqlite:PATH or postgres://USER@HOST[:PORT]/DATABASE"
        )
    }
}

/// A `--storage` value that does not parse.
public struct StorageSelectionError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}
