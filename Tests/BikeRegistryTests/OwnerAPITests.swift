import BeaconTestSupport
import BikeRegistryStore
import Foundation
import NIOHTTP1
import Testing

/// The owner side: registration (409 on a taken beacon, rate limits), and who may reach a bike, endpoint by
/// endpoint and credential by credential.
@Suite struct OwnerAPITests {
    @Test(arguments: StoreKind.allCases) func everyOwnerEndpointAnswersOnlyItsOwnersToken(store: StoreKind) async throws
    {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let registry = try await RegistryHarness(store, directory: directory.path)
        defer { Task { await registry.stop() } }
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

    @Test(arguments: StoreKind.allCases) func aDozenRegistrationsAMinuteFromOneAddressThenTooManyWithRetryAfter(
        store: StoreKind
    ) async throws {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let registry = try await RegistryHarness(store, directory: directory.path)
        defer { Task { await registry.stop() } }
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

    @Test(arguments: StoreKind.allCases) func privateAndOddNotificationTargetsAreRefusedUnlessAllowed(store: StoreKind)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let registry = try await RegistryHarness(store, directory: directory.path, allowPrivateWebhooks: false)
        defer { Task { await registry.stop() } }
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

/// Registrations are limited per address: one address at its limit does not hold another back.
@Suite struct RegistrationLimitTests {
    /// A registration sent from `source` (any 127.x.y.z on Linux), by hand over a socket bound to it: the status.
    static func register(from source: String, port: Int, minor: Int) throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        func address(_ host: String, _ port: Int) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr(host)
            return address
        }
        var local = address(source, 0)
        var remote = address("127.0.0.1", port)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, connected == 0 else { throw HarnessError("cannot connect from \(source)") }
        let body =
            #"{"uuid":"21EECF71-D5C7-4A00-9B90-27C94B5146EA","major":7,"minor":\#(minor),"make":"a","model":"b","colour":"c"}"#
        let request =
            "POST /owner/bikes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        _ = request.withCString { write(descriptor, $0, strlen($0)) }
        var answer = [UInt8](repeating: 0, count: 64)
        let count = read(descriptor, &answer, answer.count)
        guard count > 12, let status = Int(String(decoding: answer[9..<12], as: UTF8.self)) else {
            throw HarnessError("no answer")
        }
        return status
    }

    @Test func oneAddressAtItsLimitDoesNotHoldAnotherBack() async throws {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let registry = try await RegistryHarness(.sqlite, directory: directory.path, registrationsPerMinute: 5)
        defer { Task { await registry.stop() } }
        var statuses: [Int] = []
        for minor in 0..<6 { statuses.append(try Self.register(from: "127.0.0.3", port: registry.port, minor: minor)) }
        #expect(statuses == [201, 201, 201, 201, 201, 429])
        #expect(
            try Self.register(from: "127.0.0.4", port: registry.port, minor: 100) == 201,
            "another address has its own limit")
    }
}
