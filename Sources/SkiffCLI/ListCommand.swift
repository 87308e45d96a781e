import ArgumentParser
import SkiffCore
import SkiffReflection
import SwiftProtobuf

/// `skiff list HOST:PORT [SERVICE]`: the server's services and their methods.
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the server's services and their methods."
    )

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: "Only this service (fully qualified).")
    var service: String?

    func run() async throws {
        let io = CommandIO.current
        try await connection.withConnection { transport in
            let (services, registry) = try await SchemaSource.load(
                options: connection,
                transport: transport,
                onlyService: service
            )
            let describer = Describer(registry: registry)
            for name in services where service == nil || name == service {
                io.print(name)
                for method in registry.services[name]?.method ?? [] { io.print("  " + describer.signature(method)) }
            }
        }
    }
}

/// `skiff describe HOST:PORT SYMBOL`: a method's request and response schemas, a service, or a message.
struct DescribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "describe",
        abstract: "Describe a method (Service/Method), a service, or a message type, field by field."
    )

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: "Service/Method, a service, or a message type (fully qualified).")
    var symbol: String

    func run() async throws {
        let io = CommandIO.current
        try await connection.withConnection { transport in
            let (services, registry) = try await SchemaSource.load(options: connection, transport: transport)
            let service = services.first { symbol == $0 || symbol.hasPrefix($0 + "/") || symbol.hasPrefix($0 + ".") }
            let describer = Describer(registry: registry)
            if let service, symbol == service, let text = describer.describeService(service) {
                io.print(text)
            } else if let service,
                let method = registry.services[service]?.method.first(where: {
                    $0.name == String(symbol.dropFirst(service.count + 1))
                })
            {
                io.print(describer.describeMethod(service: service, method: method))
            } else {
                var seen: Set<String> = []
                let text = describer.describeType(symbol, seen: &seen)
                guard !text.isEmpty else { throw CLIError(.notFound, "Unknown symbol '\(symbol)'.") }
                io.print(String(text.dropFirst()))
            }
        }
    }
}
