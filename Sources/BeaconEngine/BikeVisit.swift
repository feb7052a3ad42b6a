import BeaconWire

/// The visit of a rotating beacon's bike: one across every identity it advertises while it stays, so a bike parked
/// through several rotations is one enter, its updates and one exit (docs/rotating-beacon.md).
///
/// `visit` is kept as a fixed beacon's would be, begun by the first identity heard, which with its first-seen time
/// names the visit's sightings; `heard` is the identity heard last, which each sighting carries so the registry can
/// verify that the bike advertised it at the sighting's time.
struct BikeVisit: Sendable {
    let bikeID: String
    var visit: BeaconVisit
    private(set) var heard: BeaconIdentity

    init(bikeID: String, region: Int, advert: BeaconAdvert, at now: EngineTime) {
        self.bikeID = bikeID
        visit = BeaconVisit(region: region, advert: advert, at: now)
        heard = visit.beacon
    }

    mutating func hear(_ advert: BeaconAdvert, at now: EngineTime) {
        visit.heard(advert, at: now)
        heard = BeaconIdentity(uuid: advert.beacon.uuid, major: advert.beacon.major, minor: advert.beacon.minor)
    }

    func sighting(_ report: SightingPolicy.Report, station: String) -> Sighting {
        var sighting = visit.sighting(report, bikeID: bikeID, station: station)
        sighting.beacon = heard
        return sighting
    }
}

/// Whose sightings a beacon's adverts make: worked out once a visit, when the beacon is first found missing.
enum VisitRoute: UInt8, Sendable {
    /// Not yet heard while missing.
    case unresolved
    /// A fixed beacon: the visit reports its own sightings.
    case beacon
    /// One of a rotating beacon's identities: its bike's visit (`BikeVisit`, by `BeaconVisit.bikeID` and
    /// `bikeSlot`) reports.
    case bike
}
