import BeaconWire

/// The engine's internal clock: nanoseconds since it started, on whatever clock the caller uses.
///
/// The engine is generic over a `Clock` at its surface, but converts each instant to this plain integer on the
/// way in, so its per-advert state (visits, policies) is concrete code: generic state would make every advert
/// look up type metadata at run time when the engine is called from another module.
@usableFromInline typealias EngineTime = Int64

extension Duration {
    var engineTime: EngineTime { saturatingNanoseconds }
}

/// The configuration's durations, converted once.
struct EngineTiming: Sendable {
    var exitTimeout: EngineTime
    var exitTimeoutIntervals: EngineTime
    var maximumExitTimeout: EngineTime
    var reportInterval: EngineTime
    var stationSilenceLimit: EngineTime
    var sweepInterval: EngineTime

    init(_ configuration: EngineConfiguration) {
        exitTimeout = configuration.exitTimeout.engineTime
        exitTimeoutIntervals = EngineTime(configuration.exitTimeoutIntervals)
        maximumExitTimeout = max(configuration.maximumExitTimeout.engineTime, exitTimeout)
        reportInterval = configuration.reportInterval.engineTime
        stationSilenceLimit = configuration.stationSilenceLimit.engineTime
        sweepInterval = max(configuration.sweepInterval.engineTime, 1)
    }
}
