import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import NIOHTTP1
import Testing

@testable import BikeRegistryServer

/// A station's refresh (`GET /bikes` with `If-None-Match`) over real HTTP on loopback: answers in the order asked when
/// pipelined, counted against the station's rate and noted, written at stop, and a client that sends and never reads
/// holds a bounded part of the server.
@Suite(.timeLimit(.minutes(20))) struct StationRefreshTests {
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

    /// Pipelined in one write: two unchanged refreshes, a request with no condition (200), and two refreshes after
    /// it: answered in the order asked.
    @Test func pipelinedAnswersKeepTheirOrder() async throws {
        let directory = try TemporaryDirectory("refresh")
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

    /// A refresh answered 304 from memory counts against the station's rate and is noted as its last refresh.
    @Test(arguments: StoreKind.allCases) func unchangedRefreshesAreLimitedAndNoted(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let registry = try await RegistryHarness(store, directory: directory.path, requestsPerMinute: 3)
        try await withTeardown({ await registry.stop() }) {
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let first = try await registry.request(.GET, "/bikes?missing=true", bearer: key)
            let etag = try #require(first.headers.first(name: "ETag"))
            var statuses: [Int] = []
            for _ in 0..<3 {
                statuses.append(
                    try await registry.request(
                        .GET, "/bikes?missing=true", bearer: key,
                        headers: [("If-None-Match", etag), ("User-Agent", "beacond/refresh-test")]
                    ).status)
            }
            #expect(statuses == [304, 304, 429])
            var station: Station?
            for _ in 0..<100 where station?.userAgent != "beacond/refresh-test" {
                try await Task.sleep(for: .milliseconds(50))
                station = try await registry.database.stations().first
            }
            #expect(station?.userAgent == "beacond/refresh-test" && station?.lastRefreshAt != nil)
        }
    }

    /// Refreshes noted since the last write are written when the server stops, even by cancellation.
    @Test(arguments: StoreKind.allCases) func theLastRefreshesAreWrittenAtStop(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let database = try await TestDatabase.make(store, in: directory.path)
        try await withTeardown({ await database.drop() }) {
            let registry = try await RegistryHarness(
                store, directory: directory.path, sharing: database, refreshWriteInterval: .seconds(3600))
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            #expect(try await registry.request(.GET, "/bikes", bearer: key).status == 200)
            await registry.stop(cancelling: true)
            let reopened = try await database.open()
            let station = try await reopened.stations().first
            await reopened.close()
            #expect(station?.lastRefreshAt != nil)
        }
    }

    /// A client that sends refreshes and never reads their answers: once the server cannot write its answers, it
    /// stops reading (Hummingbird's channel waits to write before it reads the next request), so the client's sends
    /// stall well short of what it would send; when the client reads at last, every request it sent is answered.
    @Test func aClientThatNeverReadsStallsAndLosesNothing() async throws {
        let directory = try TemporaryDirectory("refresh")
        defer { directory.remove() }
        // A station's rate past any the client reaches: none is refused.
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
