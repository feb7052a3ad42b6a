import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real mail relay for one test: Debian's aiosmtpd (Tests/mail/smtp-relay) on loopback, requiring STARTTLS with a
/// certificate a test authority of its own signed, then AUTH, before it takes a message. `messages()` reads what it
/// received through Python's MIME parser (Tests/mail/read-mail). `stop()` and `start()` again keep the port and the
/// spool, for a relay that goes away and comes back.
public final class MailRelay: @unchecked Sendable {
    public static let user = "registry"
    public static let password = "a relay password, with spaces"

    public let port: Int
    /// The authority that signed the relay's certificate.
    public let caFile: String
    private let relayCertificate: String
    private let relayKey: String
    public let directory: TemporaryDirectory
    /// TLS from the first byte (smtps://) rather than STARTTLS.
    public let implicitTLS: Bool
    private var process: Process?

    public init(implicitTLS: Bool = false) throws {
        self.implicitTLS = implicitTLS
        directory = try TemporaryDirectory("beacond-mail")
        port = try LoopbackPort.free()
        try FileManager.default.createDirectory(atPath: directory.file("spool"), withIntermediateDirectories: true)
        let certificates = try Self.certificates.get()
        caFile = certificates + "/ca.pem"
        relayCertificate = certificates + "/relay.pem"
        relayKey = certificates + "/relay.key"
        try start()
    }

    deinit {
        stop()
        directory.remove()
    }

    /// One authority and one certificate for 127.0.0.1 for every relay of the test process, made once (P-256 keys,
    /// which take no time to make, unlike RSA's, whose making beside a suite that measures latency held it up), in a
    /// directory left for the system's temporary files to clear.
    private static let certificates = Result<String, any Error> {
        let directory = try TemporaryDirectory("beacond-mail-certificates")
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = [
            "-c",
            """
            set -e
            cd '\(directory.path)'
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=beacond-mail-ca \\
                -keyout ca.key -out ca.pem
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 -keyout relay.key \\
                -out relay.csr
            printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > relay.ext
            openssl x509 -req -in relay.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile relay.ext \\
                -out relay.pem
            """,
        ]
        shell.standardOutput = FileHandle.nullDevice
        shell.standardError = FileHandle.nullDevice
        try shell.run()
        guard shell.waitForExit() == 0 else { throw FixtureError("the relays' certificate was not made") }
        return directory.path
    }

    /// The relay's URL as bike-registry's --smtp takes it: STARTTLS, or TLS from the start, on a port of its own.
    public var url: String { (implicitTLS ? "smtps" : "smtp") + "://127.0.0.1:\(port)" }

    /// Starts the relay (again) and returns once it accepts connections.
    public func start() throws {
        guard process == nil else { return }
        let relay = Process()
        relay.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        relay.arguments =
            [
                Fixtures.repositoryRoot.appendingPathComponent("Tests/mail/smtp-relay").path, "--port", String(port),
                "--spool", directory.file("spool"), "--cert", relayCertificate, "--key", relayKey, "--user",
                Self.user, "--password", Self.password,
            ] + (implicitTLS ? ["--implicit-tls"] : [])
        relay.standardOutput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: directory.file("relay.err"), contents: nil)
        relay.standardError = FileHandle(forWritingAtPath: directory.file("relay.err"))
        try relay.run()
        process = relay
        let deadline = Date().addingTimeInterval(20)
        while !LoopbackPort.accepts(port) {
            guard relay.isRunning, Date() < deadline else {
                throw FixtureError("the mail relay did not start: \(GrowingFile.text(directory.file("relay.err")))")
            }
            usleep(10_000)
        }
    }

    /// Stops the relay with SIGKILL, as a crash would, and waits for it to exit.
    public func stop() {
        guard let relay = process else { return }
        relay.send(SIGKILL)
        relay.waitForExit()
        process = nil
    }

    /// A received message as Python's `email` parser read it.
    public struct Message: Decodable, Sendable {
        public struct Envelope: Decodable, Sendable {
            public var mailFrom: String
            public var rcptTo: [String]
            public var tls: Bool
            public var login: String?
        }

        public struct Part: Decodable, Sendable {
            public var contentType: String
            public var charset: String?
            public var encoding: String?
            public var content: String
        }

        public var file: String
        public var envelope: Envelope
        public var headers: [String: [String]]
        public var contentType: String
        public var parts: [Part]
        public var defects: [String]
        /// Every line ended by CRLF, as SMTP carries it.
        public var crlf: Bool

        /// The one value of a header, nil when absent or repeated.
        public func header(_ name: String) -> String? {
            let values = headers.first { $0.key.lowercased() == name.lowercased() }?.value ?? []
            return values.count == 1 ? values[0] : nil
        }

        public var to: String { envelope.rcptTo.first ?? "" }
        public func part(_ type: String) -> String? { parts.first { $0.contentType == type }?.content }
    }

    /// The next `count` messages are answered 451 after their DATA, each kept in `deferred()`.
    public func deferData(_ count: Int) throws {
        try String(count).write(toFile: directory.file("defer-data"), atomically: true, encoding: .utf8)
    }

    /// Each message is kept, then its 250 waits `seconds` (nil: none): a client that dies meanwhile never hears it
    /// was taken.
    public func delayReplies(_ seconds: Double?) throws {
        let file = directory.file("delay-data")
        if let seconds {
            try String(seconds).write(toFile: file, atomically: true, encoding: .utf8)
        } else {
            try? FileManager.default.removeItem(atPath: file)
        }
    }

    /// The Message-IDs of the messages answered 451 after their DATA.
    public func deferred() -> [String] {
        let folder = directory.file("deferred")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
            $0.hasSuffix(".eml")
        }
        return names.sorted().compactMap { name in
            let text = (try? String(contentsOfFile: folder + "/" + name, encoding: .utf8)) ?? ""
            return text.components(separatedBy: "\r\n").first { $0.hasPrefix("Message-ID: ") }.map {
                String($0.dropFirst("Message-ID: ".count))
            }
        }
    }

    /// How many messages were received so far (without parsing them).
    public var count: Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.file("spool"))) ?? []).filter {
            $0.hasSuffix(".json")
        }.count
    }

    /// The messages once at least `count` have arrived, or what arrived within `seconds`.
    public func waitFor(_ count: Int, within seconds: Double = 30) async throws -> [Message] {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while self.count < count && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        return try messages()
    }

    /// Every message received so far, oldest first.
    public func messages() throws -> [Message] {
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        reader.arguments = [
            Fixtures.repositoryRoot.appendingPathComponent("Tests/mail/read-mail").path, directory.file("spool"),
        ]
        let output = Pipe()
        reader.standardOutput = output
        try reader.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        guard reader.waitForExit() == 0 else { throw FixtureError("read-mail failed") }
        return try JSONDecoder().decode([Message].self, from: data)
    }
}
