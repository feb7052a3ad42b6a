import StationSettings
import Testing

/// `metrics-listen`'s value: an IP address to bind and a port, never a name.
@Suite(.timeLimit(.minutes(20))) struct MetricsAddressTests {
    @Test(arguments: [
        ("127.0.0.1:9999", "127.0.0.1", 9999), ("127.0.0.1", "127.0.0.1", MetricsAddress.defaultPort),
        ("[::1]:10042", "::1", 10042), ("[::1]", "::1", MetricsAddress.defaultPort), ("0.0.0.0:1", "0.0.0.0", 1),
    ])
    func readsAnAddressAndAPort(text: String, host: String, port: Int) throws {
        let address = try #require(MetricsAddress(text))
        #expect(address.host == host && address.port == port)
        #expect(MetricsAddress(address.description) == address)
    }

    @Test(arguments: [
        "localhost:9000", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:", "::1:9000", "[::1]9000", "[127.0.0.1]:1",
        "http://127.0.0.1:1", "", "127.0.0.1:1/metrics", "1.2.3:4",
    ])
    func refusesAnythingElse(text: String) {
        #expect(MetricsAddress(text) == nil)
    }

    @Test func loopbackIsToldApart() {
        #expect(MetricsAddress("127.0.0.1")?.isLoopback == true && MetricsAddress("[::1]")?.isLoopback == true)
        #expect(MetricsAddress("0.0.0.0")?.isLoopback == false && MetricsAddress("192.168.1.2")?.isLoopback == false)
    }
}
