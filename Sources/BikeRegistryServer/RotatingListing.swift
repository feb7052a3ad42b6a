import BikeRegistryCore
import BikeRegistryStore
import Crypto
import Foundation

/// The missing rotating bikes of one version of the list, their keys opened (`BeaconKeySealer`): what `GET /bikes`
/// lists for them at a moment, how long that listing lasts, and whether a sighting's identity is theirs. Pure: the
/// time is given, and nothing is stored.
struct RotatingListing: Sendable {
    struct Beacon: Sendable {
        /// The beacon's id (`rbn_…`), which its bike's row holds (`RotatingBeaconClaim`).
        var id: String
        var key: SymmetricKey
        var window: RotatingWindow
        /// The region's UUID the beacon advertises.
        var uuid: String
    }

    /// By bike id.
    let beacons: [String: Beacon]
    /// Bikes whose key could not be opened (no key file, another key file, an altered seal): not listed, and their
    /// sightings stay unverified.
    let unopened: [String]

    init(_ bikes: [MissingBike], sealer: BeaconKeySealer?) {
        var beacons: [String: Beacon] = [:]
        var unopened: [String] = []
        for bike in bikes {
            guard let rotating = bike.rotating else { continue }
            guard let sealer, let key = try? sealer.open(rotating.sealedKey, beacon: rotating.id) else {
                unopened.append(bike.id)
                continue
            }
            beacons[bike.id] = Beacon(
                id: rotating.id, key: SymmetricKey(data: key),
                window: RotatingWindow(period: UInt32(clamping: rotating.period), offset: rotating.clockOffset),
                uuid: rotating.uuid)
        }
        self.beacons = beacons
        self.unopened = unopened
    }

    /// The moment the listing at `time` began: the latest start of any beacon's epoch at or before it
    /// (`RotatingWindow.epochStart`), the same for every server of one database, so it can name the list (its ETag).
    /// nil when there is no rotating bike: the list then never changes with time.
    func start(at time: Int64) -> Int64? {
        beacons.values.map { $0.window.epochStart(at: time) }.max()
    }

    /// The first moment after `time` at which some beacon's window moves, and the listing with it.
    func end(at time: Int64) -> Int64? {
        beacons.values.map { $0.window.epochStart(at: time) + Int64($0.window.period) }.min()
    }

    /// Every bike's identities at `time`, as `[major, minor]` pairs, oldest first, by bike id.
    func identities(at time: Int64) -> [String: [[Int]]] {
        beacons.mapValues { beacon in
            beacon.window.identities(key: beacon.key, at: time).map { [Int($0.major), Int($0.minor)] }
        }
    }

    /// The bike each identity of `identities` is, by `indexKey`: what a finder's lookup reads. Two bikes'
    /// identities can coincide (2^-32 a pair); the first bike by id keeps it.
    static func index(_ identities: [String: [[Int]]]) -> [UInt32: String] {
        var index: [UInt32: String] = [:]
        for bike in identities.keys.sorted() {
            for pair in identities[bike] ?? [] {
                let identity = indexKey(major: UInt16(pair[0]), minor: UInt16(pair[1]))
                if index[identity] == nil { index[identity] = bike }
            }
        }
        return index
    }

    /// An identity's key in `index`.
    static func indexKey(major: UInt16, minor: UInt16) -> UInt32 { UInt32(major) << 16 | UInt32(minor) }

    /// Whether (`major`, `minor`) heard at `time` is the bike's identity for an epoch of its window, and if so the
    /// offset that sighting teaches (`RotatingWindow.learn`).
    func verify(bikeId: String, major: Int, minor: Int, at time: Int64) -> Verification {
        guard let beacon = beacons[bikeId] else { return .notListed }
        guard let major = UInt16(exactly: major), let minor = UInt16(exactly: minor),
            let epoch = beacon.window.verify(key: beacon.key, at: time, major: major, minor: minor)
        else { return .failed }
        return .verified(learnedOffset: beacon.window.learn(epoch: epoch, at: time), offset: beacon.window.offset)
    }

    enum Verification: Equatable {
        /// Not a missing rotating bike of this list: a fixed beacon's, or one the list does not hold.
        case notListed
        case failed
        case verified(learnedOffset: Int64, offset: Int64)
    }
}
