import BikeRegistryCore
import BikeRegistryStore
import Foundation
import Hummingbird
import NIOCore

/// Request bodies read with a size cap and decoded with a reason a client can act on; answers encoded as JSON.
enum JSONBody {
    /// Larger bodies are answered 413 before they are read to the end (a field too long inside the cap gets its own 400).
    static let limit = 64 * 1024

    static func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        var request = request
        return try parse(T.self, try await request.collectBody(upTo: limit))
    }

    /// As `decode`, where an empty body (or only white space) is allowed, and is nil.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, emptyAllowed: Bool) async throws -> T? {
        var request = request
        let buffer = try await request.collectBody(upTo: limit)
        if emptyAllowed && buffer.readableBytesView.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
            return nil
        }
        return try parse(T.self, buffer)
    }

    private static func parse<T: Decodable>(_ type: T.Type, _ buffer: ByteBuffer) throws -> T {
        do {
            return try decoder.decode(T.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw APIError.badRequest(reason(error))
        } catch let error as FieldError {
            throw APIError.badRequest(error.reason)
        } catch {
            throw APIError.badRequest("the body is not JSON")
        }
    }

    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws
        -> Response
    {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(
            status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }

    private static func reason(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? "the body" : path
        }
        switch error {
        case .keyNotFound(let key, _): return "\(key.stringValue) is required"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "\(path(context)) has the wrong type"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "the body is not JSON" : "\(path(context)): \(context.debugDescription)"
        @unknown default: return "the body does not match the schema"
        }
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISOTime.format(date))
        }
        return encoder
    }()

    private static let decoder = JSONDecoder()
}

/// A field that decoded but is not acceptable, with the reason.
struct FieldError: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }

    /// Refuses a control character (U+0000 to U+001F, U+007F) in text the registry keeps and shows: none belongs in a
    /// bike's make or an id, and PostgreSQL cannot store U+0000 at all (it failed the request, where SQLite kept it).
    /// docs/registry-api.yaml says the same with `pattern: "^[^\\u0000-\\u001F\\u007F]*$"`.
    static func refuseControlCharacters(_ value: String, in name: String) throws {
        if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw FieldError("\(name) has a control character")
        }
    }
}

/// Coding keys for any field, to refuse the ones a schema does not allow.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension KeyedDecodingContainer where Key == AnyKey {
    /// Throws for a field outside `allowed` (the schema's `additionalProperties: false`).
    func refuseUnknown(_ allowed: Set<String>) throws {
        if let unknown = allKeys.first(where: { !allowed.contains($0.stringValue) }) {
            throw FieldError("\(unknown.stringValue) is not a field of this request")
        }
    }

    func time(_ name: String) throws -> Date {
        let text = try decode(String.self, forKey: AnyKey(stringValue: name))
        guard let date = ISOTime.parse(text) else { throw FieldError("\(name) is not an ISO 8601 time") }
        return date
    }
}
