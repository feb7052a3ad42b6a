import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// One request to a server a test started, through async-http-client's shared client: not FoundationNetworking's
/// URLSession, whose libcurl keeps allocations LeakSanitizer reports when the test process exits.
public enum LoopbackHTTP {
    public static func request(
        _ url: String, method: String = "GET", seconds: Int64 = 10
    ) async throws -> (status: Int, body: String) {
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(seconds))
        let body = try await response.body.collect(upTo: 16 << 20)
        return (Int(response.status.code), String(buffer: body))
    }
}
