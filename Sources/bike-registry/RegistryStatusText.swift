import Foundation

/// `bike-registry status`'s text and JSON.
enum RegistryStatusText {
    static func text(_ status: RegistryStatus) -> String {
        var lines: [String] = []
        let readiness =
            switch status.ready {
            case true?: "ready"
            case false?: "NOT READY"
            case nil: "readiness not known (read from the database; give --metrics to ask the server)"
            }
        lines.append("bike-registry\(status.version.map { " " + $0 } ?? ""): \(readiness)")
        lines.append(row("Source", status.source))
        if let primary = status.primary { lines.append(row("Database", "PostgreSQL, primary \(primary)")) }
        let (registered, missing) = (status.bikes.map { "\($0)" } ?? "?", status.missingBikes.map { "\($0)" } ?? "?")
        var bikes = "\(registered) registered, \(missing) missing"
        if let bytes = status.listBytes { bikes += "; the stations' list \(bytes) bytes" }
        lines.append(row("Bikes", bikes))
        for (index, channel) in channels(status).enumerated() {
            lines.append(row(index == 0 ? "Messages" : "", messages(status, channel)))
        }
        if channels(status).isEmpty { lines.append(row("Messages", "none owed")) }
        lines.append(row("Stations", "\(status.listening) listening, \(status.silent) silent"))
        for station in status.stations where !status.isListening(station) {
            let refreshed =
                station.lastRefresh.map { "last fetched the list \(ago($0, status.now))" } ?? "never fetched the list"
            let sighted = station.lastSighting.map { ", last sighting \(ago($0, status.now))" } ?? ""
            lines.append(row("", "\(station.name): silent, \(refreshed)\(sighted)"))
        }
        let problems = status.problems
        lines.append(row("Problems", problems.isEmpty ? "none" : problems[0]))
        for problem in problems.dropFirst() { lines.append(row("", problem)) }
        return lines.joined(separator: "\n") + "\n"
    }

    static func json(_ status: RegistryStatus) -> [String: Any] {
        func optional(_ value: Any?) -> Any { value ?? NSNull() }
        return [
            "source": status.source, "ready": optional(status.ready), "version": optional(status.version),
            "primary": optional(status.primary), "bikes": optional(status.bikes),
            "missingBikes": optional(status.missingBikes), "listBytes": optional(status.listBytes),
            "channels": Dictionary(
                uniqueKeysWithValues: channels(status).map { channel in
                    let owed = status.owed[channel]
                    return (
                        channel,
                        [
                            "owed": owed?.messages ?? 0, "oldestOwedSeconds": optional(owed?.oldestSeconds),
                            "failingTargets": status.failingTargets[channel] ?? 0,
                            "attempts": optional(status.attempts[channel]),
                        ] as [String: Any]
                    )
                }),
            "listening": status.listening, "silent": status.silent,
            "stations": status.stations.map { station in
                [
                    "name": station.name, "listening": status.isListening(station),
                    "lastRefresh": optional(station.lastRefresh.map(iso)),
                    "lastSighting": optional(station.lastSighting.map(iso)),
                ] as [String: Any]
            },
            "problems": status.problems,
        ]
    }

    private static func channels(_ status: RegistryStatus) -> [String] {
        Set(status.owed.keys).union(status.failingTargets.keys).union(status.attempts.keys).sorted()
    }

    private static func messages(_ status: RegistryStatus, _ channel: String) -> String {
        var parts: [String] = []
        if let owed = status.owed[channel], owed.messages > 0 {
            parts.append(
                "\(owed.messages) owed" + (owed.oldestSeconds.map { ", oldest \(RegistryStatus.readable($0))" } ?? ""))
        } else {
            parts.append("none owed")
        }
        if let failing = status.failingTargets[channel], failing > 0 { parts.append("\(failing) targets failing") }
        if let attempts = status.attempts[channel] {
            let said = ["delivered", "retried", "refused", "abandoned"].map { "\(attempts[$0] ?? 0) \($0)" }
            parts.append("since start " + said.joined(separator: ", "))
        }
        return "\(channel): " + parts.joined(separator: "; ")
    }

    private static func row(_ heading: String, _ text: String) -> String {
        heading.padding(toLength: 10, withPad: " ", startingAt: 0) + " " + text
    }

    private static func ago(_ date: Date, _ now: Date) -> String {
        "\(RegistryStatus.readable(max(0, now.timeIntervalSince(date)))) ago"
    }

    private static func iso(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }
}
