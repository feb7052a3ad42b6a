import BeaconDelivery
import BeaconOutbox
import Logging
import ServiceLifecycle

/// Every sink the daemon delivers to, each with a poster of its own draining its line of the outbox, so one that
/// is away holds up no other. Built from one list of sinks: nudging, resuming, `status`, `/metrics` and the
/// services treat every sink alike, whatever it is.
struct DeliveryLines: Sendable {
    let posters: [SightingPoster<ContinuousClock>]

    init(
        sinks: [any SightingSink], outbox: Outbox, logger: Logger, wallClock: @escaping @Sendable () -> Int64,
        systemClocks: (@Sendable () -> ClockReading)?, clockWait: Duration
    ) {
        posters = sinks.map { sink in
            let poster = SightingPoster(
                outbox: outbox, sink: sink, clock: ContinuousClock(), logger: logger, wallClock: wallClock,
                systemClocks: systemClocks, clockWait: clockWait)
            // Off the sink's own thread (libmosquitto's) first: the poster's state is for Swift's threads. Held
            // strongly, not weakly: a sink that keeps this (the broker's) is let go of it when it stops, and a weak
            // reference's side table, alive at exit with the poster, is a leak to LeakSanitizer (CI's
            // AddressSanitizer step of faad49b: every daemon under it exited 23).
            sink.whenAvailable { Task { poster.resume() } }
            return poster
        }
    }

    /// A sighting is in the outbox.
    func nudge() { for poster in posters { poster.nudge() } }

    /// The configuration changed, or dead letters came back: held lines are tried again at once.
    func resume() { for poster in posters { poster.resume() } }

    /// Each sink's delivery so far, in the list's order.
    var statistics: [(sink: SinkID, statistics: PosterStatistics)] { posters.map { ($0.sink, $0.statistics) } }

    /// One service per poster; a stop lets the post under way finish and be written down.
    var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        posters.map { poster in
            .init(service: StoppableService("\(poster.sink) poster", stop: { poster.stop() }) { await poster.run() })
        }
    }
}
