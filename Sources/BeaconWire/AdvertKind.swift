/// What an advertisement carries, as far as beacond cares.
///
/// Only `.iBeacon` adverts reach the engine; the rest are counted so that a replay's summary tells a
/// quiet capture ("nothing advertising") apart from a busy one with no iBeacons in it.
///
/// The cases are declared most specific first: an advert is the kind of its most specific AD structure, so the
/// decoder keeps the smallest raw value it sees (`AdvertisingData.Rank`).
public enum AdvertKind: UInt8, CaseIterable, Sendable {
    case iBeacon
    /// AltBeacon: manufacturer data with beacon code 0xBEAC after any company ID.
    case altBeacon
    /// Eddystone: the 16-bit service UUID 0xFEAA in service data or a service UUID list.
    case eddystone
    /// Apple manufacturer data that is not an iBeacon (Find My, Continuity, …), or has the iBeacon
    /// prefix but not its exact length.
    case appleOther
    case other

    public var name: String {
        switch self {
        case .iBeacon: "iBeacon"
        case .appleOther: "Apple (not iBeacon)"
        case .altBeacon: "AltBeacon"
        case .eddystone: "Eddystone"
        case .other: "other"
        }
    }
}
