public import AsyncHTTPClient
public import BeaconDelivery
import BeaconEngine
public import BeaconWire
import BikeListJSON
import DaemonSupport
import ListChanges
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOSSL
import StationSettings

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The registry's REST API over AsyncHTTPClient (TLS certificates verified, connect and request timeouts,
/// answers capped in size). The API key never appears in what this type logs, returns or throws.
public final class HTTPRegistry: Registry {
    public let configuration: RegistryConfiguration
    private let base: String
    private let client: HTTPClient

    /// `client` is shared and shut down by the caller (see `makeHTTPClient`).
    public init(configuration: RegistryConfiguration, client: HTTPClient) {
        guard case .http(let base) = configuration.location else {
            preconditionFailure("HTTPRegistry needs an http(s) location")
        }
        self.configuration = configuration
        self.base = base
        self.client = client
    }

    /// An HTTP client with beacond's settings: certificates verified against the system's trust store,
    /// the configured connect timeout, no redirects followed (a registry that moves says so in its config), and
    /// answers taken gzip-compressed (`Accept-Encoding: deflate, gzip`), each inflated to at most
    /// `inflationRatio` times what came: a few kilobytes that would inflate to the list's cap are refused as they
    /// come, and the list's cap itself is counted on what they inflate to (`fetchMissing`).
    public static func makeHTTPClient(_ configuration: RegistryConfiguration) -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        tls.minimumTLSVersion = .tlsv12
        return HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: HTTPClient.Configuration(
                tlsConfiguration: tls, redirectConfiguration: .disallow,
                timeout: .init(
                    connect: .nanoseconds(configuration.connectTimeout.saturatingNanoseconds),
                    read: .nanoseconds(configuration.requestTimeout.saturatingNanoseconds)),
                decompression: .enabled(limit: .ratio(inflationRatio))))
    }

    /// The most a compressed answer may inflate: the registry's list compresses about 3 times with rotating beacons
    /// and about 10 times with fixed ones (docs/performance-history.md); gzip can reach about 1,000.
    public static let inflationRatio = 100

    public var displayName: String { RegistryAddress.redacted(base) }

    private func url(_ path: String, query: [(String, String)] = []) -> (full: String, shown: String) {
        var items = query
        var shownItems = query
        if configuration.authentication == .query, let key = configuration.apiKey {
            items.append(("key", key.secret))
            shownItems.append(("key", "REDACTED"))
        }
        func render(_ items: [(String, String)]) -> String {
            items.isEmpty ? "" : "?" + items.map { "\($0.0)=\(percentEncoded($0.1))" }.joined(separator: "&")
        }
        return (base + path + render(items), RegistryAddress.redacted(base + path + render(shownItems)))
    }

    private func request(_ path: String, query: [(String, String)] = []) -> (HTTPClientRequest, shown: String) {
        let (full, shown) = url(path, query: query)
        var request = HTTPClientRequest(url: full)
        request.headers.add(name: "User-Agent", value: "beacond/\(ReleaseVersion.current)")
        if configuration.authentication == .bearer, let key = configuration.apiKey {
            request.headers.add(name: "Authorization", value: "Bearer \(key.secret)")
        }
        return (request, shown)
    }

    public func fetchMissing(validators: CacheValidators?, regions: [BeaconRegion], recording: ListRecording?)
        async throws(RegistryError) -> RegistryFetch
    {
        var (request, shown) = request("/bikes", query: [("missing", "true")])
        request.headers.add(name: "Accept", value: "application/json")
        if let etag = validators?.etag { request.headers.add(name: "If-None-Match", value: etag) }
        if let lastModified = validators?.lastModified {
            request.headers.add(name: "If-Modified-Since", value: lastModified)
        }
        // Only the changes since the list the cache holds whole, if the registry holds it too (RFC 3229): 226 then.
        if let held = recording?.changesSince, held == validators?.etag {
            request.headers.add(name: "A-IM", value: Self.changesManipulation)
        }
        // The answer is read as it arrives, piece by piece, into the set matching needs: neither the text nor a
        // decoded copy of it is ever held whole (docs/performance-history.md, "The bike list", has what holding it whole cost).
        let outcome: Answer
        do {
            outcome = try await withDeadline(configuration.listTimeout) {
                [client, timeout, request, maximum = configuration.maximumResponseBytes] in
                let response = try await client.execute(request, timeout: timeout)
                let validators = CacheValidators(
                    etag: response.headers.first(name: "ETag"),
                    lastModified: response.headers.first(name: "Last-Modified"))
                if response.status.code == 226, response.headers.first(name: "IM") == Self.changesManipulation {
                    return try await Self.changes(response, validators: validators, maximum: maximum)
                }
                guard response.status == .ok || response.status.code == 203 else {
                    return Answer.status(Int(response.status.code), response.status.reasonPhrase)
                }
                return try await Self.list(
                    response, validators: validators, regions: regions, recording: recording, maximum: maximum)
            }
        } catch {
            throw RegistryError(.transport, "GET \(shown): \(Self.describe(error))")
        }
        switch outcome {
        case .status(304, _):
            return .notModified
        case .status(let code, let phrase):
            throw RegistryError(.status(code), "GET \(shown): HTTP \(code) \(phrase)")
        case .tooLarge:
            throw RegistryError(
                .badAnswer, "GET \(shown): answer larger than \(configuration.maximumResponseBytes) bytes")
        case .notAList(let error):
            throw RegistryError(.badAnswer, "GET \(shown): \(error)")
        case .notChanges(let reason):
            throw RegistryError(.badAnswer, "GET \(shown): changes that cannot be read: \(reason)")
        case .changesTooLarge:
            // Most of the list changed: the list itself, read as it comes, rather than its changes decoded whole.
            var whole = recording
            whole?.changesSince = nil
            return try await fetchMissing(validators: validators, regions: regions, recording: whole)
        case .set(let set, let validators, let recorded):
            return .list(set, validators: validators, recorded: recorded)
        case .changes(let changes, let validators):
            return .changes(changes, validators: validators)
        }
    }

    /// RFC 3229's instance manipulation the registry does: the list's changes (docs/registry-api.yaml, ListChanges).
    static let changesManipulation = "bike-changes"

    /// A whole list, into the set and, when recording, into the cache's next version: a list the cache cannot take
    /// (a full disk) is still the set's, recorded nowhere.
    private static func list(
        _ response: HTTPClientResponse, validators: CacheValidators, regions: [BeaconRegion],
        recording: ListRecording?, maximum: Int
    ) async throws -> Answer {
        var reader = BikeListReader(shape: .answer)
        var builder = MissingBikeSet.Builder(regions: regions)
        var file = recording.flatMap { recording in
            try? recording.cache.newList(
                validators: validators, fetchedAt: recording.fetchedAt, source: recording.source)
        }
        func take(_ item: BikeListReader.Item) {
            builder.add(item)
            // The list as the set would have it: a bike listed as not missing is no bike of the list.
            guard let recorded = file, case .entry(let entry) = item, entry.missing else { return }
            do throws(RegistryError) { try recorded.add(ListedEntry(entry)) } catch {
                recorded.abandon()
                file = nil
            }
        }
        var received = 0
        do {
            for try await piece in response.body {
                received += piece.readableBytes
                guard received <= maximum else {
                    file?.abandon()
                    return Answer.tooLarge
                }
                try piece.withUnsafeReadableBytes { bytes throws(BikeListError) in try reader.feed(bytes, take) }
            }
            try reader.finish(take)
        } catch let error as BikeListError {
            file?.abandon()
            return Answer.notAList(error)
        } catch {
            file?.abandon()
            throw error
        }
        if let recorded = file, (try? recorded.finish()) == nil {
            recorded.abandon()
            file = nil
        }
        return Answer.set(builder.build(), validators, file)
    }

    /// The most the changes since a list may be: they are decoded whole, unlike a list, and a window's move of 10,000
    /// rotating bikes is about 120 KB. Larger changes (most of the list replaced) are set aside for the whole list.
    static let changesLimit = 2 << 20

    /// The changes since the list held (226), whole: small beside the list, and bounded (`changesLimit`).
    private static func changes(_ response: HTTPClientResponse, validators: CacheValidators, maximum: Int)
        async throws -> Answer
    {
        let body: ByteBuffer
        do {
            body = try await response.body.collect(upTo: min(maximum, changesLimit))
        } catch is NIOTooManyBytesError {
            return Answer.changesTooLarge
        }
        do {
            return Answer.changes(
                try JSONDecoder().decode(ListChanges.self, from: Data(body.readableBytesView)), validators)
        } catch {
            return Answer.notChanges("\(error)".prefix(200).description)
        }
    }

    public var id: SinkID { .registry }

    /// `POST /sightings` with the sighting's stored JSON, so every retry sends the same bytes.
    public func deliver(_ sighting: OutgoingSighting) async -> DeliveryOutcome {
        var (request, shown) = request("/sightings")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Idempotency-Key", value: sighting.sightingId)
        request.body = .bytes(ByteBuffer(string: sighting.json))
        let response: HTTPClientResponse
        do {
            response = try await withDeadline(configuration.requestTimeout) { [client, timeout, request] in
                try await client.execute(request, timeout: timeout)
            }
        } catch {
            return .retry(after: nil, reason: "POST \(shown): \(Self.describe(error))")
        }
        // Read (a little of) the body so the connection can be reused; its content does not matter. The status has
        // answered already, so a body that does not come is given up on after a while, never retried: inside the
        // request's deadline, a trickled body would turn a 2xx into a retry of a sighting the registry has.
        _ = try? await withDeadline(configuration.answerBodyWait) {
            try await response.body.collect(upTo: 64 * 1024)
        }
        return PostAnswer.outcome(
            status: Int(response.status.code), reasonPhrase: response.status.reasonPhrase,
            retryAfter: response.headers.first(name: "Retry-After").flatMap(RetryAfter.parse),
            location: response.headers.first(name: "Location"), request: shown)
    }

    /// How a `GET /bikes` ended, inside the deadline.
    private enum Answer: Sendable {
        case status(Int, String)
        case tooLarge
        case notAList(BikeListError)
        case notChanges(String)
        case changesTooLarge
        case set(MissingBikeSet, CacheValidators, ListFile?)
        case changes(ListChanges, CacheValidators)
    }

    private var timeout: TimeAmount { .nanoseconds(configuration.requestTimeout.saturatingNanoseconds) }

    /// An error in a few words, without URLs (which could carry the key).
    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as NIOHTTPDecompression.DecompressionError:
            if case .limit = error {
                return "refused: its gzip inflates past \(inflationRatio) times its size (a compression bomb?)"
            }
            return "refused: its gzip does not inflate (\(error))"
        case let error as NIOHTTPDecompression.ExtraDecompressionError:
            return "refused: its gzip is \(error == .truncatedData ? "truncated" : "damaged") (\(error))"
        case let error as DeadlineExceeded:
            return "timed out: no whole answer within \(error.timeoutText)"
        case let error as HTTPClientError:
            switch error {
            case .connectTimeout: return "connection timed out"
            case .deadlineExceeded, .readTimeout: return "timed out"
            case .remoteConnectionClosed: return "connection closed by the registry"
            default: return "HTTP client error: \(error.shortDescription)"
            }
        case is ChannelError: return "connection failed"
        default:
            let text = String(describing: error)
            if text.contains("connectTimeout") { return "connection timed out" }
            if text.contains("ECONNREFUSED") || text.contains("Connection refused") { return "connection refused" }
            if text.contains("ECONNRESET") || text.contains("Connection reset") { return "connection reset" }
            return "connection failed (\(text.prefix(120)))"
        }
    }
}

extension HTTPClientError {
    /// The case name only: some HTTPClientError descriptions can carry request details.
    var shortDescription: String {
        let text = String(describing: self)
        return String(text.prefix { $0 != "(" })
    }
}

/// Query values are percent-encoded outside RFC 3986's unreserved set.
func percentEncoded(_ text: String) -> String {
    var result = ""
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            result.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            let hex = String(byte, radix: 16, uppercase: true)
            result += "%" + (hex.count == 1 ? "0" + hex : hex)
        }
    }
    return result
}
