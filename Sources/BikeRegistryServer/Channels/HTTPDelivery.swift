import AsyncHTTPClient
import BikeRegistryCore
import DaemonSupport
import Foundation
import NIOCore
import NIOHTTP1

/// One POST to an owner's endpoint, for the channels that speak HTTP (`WebhookChannel`, `NtfyChannel`), and what its
/// answer means. Every endpoint is the owner's choice, and may be hostile:
/// - the whole attempt (the target's check and its name's lookup, connecting, the answer's head and its body) has
///   one deadline, so an endpoint that trickles its answer holds its delivery lane no longer than that;
/// - redirects are not followed (`DeliveryClient`): the address was checked, the one it redirects to was not;
/// - what the owner is told of a failure (`Failure.shown`) never says why a connection failed, which would make
///   the test message a port scanner of the server's own network; the log keeps the detail.
struct HTTPDelivery: Sendable {
    let targets: NotificationTargetPolicy
    let client: HTTPClient
    /// For the whole attempt.
    let deadline: Duration

    typealias Failure = NotificationSender.Failure

    func post(to url: String, headers: [(String, String)], body: String) async -> NotificationSender.Outcome {
        do {
            return try await withDeadline(deadline) { try await exchange(url, headers: headers, body: body) }
        } catch let error as DeadlineExceeded {
            return .retry(Failure("no whole answer within \(error.timeoutText)"), retryAfter: nil)
        } catch {
            return .retry(Failure("could not connect", detail: "\(error)"), retryAfter: nil)
        }
    }

    private func exchange(_ url: String, headers: [(String, String)], body: String) async throws
        -> NotificationSender.Outcome
    {
        if let refusal = await targets.refusal(for: url) {
            return .retry(Failure("target refused: \(refusal)"), retryAfter: 3600)
        }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.headers.add(name: "User-Agent", value: "bike-registry")
        request.body = .bytes(ByteBuffer(string: body))
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: .nanoseconds(deadline.nanoseconds))
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            return .retry(Failure("could not connect", detail: "\(error)"), retryAfter: nil)
        }
        // Read (a little of) the body so the connection can be reused; its content does not matter, and the
        // deadline above cuts one that is trickled.
        _ = try? await response.body.collect(upTo: 64 * 1024)
        let status = Int(response.status.code)
        switch status {
        case 200..<300: return .delivered
        case 410: return .gone
        case 300..<400:
            return .retry(
                Failure(
                    "the address redirected (HTTP \(status)); redirects are not followed, so save the address it "
                        + "redirects to"), retryAfter: nil)
        default:
            let retryAfter = response.headers.first(name: "Retry-After").flatMap(TimeInterval.init)
            return .retry(Failure("HTTP \(status)"), retryAfter: retryAfter)
        }
    }
}

/// A channel that posts to an owner's URL: its target is any text the target policy lets it call (checked when it is
/// saved and again before each delivery), and a 410 from it, its endpoint gone, removes the target.
protocol HTTPChannel: NotificationChannelType {
    var http: HTTPDelivery { get }
}

extension HTTPChannel {
    var whenRefused: TargetRefusal { .remove }

    func parsed(_ typed: String) -> Result<String, FieldError> { .success(typed) }

    func refusal(for target: String) async -> String? { await http.targets.refusal(for: target) }
}

extension Duration {
    /// Whole nanoseconds, saturating: what NIO's `TimeAmount` takes.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
