import BeaconTestSupport
import BikeRegistryStore
import Foundation
import NIOHTTP1
import Testing

@testable import BikeRegistryServer

/// `RefreshFastPath`, which answers a station's refresh from the bytes read, before the HTTP decoder, over real
/// HTTP on loopback: its answers are the router's, byte for byte but the date; order kept when requests are
/// pipelined or a head comes in pieces; and a client that sends and never reads holds a bounded part of the server.
@Suite(.timeLimit(.minutes(20))) struct RefreshFastPathTests {
    /// A registry with a station, its list served once (so that memory holds it), and the key and ETag.
    struct Served {
        let registry: RegistryHarness
        let key: String
        let etag: String

        init(_ store: StoreKind, directory: String, requestsPerMinute: Int = 600) async throws {
            registry = try await RegistryHarness(
                store, directory: directory, registrationsPerMinute: 1_000, requestsPerMinute: requestsPerMinute
            ) { $0.registrationsPerMinuteTotal = 1_000 }
            key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            try await Self.reportMissing(minors: 1...3, registry: registry)
            etag = try #require(
                try await registry.request(.GET, "/bikes?missing=true", bearer: key).headers.first(name: "ETag"))
        }

        func reportMissing(minors: ClosedRange<Int>) async throws {
            try await Self.reportMissing(minors: minors, registry: registry)
        }

        static func reportMissing(minors: ClosedRange<Int>, registry: RegistryHarness) async throws {
            for minor in minors {
                let bike = try await registry.register(minor: minor)
                let answer = try await registry.request(
                    .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: #"{"missing":true}"#)
                guard answer.status == 200 else { throw HarnessError("reporting \(minor) answered \(answer.status)") }
            }
        }

        /// A station's refresh as beacond writes it; `close` ends the connection after it (and sends it to the
        /// decoder, since `Connection` is not read here).
        func refresh(_ extra: String = "", etag: String? = nil, close: Bool = false) -> String {
            "GET /bikes?missing=true HTTP/1.1\r\nHost: registry\r\nAuthorization: Bearer \(key)\r\n"
                + "If-None-Match: \(etag ?? self.etag)\r\nUser-Agent: beacond/test\r\n\(extra)"
                + (close ? "Connection: close\r\n" : "") + "\r\n"
        }
    }

    /// Each answer's status line and headers but `Date` and `Connection`, and its body.
    static func answers(_ text: String) -> [String] {
        text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { answer in
            answer.components(separatedBy: "\r\n")
                .filter { !$0.hasPrefix("Date: ") && !$0.lowercased().hasPrefix("connection: ") }
                .joined(separator: "\r\n")
        }
    }

    @Test(arguments: StoreKind.allCases) func answersAreTheRoutersButTheDate(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("fast-path")
        defer { directory.remove() }
        let served = try await Served(store, directory: directory.path)
        try await withTeardown({ await served.registry.stop() }) {
            // 304: the first answered here, the second (with Connection) by the decoder's side.
            let unchanged = try await RawHTTP.exchange(
                port: served.registry.port, served.refresh() + served.refresh(close: true))
            let notModified = Self.answers(unchanged)
            #expect(notModified.count == 2 && notModified[0].hasPrefix("304 Not Modified\r\nETag: \(served.etag)"))
            #expect(notModified.first == notModified.last, "\(unchanged)")

            // 226: one more bike missing; the router works the changes out once, then they are answered here.
            try await served.reportMissing(minors: 4...4)
            let takesChanges = "A-IM: bike-changes\r\n"
            for encoding in ["", "Accept-Encoding: gzip\r\n"] {
                let routed = try await RawHTTP.exchange(
                    port: served.registry.port, served.refresh(takesChanges + encoding, close: true))
                let fast = try await RawHTTP.exchange(
                    port: served.registry.port,
                    served.refresh(takesChanges + encoding) + served.refresh(takesChanges + encoding, close: true))
                let answers = Self.answers(routed) + Self.answers(fast)
                #expect(answers.count == 3 && answers[0].hasPrefix("226 IM Used\r\n"), "\(routed)")
                #expect(Set(answers).count == 1, "\(answers)")
                #expect(answers[0].contains("Content-Encoding: gzip") == !encoding.isEmpty)
            }
        }
    }

    /// Pipelined in one write: two refreshes answered here, a request for the router (no condition: 200), and a
    /// refresh after it, which must wait for the 200 and so goes to the decoder.
    @Test func pipelinedAnswersKeepTheirOrder() async throws {
        let directory = try TemporaryDirectory("fast-path")
        defer { directory.remove() }
        let served = try await Served(.sqlite, directory: directory.path)
        try await withTeardown({ await served.registry.stop() }) {
            let routed =
                "GET /bikes?missing=true HTTP/1.1\r\nHost: registry\r\nAuthorization: Bearer \(served.key)\r\n\r\n"
            let text = try await RawHTTP.exchange(
                port: served.registry.port,
                served.refresh() + served.refresh() + routed + served.refresh() + served.refresh(close: true))
            let statuses = Self.answers(text).map { $0.prefix(3) }
            #expect(statuses == ["304", "304", "200", "304", "304"], "\(text.prefix(2_000))")
        }
    }

    /// A head in two pieces (cut in its request line, in a header, or the second request cut): kept until whole,
    /// then answered.
    @Test func aHeadInPiecesIsStillAnswered() async throws {
        let directory = try TemporaryDirectory("fast-path")
        defer { directory.remove() }
        let served = try await Served(.sqlite, directory: directory.path)
        try await withTeardown({ await served.registry.stop() }) {
            let request = served.refresh() + served.refresh(close: true)
            for cut in [5, 40, request.utf8.count / 2 + 3] {
                let bytes = Array(request.utf8)
                let text = try await RawHTTP.exchange(
                    port: served.registry.port,
                    pieces: [Array(bytes[..<cut]), Array(bytes[cut...])], pause: 0.2)
                #expect(Self.answers(text).map { $0.prefix(3) } == ["304", "304"], "cut at \(cut): \(text)")
            }
        }
    }

    /// A client that sends refreshes and never reads their answers: once the answers the server could not write
    /// pass the channel's high-water mark, it stops reading, so the client's sends stall well short of what it
    /// would send; when the client reads at last, every request it sent is answered.
    @Test func aClientThatNeverReadsStallsAndLosesNothing() async throws {
        let directory = try TemporaryDirectory("fast-path")
        defer { directory.remove() }
        // A station's rate past any the client reaches: every refresh is answered here.
        let served = try await Served(.sqlite, directory: directory.path, requestsPerMinute: 100_000_000)
        try await withTeardown({ await served.registry.stop() }) {
            let limit = 48 << 20
            let (sent, answered) = try await RawHTTP.sendWithoutReading(
                port: served.registry.port, request: Array(served.refresh().utf8), upTo: limit)
            #expect(sent < limit / 2, "the server read \(sent) bytes of requests it could not answer")
            #expect(answered == sent / served.refresh().utf8.count, "\(sent) bytes sent, \(answered) answered")
        }
    }
}
