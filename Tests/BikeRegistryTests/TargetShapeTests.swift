import BeaconTestSupport
import BikeRegistryCore
import Foundation
import NIOHTTP1
import Testing

@testable import BikeRegistryServer

/// The server takes exactly the notification targets docs/registry-api.yaml's pattern allows: the hand-written check
/// and the document's own regular expression agree on every case (schemathesis found a `*` the server took).
@Suite(.timeLimit(.minutes(20))) struct TargetShapeTests {
    static let documented: NSRegularExpression = {
        let document =
            (try? String(
                contentsOf: Fixtures.repositoryRoot.appendingPathComponent("docs/registry-api.yaml"), encoding: .utf8))
            ?? ""
        let line = document.split(separator: "\n").first { $0.contains("webhook: {") && $0.contains("pattern:") } ?? ""
        let quoted = line.split(separator: "pattern: \"", maxSplits: 1).last?.split(separator: "\" }").first ?? ""
        // YAML's double-quoted escape: "\\?" is the regex's "\?".
        let pattern = String(quoted).replacingOccurrences(of: "\\\\", with: "\\")
        return try! NSRegularExpression(pattern: pattern)
    }()

    static func documentAllows(_ url: String) -> Bool {
        documented.firstMatch(in: url, range: NSRange(url.startIndex..., in: url)) != nil
    }

    @Test(arguments: [
        "https://hooks.example/hook", "http://127.0.0.1:41885/hook", "https://ntfy.sh/bike-topic", "https://a.example",
        "https://a.example:8443/x/y?token=abc&x=1", "https://a.example/%41~_-./", "https://a.example?",
        "https://a.example/?",
        "https://6LcwJAGu6nbJ/Xbt*", "ftp://a.example/x", "http://user:pw@a.example/", "http://[::1]/x",
        "https://a.example:0/x",
        "https://a.example:123456/x", "https://a.example:/x", "https://", "https:///x", "https://a.example/x#frag",
        "https://a example/x",
        "HTTP://a.example/", "https://a.example/é", "not a url", "", "https://a.example/x?y=<z>",
    ])
    func theServerAndTheDocumentAgree(url: String) {
        #expect(NotificationTargetPolicy.hasTheDocumentsShape(url) == Self.documentAllows(url), "\(url)")
    }

    @Test func theDocumentsPatternWasFound() {
        #expect(Self.documentAllows("https://a.example/x") && !Self.documentAllows("https://a.example/x*"))
    }

    /// Through the API, with private targets allowed (as the contract run has them): a target outside the document's
    /// shape is a 400 and changes nothing; one inside it is taken.
    @Test(arguments: StoreKind.allCases) func aTargetOutsideTheDocumentIsRefused(store: StoreKind) async throws {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let registry = try await RegistryHarness(
            store, directory: directory.path, allowPrivateWebhooks: true, transport: .inProcess)
        try await withTeardown({ await registry.stop() }) {
            let bike = try await registry.register(minor: 101)
            for url in ["https://6LcwJAGu6nbJ/Xbt*", "http://127.0.0.1:8080/hook#x", "http://127.0.0.1:8080/a b"] {
                let answer = try await registry.request(
                    .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: #"{"notify":{"webhook":"\#(url)"}}"#)
                #expect(answer.status == 400, "\(url): \(answer.status) \(answer.body)")
            }
            let taken = try await registry.request(
                .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token,
                body: #"{"notify":{"ntfy":"http://127.0.0.1:18080/topic?auth=abc"}}"#)
            #expect(taken.status == 200, "\(taken.body)")
            let shown = try await registry.request(.GET, "/owner/bikes/\(bike.id)", bearer: bike.token)
            #expect((shown.object["notify"] as? [String: Any])?["webhook"] is NSNull)
        }
    }
}
