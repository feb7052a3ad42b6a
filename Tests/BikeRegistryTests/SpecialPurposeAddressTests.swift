import BeaconTestSupport
import BikeRegistryCore
import Foundation
import NIOHTTP1
import Testing

@testable import BikeRegistryServer

/// The target policy is IANA's special-purpose registries (issue 37, item 6): one case per range, an address inside
/// it refused with the range's name, and an address carried in an IPv6 form judged by the IPv4 address it carries.
/// The policy refused loopback, private, link-local, shared and multicast only, and let the documentation,
/// benchmarking and 192.0.0.0/24 ranges through, and loopback inside NAT64, 6to4 and IPv4-compatible forms.
@Suite(.timeLimit(.minutes(20))) struct SpecialPurposeAddressTests {
    @Test(arguments: [
        ("0.1.2.3", "\"this network\""), ("10.20.30.40", "private"), ("100.64.1.1", "shared address space"),
        ("100.127.255.254", "shared address space"), ("127.0.0.1", "loopback"), ("127.255.0.9", "loopback"),
        ("169.254.169.254", "link-local"), ("172.16.0.1", "private"), ("172.31.255.255", "private"),
        ("192.0.0.1", "IETF protocol assignments"), ("192.0.0.170", "IETF protocol assignments"),
        ("192.0.2.1", "documentation (TEST-NET-1)"), ("192.88.99.1", "6to4 relay anycast (deprecated)"),
        ("192.168.1.1", "private"), ("198.18.0.1", "benchmarking"), ("198.19.255.255", "benchmarking"),
        ("198.51.100.7", "documentation (TEST-NET-2)"), ("203.0.113.200", "documentation (TEST-NET-3)"),
        ("224.0.0.251", "multicast"), ("239.255.255.250", "multicast"), ("240.0.0.1", "reserved"),
        ("255.255.255.255", "limited broadcast"),
    ])
    func everyIPv4RangeThatIsNotGloballyReachableIsRefused(address: String, range: String) throws {
        let refusal = try #require(
            SpecialPurposeAddresses.refusal(try Self.bytes(address)), "\(address) was let through")
        #expect(refusal.hasPrefix(range), "\(address): \(refusal)")
    }

    @Test(arguments: [
        ("::", "unspecified"), ("::1", "loopback"), ("64:ff9b:1::1", "local-use IPv4/IPv6 translation"),
        ("100::1", "discard-only"), ("100:0:0:1::1", "dummy prefix"), ("2001::1", "IETF protocol assignments"),
        ("2001:2::1", "IETF protocol assignments"), ("2001:db8::1", "documentation"), ("3fff::1", "documentation"),
        ("5f00::1", "segment routing SIDs"), ("fc00::1", "unique-local"), ("fd12:3456::1", "unique-local"),
        ("fe80::1", "link-local"), ("ff02::1", "multicast"), ("fec0::1", "not global unicast"),
        ("8000::1", "not global unicast"), ("1234::1", "not global unicast"),
        // Loopback and private addresses carried in IPv6 forms: the form is named with the carried address's range.
        ("::ffff:127.0.0.1", "loopback (127.0.0.0/8), carried in an IPv4-mapped address"),
        ("::7f00:1", "loopback (127.0.0.0/8), carried in an IPv4-compatible address"),
        ("64:ff9b::7f00:1", "loopback (127.0.0.0/8), carried in a NAT64 address"),
        ("64:ff9b::a00:1", "private (10.0.0.0/8), carried in a NAT64 address"),
        ("2002:7f00:1::1", "loopback (127.0.0.0/8), carried in a 6to4 address"),
        ("2002:c0a8:101::1", "private (192.168.0.0/16), carried in a 6to4 address"),
        ("2002:c000:201::1", "documentation (TEST-NET-1) (192.0.2.0/24), carried in a 6to4 address"),
    ])
    func everyIPv6RangeThatIsNotGloballyReachableIsRefused(address: String, refusal: String) throws {
        let said = try #require(SpecialPurposeAddresses.refusal(try Self.bytes(address)), "\(address) was let through")
        #expect(said.hasPrefix(refusal), "\(address): \(said)")
    }

    @Test(arguments: [
        "1.1.1.1", "8.8.8.8", "93.184.215.14", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0",
        "192.0.1.255", "192.0.3.0", "192.31.196.1", "192.52.193.1", "192.175.48.1", "198.17.255.255", "198.20.0.0",
        "223.255.255.254", "2606:4700::1111", "2a00:1450:4001::1", "2620:4f:8000::1", "64:ff9b::808:808",
        "::ffff:8.8.8.8", "2002:808:808::1", "2001:200::1",
    ])
    func globallyReachableAddressesAreLetThrough(address: String) throws {
        #expect(SpecialPurposeAddresses.refusal(try Self.bytes(address)) == nil, "\(address) was refused")
    }

    /// Through the API, without `--allow-private-webhooks`: addresses of the ranges the old policy let through.
    @Test func theAPIRefusesTargetsInTheNewlyCoveredRanges() async throws {
        let directory = try TemporaryDirectory("bike-registry")
        defer { directory.remove() }
        let registry = try await RegistryHarness(.sqlite, directory: directory.path, allowPrivateWebhooks: false)
        try await withTeardown({ await registry.stop() }) {
            let bike = try await registry.register(minor: 101)
            for host in [
                "192.0.2.10", "198.51.100.1", "203.0.113.5", "198.18.0.1", "198.19.1.1", "192.0.0.8", "240.1.2.3",
            ] {
                let answer = try await registry.request(
                    .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token,
                    body: #"{"notify":{"webhook":"http://\#(host)/hook"}}"#)
                #expect(
                    answer.status == 400 && answer.body.contains("is not a public address"), "\(host): \(answer.body)")
            }
        }
    }

    static func bytes(_ address: String) throws -> [UInt8] {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 { return withUnsafeBytes(of: v4) { Array($0) } }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { throw HarnessError("not an address: \(address)") }
        return withUnsafeBytes(of: v6) { Array($0) }
    }
}
