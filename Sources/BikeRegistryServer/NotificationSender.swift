import AsyncHTTPClient
import BikeRegistryCore
import BikeRegistryStore
import DaemonSupport
import Foundation
import NIOCore
import NIOHTTP1

/// One attempt to deliver a message to an owner's webhook (signed, Standard Webhooks) or ntfy topic, and what came
/// of it. The notification worker's deliveries and the owner page's "send a test" both go through it, so the test
/// is what a real message would meet.
///
/// Every endpoint is the owner's choice, and may be hostile:
/// - the whole attempt (the target's check and its name's lookup, connecting, the answer's head and its body) has
///   one deadline, so an endpoint that trickles its answer holds its delivery lane no longer than that;
/// - redirects are not followed (`DeliveryClient`): the address was checked, the one it redirects to was not;
/// - what the owner is told of a failure (`Failure.shown`) never says why a connection failed, which would make
///   the test message a port scanner of the server's own network; the log keeps the detail.
struct NotificationSender: Sendable {
    let targets: NotificationTargetPolicy
    let client: HTTPClient
    /// For the whole attempt.
    let deadline: Duration
    /// E-mail, when a relay is configured.
    var mail: MailDelivery?

    /// Why an attempt failed: as the owner may read it, and in full for the operator's log.
    struct Failure: Sendable, Equatable {
        var shown: String
        var detail: String

        init(_ shown: String, detail: String? = nil) {
            self.shown = shown
            self.detail = detail ?? shown
        }
    }

    enum Outcome: Sendable, Equatable {
        case delivered
        case gone
        case retry(Failure, retryAfter: TimeInterval?)
        /// Refused for good by the mail relay: the address fails.
        case refused(Failure)
    }

    func attempt(_ notification: PendingNotification) async -> Outcome {
        if notification.channel == .email {
            // libcurl bounds the exchange (SMTPRelay.timeout, under the deadline): a deadline cut here could not stop
            // a transfer the relay then accepts, which the next attempt would send again.
            guard let mail else {
                return .retry(Failure("e-mail is off: the registry has no mail relay (serve --smtp)"), retryAfter: 3600)
            }
            return await mail.attempt(notification)
        }
        do {
            return try await withDeadline(deadline) { try await exchange(notification) }
        } catch let error as DeadlineExceeded {
            return .retry(Failure("no whole answer within \(error.timeoutText)"), retryAfter: nil)
        } catch {
            return .retry(Failure("could not connect", detail: "\(error)"), retryAfter: nil)
        }
    }

    private func exchange(_ notification: PendingNotification) async throws -> Outcome {
        if let refusal = await targets.refusal(for: notification.target) {
            return .retry(Failure("target refused: \(refusal)"), retryAfter: 3600)
        }
        var request = HTTPClientRequest(url: notification.target)
        request.method = .POST
        switch notification.channel {
        case .webhook:
            let timestamp = Int(Date().timeIntervalSince1970)
            guard
                let signature = WebhookSignature.sign(
                    id: notification.id, timestamp: timestamp, body: notification.payload,
                    secret: notification.webhookSecret)
            else { return .retry(Failure("the bike's webhook secret is malformed"), retryAfter: nil) }
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "webhook-id", value: notification.id)
            request.headers.add(name: "webhook-timestamp", value: String(timestamp))
            request.headers.add(name: "webhook-signature", value: signature)
            request.body = .bytes(ByteBuffer(string: notification.payload))
        case .email:
            return .retry(Failure("e-mail is not sent over HTTP"), retryAfter: 3600)
        case .ntfy:
            let message: NtfyMessage
            if let notice = ReportNotice.decode(notification.payload) {
                message = NtfyMessage(notice)
            } else if let payload = try? NotificationPayload.decode(notification.payload) {
                message = NtfyMessage(payload)
            } else {
                return .retry(Failure("unreadable payload"), retryAfter: 3600)
            }
            for (name, value) in message.headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(string: message.body))
        }
        request.headers.add(name: "User-Agent", value: "bike-registry")
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

extension Duration {
    /// Whole nanoseconds, saturating: what NIO's `TimeAmount` takes.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
