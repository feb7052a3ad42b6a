import CompressNIO
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore

/// A registry on loopback implementing docs/registry-api.yaml, for tests: `GET /bikes` (API key checked,
/// ETag and Last-Modified honoured with 304) and `POST /sightings` (required fields and `Idempotency-Key`
/// checked, repeats of a key acknowledged but not recorded twice). Faults queued with `inject` answer the next
/// requests instead: errors, slowness past a client's timeout, a connection dropped mid-answer, garbage,
/// oversized JSON, 429 with `Retry-After`.
public final class RegistryServer: Sendable {
    public enum Fault: Sendable, Equatable {
        case status(Int)
        case retryAfter(seconds: Int)
        case slow(Duration)
        /// Headers and a few bytes of a longer body, then the connection is closed.
        case dropConnection
        case garbage
        case oversized(bytes: Int)
        /// A 200 whose headers come at once and whose body then comes one byte per `every`, for `bytes` bytes:
        /// a proxy or registry that keeps every read's timeout happy and never finishes.
        case trickle(every: Duration, bytes: Int)
        /// No answer at all until `release()` or `stop()`: only the client's deadline ends the request.
        case unanswered
        /// A gzip-compressed 200 of a few kilobytes that inflates to `inflated` bytes (a list's `[` and spaces).
        case gzipBomb(inflated: Int)
        /// The list gzip-compressed, its last bytes cut off (the length says so): a stream that ends early.
        case truncatedGzip
    }

    public struct Received: Sendable, Equatable {
        public var idempotencyKey: String?
        public var body: [String: String]
        /// The body as sent, for tests that look for what must never be in it.
        public var raw: String
    }

    struct State {
        var bikesJSON = "[]"
        var version = 1
        var apiKey: String?
        /// Added to every answer.
        var latency: Duration = .zero
        /// Fail this fraction of requests with a 500 (after recording nothing).
        var failureRate = 0.0
        /// Only `POST /sightings` fails at that rate; the bike list is always served.
        var failPostsOnly = false
        var faults: [Fault] = []
        var listEncodings: [String] = []
        var changes: [String: String] = [:]
        var instanceManipulations: [String?] = []
        /// Every POST answered with this status (after the key check and recording nothing) until cleared.
        var everyPost: Int?
        /// Sighting ids answered this status once each (a registry that finds one sighting malformed).
        var refuse: [String: Int] = [:]
        /// Every POST that passed validation, repeats included, in arrival order.
        var posts: [Received] = []
        /// Distinct sightings recorded (by Idempotency-Key).
        var sightings: [String: [String: String]] = [:]
        var requests: [(method: String, path: String, authorization: String?, query: String?)] = []
        /// When each of `requests` arrived.
        var arrivals: [ContinuousClock.Instant] = []
        /// `hold()` is in force: requests wait in `held` for `release()`.
        var holding = false
        var held: [CheckedContinuation<Void, Never>] = []
        /// `stop()` has begun: no request waits any more, however it is faulted. One that reached its handler only
        /// after `stop()` released the held ones would otherwise wait for ever (its wait ignores cancellation), and
        /// with it the server's shutdown and the test's teardown (CI's plain step of 541a687: RefresherTests'
        /// unanswered request, handled late on a loaded machine).
        var stopping = false
    }

    private let state = NIOLockedValueBox(State())
    public private(set) nonisolated(unsafe) var port = 0
    private let served: NIOLockedValueBox<ServedApplication?> = NIOLockedValueBox(nil)

    public init() {}

    /// Starts listening on 127.0.0.1 and a free port; returns once it accepts connections.
    public func start() async throws {
        let router = Router()
        router.get("bikes") { request, _ in await self.bikes(request) }
        router.post("sightings") { request, _ in try await self.sighting(request) }
        let served = await ServedApplication(loopback: router)
        self.served.withLockedValue { $0 = served }
        port = served.port
    }

    public func stop() async {
        state.withLockedValue { $0.stopping = true }
        release()  // a held request would hold the server's shutdown, which waits for every answer
        await served.withLockedValue { $0 }?.stop()
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    // MARK: Test controls

    public func setBikes(_ json: String) {
        state.withLockedValue {
            $0.bikesJSON = json
            $0.version += 1
        }
    }

    /// The current list's ETag (`"vN"`).
    public var etag: String { "\"v\(state.withLockedValue { $0.version })\"" }

    /// What a station holding the list `etag` names is sent when it asks for the changes since (`A-IM:
    /// bike-changes`): `body`, answered `226 IM Used` under the current list's ETag, however right or wrong it is.
    public func setChanges(from etag: String, body: String) { state.withLockedValue { $0.changes[etag] = body } }

    /// Every `A-IM` the list's requests carried, in order (nil for none).
    public var instanceManipulations: [String?] { state.withLockedValue { $0.instanceManipulations } }

    public func requireKey(_ key: String?) { state.withLockedValue { $0.apiKey = key } }

    public func setLatency(_ latency: Duration) { state.withLockedValue { $0.latency = latency } }

    /// Requests that arrive from now on are noted and then wait, unanswered, until `release()`: a request under way
    /// for exactly as long as a test needs one, where a latency would guess at it.
    public func hold() { state.withLockedValue { $0.holding = true } }

    /// Lets every held request go on to its answer, and ends the hold.
    public func release() {
        let waiting = state.withLockedValue { state in
            state.holding = false
            defer { state.held = [] }
            return state.held
        }
        for request in waiting { request.resume() }
    }

    /// Answers this fraction of requests (chosen at random) with a 500, on top of injected faults.
    public func setFailureRate(_ rate: Double, postsOnly: Bool = false) {
        state.withLockedValue {
            $0.failureRate = rate
            $0.failPostsOnly = postsOnly
        }
    }

    /// Answers every `POST /sightings` with `status` (3xx with a Location to https) until called with nil.
    public func answerEveryPost(with status: Int?) { state.withLockedValue { $0.everyPost = status } }

    /// Answers the POST of this sighting id with `status`, every time it comes.
    public func refuse(sightingID: String, with status: Int?) {
        state.withLockedValue { $0.refuse[sightingID] = status }
    }

    /// The next requests (of any kind) get these faults, in order.
    public func inject(_ faults: [Fault]) { state.withLockedValue { $0.faults += faults } }

    public var posts: [Received] { state.withLockedValue { $0.posts } }
    public var sightings: [String: [String: String]] { state.withLockedValue { $0.sightings } }
    public var requestCount: Int { state.withLockedValue { $0.requests.count } }
    public var requests: [(method: String, path: String, authorization: String?, query: String?)] {
        state.withLockedValue { $0.requests }
    }

    /// When each POST /sightings arrived, in order: the gaps a client's backoff left between its attempts.
    public var sightingArrivals: [ContinuousClock.Instant] {
        state.withLockedValue { state in
            zip(state.requests, state.arrivals).filter { $0.0.path == "/sightings" }.map(\.1)
        }
    }

    // MARK: Handlers

    private func nextFault(_ request: Request) async -> Fault? {
        let (fault, latency) = state.withLockedValue { state -> (Fault?, Duration) in
            state.requests.append(
                (request.method.rawValue, request.uri.path, request.headers[.authorization], request.uri.query))
            state.arrivals.append(.now)
            if !state.faults.isEmpty { return (state.faults.removeFirst(), state.latency) }
            let exempt = state.failPostsOnly && request.method != .post
            return (!exempt && Double.random(in: 0..<1) < state.failureRate ? .status(500) : nil, state.latency)
        }
        await withCheckedContinuation { request in
            let waits = state.withLockedValue { state in
                let waits = !state.stopping && (state.holding || fault == .unanswered)
                if waits { state.held.append(request) }
                return waits
            }
            if !waits { request.resume() }
        }
        if latency > .zero { try? await Task.sleep(for: latency) }
        return fault
    }

    private func authorized(_ request: Request) -> Bool {
        guard let key = state.withLockedValue({ $0.apiKey }) else { return true }
        return request.uri.queryParameters["key"].map(String.init) == key
            || request.headers[.authorization] == "Bearer \(key)"
    }

    private func faultResponse(_ fault: Fault) async -> Response {
        switch fault {
        case .status(let code):
            return Response(status: .init(code: code))
        case .retryAfter(let seconds):
            return Response(status: .tooManyRequests, headers: [.retryAfter: String(seconds)])
        case .slow(let delay):
            try? await Task.sleep(for: delay)
            return Response(status: .serviceUnavailable)
        case .unanswered:
            return Response(status: .serviceUnavailable)  // released: the client gave up long ago
        case .dropConnection:
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(contentLength: 10_000) { writer in
                    try await writer.write(ByteBuffer(string: "[{\"id\":"))
                    throw CancellationError()
                })
        case .garbage:
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: "<html>Bad Gateway</html>")))
        case .trickle(let every, let bytes):
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(contentLength: bytes) { writer in
                    for _ in 0..<bytes {
                        try await writer.write(ByteBuffer(string: " "))
                        try await Task.sleep(for: every)
                    }
                })
        case .gzipBomb(let inflated):
            var text = ByteBuffer(string: "[" + String(repeating: " ", count: inflated))
            return Response(
                status: .ok, headers: [.contentType: "application/json", .contentEncoding: "gzip"],
                body: .init(byteBuffer: (try? text.compress(with: .gzip())) ?? ByteBuffer()))
        case .truncatedGzip:
            var list = ByteBuffer(string: state.withLockedValue { $0.bikesJSON })
            var gzipped = (try? list.compress(with: .gzip())) ?? ByteBuffer()
            gzipped.moveWriterIndex(to: gzipped.writerIndex - min(12, gzipped.readableBytes / 2))
            return Response(
                status: .ok, headers: [.contentType: "application/json", .contentEncoding: "gzip"],
                body: .init(byteBuffer: gzipped))
        case .oversized(let bytes):
            let element = #"{"id":"x","beaconMinor":1,"missing":false},"#
            let json = "[" + String(repeating: element, count: bytes / element.utf8.count + 1) + "{}]"
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: json)))
        }
    }

    private func bikes(_ request: Request) async -> Response {
        if let fault = await nextFault(request) { return await faultResponse(fault) }
        guard authorized(request) else { return Response(status: .unauthorized) }
        let asked = request.headers[HTTPField.Name("A-IM")!]
        let held = request.headers[.ifNoneMatch]
        let (json, version, changes) = state.withLockedValue { state in
            state.instanceManipulations.append(asked)
            return (state.bikesJSON, state.version, held.flatMap { state.changes[$0] })
        }
        let etag = "\"v\(version)\""
        let lastModified = "Sat, 01 Jun 2024 08:00:\(String(format2(version % 60))) GMT"
        if held == etag {
            return Response(status: .notModified, headers: [.eTag: etag])
        }
        if asked == "bike-changes", let changes {
            return Response(
                status: .init(code: 226, reasonPhrase: "IM Used"),
                headers: [.contentType: "application/json", .eTag: etag, HTTPField.Name("IM")!: "bike-changes"],
                body: .init(byteBuffer: ByteBuffer(string: changes)))
        }
        var headers: HTTPFields = [.contentType: "application/json", .eTag: etag, .lastModified: lastModified]
        var body = ByteBuffer(string: json)
        // gzip when the client takes it, as bike-registry does.
        if request.headers[.acceptEncoding]?.contains("gzip") == true, let gzipped = try? body.compress(with: .gzip()) {
            headers[.contentEncoding] = "gzip"
            body = gzipped
        }
        state.withLockedValue { $0.listEncodings.append(headers[.contentEncoding] ?? "identity") }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }

    /// How each list answered 200 was encoded (`gzip` or `identity`), in order.
    public var listEncodings: [String] { state.withLockedValue { $0.listEncodings } }

    private func sighting(_ request: Request) async throws -> Response {
        let fault = await nextFault(request)
        switch fault {
        case .garbage, .dropConnection, .oversized, .trickle:
            break  // a 2xx whose body goes wrong: the registry took the sighting, so record it below
        case .some(let fault):
            return await faultResponse(fault)
        case nil:
            break
        }
        guard authorized(request) else { return Response(status: .unauthorized) }
        if let status = state.withLockedValue({ $0.everyPost }) {
            let location = "https://registry.example/api/sightings?key=\(state.withLockedValue { $0.apiKey ?? "" })"
            return Response(
                status: .init(code: status), headers: (300..<400).contains(status) ? [.location: location] : [:])
        }
        let body = try await request.body.collect(upTo: 1 << 20)
        let raw = String(buffer: body)
        guard let fields = FlatJSON.object(raw) else { return Response(status: .badRequest) }
        for required in ["bikeId", "date", "latitude", "longitude", "sightingId", "kind", "stationId"]
        where fields[required] == nil {
            return Response(status: .unprocessableContent)
        }
        let key = request.headers[HTTPField.Name("Idempotency-Key")!]
        if let key, let status = state.withLockedValue({ $0.refuse[key] }) {
            return Response(status: .init(code: status))
        }
        state.withLockedValue { state in
            state.posts.append(Received(idempotencyKey: key, body: fields, raw: raw))
            if let key, state.sightings[key] == nil { state.sightings[key] = fields }
        }
        if let fault { return await faultResponse(fault) }
        return Response(status: .created)
    }
}

func format2(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
