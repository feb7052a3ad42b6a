import BeaconDaemon
import StationSettings
import TextFormats

/// One link `beacond doctor` checks, and what it found: ok, a warning that does not stop the service, or a failure
/// with the command that fixes it.
struct DoctorCheck: Encodable, Equatable, Sendable {
    enum Status: String, Encodable, Sendable {
        case ok, warn, fail
    }

    var check: String
    var status: Status
    var detail: String
    var fix: String?

    static func ok(_ check: String, _ detail: String) -> DoctorCheck {
        DoctorCheck(check: check, status: .ok, detail: detail, fix: nil)
    }

    static func warn(_ check: String, _ detail: String, fix: String? = nil) -> DoctorCheck {
        DoctorCheck(check: check, status: .warn, detail: detail, fix: fix)
    }

    static func fail(_ check: String, _ detail: String, fix: String) -> DoctorCheck {
        DoctorCheck(check: check, status: .fail, detail: detail, fix: fix)
    }

    /// One line: `ok    adapter hci0: …`, or `FAIL  adapter hci0: … → fix: …`. Control characters in what the
    /// system said (an error text, a file's content) are shown escaped, so they cannot drive the terminal.
    var line: String {
        let label =
            switch status {
            case .ok: "ok  "
            case .warn: "warn"
            case .fail: "FAIL"
            }
        let fixText = fix.map { " → fix: \($0)" } ?? ""
        return "\(label)  \(check): \(detail)\(fixText)".escapingControlCharacters
    }
}

/// All the checks, as printed and as `--json` gives them.
struct DoctorReport: Encodable, Sendable {
    var checks: [DoctorCheck]
    /// True when nothing failed (warnings do not count): the exit status is 0.
    var passed: Bool { !checks.contains { $0.status == .fail } }

    var text: String { checks.map(\.line).joined(separator: "\n") + "\n" }

    enum CodingKeys: String, CodingKey { case passed, checks }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(passed, forKey: .passed)
        try container.encode(checks, forKey: .checks)
    }
}
