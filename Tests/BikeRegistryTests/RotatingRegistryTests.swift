import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import Testing

@testable import BikeRegistryServer

/// Issue 41's registry: a rotating beacon claimed by its code, its missing bike listed to stations by the identities
/// of its window (a new ETag as the window moves), and each sighting verified against its key: a clone from outside
/// the window is kept unverified and tells nobody, and a beacon whose clock runs fast is verified and its offset
/// learned.
@Suite(.timeLimit(.minutes(10))) struct RotatingRegistryTests {
    static let region = "21EECF71-D5C7-4A00-9B90-27C94B5146EA"
    static let keyFile = "3c" + String(repeating: "a5", count: 31)
    static let beaconKey: [UInt8] = Array(0..<16)

    /// A rotating beacon (60 s period) issued into the registry's database; its claim code.
    static func issue(_ registry: RegistryHarness, id: String = NewRotatingBeacon.newID(), key: [UInt8] = beaconKey)
        async throws -> String
    {
        let sealer = try BeaconKeySealer(keyFileText: keyFile)
        let code = ClaimCode.generate()
        try await registry.database.addRotatingBeacons(
            [
                NewRotatingBeacon(
                    id: id, uuid: region, period: 60, sealedKey: sealer.seal(key, beacon: id),
                    codeHash: ClaimCode.hash(code)!)
            ], now: Date())
        return code
    }

    /// A registry with the beacons' key file, or none; on `clock`, or the real time (what deliveries need: the
    /// store dates what it owes by the real time).
    static func harness(_ store: StoreKind, directory: String, clock: TestTime? = nil, keys: Bool = true)
        async throws -> RegistryHarness
    {
        try await RegistryHarness(store, directory: directory, registrationsPerMinute: 1_000, transport: .inProcess) {
            $0.registration = .claimCode
            if let clock { $0.now = clock.read }
            $0.beaconKeys = keys ? try? BeaconKeySealer(keyFileText: keyFile) : nil
        }
    }

    /// A rotating beacon issued and claimed by its code: the code, the bike's id and its owner's token.
    static func claimed(_ registry: RegistryHarness) async throws -> (code: String, bikeId: String, token: String) {
        let code = try await issue(registry)
        let claimed = try await registry.request(.POST, "/owner/bikes", body: body(code: code))
        let bikeId = try #require(claimed.object["id"] as? String)
        let token = try #require(claimed.object["ownerToken"] as? String)
        return (code, bikeId, token)
    }

    static func body(code: String, extra: String = "") -> String {
        #"{"claimCode":"\#(code)","make":"Ducati","model":"Monster","colour":"red"\#(extra)}"#
    }

    /// The pairs the list should hold for the beacon at `time`.
    static func identities(at time: Date, offset: Int64 = 0) -> [[Int]] {
        RotatingWindow(period: 60, offset: offset).identities(
            key: SymmetricKey(data: beaconKey), at: Int64(time.timeIntervalSince1970.rounded(.down))
        ).map { [Int($0.major), Int($0.minor)] }
    }

    /// A sighting heard as `identity` at `date`, its visit beginning then.
    static func sighting(bikeId: String, identity: RotatingIdentity, date: Date) -> (id: String, body: String) {
        let id = UUID().uuidString.lowercased()
        let time = ISOTime.format(date)
        return (
            id,
            """
            {"bikeId":"\(bikeId)","date":"\(time)","latitude":51.5,"longitude":-0.12,"sightingId":"\(id)","kind":"enter",\
            "stationId":"test","uuid":"\(region)","major":\(identity.major),"minor":\(identity.minor),"firstSeen":"\(time)",\
            "lastSeen":"\(time)","count":3,"rssi":-61.5,"proximity":"near"}
            """
        )
    }

    static func identity(at date: Date) -> RotatingIdentity {
        RotatingIdentity(
            key: SymmetricKey(data: beaconKey), period: 60, unixTime: UInt64(date.timeIntervalSince1970))
    }

    @Test(arguments: StoreKind.allCases) func aCodeClaimsARotatingBeaconAndItsMissingBikeIsListedByItsWindow(
        store: StoreKind
    ) async throws {
        let directory = try TemporaryDirectory("bike-registry-rotating")
        defer { directory.remove() }
        let clock = TestTime()
        // The start of a minute, so that 30 s on is the same epoch.
        clock.set(Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 60).rounded(.down) * 60))
        let registry = try await Self.harness(store, directory: directory.path, clock: clock)
        try await withTeardown({ await registry.stop() }) {
            let id = NewRotatingBeacon.newID()
            let code = try await Self.issue(registry, id: id)
            let refusals = [
                Self.body(code: code, extra: #","major":1"#), Self.body(code: code, extra: #","minor":5"#),
                Self.body(code: code, extra: #","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0""#),
            ]
            for body in refusals {
                let refused = try await registry.request(.POST, "/owner/bikes", body: body)
                #expect(refused.status == 403, "\(body): \(refused.status) \(refused.body)")
            }
            let claimed = try await registry.request(
                .POST, "/owner/bikes", body: Self.body(code: code, extra: #","uuid":"\#(Self.region)""#))
            #expect(claimed.status == 201, "\(claimed.body)")
            let bike = claimed.object["bike"] as? [String: Any] ?? [:]
            #expect(bike["rotatingBeacon"] as? String == id)
            #expect(bike["uuid"] is NSNull && bike["major"] is NSNull && bike["minor"] is NSNull, "\(bike)")
            let bikeId = try #require(claimed.object["id"] as? String)
            let token = try #require(claimed.object["ownerToken"] as? String)
            #expect(try await registry.request(.POST, "/owner/bikes", body: Self.body(code: code)).status == 403)
            #expect(try await registry.database.rotatingBeacons().map(\.state) == [.claimed])
            let page = try await registry.request(.GET, "/my/\(bikeId)/\(token)")
            #expect(
                page.status == 200 && page.body.contains("Rotating beacon \(id)") && !page.body.contains("minor -1"))
            #expect(try await registry.database.beacons().isEmpty, "a rotating beacon's bike is no fixed beacon")

            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            #expect(try await registry.request(.GET, "/bikes", bearer: key).body == "[]", "not missing: not listed")
            let patch = try await registry.request(
                .PATCH, "/owner/bikes/\(bikeId)", bearer: token, body: #"{"missing":true}"#)
            #expect(patch.status == 200, "\(patch.body)")

            let list = try await registry.request(.GET, "/bikes?missing=true", bearer: key)
            let entries = try #require(list.json as? [[String: Any]])
            #expect(entries.count == 1 && entries[0]["id"] as? String == bikeId)
            #expect(entries[0]["beaconUUID"] as? String == Self.region && entries[0]["beaconMinor"] == nil)
            let listed = entries[0]["beaconIdentities"] as? [[Int]]
            #expect(listed == Self.identities(at: clock.read()) && listed?.count == 241, "±2 h of 60 s epochs")
            #expect(!list.body.contains(id), "the list names the bike, never its beacon")

            // Within the epoch the list is the same; at the next it moves by one identity, under a new ETag.
            let etag = try #require(list.headers.first(name: "ETag"))
            clock.advance(by: 30)
            let same = try await registry.request(.GET, "/bikes", bearer: key, headers: [("If-None-Match", etag)])
            #expect(same.status == 304)
            clock.advance(by: 30)
            let moved = try await registry.request(.GET, "/bikes", bearer: key, headers: [("If-None-Match", etag)])
            #expect(moved.status == 200 && moved.headers.first(name: "ETag") != etag)
            let next = (moved.json as? [[String: Any]])?.first?["beaconIdentities"] as? [[Int]]
            #expect(next == Self.identities(at: clock.read()) && next?.first == listed?.dropFirst().first)

            // Deleting the bike frees its beacon for its code, as a fixed beacon's is.
            #expect(try await registry.request(.DELETE, "/owner/bikes/\(bikeId)", bearer: token).status == 204)
            #expect(try await registry.request(.GET, "/bikes", bearer: key).body == "[]")
            #expect(try await registry.request(.POST, "/owner/bikes", body: Self.body(code: code)).status == 201)

            // `beacons revoke rbn_…`: another beacon's code claims nothing from then on.
            let other = NewRotatingBeacon.newID()
            let otherCode = try await Self.issue(registry, id: other)
            let revoke = ["beacons", "revoke", other, "--database", registry.testDatabase.location]
            let revoked = try await BeacondRun.run(executable: BeacondRun.registryBinary.path, revoke)
            #expect(revoked.status == 0 && revoked.stdout.contains("revoked"), "\(revoked.stderr)")
            let again = try await BeacondRun.run(executable: BeacondRun.registryBinary.path, revoke)
            #expect(again.status != 0 && again.stderr.contains("revoked already"), "\(again.stderr)")
            #expect(try await registry.request(.POST, "/owner/bikes", body: Self.body(code: otherCode)).status == 403)
        }
    }

    /// The owner's page under open registration fills in the region's UUID and major: with a rotating beacon's code
    /// and no minor typed, they are not held against the code.
    @Test func thePageClaimsARotatingBeaconUnderOpenRegistration() async throws {
        let directory = try TemporaryDirectory("bike-registry-rotating-page")
        defer { directory.remove() }
        let registry = try await RegistryHarness(.sqlite, directory: directory.path, transport: .inProcess) {
            $0.beaconKeys = try? BeaconKeySealer(keyFileText: Self.keyFile)
        }
        try await withTeardown({ await registry.stop() }) {
            let code = try await Self.issue(registry)
            let form = try await Page.get(registry, "/")
            #expect(form.body.contains(#"name="major""#), "the open form fills in the region")
            let answer = try await Page.post(
                registry, "/register",
                [
                    "csrf": Page.csrf(in: form.body) ?? "", "claim_code": code, "uuid": Self.region, "major": "1",
                    "minor": "", "make": "Ducati", "model": "Monster", "colour": "red",
                ], cookie: form.cookie)
            #expect(answer.status == 201 && answer.body.contains("private-link"), "\(answer.body.prefix(400))")
            #expect(try await registry.database.rotatingBeacons().map(\.state) == [.claimed])
        }
    }

    @Test(arguments: StoreKind.allCases) func aSightingIsVerifiedByItsWindowAndACloneTellsNobody(store: StoreKind)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry-rotating")
        defer { directory.remove() }
        let receiver = NotificationReceiver()
        try await receiver.start()
        let registry = try await Self.harness(store, directory: directory.path)
        try await withTeardown({
            await registry.stop()
            await receiver.stop()
        }) {
            let (_, bikeId, token) = try await Self.claimed(registry)
            let patch = #"{"missing":true,"notify":{"webhook":"\#(receiver.url("/hook"))"}}"#
            #expect(
                try await registry.request(.PATCH, "/owner/bikes/\(bikeId)", bearer: token, body: patch).status == 200)
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            // A whole second, so that the date as written in the sighting falls in the same epoch as the identity.
            let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))

            // A clone of the identity it had 3 hours ago, posted straight to /sightings: kept, unverified, silent.
            let clone = Self.sighting(bikeId: bikeId, identity: Self.identity(at: now - 3 * 3_600), date: now)
            #expect(try await registry.post(clone, key: key).status == 201)
            #expect(try await registry.database.unverifiedSightings() == 1)
            // The identity of now, at another visit: verified, and its owner told.
            // Each identity is taken at its sighting's own date, so an epoch boundary between two reads of the clock
            // cannot make the registry learn an offset of one period.
            let heard = Self.sighting(bikeId: bikeId, identity: Self.identity(at: now + 1), date: now + 1)
            #expect(try await registry.post(heard, key: key).status == 201)
            let told = await receiver.waitFor(1)
            #expect(told.count == 1 && told[0].body.contains("bike.seen"))
            #expect(try await registry.database.unverifiedSightings() == 1)
            #expect(try await registry.settled().delivered == 1, "the clone's visit owed nothing")

            // A beacon whose clock runs 40 minutes fast: verified, and the list re-centred on what it taught.
            let fast = Self.sighting(bikeId: bikeId, identity: Self.identity(at: now + 2 + 2_400), date: now + 2)
            #expect(try await registry.post(fast, key: key).status == 201)
            #expect(try await registry.database.unverifiedSightings() == 1)
            #expect(await receiver.waitFor(2).count == 2)
            let asked = Date()
            let list = try await registry.request(.GET, "/bikes", bearer: key)
            let listed = (list.json as? [[String: Any]])?.first?["beaconIdentities"] as? [[Int]]
            // The list is of the epoch at which the server answered, between these two reads of the clock.
            let windows = [asked, Date()].map { Self.identities(at: $0, offset: 2_400) }
            #expect(windows.contains { $0 == listed }, "\(list.body.prefix(200))")
            let (_, bikes) = try await registry.database.missingBikes()
            #expect(bikes.first?.rotating?.clockOffset == 2_400)
            // The clone of 3 hours ago is now further still from the window: unverified again.
            let again = Self.sighting(bikeId: bikeId, identity: Self.identity(at: now - 3 * 3_600), date: now + 3)
            #expect(try await registry.post(again, key: key).status == 201)
            #expect(try await registry.database.unverifiedSightings() == 2)
        }
    }

    @Test func withoutTheKeyFileNoRotatingBikeIsListedOrVerified() async throws {
        let directory = try TemporaryDirectory("bike-registry-rotating")
        defer { directory.remove() }
        let registry = try await Self.harness(.sqlite, directory: directory.path, keys: false)
        try await withTeardown({ await registry.stop() }) {
            let (_, bikeId, token) = try await Self.claimed(registry)
            _ = try await registry.request(.PATCH, "/owner/bikes/\(bikeId)", bearer: token, body: #"{"missing":true}"#)
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            let list = try await registry.request(.GET, "/bikes", bearer: key)
            #expect(list.status == 200 && list.body == "[]")
            let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            let heard = Self.sighting(bikeId: bikeId, identity: Self.identity(at: now), date: now)
            #expect(try await registry.post(heard, key: key).status == 201)
            #expect(try await registry.database.unverifiedSightings() == 1)
        }
    }

    /// "Found a beacon?": a missing bike's rotating beacon, found by the identity a scanner shows now, is
    /// registered and missing, and a finder's report pauses it; an identity outside its window is nobody's; the
    /// operator's removal deletes the bike and revokes the beacon.
    @Test(arguments: StoreKind.allCases) func aFinderReportsARotatingBeaconByTheIdentityItShowsNow(store: StoreKind)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry-rotating-finder")
        defer { directory.remove() }
        let registry = try await Self.harness(store, directory: directory.path)
        try await withTeardown({ await registry.stop() }) {
            let (code, bikeId, token) = try await Self.claimed(registry)
            func path(_ identity: RotatingIdentity) -> String {
                "/beacons/\(Self.region.lowercased())/\(identity.major)/\(identity.minor)"
            }
            let now = Self.identity(at: Date())
            let parked = try await registry.request(.GET, path(now))
            #expect(parked.object["registered"] as? Bool == false, "not missing: not recognised, \(parked.body)")
            _ = try await registry.request(.PATCH, "/owner/bikes/\(bikeId)", bearer: token, body: #"{"missing":true}"#)
            let found = try await registry.request(.GET, path(now))
            #expect(found.object["registered"] as? Bool == true && found.object["missing"] as? Bool == true)
            let old = try await registry.request(.GET, path(Self.identity(at: Date() - 3 * 3_600)))
            #expect(old.object["registered"] as? Bool == false, "outside the window: \(old.body)")
            let other = try await registry.request(
                .GET, "/beacons/E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/\(now.major)/\(now.minor)")
            #expect(other.object["registered"] as? Bool == false, "another region's UUID")

            #expect(try await registry.request(.POST, path(now) + "/abuse").status == 202)
            let bike = try await registry.request(.GET, "/owner/bikes/\(bikeId)", bearer: token)
            #expect(bike.status == 200)
            let report = try #require(try await registry.database.abuseReports().first)
            #expect(report.bikeId == bikeId)
            #expect(try await registry.database.resolveAbuse(id: report.id, .removed, now: Date()))
            #expect(try await registry.database.rotatingBeacons().map(\.state) == [.revoked])
            #expect(try await registry.request(.POST, "/owner/bikes", body: Self.body(code: code)).status == 403)
        }
    }

    /// Every refresh that finds the window moved wants the new list at once: it is encoded once, and the others wait
    /// for it (a list of 10,000 rotating bikes is 170,000 HMACs to encode).
    @Test func refreshesAtAWindowsMoveEncodeItOnce() async throws {
        let directory = try TemporaryDirectory("bike-registry-rotating")
        defer { directory.remove() }
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let database = try await RegistryStores.open(directory.file("registry.sqlite"), connections: 4, logger: logger)
        try await withTeardown({ await database.close() }) {
            let sealer = try BeaconKeySealer(keyFileText: Self.keyFile)
            let id = NewRotatingBeacon.newID()
            let code = ClaimCode.generate()
            try await database.addRotatingBeacons(
                [
                    NewRotatingBeacon(
                        id: id, uuid: Self.region, period: 60, sealedKey: sealer.seal(Self.beaconKey, beacon: id),
                        codeHash: ClaimCode.hash(code)!)
                ], now: Date())
            guard
                case .registered(let registration) = try await database.claim(
                    codeHash: ClaimCode.hash(code)!, matching: BeaconMatch(),
                    bike: BikeDescription(make: "Ducati", model: "Monster", colour: "red"), now: Date())
            else { throw HarnessError("the code claimed nothing") }
            _ = try await database.update(
                id: registration.bike.id, ownerToken: registration.ownerToken, BikeChange(missing: true))
            let clock = TestTime()
            let encodings = NIOLockedValueBox(0)
            let snapshot = RegistrySnapshot(
                database: database, interval: .seconds(60), logger: logger, sealer: sealer, now: clock.read
            ) { entries in
                encodings.withLockedValue { $0 += 1 }
                return try StationList.encode(entries)
            }
            func refreshAll() async throws -> Set<String> {
                try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<50 { group.addTask { try await snapshot.list().etag } }
                    return try await group.reduce(into: Set<String>()) { $0.insert($1) }
                }
            }
            let first = try await refreshAll()
            #expect(first.count == 1 && encodings.withLockedValue { $0 } == 1)
            clock.advance(by: 60)
            let moved = try await refreshAll()
            #expect(moved.count == 1 && moved != first && encodings.withLockedValue { $0 } == 2)
        }
    }

    /// The list of 1,000 missing rotating bikes at the default period is under 512 KiB, before compression.
    @Test func aThousandRotatingBikesListInUnder512KiB() throws {
        let sealer = try BeaconKeySealer(keyFileText: Self.keyFile)
        let bikes = (0..<1_000).map { index in
            let id = "rbn_\(String(index, radix: 16))"
            let key = (0..<16).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) }
            return MissingBike(
                id: "bike_" + String(format: "%016x", index * 7_919), uuid: id, major: -1, minor: -1,
                make: "Triumph", model: "Street Triple", colour: "matt graphite",
                rotating: SealedRotatingBeacon(
                    id: id, uuid: Self.region, period: 900, sealedKey: sealer.seal(key, beacon: id), clockOffset: 0))
        }
        let listing = RotatingListing(bikes, sealer: sealer)
        let body = try StationList.encode(
            StationList.entries(bikes, identities: listing.identities(at: Int64(Date().timeIntervalSince1970))))
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [[String: Any]])
        #expect(entries.count == 1_000 && entries.allSatisfy { ($0["beaconIdentities"] as? [[Int]])?.count == 17 })
        #expect(body.readableBytes < 512 * 1_024, "\(body.readableBytes) bytes")
    }
}
