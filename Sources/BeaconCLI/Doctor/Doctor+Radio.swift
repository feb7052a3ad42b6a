import BeaconCapture
import BeaconDBus
import BeaconDaemon
import BeaconPOSIX
import BeaconWire
import StationSettings

/// The radio's links: the adapter in the kernel, bluetoothd on the bus, and the capabilities the backend needs.
extension Doctor {
    func checkAdapter(_ adapter: String) -> DoctorCheck {
        let name = "adapter \(adapter)"
        let probe: AdapterProbe
        do {
            probe = try AdapterProbe.probe(adapter)
        } catch {
            switch error.code {
            case .noBluetooth:
                return .fail(
                    name, "this kernel has no Bluetooth support",
                    fix: "sudo modprobe bluetooth (or use a kernel with Bluetooth)")
            case .noAdapter:
                return .fail(
                    name, "no such adapter", fix: "plug the adapter in; `btmgmt info` lists the adapters the kernel has"
                )
            default:
                return .fail(name, error.description, fix: "see `journalctl -k | grep -i bluetooth`")
            }
        }
        // The check is named as configured; the detail names the other of name and address.
        let what = adapter == probe.name ? probe.address : probe.name
        if probe.hardBlocked == true {
            return .fail(name, "blocked by a hardware rfkill switch (\(what))", fix: "turn the radio's switch on")
        }
        if probe.softBlocked == true {
            return .fail(name, "blocked by rfkill (\(what))", fix: "sudo rfkill unblock bluetooth")
        }
        let index = probe.name.dropFirst(3)
        if !probe.up {
            if configuration.backend == .hci {
                return .warn(name, "down (\(what)); the hci backend brings it up itself (CAP_NET_ADMIN)")
            }
            return .fail(name, "not powered (\(what))", fix: "sudo btmgmt --index \(index) power on")
        }
        let rfkill = probe.softBlocked == nil ? "no rfkill switch" : "not blocked"
        return .ok(name, "\(what), powered, \(rfkill)")
    }

    func checkBluetoothd() -> DoctorCheck {
        let name = "bluetoothd"
        let needed = configuration.backend != .hci
        guard let bus else {
            let detail = "cannot reach the system bus: \(busError ?? "no answer")"
            return needed
                ? .fail(name, detail, fix: "sudo systemctl start dbus")
                : .ok(name, "not needed by the hci backend (\(detail))")
        }
        let probe: BluetoothdProbe
        do {
            probe = try BluetoothdProbe.probe(on: bus)
        } catch {
            return needed
                ? .fail(name, "cannot ask bluetoothd: \(error.message)", fix: "sudo systemctl restart bluetooth")
                : .ok(name, "not needed by the hci backend")
        }
        guard probe.running else {
            return needed
                ? .fail(
                    name, "not running; the \(configuration.backend.rawValue) backend needs it",
                    fix: "sudo systemctl enable --now bluetooth")
                : .ok(name, "not running, and the hci backend does not need it")
        }
        let version = probe.executable.flatMap { ProgramOutput.run([$0, "--version"]) }.map {
            $0.output.split(whereSeparator: \.isNewline).first.map(String.init) ?? "?"
        }
        let running =
            "running" + (version.map { ", version \($0)" } ?? "") + (probe.processID.map { " (pid \($0))" } ?? "")
        guard needed else { return .ok(name, "\(running); the hci backend does not use it") }
        let adapters = configuration.adapters.map { configured in
            (
                configured,
                probe.adapters.first { $0.name == configured || $0.address.lowercased() == configured.lowercased() }
            )
        }
        if let missing = adapters.first(where: { $0.1 == nil }) {
            return .fail(
                name, "\(running), but it has no adapter \(missing.0)",
                fix: "sudo systemctl restart bluetooth; `bluetoothctl list` shows its adapters")
        }
        let withoutMonitor = adapters.compactMap { $0.1 }.filter { !$0.monitorAPI }.map(\.name)
        if !withoutMonitor.isEmpty {
            return .warn(
                name,
                "\(running); advertisement-monitor API off on \(withoutMonitor.joined(separator: ", ")), so beacond scans with a discovery session",
                fix: "set `Experimental = true` in /etc/bluetooth/main.conf, then sudo systemctl restart bluetooth")
        }
        return .ok(name, "\(running); advertisement-monitor API on")
    }

    func checkCapabilities() -> DoctorCheck {
        let name = "capabilities"
        let needed: [(String, Int)] =
            switch configuration.backend {
            case .hci: [("CAP_NET_RAW", 13), ("CAP_NET_ADMIN", 12)]
            case .monitor: [("CAP_NET_RAW", 13)]
            case .dbus: []
            }
        let backend = "the \(configuration.backend.rawValue) backend"
        guard !needed.isEmpty else { return .ok(name, "\(backend) needs none") }
        let (who, have): (String, UInt64?) =
            if let unit {
                ("beacond.service (user \(unit.user.isEmpty ? "root" : unit.user))", unit.effectiveCapabilities)
            } else { ("this user (no beacond.service installed)", Self.ownCapabilities()) }
        guard let have else { return .warn(name, "cannot read the capabilities of \(who)") }
        let missing = needed.filter { have & (1 << UInt64($0.1)) == 0 }.map(\.0)
        guard missing.isEmpty else {
            let fix =
                unit == nil
                ? "sudo setcap \(needed.map { $0.0.lowercased() }.joined(separator: ",")).ep /usr/bin/beacond, or run it as root"
                : "`sudo systemctl edit beacond`: AmbientCapabilities=\(needed.map(\.0).joined(separator: " "))"
            return .fail(
                name,
                "\(backend) needs \(needed.map(\.0).joined(separator: " and ")); \(who) lacks \(missing.joined(separator: ", "))",
                fix: fix)
        }
        return .ok(name, "\(who) has \(needed.map(\.0).joined(separator: " and ")), as \(backend) needs")
    }

    /// This process's effective capabilities (CapEff in /proc/self/status).
    static func ownCapabilities() -> UInt64? {
        guard let bytes = try? WholeFile.read(path: "/proc/self/status", limit: 1 << 16) else { return nil }
        let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("CapEff:") }
        return line.flatMap { UInt64($0.dropFirst("CapEff:".count).trimmingWhitespace, radix: 16) }
    }
}

extension Substring {
    var trimmingWhitespace: Substring {
        var text = self
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text
    }
}
