import Foundation

/// Where a PostgreSQL database is: the value of `--storage postgres://USER[:PASSWORD]@HOST[:PORT]/DB`.
///
/// `postgresql://` is accepted as well. Query items: `sslmode=disable|prefer|require` (default
/// `prefer`, as libpq: TLS when the server offers it) and `pool=N`, the most connections this process
/// opens to the database (default ``defaultPoolSize``).
///
/// The password never appears in ``description`` (which logs and error messages use).
public struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    /// Whether the connection is encrypted.
    public enum TLSMode: String, Sendable, Hashable {
        /// Never.
        case disable
        /// When the server offers TLS.
        case prefer
        /// Always; the connection fails when the server does not offer it.
        case require
    }

    /// Connections per process when the location does not say (`pool=`).
    public static let defaultPoolSize = 10
    /// The most connections `pool=` may ask for.
    public static let maximumPoolSize = 1000

    /// The server's host name or address.
    public var host: String
    /// The server's port (5432 unless given).
    public var port: Int
    /// The role to log in as.
    public var username: String
    /// The password, if the server asks for one.
    public var password: String?
    /// The database's name.
    public var database: String
    /// Whether to use TLS.
    public var tls: TLSMode
    /// The most connections this process opens to the database.
    public var poolSize: Int

    /// A location from its parts.
    public init(
        host: String,
        port: Int = 5432,
        username: String,
        password: String? = nil,
        database: String,
        tls: TLSMode = .prefer,
        poolSize: Int = PostgresLocation.defaultPoolSize
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
        self.poolSize = poolSize
    }

    /// Whether `text` names a PostgreSQL location (by its scheme), valid or not.
    public static func isLocation(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Parses `postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=…&pool=N]`.
    ///
    /// - Throws: ``PostgresLocationError`` naming what is missing or wrong (never the password).
    public init(parsing text: String) throws(PostgresLocationError) {
        guard Self.isLocation(text), let components = URLComponents(string: text) else {
            throw PostgresLocationError("expected postgres://USER@HOST[:PORT]/DATABASE")
        }
        guard let user = components.percentEncodedUser.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw PostgresLocationError("postgres:// needs a user name: postgres://USER@HOST/DATABASE")
        }
        guard let host = components.host, !host.isEmpty else {
            throw PostgresLocationError("postgres:// needs a host: postgres://USER@HOST/DATABASE")
        }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw PostgresLocationError("the port must be 1-65535") }
        let path = components.percentEncodedPath.removingPercentEncoding ?? ""
        let database = path.hasPrefix("/") ? String(path.dropFirst()) : path
        guard !database.isEmpty, !database.contains("/") else {
            throw PostgresLocationError("postgres:// needs a database name: postgres://USER@HOST/DATABASE")
        }
        var tls = TLSMode.prefer
        var poolSize = Self.defaultPoolSize
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                    throw PostgresLocationError("sslmode must be disable, prefer or require")
                }
                tls = mode
            case "pool":
                guard let size = item.value.flatMap(Int.init), (1...Self.maximumPoolSize).contains(size) else {
                    throw PostgresLocationError(
                        "pool must be a number of connections from 1 to \(Self.maximumPoolSize)"
                    )
                }
                poolSize = size
            default:
                throw PostgresLocationError("unknown option \"\(item.name.prefix(40))\"; options: sslmode, pool")
            }
        }
        self.init(
            host: host,
            port: port,
            username: user,
            password: components.percentEncodedPassword.flatMap { $0.removingPercentEncoding },
            database: database,
            tls: tls,
            poolSize: poolSize
        )
    }

    /// `postgres://USER@HOST:PORT/DB`, without the password (and the options only when not defaults).
    public var description: String {
        var options: [String] = []
        if tls != .prefer { options.append("sslmode=\(tls.rawValue)") }
        if poolSize != Self.defaultPoolSize { options.append("pool=\(poolSize)") }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let query = options.isEmpty ? "" : "?" + options.joined(separator: "&")
        return "postgres://\(username)@\(shownHost):\(port)/\(database)\(query)"
    }
}

/// A `postgres://` location that cannot be used, and why.
public struct PostgresLocationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, for the operator.
    public var message: String

    /// Creates the error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
