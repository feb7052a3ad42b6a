import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import RegistryTestServer

/// A hostile owner's endpoint on loopback: it answers every POST at once with 200 and a body it then sends a byte at
/// a time, `every` apart, for as long as the client keeps reading (1,000 bytes: under the 64 KiB the registry reads,
/// so the body is read rather than refused by its length). It notes when each answer started and when the client
/// gave up on it (a write that fails: the connection was closed).
final class TricklingEndpoint: Sendable {
    struct Answer: Sendable {
        var started: ContinuousClock.Instant
        var cut: ContinuousClock.Instant?
    }

    private final class Answers: Sendable {
        let list = NIOLockedValueBox([Answer]())
    }

    private let answers = Answers()
    private let served: ServedApplication

    init(every: Duration = .seconds(1), bytes: Int = 1_000) async {
        let router = Router()
        let answers = self.answers
        router.post("**") { request, _ -> Response in
            var request = request
            _ = try await request.collectBody(upTo: 1 << 20)
            let index = answers.list.withLockedValue { answers in
                answers.append(Answer(started: .now, cut: nil))
                return answers.count - 1
            }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(contentLength: bytes) { writer in
                    do {
                        for _ in 0..<bytes {
                            try await writer.write(ByteBuffer(string: " "))
                            try await Task.sleep(for: every)
                        }
                    } catch {
                        answers.list.withLockedValue { $0[index].cut = .now }
                        throw error
                    }
                })
        }
        served = await ServedApplication(loopback: router)
    }

    var url: String { "http://127.0.0.1:\(served.port)/hook" }
    var started: [Answer] { answers.list.withLockedValue { $0 } }

    /// Its answers never end on their own: they are cut after a second.
    func stop() async { await served.stop(patience: .seconds(1)) }
}
