public import ArgumentParser
import Foundation
import SkiffCore
import SkiffReflection

/// The `skiff` command: a command-line client for Skiff servers, with JSON in and out.
///
/// Run it through ``SkiffMain/run(_:io:)`` to get an exit code and injected standard streams.
public struct SkiffCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "skiff",
        abstract: "Call Skiff servers from the command line, with JSON in and out.",
        discussion: """
            Schemas come from the server's reflection service (skiff.reflection.v1.Reflection), or from \
            local .proto files with --proto DIR. Exit codes: 0 on success, else the status code's number \
            (e.g. 4 for DEADLINE_EXCEEDED), with `CODE_NAME: message` on standard error.
            """,
        subcommands: [ListCommand.self, DescribeCommand.self, CallCommand.self, LoginCommand.self]
    )

    public init() {}
}

/// Runs `skiff` with arguments and IO.
public enum SkiffMain {
    /// Parses and runs a command line (without the program name); returns the exit code.
    public static func run(_ arguments: [String], io: CommandIO) async -> Int32 {
        await CommandIO.$current.withValue(io) {
            do {
                var command = try SkiffCommand.parseAsRoot(arguments)
                if var asyncCommand = command as? any AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try command.run()
                }
                return 0
            } catch let error as CLIError {
                io.printError(error.description)
                return error.exitCode
            } catch let error as RPCError {
                let error = CLIError.from(error)
                io.printError(error.description)
                return error.exitCode
            } catch let error as TranscodingError {
                let error = CLIError.from(error)
                io.printError(error.description)
                return error.exitCode
            } catch {
                let code = SkiffCommand.exitCode(for: error)
                let message = SkiffCommand.fullMessage(for: error)
                if !message.isEmpty {
                    if code == .success { io.print(message) } else { io.printError(message) }
                }
                return code.rawValue
            }
        }
    }

    /// The executable's entry point: runs with the process's arguments and standard streams, and exits.
    public static func main() async -> Never {
        let code = await run(Array(CommandLine.arguments.dropFirst()), io: .standard)
        exit(code)
    }
}
