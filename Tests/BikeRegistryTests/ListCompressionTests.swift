import AsyncHTTPClient
import BeaconTestSupport
import BikeRegistryCore
import BikeRegistryStore
import CompressNIO
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import BikeRegistryServer

/// Issue 54: the stations' list gzip-compressed for a station that asks, compressed once per version (with the list's
/// encoding, not per request), one ETag for both; and `Accept-Encoding` read as RFC 9110 has it.
@Suite(.timeLimit(.minutes(20))) struct ListCompressionTests {
    @Test(arguments: StoreKind.allCases) func theListIsGzippedForAStationThatAsksAndOnlyThen(store: StoreKind)
        async throws
    {
        let directory = try TemporaryDirectory("bike-registry-gzip")
        defer { directory.remove() }
        let registry = try await RegistryHarness(
            store, directory: directory.path, registrationsPerMinute: 1_000, metrics: true
        ) { $0.registrationsPerMinuteTotal = 1_000 }
        try await withTeardown({ await registry.stop() }) {
            let key = try await registry.database.addStation(name: "Ace", latitude: 51.5, longitude: -0.2)
            for minor in 101...140 {
                let bike = try await registry.register(minor: minor)
                #expect(
                    try await registry.request(
                        .PATCH, "/owner/bikes/\(bike.id)", bearer: bike.token, body: #"{"missing":true}"#
                    ).status == 200)
            }
            // A client of its own that inflates nothing (the process's shared client asks for gzip and inflates it).
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(decompression: .disabled))
            try await withTeardown({ try? await client.shutdown() }) {
                func get(_ acceptEncoding: String?) async throws -> (headers: HTTPHeaders, body: [UInt8]) {
                    var request = HTTPClientRequest(url: registry.baseURL + "/bikes?missing=true")
                    request.headers.add(name: "Authorization", value: "Bearer \(key)")
                    if let acceptEncoding { request.headers.add(name: "Accept-Encoding", value: acceptEncoding) }
                    let response = try await client.execute(request, timeout: .seconds(30))
                    #expect(response.status == .ok)
                    return (response.headers, Array(buffer: try await response.body.collect(upTo: 16 << 20)))
                }
                let plain = try await get(nil)
                #expect(plain.headers.first(name: "Content-Encoding") == nil)
                #expect(plain.headers.first(name: "Vary") == "Accept-Encoding, A-IM")
                let gzipped = try await get("deflate, gzip")
                #expect(gzipped.headers.first(name: "Content-Encoding") == "gzip")
                #expect(
                    gzipped.headers.first(name: "ETag") == plain.headers.first(name: "ETag"), "one version, one ETag")
                #expect(
                    gzipped.body.count < plain.body.count / 3, "\(gzipped.body.count) bytes against \(plain.body.count)"
                )
                var compressed = ByteBuffer(bytes: gzipped.body)
                #expect(Array(buffer: try compressed.decompress(with: .gzip())) == plain.body, "the same list")
                #expect(try await get("gzip;q=0, identity").headers.first(name: "Content-Encoding") == nil)
                // Ten stations asking: the list was encoded (and compressed with it) once.
                for _ in 0..<10 { _ = try await get("gzip") }
            }
            let page = try await registry.metricsPage()
            #expect(RegistryMetricsTests.value(page, "bike_registry_station_list_encodings_total") == 1, "\(page)")
        }
    }

    @Test(
        arguments: [
            ("gzip", true), ("GZIP", true), ("deflate, gzip", true), ("br;q=1.0, gzip;q=0.8", true), ("*", true),
            ("x-gzip", true), (" gzip ", true), ("gzip;q=0", false), ("gzip; q=0.0", false), ("*;q=0", false),
            ("identity", false), ("", false), ("gzipped", false), ("gzip;q=0, *", false), ("*, gzip;q=0", false),
        ] as [(String, Bool)])
    func acceptEncodingIsReadAsRFC9110Says(header: String, gzip: Bool) {
        #expect(GzipBody.accepted(header) == gzip)
    }
}
