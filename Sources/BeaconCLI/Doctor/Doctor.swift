import BeaconCapture
import BeaconDBus
import BeaconDaemon
import StationSettings

#if canImport(Glibc)
import Glibc
#endif

/// The checks `beacond doctor` runs, in the order a café owner would fix them: the configuration, the radio
/// (adapter, bluetoothd, capabilities), the host (state directory, clock), the registry and the MQTT broker, then the
/// service itself.
/// Each check reads what it needs and says in one line what is wrong and what fixes it.
struct Doctor {
    var configuration: DaemonConfiguration
    var configurationErrors: [String]
    var configurationPath: String
    var environment: [String: String]
    /// nil when the system bus cannot be reached (`busError` says why).
    var bus: DBusConnection?
    var busError: String?
    /// beacond.service as systemd has it; nil when it is not installed (or systemd cannot be asked).
    var unit: ServiceUnitProbe?

    /// The example configuration's station id: a station still called this has not been set up.
    static let exampleStationID = "cafe-example"

    init(configuration: DaemonConfiguration, errors: [String], path: String, environment: [String: String]) {
        self.configuration = configuration
        self.configurationErrors = errors
        self.configurationPath = path
        self.environment = environment
        do {
            let bus = try DBusConnection.system()
            self.bus = bus
            unit = try? ServiceUnitProbe.probe(on: bus)
        } catch {
            busError = error.message
        }
    }

    func run() async -> DoctorReport {
        var checks = [checkConfiguration()]
        checks += configuration.adapters.map(checkAdapter)
        checks.append(checkBluetoothd())
        checks.append(checkCapabilities())
        checks.append(checkStateDirectory())
        checks.append(await checkRegistry())
        if let mqtt = await checkMQTT() { checks.append(mqtt) }
        checks.append(checkClock())
        checks.append(checkService())
        return DoctorReport(checks: checks)
    }

    func checkConfiguration() -> DoctorCheck {
        let name = "configuration"
        if let first = configurationErrors.first {
            let more = configurationErrors.count > 1 ? " (and \(configurationErrors.count - 1) more)" : ""
            return .fail(
                name, "\(first)\(more)", fix: "edit \(configurationPath); `beacond check-config` lists every error")
        }
        let file =
            access(configurationPath, F_OK) == 0
            ? "\(configurationPath) is good" : "no \(configurationPath), the defaults are good"
        let summary =
            "\(file): station \(configuration.stationID), backend \(configuration.backend.rawValue)"
            + RotatingBeaconNote.regionsNamingAMajor(configuration.regions).map { "; \($0)" }.joined()
        if configuration.stationID == Self.exampleStationID {
            return .warn(
                name, "\(summary), but station-id is still the example's",
                fix: "set station-id (and latitude, longitude) in \(configurationPath)")
        }
        return .ok(name, summary)
    }
}
