public import BeaconWire

/// The summary a replay prints on stderr: what was read, what kinds of adverts, what was dropped and why.
public enum DecodeSummary {
    public static func render(_ counters: DecodeCounters, files: Int) -> String {
        var lines = [
            "beacond: \(files) file\(files == 1 ? "" : "s"), \(counters.records) records, \(counters.hciEvents) HCI events, "
                + "\(counters.advertisingReports) advertising reports, \(counters.skipped) other packets skipped"
        ]
        let kinds = AdvertKind.allCases.filter { counters.byKind[$0] > 0 }.map { "\(counters.byKind[$0]) \($0.name)" }
        lines.append("  adverts: " + (kinds.isEmpty ? "none" : kinds.joined(separator: ", ")))
        let drops = DropReason.allCases.filter { counters.drops[$0] > 0 }
        if drops.isEmpty {
            lines.append("  dropped: nothing")
        } else {
            lines.append("  dropped: \(counters.totalDrops)")
            let width = drops.map { String(counters.drops[$0]).count }.max() ?? 1
            for reason in drops {
                lines.append("    " + leftPad(String(counters.drops[reason]), width) + "  " + reason.label)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
