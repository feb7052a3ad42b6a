public import BeaconEngine

/// The lines `beacond replay --missing` adds to the stderr summary: the bike list and what the engine did.
public enum SightingSummary {
    public static func render(_ result: SightingReplay.Result, missing: MissingBikeSet.Statistics) -> String {
        var list = "  bike list: \(missing.missing) missing, \(missing.notMissing) not missing"
        if missing.rejectedTotal > 0 {
            let reasons = BikeList.Rejection.allCases.compactMap { reason in
                missing.rejected[reason].map { "\($0) \(reason.rawValue)" }
            }
            list += ", \(missing.rejectedTotal) skipped (" + reasons.joined(separator: "; ") + ")"
        }
        if missing.outsideRegions > 0 { list += ", \(missing.outsideRegions) outside the regions" }
        if missing.duplicates > 0 { list += ", \(missing.duplicates) duplicate beacons" }
        let engine = result.engine
        var lines = [
            list,
            "  engine: \(engine.adverts) iBeacon adverts, \(engine.outsideRegions) outside the regions, "
                + "\(engine.visitsOpened) visits; sightings: \(engine.enters) enter, \(engine.updates) update, \(engine.exits) exit",
        ]
        if engine.stationAdverts > 0 { lines.append("  station beacon: \(engine.stationAdverts) adverts") }
        if result.untimedAdverts > 0 {
            lines.append(
                "  note: \(result.untimedAdverts) adverts had no timestamp (hex text); they count as heard at the previous timestamp"
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
