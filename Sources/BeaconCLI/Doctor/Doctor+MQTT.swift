import BeaconDaemon
import BeaconMQTT
import BeaconPOSIX
import StationSettings

#if canImport(Glibc)
import Glibc
#endif

/// The broker's link, when `mqtt` is configured: reachable, its certificate trusted (mqtts://), and the station's
/// username and password accepted, by connecting once as the daemon does, under a client id of its own (the
/// daemon's would push the running daemon off the broker).
extension Doctor {
    func checkMQTT() async -> DoctorCheck? {
        guard let address = configuration.mqtt else { return nil }
        let name = "mqtt"
        let password: String?
        let passwordSource: String
        let path =
            configuration.mqttPasswordPath(environment: environment)
            ?? unit?.credentials["mqtt-password"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        if let path {
            do {
                password = try SecretFile.firstLine(path: path)
            } catch {
                return .fail(
                    name, "MQTT password file \(error)", fix: "put the broker's password in that file (one line)")
            }
            passwordSource = path
        } else {
            (password, passwordSource) = (nil, "none")
        }
        let settings = MQTTSettings(
            host: address.host, port: address.port, tls: address.tls, caFile: configuration.mqttCAFile,
            username: configuration.mqttUsername, password: password, clientID: "beacond-doctor-\(getpid())")
        let client: MQTTClient
        do {
            client = try MQTTClient(settings)
            try client.start()
        } catch {
            return .fail(name, "cannot set up MQTT: \(error)", fix: "check mqtt = … in \(configurationPath)")
        }
        defer { client.stop() }
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while ContinuousClock.now < deadline {
            switch client.connection {
            case .connected:
                let user = configuration.mqttUsername.map { " as \($0)" } ?? ""
                let detail = "\(address) accepted the station\(user)"
                if !address.tls && password != nil {
                    return .warn(
                        name, "\(detail), but over plain mqtt://, so the password crosses the network readable",
                        fix: "use mqtts:// (and mqtt-ca-file for the broker's own authority)")
                }
                return .ok(name, detail)
            case .refused(let reason):
                return .fail(
                    name, "\(address) refuses the station: \(reason) (password from \(passwordSource))",
                    fix:
                        "check mqtt-username and the password in mqtt-password-file, then sudo systemctl restart beacond"
                )
            case .lost(let reason):
                return .fail(
                    name, "cannot reach \(address): \(reason)",
                    fix: address.tls
                        ? "check mqtt = … and mqtt-ca-file in \(configurationPath)"
                        : "check mqtt = … in \(configurationPath) and that the broker runs")
            case .connecting:
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        return .fail(name, "\(address) did not answer in 10 s", fix: "check mqtt = … and the network")
    }
}
