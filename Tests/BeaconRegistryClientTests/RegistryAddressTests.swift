import BeaconRegistryClient
import Testing

@Suite(.timeLimit(.minutes(20))) struct RegistryAddressTests {
    @Test(arguments: [
        ("https://registry.example/api", "https://registry.example/api"),
        ("https://user:pw@registry.example/api", "https://REDACTED@registry.example/api"),
        ("http://user@host:8080/api?key=abc&missing=true", "http://REDACTED@host:8080/api?key=REDACTED&missing=true"),
        ("https://host/api?Token=t1&x=1&api_key=k#frag", "https://host/api?Token=REDACTED&x=1&api_key=REDACTED#frag"),
        ("https://host/a@b/api", "https://host/a@b/api"),
    ])
    func secretsAreNeverShown(url: String, shown: String) {
        #expect(RegistryAddress.redacted(url) == shown)
    }

    @Test(arguments: [
        ("http://127.0.0.1:8080", false), ("http://localhost/api", false), ("http://[::1]:80/", false),
        ("https://registry.example", false),
        ("http://registry.example/api", true), ("http://user:pw@10.0.0.2/api", true), ("HTTP://192.0.2.1", true),
    ])
    func plainHTTPOffThisMachineSendsTheKeyInClear(url: String, clear: Bool) {
        #expect(RegistryAddress.sendsKeyInClear(url) == clear)
    }
}
