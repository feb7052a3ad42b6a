import AsyncHTTPClient
import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import BikeRegistryServer

/// The owner pages over plain HTTP, without a browser (no cookie and no script unless a test sends one): what the
/// browser journey (OwnerBrowserTests) cannot see or would take long to reach. One at a time: ten servers started at
/// once, beside the rest of the suite under ThreadSanitizer, took the other suites' PostgreSQL requests past their 5 s.
@Suite(.serialized, .timeLimit(.minutes(20))) struct OwnerPageTests {
    static let securityHeaders = [
        "Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy",
    ]

    @Test func everyAnswerCarriesTheSecurityHeadersAndNoStoreWhenPrivate() async throws {
        let (registry, directory) = try await Self.registry()
        try await withTeardown({ await Self.stop(registry, directory) }) {
            let form = try await Page.get(registry, "/")
            let bike = try await Page.register(registry, minor: 5, form: form)
            let answers = [
                form, bike.answer, try await Page.get(registry, bike.path),
                try await Page.post(registry, bike.path + "/missing", ["missing": "true"]),  // refused: no token
                try await Page.get(registry, "/my/bike_0000000000000000/bko_nothing"),
                try await Page.get(registry, "/static/style.css"), try await Page.get(registry, "/static/page.js"),
            ]
            for answer in answers {
                for name in Self.securityHeaders {
                    #expect(answer.headers[name].first != nil, "\(name): \(answer.status)")
                }
                #expect(!answer.headers["Content-Security-Policy"].joined().contains("unsafe-inline"))
            }
            #expect(bike.answer.status == 201 && bike.answer.headers["Cache-Control"] == ["no-store"])
            #expect(answers[2].headers["Cache-Control"] == ["no-store"])
            #expect(answers[3].status == 403 && answers[4].status == 404)
            #expect(try await Page.get(registry, "/register").status == 405)
        }
    }

    @Test func whatOwnersTypeIsShownAsTextNeverAsMarkup() async throws {
        let (registry, directory) = try await Self.registry()
        try await withTeardown({ await Self.stop(registry, directory) }) {
            let hostile = #"<script>alert("x")</script>'&"#
            let bike = try await Page.register(
                registry, minor: 6, make: hostile, form: try await Page.get(registry, "/"))
            let page = try await Page.get(registry, bike.path)
            for shown in [bike.answer.body, page.body] {
                #expect(!shown.contains("<script>alert"), "\(shown)")
                #expect(shown.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39;&amp;"))
            }
            // A webhook URL that tries to close the attribute: refused by the policy, and echoed escaped.
            let csrf = try #require(Page.csrf(in: page.body))
            let refused = try await Page.post(
                registry, bike.path + "/notify", ["csrf": csrf, "webhook": #"https://x.test/"><script>"#, "ntfy": ""])
            #expect(refused.status == 400 && !refused.body.contains("\"><script>"), "\(refused.body)")
        }
    }

    @Test func formsWithoutTheirTokenAreRefusedAndChangeNothing() async throws {
        let (registry, directory) = try await Self.registry()
        try await withTeardown({ await Self.stop(registry, directory) }) {
            let form = try await Page.get(registry, "/")
            let fields = [
                "uuid": "21EECF71-D5C7-4A00-9B90-27C94B5146EA", "major": "1", "minor": "7", "make": "a", "model": "b",
                "colour": "c",
            ]
            // No token; a token but no cookie; a cookie and another token.
            #expect(try await Page.post(registry, "/register", fields).status == 403)
            let token = try #require(Page.csrf(in: form.body))
            #expect(try await Page.post(registry, "/register", fields.merging(["csrf": token]) { $1 }).status == 403)
            let other = String(repeating: "A", count: 32)
            #expect(
                try await Page.post(registry, "/register", fields.merging(["csrf": other]) { $1 }, cookie: form.cookie)
                    .status == 403)
            #expect(try await registry.database.missingBikes().bikes.isEmpty)
            #expect(try await registry.request(.GET, "/owner/bikes", body: nil).status != 201)

            // A bike's form with another bike's token.
            let first = try await Page.register(registry, minor: 8, form: form)
            let second = try await Page.register(registry, minor: 9, form: form)
            let secondToken = try #require(Page.csrf(in: try await Page.get(registry, second.path).body))
            let crossed = try await Page.post(
                registry, first.path + "/missing", ["csrf": secondToken, "missing": "true"])
            #expect(crossed.status == 403)
            #expect(try await registry.database.missingBikes().bikes.isEmpty)
        }
    }

    @Test func aBadOrTakenRegistrationSaysWhyAndKeepsWhatWasTyped() async throws {
        let (registry, directory) = try await Self.registry()
        try await withTeardown({ await Self.stop(registry, directory) }) {
            let form = try await Page.get(registry, "/")
            let tooBig = try await Page.register(registry, minor: 70000, make: "Ducati", form: form)
            #expect(tooBig.answer.status == 400 && tooBig.answer.body.contains("minor is 0 to 65535"))
            #expect(tooBig.answer.body.contains(#"value="Ducati""#))
            _ = try await Page.register(registry, minor: 10, form: form)
            let taken = try await Page.register(registry, minor: 10, form: form)
            #expect(taken.answer.status == 409 && taken.answer.body.contains("registered already"))
            let notAForm = try await registry.request(.POST, "/register", body: #"{"minor":1}"#)
            #expect(notAForm.status == 400)
        }
    }

    @Test func registrationsAreLimitedPerAddress() async throws {
        let (registry, directory) = try await Self.registry(registrationsPerMinute: 3)
        try await withTeardown({ await Self.stop(registry, directory) }) {
            let form = try await Page.get(registry, "/")
            var statuses: [Int] = []
            for minor in 20..<25 {
                statuses.append(try await Page.register(registry, minor: minor, form: form).answer.status)
            }
            #expect(statuses == [201, 201, 201, 429, 429], "\(statuses)")
        }
    }

    @Test func reportingMissingOnThePageListsTheBikeForStations() async throws {
        let (registry, directory) = try await Self.registry()
        try await withTeardown({ await Self.stop(registry, directory) }) {
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let bike = try await Page.register(registry, minor: 11, form: try await Page.get(registry, "/"))
            let csrf = try #require(Page.csrf(in: try await Page.get(registry, bike.path).body))
            let reported = try await Page.post(registry, bike.path + "/missing", ["csrf": csrf, "missing": "true"])
            #expect(reported.status == 303 && reported.headers["Location"] == [bike.path])
            let listed = try await registry.request(.GET, "/bikes?missing=true", bearer: key)
            #expect((listed.json as? [[String: Any]])?.map { $0["id"] as? String } == [bike.id])
            _ = try await Page.post(registry, bike.path + "/missing", ["csrf": csrf, "missing": "false"])
            let after = try await registry.request(.GET, "/bikes?missing=true", bearer: key)
            #expect((after.json as? [[String: Any]])?.isEmpty == true)
        }
    }

    @Test func aBusyBikesPageShowsItsNewestFiftyUnder50KB() async throws {
        let (registry, directory) = try await Self.registry()
        try await withTeardown({ await Self.stop(registry, directory) }) {
            _ = try await registry.database.addStation(
                name: String(repeating: "Café des Motards ", count: 11), latitude: 51.5, longitude: -0.2)
            let station = try #require(try await registry.database.stations().first)
            let bike = try await Page.register(registry, minor: 12, form: try await Page.get(registry, "/"))
            for visit in 0..<80 {
                let seen = Date(timeIntervalSince1970: 1_717_228_800 + Double(visit) * 600)
                _ = try await registry.database.record(
                    SightingReport(
                        sightingId: UUID().uuidString.lowercased(), bikeId: bike.id, kind: .enter, date: seen,
                        firstSeen: seen, lastSeen: seen, proximity: "immediate", rssi: -50, count: 1),
                    from: station)
            }
            let page = try await Page.get(registry, bike.path)
            #expect(page.body.utf8.count < 50 * 1024, "\(page.body.utf8.count) bytes")
            #expect(page.body.components(separatedBy: "<li class=\"sighting\">").count - 1 == 50)
            #expect(page.body.contains("The newest 50 are shown"))
            #expect(page.body.contains(#"datetime="2024-06-01T21:10:00.000Z""#), "the newest first")
        }
    }

    @Test(arguments: StoreKind.allCases) func aNewLinkReplacesTheOldOneEverywhere(store: StoreKind) async throws {
        let (registry, directory) = try await Self.registry(store)
        try await withTeardown({ await Self.stop(registry, directory) }) {
            let bike = try await Page.register(registry, minor: 13, form: try await Page.get(registry, "/"))
            let csrf = try #require(Page.csrf(in: try await Page.get(registry, bike.path).body))
            let rotated = try await Page.post(registry, bike.path + "/rotate", ["csrf": csrf])
            #expect(rotated.status == 200)
            let newPath = try #require(rotated.body.firstMatch(of: /id="private-link" href="([^"]+)"/)?.output.1)
            let newToken = String(newPath.split(separator: "/")[2])
            #expect(try await Page.get(registry, bike.path).status == 404)
            #expect(try await Page.get(registry, String(newPath)).status == 200)
            // The API takes the same token, and no longer the old one.
            #expect(try await registry.request(.GET, "/owner/bikes/\(bike.id)", bearer: newToken).status == 200)
            #expect(try await registry.request(.GET, "/owner/bikes/\(bike.id)", bearer: bike.token).status == 401)
        }
    }

    @Test func theTestMessageGoesToNtfyAsARealOneWould() async throws {
        let (registry, directory) = try await Self.registry()
        try await withTeardown({ await Self.stop(registry, directory) }) {
            let receiver = NotificationReceiver()
            try await receiver.start()
            try await withTeardown({ await receiver.stop() }) {
                let bike = try await Page.register(registry, minor: 14, form: try await Page.get(registry, "/"))
                let csrf = try #require(Page.csrf(in: try await Page.get(registry, bike.path).body))
                let untargeted = try await Page.post(registry, bike.path + "/test", ["csrf": csrf])
                #expect(untargeted.status == 400 && untargeted.body.contains("Save an ntfy topic or a webhook first"))
                #expect(
                    try await Page.post(
                        registry, bike.path + "/notify", ["csrf": csrf, "ntfy": receiver.url("/topic"), "webhook": ""]
                    ).status == 303)
                let tested = try await Page.post(registry, bike.path + "/test", ["csrf": csrf])
                #expect(tested.status == 200 && tested.body.contains("Test to ntfy: delivered"), "\(tested.body)")
                let message = try #require(await receiver.waitFor(1).first)
                #expect(message.path == "/topic" && message.headers["title"] == "Test from bike-registry")
                #expect(tested.body.contains("Title: Test from bike-registry"))
            }
        }
    }

    @Test func theLogNamesAnOwnerPageWithoutItsToken() {
        let page = "/my/{id}/{token}"
        #expect(
            LoggedPath(route: page + "/{action}", path: "/my/bike_1/bko_secret/missing").description
                == "/my/bike_1/-/missing")
        #expect(LoggedPath(route: page, path: "/my/bike_1/bko_secret").description == "/my/bike_1/-")
        #expect(LoggedPath(route: page, path: "//my//bike_1//bko_secret//").description == "/my/bike_1/-")
        #expect(LoggedPath(route: page, path: "/my/bike%5F1/bko_secret").description == "/my/-/-")
        #expect(
            LoggedPath(route: "/owner/bikes/{id}", path: "/owner/bikes/bike_1").description == "/owner/bikes/bike_1")
        #expect(LoggedPath(route: "NotFound", path: "/my/x/bko_secret/y/z").description == "(no route)")
        #expect(LoggedPath(route: nil, path: "/my/x").description == "(no route)")
    }

    // MARK: Helpers

    static func registry(_ store: StoreKind = .sqlite, registrationsPerMinute: Int = 20) async throws
        -> (RegistryHarness, TemporaryDirectory)
    {
        let directory = try TemporaryDirectory("bike-registry-pages")
        let registry = try await RegistryHarness(
            store, directory: directory.path, registrationsPerMinute: registrationsPerMinute, transport: .inProcess)
        return (registry, directory)
    }

    static func stop(_ registry: RegistryHarness, _ directory: TemporaryDirectory) async {
        await registry.stop()
        directory.remove()
    }
}

/// A page's answer, and the requests a browser with no script would make.
enum Page {
    struct Answer {
        var status: Int
        var headers: HTTPHeaders
        var body: String

        init(status: Int, headers: HTTPHeaders, body: String) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        init(_ answer: RegistryClient.Answer) {
            self.init(status: answer.status, headers: answer.headers, body: answer.body)
        }
        /// The csrf cookie it set, as a Cookie header sends it back.
        var cookie: String? {
            headers["Set-Cookie"].first.flatMap { $0.split(separator: ";").first.map(String.init) }
        }
    }

    static func get(_ registry: RegistryHarness, _ path: String) async throws -> Answer {
        if let inProcess = registry.client.inProcess {
            return Answer(try await RegistryClient.send(inProcess, .GET, path, headers: [], body: nil))
        }
        return try await send(HTTPClientRequest(url: registry.baseURL + path))
    }

    /// - Parameter host: a Host header of the test's choosing (a client may send any).
    static func post(
        _ registry: RegistryHarness, _ path: String, _ fields: [String: String], cookie: String? = nil,
        host: String? = nil
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: registry.baseURL + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        if let cookie { request.headers.add(name: "Cookie", value: cookie) }
        if let host { request.headers.replaceOrAdd(name: "Host", value: host) }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let body = fields.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
        if let inProcess = registry.client.inProcess {
            let headers =
                [("Content-Type", "application/x-www-form-urlencoded")] + (cookie.map { [("Cookie", $0)] } ?? [])
                + (host.map { [("Host", $0)] } ?? [])
            return Answer(try await RegistryClient.send(inProcess, .POST, path, headers: headers, body: body))
        }
        request.body = .bytes(ByteBuffer(string: body))
        return try await send(request)
    }

    /// A browser's requests one at a time, redirects not followed, so a post's own answer (a 303) is seen. Never
    /// shut down: it lives as long as the test process, as HTTPClient.shared does.
    private static let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: .init(redirectConfiguration: .disallow))

    private static func send(_ request: HTTPClientRequest) async throws -> Answer {
        let response = try await client.execute(request, timeout: .seconds(20))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    static func csrf(in html: String) -> String? {
        html.firstMatch(of: /name="csrf" value="([^"]+)"/).map { String($0.output.1) }
    }

    /// Registers through the form `form` gave (its token and cookie); the answer and the private link's parts.
    static func register(
        _ registry: RegistryHarness, minor: Int, make: String = "Triumph", form: Answer, host: String? = nil
    ) async throws -> (answer: Answer, path: String, id: String, token: String) {
        let answer = try await post(
            registry, "/register",
            [
                "csrf": csrf(in: form.body) ?? "", "uuid": "21EECF71-D5C7-4A00-9B90-27C94B5146EA", "major": "1",
                "minor": String(minor), "make": make, "model": "Bonneville", "colour": "green",
            ], cookie: form.cookie, host: host)
        let path = answer.body.firstMatch(of: /id="private-link" href="([^"]+)"/).map { String($0.output.1) } ?? ""
        let parts = path.split(separator: "/").map(String.init)
        return (answer, path, parts.count == 3 ? parts[1] : "", parts.count == 3 ? parts[2] : "")
    }
}
