public import Foundation

/// Where `skiff` writes its output and reads its input: the process's standard streams, or
/// closures injected by tests.
public struct CommandIO: Sendable {
    /// Writes text to standard output (the text includes its newlines).
    public var stdout: @Sendable (String) -> Void
    /// Writes text to standard error.
    public var stderr: @Sendable (String) -> Void
    /// Reads one line of standard input without its newline; nil at end of input.
    public var readLine: @Sendable () -> String?
    /// Reads a password: prompts without echo on a terminal, else reads a line of standard input.
    public var readPassword: @Sendable (_ prompt: String) -> String?
    /// Environment variables (for `XDG_CONFIG_HOME` and `HOME`).
    public var environment: [String: String]

    /// Creates an IO with the given closures.
    public init(
        stdout: @escaping @Sendable (String) -> Void,
        stderr: @escaping @Sendable (String) -> Void,
        readLine: @escaping @Sendable () -> String? = { nil },
        readPassword: (@Sendable (String) -> String?)? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.stdout = stdout
        self.stderr = stderr
        self.readLine = readLine
        self.readPassword = readPassword ?? { _ in readLine() }
        self.environment = environment
    }

    /// The process's standard streams and environment.
    public static var standard: CommandIO {
        CommandIO(
            stdout: { text in
                // A closed pipe (e.g. `| head`) ends the program quietly, as for other tools.
                do { try FileHandle.standardOutput.write(contentsOf: Data(text.utf8)) } catch { exit(0) }
            },
            stderr: { text in try? FileHandle.standardError.write(contentsOf: Data(text.utf8)) },
            readLine: { Swift.readLine(strippingNewline: true) },
            readPassword: { prompt in
                if isatty(STDIN_FILENO) != 0, let password = getpass(prompt) { return String(cString: password) }
                return Swift.readLine(strippingNewline: true)
            }
        )
    }

    /// The IO of the command running in this task.
    @TaskLocal public static var current: CommandIO = .standard
}

extension CommandIO {
    func print(_ text: String) { stdout(text + "\n") }
    func printError(_ text: String) { stderr(text + "\n") }
}
