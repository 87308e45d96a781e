public import ArgumentParser
import Foundation
import SkiffClient
import SkiffCore
import SkiffHTTPClient

/// The options every command that talks to a server shares.
public struct ConnectionOptions: ParsableArguments, Sendable {
    /// The server, as `HOST:PORT`.
    @Argument(help: "The server, as HOST:PORT.")
    public var target: String

    /// Request metadata, `key:value`, repeatable.
    @Option(name: [.customShort("H"), .customLong("header")], help: "Request metadata as key:value (repeatable).")
    public var headers: [String] = []

    /// The call timeout, e.g. `500ms`, `2s`, `1m` (plain numbers are seconds).
    @Option(help: "Call timeout, e.g. 500ms, 2s, 1m (plain numbers are seconds).")
    public var timeout: String?

    /// A directory of `.proto` files to use instead of server reflection.
    @Option(
        name: .customLong("proto"),
        help: "Read schemas from the .proto files under DIR (via protoc) instead of server reflection."
    )
    public var protoDirectory: String?

    /// The protocol calls speak: `skiff` (skiff/1), `grpc`, `grpc-web` or `connect` (HTTP/2).
    @Option(
        name: .customLong("protocol"),
        help: "The protocol: skiff (default), grpc, grpc-web or connect (the last three over HTTP/2)."
    )
    public var callProtocol = "skiff"

    public init() {}

    public func validate() throws { _ = try httpProtocol() }

    /// The HTTP call protocol of `--protocol`; `nil` for skiff/1.
    func httpProtocol() throws -> HTTPClientProtocol? {
        if callProtocol == "skiff" { return nil }
        guard let http = HTTPClientProtocol(rawValue: callProtocol) else {
            throw ValidationError("Invalid --protocol '\(callProtocol)'; use skiff, grpc, grpc-web or connect.")
        }
        return http
    }

    /// The host and port of ``target``.
    func hostAndPort() throws -> (host: String, port: Int) {
        guard let colon = target.lastIndex(of: ":"), let port = Int(target[target.index(after: colon)...]),
            colon > target.startIndex
        else { throw ValidationError("Expected HOST:PORT, got '\(target)'.") }
        var host = String(target[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }

    /// The parsed timeout.
    func parsedTimeout() throws -> Duration? {
        guard let timeout else { return nil }
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, scale) in units where timeout.hasSuffix(suffix) {
            if let value = Double(timeout.dropLast(suffix.count)), value >= 0 {
                return .milliseconds(Int64(value * scale * 1000))
            }
        }
        if let value = Double(timeout), value >= 0 { return .milliseconds(Int64(value * 1000)) }
        throw ValidationError("Invalid --timeout '\(timeout)'; use e.g. 500ms, 2s or 1m.")
    }

    /// The metadata of `-H` options, plus the stored session token for this server unless an
    /// `authorization` header is given.
    func metadata(io: CommandIO, includeStoredToken: Bool = true) throws -> Metadata {
        var metadata = Metadata()
        for header in headers {
            guard let colon = header.firstIndex(of: ":") else {
                throw ValidationError("Invalid -H '\(header)'; use key:value.")
            }
            let key = header[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            metadata.add(key, value)
        }
        if includeStoredToken, metadata.first("authorization") == nil,
            let token = try? SessionStore(environment: io.environment).token(for: target)
        {
            metadata.add("authorization", "Bearer \(token)")
        }
        return metadata
    }

    /// Opens a connection to the target speaking `--protocol`, runs `body`, and closes it.
    func withConnection<R: Sendable>(_ body: (any ClientTransport) async throws -> R) async throws -> R {
        let (host, port) = try hostAndPort()
        if let http = try httpProtocol() {
            return try await withHTTPClientTransport(host: host, port: port, protocol: http) { transport in
                try await body(transport)
            }
        }
        return try await withClientConnection(target: .host(host, port: port)) { connection in
            try await body(connection)
        }
    }
}
