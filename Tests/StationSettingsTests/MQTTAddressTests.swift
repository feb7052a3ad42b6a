import StationSettings
import Testing

@Suite(.timeLimit(.minutes(20))) struct MQTTAddressTests {
    @Test func theConfigurationsBrokerAddressesAreRead() {
        #expect(MQTTAddress("mqtt://broker.local") == MQTTAddress(host: "broker.local", port: 1883, tls: false))
        #expect(MQTTAddress("mqtts://broker.local") == MQTTAddress(host: "broker.local", port: 8883, tls: true))
        #expect(MQTTAddress("mqtt://10.0.0.5:1884/") == MQTTAddress(host: "10.0.0.5", port: 1884, tls: false))
        #expect(MQTTAddress("mqtts://[fd00::5]:8884") == MQTTAddress(host: "fd00::5", port: 8884, tls: true))
        #expect(MQTTAddress("mqtts://[fd00::5]:8884")?.description == "mqtts://[fd00::5]:8884")
        for refused in [
            "http://broker", "mqtt://", "mqtt://broker:0", "mqtt://broker:65536", "mqtt://broker:x",
            "mqtt://user:pass@broker", "mqtt://broker/topic", "mqtt://[fd00::5", "mqtt://[fd00::5]x", "broker:1883",
        ] {
            #expect(MQTTAddress(refused) == nil, "\(refused)")
        }
    }
}

extension MQTTAddress {
    init(host: String, port: Int, tls: Bool) {
        self = MQTTAddress("mqtt://x")!
        self.host = host
        self.port = port
        self.tls = tls
    }
}
