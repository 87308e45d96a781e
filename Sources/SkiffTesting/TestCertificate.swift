import Foundation

/// Makes a self-signed certificate for `localhost` (and 127.0.0.1) with the openssl CLI, in a new
/// temporary directory; the caller removes it. `dev/test.sh` installs openssl.
public func makeCertificate() throws -> (cert: String, key: String) {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("skiff-tls-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    let cert = dir.appendingPathComponent("cert.pem").path
    let key = dir.appendingPathComponent("key.pem").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
        "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw TLSSetupFailed() }
    return (cert, key)
}

/// openssl could not make a certificate (is it installed?).
public struct TLSSetupFailed: Error {}
