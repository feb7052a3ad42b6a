import BeaconOutbox

/// Which sink a line of the outbox belongs to. The outbox keeps a line of sightings per sink under this name, so
/// it must stay the same across restarts: a sink whose name changed finds nothing owed to it, and what its old name
/// was owed is dropped as a sink no longer configured. Every sink says its own; there is no default.
public struct SinkID: Hashable, Sendable, CustomStringConvertible {
    public let name: String

    public init(_ name: String) { self.name = name }

    public var description: String { name }

    /// The registry's line: HTTP or file, whichever the configuration names (the one line every outbox before
    /// sinks had).
    public static let registry = SinkID(Outbox.registry)
}

/// How one attempt to hand a sighting to a sink ended, in terms every sink can give: nothing here is HTTP's.
public enum DeliveryOutcome: Hashable, Sendable {
    /// The sink has it (a 2xx, a PUBACK): no longer owed to it.
    case delivered
    /// Not this time (a timeout, a 5xx, a broker that dropped the publish): try again, not before `after` when the
    /// sink said when.
    case retry(after: Duration?, reason: String)
    /// The sink will never take this sighting: it goes to the sink's dead letters, with `code` if the sink has one
    /// (an HTTP status) for whoever reads them.
    case refused(reason: String, code: Int?)
    /// The sink can take no sighting at all until something changes (a refused key, a registry that moved, a
    /// broker that is away): every sighting is kept, and the line waits, slowly, for a resume.
    case held(reason: String)
}

/// A place sightings go (the registry, an MQTT broker), as its poster sees it: one attempt to deliver one sighting.
/// Adding a sink is a type that conforms and one entry in the daemon's list of sinks; its poster, its line of the
/// outbox, its dead letters, `status` and `/metrics` follow from its `id`.
public protocol SightingSink: Sendable {
    /// Its line of the outbox.
    var id: SinkID { get }
    /// Where it is, for logs and status, with any key redacted.
    var displayName: String { get }
    func deliver(_ sighting: OutgoingSighting) async -> DeliveryOutcome
    /// Calls `action` whenever the sink becomes able to take sightings again (a broker's connection), so its
    /// poster resumes a held line at once instead of waiting out the hold.
    func whenAvailable(_ action: @escaping @Sendable () -> Void)
}

extension SightingSink {
    /// A sink that cannot tell when it is back (a registry, asked again after a hold's wait).
    public func whenAvailable(_ action: @escaping @Sendable () -> Void) {}
}
