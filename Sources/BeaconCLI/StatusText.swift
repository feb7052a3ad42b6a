import BeaconControl
import BeaconDaemon

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `beacond status` for people: a café owner should see at a glance whether it works, what it knows and
/// what it has seen. Fits an 80-column terminal; times are local.
enum StatusText {
    static func render(_ status: StatusReport, now: Date) -> String {
        var lines: [String] = []
        let health = status.healthy ? "healthy" : "UNHEALTHY"
        lines.append("beacond \(status.version): \(health), up \(duration(status.uptimeSeconds)) (pid \(status.pid))")
        for problem in status.problems { lines.append("  ! \(problem)") }
        for warning in status.warnings { lines.append("  ~ \(warning)") }
        lines += captureLines(status)
        lines += missingLines(status, now: now)
        lines += outboxLines(status)
        lines += sightingLines(status)
        return lines.joined(separator: "\n") + "\n"
    }

    static func captureLines(_ status: StatusReport) -> [String] {
        var lines: [String] = []
        let capture = status.capture
        lines.append(
            row(
                "Capture",
                "\(capture.backend), \(capture.state); \(rate(capture.advertsPerSecond)) adverts/s, "
                    + "\(rate(capture.iBeaconsPerSecond)) iBeacons/s"))
        for adapter in capture.adapters { lines.append(row("", "\(shortened(adapter.name, 52)): \(adapter.state)")) }
        lines.append(
            row(
                "",
                "\(capture.adverts) adverts, \(capture.iBeacons) iBeacons; ring drops \(capture.ringDrops); "
                    + "recoveries \(capture.recoveries)"))
        if capture.dropped.isEmpty {
            lines.append(row("Dropped", "nothing"))
        } else {
            for (reason, count) in capture.dropped.sorted(by: { $0.key < $1.key }) {
                lines.append(row("Dropped", "\(count) \(reason)"))
            }
        }
        if let error = capture.lastError { lines.append(row("", "last error: \(error)")) }
        if let station = capture.stationBeacon {
            let heard = station.lastHeard == nil ? "never heard" : "heard \(duration(station.silentSeconds)) ago"
            lines.append(row("Station", "own beacon \(heard)\(station.healthy ? "" : " (too long)")"))
        }
        return lines
    }

    static func missingLines(_ status: StatusReport, now: Date) -> [String] {
        var lines: [String] = []
        let missing = status.missingSet
        let age = missing.ageSeconds.map { ", \(duration($0)) old" } ?? ""
        lines.append(row("Missing", "\(missing.size) bikes, from \(missing.source)\(age)"))
        lines.append(row("", "registry \(shortened(missing.registry, 60))"))
        var refresh: [String] = []
        if let last = missing.lastRefresh.flatMap(date) { refresh.append("last refresh \(ago(last, now: now))") }
        if let asking = missing.askingSeconds {
            refresh.append("asking the registry for \(duration(asking))")
        } else if let next = missing.nextRefresh.flatMap(date) {
            refresh.append("next \(until(next, now: now))")
        }
        if missing.skipped > 0 { refresh.append("\(missing.skipped) entries skipped") }
        if !refresh.isEmpty { lines.append(row("", refresh.joined(separator: ", "))) }
        if let changes = missing.changesApplied, let whole = missing.wholeLists, changes + whole > 0 {
            lines.append(row("", "since start: \(whole) whole lists, \(changes) by their changes"))
        }
        if let refused = missing.changesRefused {
            let when = missing.changesRefusedAt.flatMap(date).map { " (\(ago($0, now: now)))" } ?? ""
            lines.append(row("", "whole list fetched\(when): \(shortened(refused, 48))"))
        }
        if let error = missing.lastError { lines.append(row("", "last error: \(shortened(error, 56))")) }
        return lines
    }

    static func outboxLines(_ status: StatusReport) -> [String] {
        var lines: [String] = []
        let outbox = status.outbox
        let oldest = outbox.oldestAgeSeconds.map { ", oldest \(duration($0))" } ?? ""
        lines.append(row("Outbox", "\(outbox.depth) waiting\(oldest); \(outbox.delivered) delivered since start"))
        lines.append(
            row("", "\(outbox.deadLetters) dead letters, \(outbox.evicted) evicted, \(outbox.retries) retries"))
        if outbox.uncommitted > 0 {
            lines.append(row("", "\(outbox.uncommitted) sightings held in memory (outbox full?)"))
        }
        if let error = outbox.lastError { lines.append(row("", "last error: \(shortened(error, 56))")) }
        // With one sink its line is the outbox's; with more, each says what it is still owed.
        if let sinks = outbox.sinks, sinks.count > 1 {
            for sink in sinks {
                let delivered = sink.delivered.map { ", \($0) delivered" } ?? ""
                let error = (sink.held ?? sink.lastError).map { "; \(shortened($0, 40))" } ?? ""
                lines.append(
                    row(
                        "",
                        "\(sink.name): \(sink.depth) waiting\(delivered), \(sink.deadLetters) dead letters\(error)"))
            }
        }
        return lines
    }

    static func sightingLines(_ status: StatusReport) -> [String] {
        var lines: [String] = []
        let sightings = status.sightings
        lines.append(row("Sightings", "\(sightings.today) today; \(sightings.openVisits) beacons here now"))
        for recent in sightings.recent {
            let time = date(recent.time).map(localClock) ?? recent.time
            let rssi = recent.rssi.map { "\(Int($0.rounded())) dBm" } ?? "no RSSI"
            lines.append(
                "  \(time)  \(pad(recent.kind, 6)) \(pad(shortened(recent.bikeId, 20), 20)) \(pad(recent.proximity, 9)) "
                    + "\(pad(rssi, 8)) \(recent.delivery)")
        }
        return lines
    }

    static func row(_ label: String, _ text: String) -> String { pad(label, 11) + text }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    static func shortened(_ text: String, _ width: Int) -> String {
        text.count <= width ? text : String(text.prefix(width - 1)) + "…"
    }

    /// One decimal, halves rounded away from zero (the value as computed, so 170.45 shows 170.5).
    static func rate(_ value: Double) -> String {
        guard value.isFinite else { return "\(value)" }
        let tenths = Int((abs(value) * 10).rounded())
        return "\(value < 0 && tenths > 0 ? "-" : "")\(tenths / 10).\(tenths % 10)"
    }

    /// `HH:mm:ss` in the machine's time zone (the café's).
    static func localClock(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return "--:--:--" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }

    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.down))
        switch total {
        case ..<60: return "\(max(0, total)) s"
        case ..<3_600: return "\(total / 60) min \(total % 60) s"
        case ..<86_400: return "\(total / 3_600) h \(total % 3_600 / 60) min"
        default: return "\(total / 86_400) d \(total % 86_400 / 3_600) h"
        }
    }

    static func ago(_ date: Date, now: Date) -> String { "\(duration(now.timeIntervalSince(date))) ago" }

    static func until(_ date: Date, now: Date) -> String {
        let seconds = date.timeIntervalSince(now)
        return seconds <= 0 ? "due now" : "in \(duration(seconds))"
    }

    static func date(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}
