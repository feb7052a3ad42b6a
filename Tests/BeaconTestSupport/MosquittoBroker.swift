import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real broker for one test: Debian's `mosquitto` on loopback, with a plain listener and a TLS one (a certificate
/// authority of its own signed the broker's certificate, for 127.0.0.1), and one user in a password file; nobody
/// anonymous. `stop()` and `start()` again keep the ports, for a broker that goes away and comes back.
public final class MosquittoBroker: @unchecked Sendable {
    public static let username = "station"
    public static let password = "a long password, with spaces"

    public let port: Int
    public let tlsPort: Int
    /// The authority that signed the broker's certificate, and one that did not.
    public let caFile: String
    public let otherCAFile: String
    private let directory: TemporaryDirectory
    private var process: Process?

    public init() throws {
        directory = try TemporaryDirectory("beacond-mosquitto")
        // The broker drops root for its own user, which must read these files.
        chmod(directory.path, 0o755)
        port = try LoopbackPort.free()
        tlsPort = try LoopbackPort.free()
        caFile = directory.file("ca.pem")
        otherCAFile = directory.file("other-ca.pem")
        let d = directory.path
        try Self.shell(
            """
            set -e
            cd '\(d)'
            openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=beacond-test-ca -keyout ca.key -out ca.pem
            openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=another-ca -keyout other-ca.key -out other-ca.pem
            openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key -out server.csr
            printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > server.ext
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -extfile server.ext \\
                -out server.pem
            chmod 644 server.key
            mosquitto_passwd -c -b passwords '\(Self.username)' '\(Self.password)'
            chmod 644 passwords
            """)
        try """
        per_listener_settings false
        allow_anonymous false
        password_file \(d)/passwords
        persistence false
        log_dest file \(d)/broker.log
        log_type all
        \(getuid() == 0 ? "user root" : "")
        listener \(port) 127.0.0.1
        listener \(tlsPort) 127.0.0.1
        cafile \(d)/ca.pem
        certfile \(d)/server.pem
        keyfile \(d)/server.key
        """.write(toFile: directory.file("mosquitto.conf"), atomically: true, encoding: .utf8)
        try start()
    }

    deinit {
        stop()
        directory.remove()
    }

    /// Starts the broker (again) and returns once both listeners accept connections.
    public func start() throws {
        guard process == nil else { return }
        let broker = Process()
        broker.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        broker.arguments = ["-c", directory.file("mosquitto.conf")]
        broker.standardOutput = FileHandle.nullDevice
        broker.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try broker.run()
        process = broker
        let deadline = Date().addingTimeInterval(10)
        while !(LoopbackPort.accepts(port) && LoopbackPort.accepts(tlsPort)) {
            guard broker.isRunning, Date() < deadline else {
                throw FixtureError("mosquitto did not start: \(log)")
            }
            usleep(10_000)
        }
    }

    /// Stops the broker and waits for it to exit. SIGKILL, as a crash or a power cut would: the broker keeps nothing
    /// (no persistence), and a SIGTERM can reach it blocked, since a child inherits the test process's signal mask.
    public func stop() {
        guard let broker = process else { return }
        broker.send(SIGKILL)
        broker.waitForExit()
        process = nil
    }

    /// What the broker logged, for a failure's message.
    public var log: String { GrowingFile.text(directory.file("broker.log")) }

    private static func shell(_ script: String) throws {
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", script]
        let errors = Pipe()
        shell.standardOutput = FileHandle.nullDevice
        shell.standardError = errors
        try shell.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard shell.waitForExit() == 0 else { throw FixtureError("broker set-up failed: \(text)") }
    }
}
