import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import DaemonSupport
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypes
import Testing

@testable import BikeRegistryServer

/// `RefreshShortcut`, the handler that answers a station's unchanged refresh on the event loop: what it answers and
/// what it leaves to the router, answers in the order requests came, the station's rate and refresh noted as the
/// router would, and the `Date` it writes.
@Suite(.timeLimit(.minutes(20))) struct RefreshShortcutTests {
    /// A shortcut over a real SQLite store with one station, its key and the list's ETag loaded into memory. Made
    /// in two steps: an `EmbeddedChannel` may be used only on the thread that made it, and an async test may go on
    /// on another thread after each `await`, so a test makes the channel (`Fixture(store)`) after its last one.
    struct Fixture {
        struct Store {
            let key: String
            let etag: String
            let database: any RegistryStore
            let routes: StationRoutes
            let logger: Logger

            init(directory: String, requestsPerMinute: Int = 600) async throws {
                logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
                database = try await RegistryStores.open(
                    directory + "/registry.sqlite", connections: 2, logger: logger)
                key = try await database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
                let snapshot = RegistrySnapshot(
                    database: database, interval: .seconds(60), logger: logger)
                _ = try await snapshot.station(keyHash: Secrets.hash(key))
                // The list served once, as a station's first refresh does: the shortcut answers for a list it holds.
                etag = try await snapshot.list().etag
                routes = StationRoutes(
                    database: database,
                    limiter: RateLimiter(perMinute: requestsPerMinute, name: CredentialLimit.stationRequests),
                    doorbell: Doorbell(),
                    refreshes: StationRefreshLog(database: database, interval: .seconds(60), logger: logger),
                    snapshot: snapshot)
            }
        }

        let channel: EmbeddedChannel
        let key: String
        let etag: String

        init(_ store: Store) {
            key = store.key
            etag = store.etag
            channel = EmbeddedChannel(
                handler: RefreshShortcut(
                    EventLoopRefreshes(
                        routes: store.routes, date: HTTPDate(), serverName: "bike-registry", logger: store.logger,
                        metrics: nil)))
        }

        func request(_ path: String, fields: HTTPFields, method: HTTPRequest.Method = .get) throws {
            try channel.writeInbound(
                HTTPRequestPart.head(
                    HTTPRequest(method: method, scheme: nil, authority: nil, path: path, headerFields: fields)))
            try channel.writeInbound(HTTPRequestPart.end(nil))
        }

        /// The router's answer to the oldest request it owes, head and end, as Hummingbird writes it.
        func routerAnswers(_ status: HTTPResponse.Status) throws {
            try channel.writeAndFlush(HTTPResponsePart.head(HTTPResponse(status: status))).wait()
            try channel.writeAndFlush(HTTPResponsePart.end(nil)).wait()
        }

        /// The request parts passed on to the router, and the answers written here.
        func passed() throws -> [HTTPRequestPart] {
            var parts: [HTTPRequestPart] = []
            while let part = try channel.readInbound(as: HTTPRequestPart.self) { parts.append(part) }
            return parts
        }

        func answered() throws -> [HTTPResponsePart] {
            var parts: [HTTPResponsePart] = []
            while let part = try channel.readOutbound(as: HTTPResponsePart.self) { parts.append(part) }
            return parts
        }
    }

    @Test func anUnchangedRefreshIsAnsweredHereAndAnythingElseGoesToTheRouter() async throws {
        let directory = try TemporaryDirectory("shortcut")
        defer { directory.remove() }
        let store = try await Fixture.Store(directory: directory.path)
        try await withTeardown({ await store.database.close() }) {
            let fixture = Fixture(store)
            let conditional: HTTPFields = [.authorization: "Bearer \(fixture.key)", .ifNoneMatch: fixture.etag]

            try fixture.request("/bikes?missing=true", fields: conditional)
            #expect(try fixture.passed().isEmpty)
            let answer = try fixture.answered()
            guard answer.count == 2, case .head(let head) = answer[0], case .end = answer[1] else {
                Issue.record("expected a 304 head and its end, got \(answer)")
                return
            }
            #expect(head.status == .notModified)
            #expect(head.headerFields[.eTag] == fixture.etag && head.headerFields[.server] == "bike-registry")
            #expect(
                head.headerFields[.date].flatMap(HTTPDateTests.parse).map { abs($0.timeIntervalSinceNow) < 5 } == true)

            // The key as ?key= is the same refresh.
            try fixture.request("/bikes?key=\(fixture.key)", fields: [.ifNoneMatch: fixture.etag])
            #expect(try fixture.passed().isEmpty && fixture.answered().count == 2)

            // Each of these is the router's: it answers 200, 400 or 401, or looks the key up.
            let routed: [(String, HTTPFields, HTTPRequest.Method)] = [
                ("/bikes?missing=true", [.authorization: "Bearer \(fixture.key)"], .get),  // no condition: 200
                ("/bikes?missing=true", [.authorization: "Bearer \(fixture.key)", .ifNoneMatch: "\"m999\""], .get),
                ("/bikes?missing=maybe", conditional, .get),
                ("/bikes", [.authorization: "Bearer bks_unknown", .ifNoneMatch: fixture.etag], .get),
                ("/bikes", [.ifNoneMatch: fixture.etag], .get),
                ("/bikes", conditional + [HTTPField(name: .connection, value: "close")], .get),
                ("/bikes", conditional, .head),
                ("/sightings", conditional, .get),
            ]
            for (path, fields, method) in routed {
                try fixture.request(path, fields: fields, method: method)
                let passed = try fixture.passed()
                #expect(passed.count == 2, "\(method) \(path) \(fields) goes to the router")
                #expect(try fixture.answered().isEmpty)
                // The router's answer ends, so the next request may be answered here again.
                try fixture.routerAnswers(.ok)
                _ = try fixture.answered()
            }
            try fixture.request("/bikes", fields: conditional)
            #expect(try fixture.passed().isEmpty && fixture.answered().count == 2)
            _ = try fixture.channel.finish()
        }
    }

    @Test func aRefreshBehindARequestTheRouterOwesAnAnswerWaitsItsTurn() async throws {
        let directory = try TemporaryDirectory("shortcut")
        defer { directory.remove() }
        let store = try await Fixture.Store(directory: directory.path)
        try await withTeardown({ await store.database.close() }) {
            let fixture = Fixture(store)
            let conditional: HTTPFields = [.authorization: "Bearer \(fixture.key)", .ifNoneMatch: fixture.etag]

            try fixture.request("/bikes", fields: [.authorization: "Bearer \(fixture.key)"])  // the router's: 200
            try fixture.request("/bikes", fields: conditional)  // pipelined behind it: the router's too
            #expect(try fixture.passed().count == 4)
            #expect(try fixture.answered().isEmpty)
            // The router answers the first; the second is still owed, so a third waits as well.
            try fixture.routerAnswers(.ok)
            try fixture.request("/bikes", fields: conditional)
            #expect(try fixture.passed().count == 2)
            try fixture.routerAnswers(.notModified)
            try fixture.routerAnswers(.notModified)
            _ = try fixture.answered()
            // Nothing owed: answered here.
            try fixture.request("/bikes", fields: conditional)
            #expect(try fixture.passed().isEmpty && fixture.answered().count == 2)
            _ = try fixture.channel.finish()
        }
    }

    /// Over real HTTP: three requests pipelined in one write, the first the router's (200), the other two refreshes
    /// that memory could answer. Answered here, the second would overtake the first.
    @Test(arguments: StoreKind.allCases) func pipelinedAnswersKeepTheirOrder(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let registry = try await RegistryHarness(store, directory: directory.path)
        try await withTeardown({ await registry.stop() }) {
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let first = try await registry.request(.GET, "/bikes?missing=true", bearer: key)
            let etag = try #require(first.headers.first(name: "ETag"))
            let get = "GET /bikes?missing=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\n"
            let text = try await RawHTTP.exchange(
                port: registry.port,
                get + "\r\n" + get + "If-None-Match: \(etag)\r\n\r\n" + get
                    + "If-None-Match: \(etag)\r\nConnection: close\r\n\r\n")
            let statuses = text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { $0.prefix(3) }
            #expect(statuses == ["200", "304", "304"], "\(text)")
        }
    }

    /// A refresh answered here counts against the station's rate and is noted as its last refresh, as the router's.
    @Test(arguments: StoreKind.allCases) func refreshesAnsweredHereAreLimitedAndNoted(store: StoreKind) async throws {
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
                        headers: [("If-None-Match", etag), ("User-Agent", "beacond/shortcut-test")]
                    ).status)
            }
            #expect(statuses == [304, 304, 429])
            var station: Station?
            for _ in 0..<100 where station?.userAgent != "beacond/shortcut-test" {
                try await Task.sleep(for: .milliseconds(50))
                station = try await registry.database.stations().first
            }
            #expect(station?.userAgent == "beacond/shortcut-test" && station?.lastRefreshAt != nil)
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
}

@Suite(.timeLimit(.minutes(20))) struct HTTPDateTests {
    static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }

    @Test func isRFC9110sFixedDate() {
        #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(1_795_702_364) == "Thu, 26 Nov 2026 14:12:44 GMT")
        for seconds in stride(from: 0, to: 4_000_000_000, by: 86_399 * 37) {
            #expect(Self.parse(HTTPDate.format(seconds)) == Date(timeIntervalSince1970: TimeInterval(seconds)))
        }
    }
}
