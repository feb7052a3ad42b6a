import BeaconCapture
public import BeaconEngine
public import BeaconWire

/// `beacond replay --missing`: runs captures through the engine and prints sightings instead of adverts.
///
/// Time is the capture's own: the engine's clock moves to each advert's timestamp (never backwards, so
/// concatenated or slightly disordered captures cannot confuse its timeouts). Visits still open at the end
/// are closed with `exit` at their last-seen time.
public struct SightingReplay {
    public var format: ReplayCommand.Format
    public var configuration: EngineConfiguration
    public var missing: MissingBikeSet

    public init(format: ReplayCommand.Format, configuration: EngineConfiguration, missing: MissingBikeSet) {
        self.format = format
        self.configuration = configuration
        self.missing = missing
    }

    public struct Result {
        public var decode = DecodeCounters()
        public var engine = EngineCounters()
        /// iBeacon adverts without a timestamp (plain hex text), timed as the last timestamp before them.
        public var untimedAdverts = 0
    }

    /// Opens every file before printing anything, so a bad path fails fast with nothing half-printed.
    public func run(paths: [String], output: inout OutputBuffer) throws -> Result {
        let files = try paths.map { path throws(CaptureFileError) in try CaptureFile(path: path) }
        var result = Result()
        var engine: RangingEngine<CaptureTime>?
        var now = CaptureTime(nanosecondsSinceEpoch: 0)
        var sightings: [Sighting] = []
        var table = SightingTable()
        if format == .table { try output.write(SightingTable.header) }
        func flush() throws {
            for sighting in sightings {
                try output.write(format == .jsonl ? SightingLine.json(sighting) : table.rows(for: sighting))
            }
            sightings.removeAll(keepingCapacity: true)
        }
        for file in files {
            result.decode.add(
                try file.forEachAdvert { advert, _ in
                    guard let beaconAdvert = BeaconAdvert(advert, fallbackTime: now) else { return }
                    if advert.time == nil { result.untimedAdverts += 1 }
                    now = max(now, beaconAdvert.time)
                    if engine == nil {
                        engine = RangingEngine(configuration: configuration, missing: missing, startingAt: now)
                    }
                    engine!.observe(beaconAdvert, at: now, into: &sightings)
                    if !sightings.isEmpty { try flush() }
                })
        }
        engine?.finish(into: &sightings)
        try flush()
        result.engine = engine?.counters ?? EngineCounters()
        return result
    }
}
