import BeaconControl
import BeaconDaemon
import StationSettings

#if canImport(Glibc)
import Glibc
#endif

/// The host's links: room for the outbox, an honest clock, and the service itself.
extension Doctor {
    /// Below this much free space the outbox (up to `outbox-capacity` sightings, about 600 bytes each) may not fit.
    static let minimumFreeBytes: UInt64 = 64 << 20

    func checkStateDirectory() -> DoctorCheck {
        let name = "state directory"
        let path = configuration.stateDirectory
        var information = stat()
        guard stat(path, &information) == 0 else {
            let error = errno
            if error == ENOENT, unit != nil {
                return .warn(
                    name, "\(path) is not there yet; systemd makes it when beacond.service first starts",
                    fix: "sudo systemctl start beacond")
            }
            return .fail(
                name, "\(path): \(String(cString: strerror(error)))",
                fix: "sudo mkdir -p \(path), or set state-directory in \(configurationPath)")
        }
        guard information.st_mode & S_IFMT == S_IFDIR else {
            return .fail(
                name, "\(path) is not a directory", fix: "move it away, or set state-directory in \(configurationPath)")
        }
        // Writable by whoever runs the daemon: the unit's user, else this user.
        if let unit, !unit.user.isEmpty, unit.user != "root" {
            guard let user = getpwnam(unit.user) else {
                return .fail(name, "the unit's user \(unit.user) does not exist", fix: "sudo systemd-sysusers")
            }
            if information.st_uid != user.pointee.pw_uid {
                return .fail(
                    name, "\(path) does not belong to \(unit.user)", fix: "sudo chown -R \(unit.user): \(path)")
            }
        } else if access(path, W_OK) != 0 {
            return .fail(
                name, "\(path) is not writable by this user",
                fix: "run as the daemon's user, or set state-directory in \(configurationPath)")
        }
        var space = statvfs()
        guard statvfs(path, &space) == 0 else {
            return .warn(name, "\(path): cannot tell the free space (\(String(cString: strerror(errno))))")
        }
        let free = UInt64(space.f_bavail) * UInt64(space.f_frsize)
        let freeText = "\(free >> 20) MiB free"
        guard free >= Self.minimumFreeBytes else {
            return .fail(
                name, "\(path): only \(freeText); the outbox needs room to keep sightings",
                fix: "free disk space on the file system holding \(path)")
        }
        return .ok(name, "\(path): writable, \(freeText)")
    }

    func checkClock() -> DoctorCheck {
        let name = "clock"
        switch ClockSynchronization.read() {
        case .synchronized(let error):
            return .ok(
                name,
                "synchronised" + (error.map { " (maximum error \($0 / 1_000) ms)" } ?? " (systemd-timesyncd says so)"))
        case .unsynchronized:
            return .fail(
                name, "not synchronised: sightings carry the wrong time until NTP sets the clock",
                fix: "sudo timedatectl set-ntp true; `timedatectl timesync-status` shows the time server")
        case .unknown(let error):
            return .warn(name, "cannot read the clock's state (\(String(cString: strerror(error))))")
        }
    }

    func checkService() -> DoctorCheck {
        let name = "service"
        if let unit {
            switch unit.activeState {
            case "active", "reloading":
                break
            case "activating":
                return .warn(
                    name, "beacond.service is starting (\(unit.subState))",
                    fix: "wait a moment, then `beacond doctor` again")
            case "failed":
                let how = unit.result == "exit-code" ? "exit status \(unit.execMainStatus)" : unit.result
                return .fail(
                    name, "beacond.service failed (\(how))",
                    fix: "journalctl -u beacond -n 50, then sudo systemctl restart beacond")
            default:
                return .fail(name, "beacond.service is \(unit.activeState)", fix: "sudo systemctl enable --now beacond")
            }
        }
        let socket = configuration.controlSocket
        let response: ControlResponse
        do {
            response = try ControlClient.send("status", path: socket, timeoutSeconds: 5)
        } catch {
            if unit != nil, error.kind == .permission {
                return .warn(
                    name, "beacond.service is active; asking it how it is needs root or the beacond group",
                    fix: "sudo beacond doctor")
            }
            if error.kind == .noAnswer {
                return .fail(
                    name, error.description, fix: "journalctl -u beacond -n 50; sudo systemctl restart beacond")
            }
            let how = unit == nil ? "no beacond.service is installed, and " : "beacond.service is active, but "
            return .fail(
                name, "\(how)\(error.description)",
                fix: unit == nil
                    ? "sudo apt install ./beacond_*.deb, or `beacond run`" : "sudo systemctl restart beacond")
        }
        guard let status = response.status else {
            return .fail(name, "the daemon refused: \(response.error ?? "no reason")", fix: "sudo beacond doctor")
        }
        let running =
            "\(unit == nil ? "beacond" : "beacond.service") active, pid \(status.pid), up \(StatusText.duration(status.uptimeSeconds))"
        guard status.healthy else {
            return .fail(
                name, "\(running), unhealthy: \(status.problems.joined(separator: "; "))",
                fix: "beacond status; journalctl -u beacond -n 50")
        }
        let summary =
            "\(running), healthy; \(status.missingSet.size) missing bikes, \(status.outbox.depth) sightings waiting"
        if let warning = status.warnings.first {
            return .warn(
                name, "\(summary); \(warning)",
                fix: "beacond status --json shows them; beacond retry-dead-letters once fixed")
        }
        return .ok(name, summary)
    }
}
