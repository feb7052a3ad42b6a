public import BeaconDelivery
import BeaconEngine
public import BeaconRegistryClient
public import BeaconWire
import LockedValue

/// The registry the poster and refresher talk to, swappable on SIGHUP (a new URL, auth mode or API key)
/// without restarting them. A request already under way finishes with the registry it started with.
public final class SwitchableRegistry: Registry {
    private let current: LockedValue<any Registry>

    public init(_ registry: any Registry) { current = LockedValue(registry) }

    public func replace(with registry: any Registry) { current.withLock { $0 = registry } }

    public var displayName: String { current.withLock { $0.displayName } }

    /// Whichever registry is configured, it is the registry's line.
    public var id: SinkID { .registry }

    public func fetchMissing(validators: CacheValidators?, regions: [BeaconRegion], recording: ListRecording?)
        async throws(RegistryError) -> RegistryFetch
    {
        try await current.withLock { $0 }.fetchMissing(validators: validators, regions: regions, recording: recording)
    }

    public func deliver(_ sighting: OutgoingSighting) async -> DeliveryOutcome {
        await current.withLock { $0 }.deliver(sighting)
    }
}
