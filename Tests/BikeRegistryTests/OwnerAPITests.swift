import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Foundation
import NIOHTTP1
import Testing

@testable import BikeRegistryServer

/// The owner side: registration (409 on a taken beacon, rate limits), and who may reach a bike, endpoint by
/// endpoint and credential by credential.
@Suite(.timeLimit(.minutes(20))) struct OwnerAPITests {
    @Test(arguments: StoreKind.allCases) func everyOwnerEndpointAnswersOnlyItsOwnersToken(store: StoreKind) async throws
    {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess)
        try await withTeardown({ await registry.stop() }) {
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let revoked = try await registry.database.addStation(name: "Gone", latitude: 1, longitude: 1)
            _ = try await registry.database.revokeStation(name: "Gone")
            let mine = try await registry.register(minor: 101)
            let theirs = try await registry.register(minor: 102)
            #expect((mine.answer.object["webhookSecret"] as? String)?.hasPrefix("whsec_") == true)
            #expect(mine.answer.headers.first(name: "Cache-Control") == "no-store")
            #expect(try await registry.register(minor: 103).id != mine.id)
            let taken = try await registry.request(
                .POST, "/owner/bikes",
                body:
                    #"{"uuid":"21eecf71-d5c7-4a00-9b90-27c94b5146ea","major":1,"minor":101,"make":"a","model":"b","colour":"c"}"#
            )
            #expect(taken.status == 409, "the same beacon, lower case: \(taken.body)")

            let credentials: [(String, String?, Set<Int>)] = [
                ("no token", nil, [401]), ("a station key", key, [401, 403]), ("a revoked key", revoked, [401, 403]),
                ("another owner's token", theirs.token, [401, 403, 404]),
                ("a made-up token", "bko_made-up", [401, 403, 404]),
            ]
            let endpoints: [(HTTPMethod, String, String?)] = [
                (.GET, "/owner/bikes/\(mine.id)", nil), (.PATCH, "/owner/bikes/\(mine.id)", #"{"missing":true}"#),
                (.GET, "/owner/bikes/\(mine.id)/sightings", nil), (.DELETE, "/owner/bikes/\(mine.id)", nil),
            ]
            for (method, path, body) in endpoints {
                for (name, token, allowed) in credentials {
                    let answer = try await registry.request(method, path, bearer: token, body: body)
                    #expect(allowed.contains(answer.status), "\(method) \(path) with \(name): \(answer.status)")
                    #expect(!answer.body.contains(mine.token) && !answer.body.contains("whsec_"))
                }
            }
            // Station endpoints do not take an owner's token.
            #expect(try await registry.request(.GET, "/bikes?missing=true", bearer: mine.token).status == 401)
            #expect(try await registry.post(RegistryHarness.sighting(bikeId: mine.id), key: mine.token).status == 401)
            // Nothing above changed the bike.
            let shown = try await registry.request(.GET, "/owner/bikes/\(mine.id)", bearer: mine.token)
            #expect(shown.status == 200 && shown.object["missing"] as? Bool == false)
            #expect(
                !shown.body.contains("whsec_") && !shown.body.contains(mine.token),
                "secrets are shown once, at registration")

            // The right token, each endpoint.
            #expect(
                try await registry.request(
                    .PATCH, "/owner/bikes/\(mine.id)", bearer: mine.token, body: #"{"missing":true}"#
                ).object["missing"] as? Bool == true)
            #expect(try await registry.post(RegistryHarness.sighting(bikeId: mine.id), key: key).status == 201)
            let sightings = try await registry.request(.GET, "/owner/bikes/\(mine.id)/sightings", bearer: mine.token)
            let list = try #require(sightings.object["sightings"] as? [[String: Any]])
            #expect(list.count == 1 && (list[0]["station"] as? [String: Any])?["name"] as? String == "Ace")
            #expect((list[0]["station"] as? [String: Any])?["latitude"] as? Double == 51.5)
            #expect(sightings.object["stationsListeningLastHour"] as? Int == 0, "no station has refreshed yet")
            #expect(try await registry.request(.DELETE, "/owner/bikes/\(mine.id)", bearer: mine.token).status == 204)
            #expect(try await registry.request(.GET, "/owner/bikes/\(mine.id)", bearer: mine.token).status == 401)
            #expect(try await registry.request(.GET, "/owner/bikes/\(theirs.id)", bearer: theirs.token).status == 200)
        }
    }

    @Test(arguments: StoreKind.allCases) func aDozenRegistrationsAMinuteFromOneAddressThenTooManyWithRetryAfter(
        store: StoreKind
    ) async throws {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let registry = try await RegistryHarness(store, directory: directory.path, transport: .inProcess)
        try await withTeardown({ await registry.stop() }) {
            for minor in 0..<12 { _ = try await registry.register(minor: minor) }
            var limited: RegistryClient.Answer?
            for minor in 12..<40 {
                let answer = try await registry.request(
                    .POST, "/owner/bikes",
                    body:
                        #"{"uuid":"21EECF71-D5C7-4A00-9B90-27C94B5146EA","major":1,"minor":\#(minor),"make":"a","model":"b","colour":"c"}"#
                )
                if answer.status == 429 {
                    limited = answer
                    break
                }
                #expect(answer.status == 201)
            }
            let answer = try #require(limited, "no 429 within 40 registrations a minute")
            #expect(Int(answer.headers.first(name: "Retry-After") ?? "") ?? 0 >= 1)
        }
    }

    @Test(arguments: StoreKind.allCases) func privateAndOddNotificationTargetsAreRefusedUnlessAllowed(store: StoreKind)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let registry = try await RegistryHarness(
            store, directory: directory.path, allowPrivateWebhooks: false, transport: .inProcess)
        try await withTeardown({ await registry.stop() }) {
            let bike = try await registry.register(minor: 101)
            for url in [
                "http://127.0.0.1:8080/hook", "http://localhost/hook", "http://10.1.2.3/x", "http://192.168.1.10/x",
                "http://[::1]/x",
                "http://169.254.169.254/latest/meta-data", "ftp://example.com/x", "http://user:pw@example.com/",
                "not a url",
            ] {
                let answer = try await registry.request(
                    .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: #"{"notify":{"webhook":"\#(url)"}}"#)
                #expect(answer.status == 400, "\(url): \(answer.status) \(answer.body)")
            }
            let shown = try await registry.request(.GET, "/owner/bikes/\(bike.id)", bearer: bike.token)
            #expect((shown.object["notify"] as? [String: Any])?["webhook"] is NSNull)
        }
    }
}

/// Registrations are limited per network (an IPv4 address, an IPv6 /64) and by everyone together (issue 37, item 7):
/// one network at its limit does not hold another back, and many addresses of one machine do not each get a
/// budget of their own past the server's ceiling.
@Suite(.timeLimit(.minutes(20))) struct RegistrationLimitTests {
    /// A registration sent from `source` (any 127.x.y.z on Linux, or ::1), by hand: the status and Retry-After.
    static func register(from source: String, port: Int, minor: Int) async throws -> (status: Int?, retryAfter: Bool) {
        let connection = try RawConnection(port: port, from: source)
        let body =
            #"{"uuid":"21EECF71-D5C7-4A00-9B90-27C94B5146EA","major":7,"minor":\#(minor),"make":"a","model":"b","colour":"c"}"#
        connection.send(
            "POST /owner/bikes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
                + "\(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        let head = await connection.head()
        return (head.status, head.text.lowercased().contains("\r\nretry-after: "))
    }

    @Test func oneAddressAtItsLimitDoesNotHoldAnotherBack() async throws {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let registry = try await RegistryHarness(.sqlite, directory: directory.path, registrationsPerMinute: 5)
        try await withTeardown({ await registry.stop() }) {
            var statuses: [Int?] = []
            for minor in 0..<6 {
                statuses.append(try await Self.register(from: "127.0.0.3", port: registry.port, minor: minor).status)
            }
            #expect(statuses == [201, 201, 201, 201, 201, 429])
            #expect(
                try await Self.register(from: "127.0.0.4", port: registry.port, minor: 100).status == 201,
                "another address has its own limit")
        }
    }

    /// Five loopback addresses of one machine and ::1, three registrations each from the five against a ceiling of
    /// eight for everyone: the first eight are taken, the rest refused with Retry-After. Before, each address had its
    /// own full budget.
    @Test func manyAddressesShareTheServersCeiling() async throws {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        // Listening on both IPv6 and IPv4 (IPv4 clients then come as ::ffff:127.0.0.x, counted as IPv4).
        let registry = try await RegistryHarness(.sqlite, directory: directory.path, registrationsPerMinute: 3) {
            $0.registrationsPerMinuteTotal = 8
            $0.host = "::"
        }
        try await withTeardown({ await registry.stop() }) {
            var answers: [(status: Int?, retryAfter: Bool)] = []
            for (index, source) in ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"].enumerated() {
                for minor in 0..<3 {
                    answers.append(
                        try await Self.register(from: source, port: registry.port, minor: index * 10 + minor))
                }
            }
            answers.append(try await Self.register(from: "::1", port: registry.port, minor: 99))
            #expect(answers.filter { $0.status == 201 }.count == 8, "\(answers.map(\.status))")
            #expect(
                answers.filter { $0.status == 429 }.count == 8
                    && answers.allSatisfy { $0.status != 429 || $0.retryAfter })
        }
    }

    /// An IPv6 /64 is one network: its 2^64 addresses share one budget.
    @Test func anIPv6NetworkIsCountedAsOne() async throws {
        #expect(ClientNetwork.of("2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(ClientNetwork.of("2001:db8:1:2:ffff:ffff:ffff:fffe") == "2001:db8:1:2::/64")
        #expect(ClientNetwork.of("2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(ClientNetwork.of("::ffff:10.1.2.3") == "10.1.2.3", "an IPv4-mapped address is IPv4")
        #expect(ClientNetwork.of("10.1.2.3") == "10.1.2.3")
        #expect(ClientNetwork.of("unknown") == "unknown")
        let directory = try TemporaryDirectory("bike-registry-networks")
        defer { directory.remove() }
        let database = try await TestDatabase.make(.sqlite, in: directory.path).open()
        let limits = NetworkLimit(
            perNetwork: CountLimit("registrations", most: 2, per: 60),
            everyone: CountLimit("registrations.everyone", most: 100, per: 60), database: database, metrics: nil)
        let now = Date()
        func wait(_ address: String) async throws -> Int? {
            try await limits.count(ClientNetwork.of(address), now: now)
        }
        #expect(try await wait("2001:db8:1:2::1") == nil)
        #expect(try await wait("2001:db8:1:2::2") == nil)
        #expect(try await wait("2001:db8:1:2:8000::77") != nil, "a third address of the same /64")
        #expect(try await wait("2001:db8:1:3::1") == nil, "another /64")
        await database.close()
    }
}
