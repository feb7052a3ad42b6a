import AsyncHTTPClient
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import RegistryTestServer

@testable import BikeRegistryServer

/// A bike-registry on loopback in this process, on a fresh database of either kind, with a small HTTP client for the
/// tests.
final class RegistryHarness: Sendable {
    let testDatabase: TestDatabase
    let database: any RegistryStore
    /// Where it listens on loopback; 0 when it is asked in process (`Transport.inProcess`).
    let port: Int
    /// What the server reports as it happens, to wait on.
    let events = RegistryEvents()
    private let served: Served
    /// Where its metrics' page is served, when it was made with `metrics: true`.
    let metricsPort: Int?

    /// How the tests reach it: over a loopback connection, as stations and owners do, or straight to its router in
    /// this process, for a suite whose subject is the registry's rules and not its connections.
    enum Transport { case loopback, inProcess }

    private enum Served {
        case loopback(ServedApplication)
        case inProcess(InProcessApplication)
    }

    private let ownsDatabase: Bool

    /// A server on a new database, or on `sharing` (another harness's), as two servers of one PostgreSQL database are.
    init(
        _ kind: StoreKind, directory: String, sharing: TestDatabase? = nil, allowPrivateWebhooks: Bool = true,
        registrationsPerMinute: Int = 20, requestsPerMinute: Int = 600,
        refreshWriteInterval: Duration = .milliseconds(50), postgresDeadline: Duration = .seconds(30),
        transport: Transport = .loopback, metrics: Bool = false,
        configure: (inout RegistryServerConfiguration) -> Void = { _ in }
    ) async throws {
        if let sharing {
            testDatabase = sharing
        } else {
            testDatabase = try await TestDatabase.make(kind, in: directory)
        }
        ownsDatabase = sharing == nil
        // The metrics as `serve --metrics-listen` makes them: the store's observer too, the page on a loopback port.
        let counted = metrics ? RegistryMetrics(version: "test") : nil
        let database = try await testDatabase.open(postgresDeadline: postgresDeadline, observer: counted)
        self.database = database
        var logger = Logger(label: "bike-registry-test")
        logger.logLevel = .warning
        var configuration = RegistryServerConfiguration(
            host: "127.0.0.1", port: 0, allowPrivateWebhooks: allowPrivateWebhooks,
            registrationsPerMinute: registrationsPerMinute, requestsPerMinute: requestsPerMinute)
        configuration.retryBase = .milliseconds(200)
        configuration.refreshWriteInterval = refreshWriteInterval
        // The tests of everything but claim codes register by the beacon (ClaimCodeTests set claim-code).
        configuration.registration = .open
        configuration.events = events
        let listening = AsyncStream.makeStream(of: Int.self)
        if let counted {
            configuration.metrics = counted
            configuration.metricsListen = MetricsListen(host: "127.0.0.1", port: 0, idleTimeout: .seconds(2)) { port in
                listening.continuation.yield(port)
                listening.continuation.finish()
            }
        }
        configure(&configuration)
        // BIKE_REGISTRY_TEST_TRANSPORT=loopback serves every suite over loopback: to measure what in process saves,
        // or to see a suite's requests in a capture.
        let loopbackOnly = ProcessInfo.processInfo.environment["BIKE_REGISTRY_TEST_TRANSPORT"] == "loopback"
        switch loopbackOnly ? .loopback : transport {
        case .loopback:
            let served = await ServedApplication { listening in
                RegistryApplication.make(
                    database: database, configuration: configuration, logger: logger,
                    onServerRunning: { listening($0) })
            }
            self.served = .loopback(served)
            port = served.port
        case .inProcess:
            served = .inProcess(
                try await InProcessApplication(
                    RegistryApplication.make(database: database, configuration: configuration, logger: logger)))
            port = 0
        }
        var metricsPort: Int?
        if counted != nil {
            for await port in listening.stream { metricsPort = port }
        }
        self.metricsPort = metricsPort
    }

    /// The metrics' page as a scrape gets it. Asked again once if the connection the client kept from the last scrape
    /// was closed under it: the listener closes idle ones after 2 s here, and a scrape after about that long can
    /// meet the close, as a scraper such as Prometheus does and retries.
    func metricsPage() async throws -> String {
        guard let metricsPort else { throw HarnessError("this registry was made without metrics") }
        let client = RegistryClient(baseURL: "http://127.0.0.1:\(metricsPort)")
        let answer: RegistryClient.Answer
        do {
            answer = try await client.request(.GET, "/metrics")
        } catch let error as HTTPClientError where error == .remoteConnectionClosed {
            answer = try await client.request(.GET, "/metrics")
        }
        guard answer.status == 200 else { throw HarnessError("/metrics answered \(answer.status): \(answer.body)") }
        return answer.body
    }

    /// The counts once nothing is owed (or after `seconds`): see `TestDatabase.settled`.
    func settled(seconds: Double = 30) async throws -> NotificationCounts {
        try await testDatabase.settled(seconds: seconds)
    }

    /// Stops serving and delivering, and returns once every delivery in flight has ended: after it nothing of this
    /// server's can reach a receiver, so a test of absence reads after it. `stop()` closes the database later.
    func stopServing() async {
        switch served {
        case .loopback(let served): await served.stop()
        case .inProcess(let served): await served.stop()
        }
    }

    /// Stops the server gracefully (`ServedApplication` says why), or by cancelling it: what a test of cancellation
    /// asks for, once its requests are answered.
    func stop(cancelling: Bool = false) async {
        switch served {
        case .loopback(let served): if cancelling { await served.cancel() } else { await served.stop() }
        case .inProcess(let served): await served.stop()
        }
        await database.close()
        if ownsDatabase { await testDatabase.drop() }
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }
    var client: RegistryClient {
        if case .inProcess(let served) = served { return RegistryClient(baseURL: "", inProcess: served) }
        return RegistryClient(baseURL: baseURL)
    }

    func request(
        _ method: HTTPMethod, _ path: String, bearer: String? = nil, headers: [(String, String)] = [],
        body: String? = nil
    ) async throws -> RegistryClient.Answer {
        try await client.request(method, path, bearer: bearer, headers: headers, body: body)
    }

    func register(minor: Int) async throws -> (id: String, token: String, answer: RegistryClient.Answer) {
        try await client.register(minor: minor)
    }

    func registerMissing(minor: Int, webhook: String) async throws -> (id: String, token: String, secret: String) {
        try await client.registerMissing(minor: minor, webhook: webhook)
    }

    static func sighting(
        bikeId: String, id: String = UUID().uuidString.lowercased(), kind: String = "enter",
        firstSeen: String = "2024-06-01T08:00:30.325272Z", lastSeen: String? = nil, minor: Int = 101
    ) -> (id: String, body: String) {
        RegistryClient.sighting(
            bikeId: bikeId, id: id, kind: kind, firstSeen: firstSeen, lastSeen: lastSeen, minor: minor)
    }

    func post(_ sighting: (id: String, body: String), key: String) async throws -> RegistryClient.Answer {
        try await client.post(sighting, key: key)
    }
}

/// Requests to a bike-registry, in this process or another.
struct RegistryClient: Sendable {
    let baseURL: String
    /// The application's router in this process, when it is asked there rather than over a connection.
    var inProcess: InProcessApplication?

    struct Answer {
        var status: Int
        var headers: HTTPHeaders
        var body: String
        var json: Any? { try? JSONSerialization.jsonObject(with: Data(body.utf8)) }
        var object: [String: Any] { json as? [String: Any] ?? [:] }
    }

    func request(
        _ method: HTTPMethod, _ path: String, bearer: String? = nil, headers: [(String, String)] = [],
        body: String? = nil
    ) async throws -> Answer {
        if let inProcess {
            return try await Self.request(inProcess, method, path, bearer: bearer, headers: headers, body: body)
        }
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        // 30 s: under the whole suite on two cores a request to this in-process server waited past 10 s (CI's plain
        // step of 6ed98c1, several suites at the same moment); a server that does not answer still fails the test.
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 4 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    /// The same request, straight to the router.
    private static func request(
        _ client: InProcessApplication, _ method: HTTPMethod, _ path: String, bearer: String?,
        headers: [(String, String)], body: String?
    ) async throws -> Answer {
        var headers = headers
        if let bearer { headers.append(("Authorization", "Bearer \(bearer)")) }
        if body != nil { headers.append(("Content-Type", "application/json")) }
        return try await send(client, method, path, headers: headers, body: body)
    }

    /// A request as given, straight to the router (no redirect is followed: the router answers once).
    static func send(
        _ client: InProcessApplication, _ method: HTTPMethod, _ path: String, headers: [(String, String)],
        body: String?
    ) async throws -> Answer {
        var fields = HTTPFields()
        for (name, value) in headers { HTTPField.Name(name).map { fields.append(HTTPField(name: $0, value: value)) } }
        let response = try await client.request(
            HTTPRequest.Method(rawValue: method.rawValue) ?? .get, path, headers: fields,
            body: body.map { ByteBuffer(string: $0) })
        var answerHeaders = HTTPHeaders()
        for field in response.head.headerFields { answerHeaders.add(name: field.name.rawName, value: field.value) }
        return Answer(
            status: Int(response.head.status.code), headers: answerHeaders, body: String(buffer: response.body))
    }

    /// Registers a bike and returns its id and owner token (and the answer, for the secret).
    func register(
        minor: Int, make: String = "Triumph", uuid: String = "21EECF71-D5C7-4A00-9B90-27C94B5146EA", major: Int = 1
    ) async throws -> (id: String, token: String, answer: Answer) {
        let answer = try await request(
            .POST, "/owner/bikes",
            body:
                #"{"uuid":"\#(uuid)","major":\#(major),"minor":\#(minor),"make":"\#(make)","model":"Bonneville","colour":"green"}"#
        )
        guard answer.status == 201, let id = answer.object["id"] as? String,
            let token = answer.object["ownerToken"] as? String
        else {
            throw HarnessError("registration answered \(answer.status): \(answer.body)")
        }
        return (id, token, answer)
    }

    /// Registers a bike, reports it missing and sends its notifications to `webhook`: its id, token and secret.
    func registerMissing(minor: Int, webhook: String) async throws -> (id: String, token: String, secret: String) {
        let bike = try await register(minor: minor)
        let patch = #"{"missing":true,"notify":{"webhook":"\#(webhook)"}}"#
        let changed = try await request(.PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: patch)
        guard changed.status == 200 else {
            throw HarnessError("reporting \(bike.id) missing answered \(changed.status): \(changed.body)")
        }
        return (bike.id, bike.token, bike.answer.object["webhookSecret"] as? String ?? "")
    }

    static func sighting(
        bikeId: String, id: String = UUID().uuidString.lowercased(), kind: String = "enter",
        firstSeen: String = "2024-06-01T08:00:30.325272Z", lastSeen: String? = nil, minor: Int = 101
    ) -> (id: String, body: String) {
        let body = """
            {"bikeId":"\(bikeId)","date":"\(lastSeen ?? firstSeen)","latitude":51.5,"longitude":-0.12,"sightingId":"\(id)","kind":"\(kind)",\
            "stationId":"test","uuid":"21EECF71-D5C7-4A00-9B90-27C94B5146EA","major":1,"minor":\(minor),"firstSeen":"\(firstSeen)",\
            "lastSeen":"\(lastSeen ?? firstSeen)","count":3,"rssi":-61.5,"proximity":"near"}
            """
        return (id, body)
    }

    func post(_ sighting: (id: String, body: String), key: String) async throws -> Answer {
        try await request(
            .POST, "/sightings", bearer: key, headers: [("Idempotency-Key", sighting.id)], body: sighting.body)
    }

    /// Waits until a revoked key is refused: a server looks for revocations every 250 ms (RegistrySnapshot).
    func waitUntilRefused(_ key: String) async throws {
        let start = ContinuousClock.now
        while try await request(.GET, "/bikes", bearer: key).status != 401 {
            guard ContinuousClock.now - start < .seconds(2) else {
                throw HarnessError("the revoked key was still taken after 2 s")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A webhook and ntfy endpoint on loopback that keeps every request, answering with queued statuses first.
final class NotificationReceiver: Sendable {
    struct Received: Sendable {
        var path: String
        /// By lower-case name.
        var headers: [String: String]
        var body: String
    }

    private let state = NIOLockedValueBox((received: [Received](), answers: [Int](), location: String?.none))
    private(set) nonisolated(unsafe) var port = 0
    private let served: NIOLockedValueBox<ServedApplication?> = NIOLockedValueBox(nil)

    func start() async throws {
        let router = Router()
        // Any method: a redirect followed by a client may come back as a GET (303).
        let receive: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let (status, location) = self.state.withLockedValue { state -> (Int, String?) in
                state.received.append(Received(path: request.uri.path, headers: headers, body: String(buffer: body)))
                return (state.answers.isEmpty ? 200 : state.answers.removeFirst(), state.location)
            }
            var answer: HTTPFields = status == 429 ? [.retryAfter: "1"] : [:]
            if (300..<400).contains(status), let location { answer[.location] = location }
            return Response(status: .init(code: status), headers: answer)
        }
        // For a script that must wait for a message: how many came whose body holds `type` (not itself recorded).
        router.get("received-count") { request, _ in
            let type = request.uri.queryParameters.get("type") ?? ""
            return String(self.received.filter { $0.body.contains(#""type":"\#(type)""#) }.count)
        }
        router.post("**", use: receive)
        router.get("**", use: receive)
        router.put("**", use: receive)
        let served = await ServedApplication(loopback: router)
        self.served.withLockedValue { $0 = served }
        port = served.port
    }

    func stop() async {
        await served.withLockedValue { $0 }?.stop()
    }

    func answerNext(_ statuses: [Int]) { state.withLockedValue { $0.answers += statuses } }
    /// Every answer from now on: `status`, with `Location: location` (a redirect).
    func redirect(_ status: Int, to location: String) {
        state.withLockedValue {
            $0.answers = Array(repeating: status, count: 1000)
            $0.location = location
        }
    }
    var received: [Received] { state.withLockedValue { $0.received } }
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Waits until `count` requests have come, or `seconds` pass. A minute by default: the wait ends at the count, so
    /// a long bound costs a passing test nothing, and with the whole suite at once on CI's two cores one delivery
    /// after another to one endpoint once reached ten of sixteen in 15 s.
    func waitFor(_ count: Int, seconds: Double = 60) async -> [Received] {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while received.count < count && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return received
    }
}
