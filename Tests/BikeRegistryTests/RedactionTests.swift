import BeaconTestSupport
import Foundation
import Testing

/// The owner token never reaches the log, however the path that carries it is spelled (issue 37, item 5): the router
/// takes empty segments, a trailing slash and percent-encoding, and the log wrote each of them with the token in it.
/// The real `bike-registry serve`, its log as an operator reads it.
@Suite(.timeLimit(.minutes(20))) struct RedactionTests {
    @Test func noSpellingOfAPrivateLinkPutsItsTokenInTheLog() async throws {
        let directory = try TemporaryDirectory("bike-registry-redaction")
        defer { directory.remove() }
        let registry = try await RegistryProcess.start(
            database: directory.file("registry.sqlite"), in: directory)
        defer { registry.server.terminate() }
        let bike = try await registry.client.register(minor: 101)
        let port = try #require(URLComponents(string: registry.client.baseURL)?.port)
        let (id, token) = (bike.id, bike.token)
        // The token with its first character percent-encoded, as a client may send any byte.
        let encoded = "%" + String(token.utf8.first!, radix: 16, uppercase: true) + token.dropFirst()
        let spellings = [
            "/my/\(id)/\(token)", "//my/\(id)/\(token)", "/my//\(id)/\(token)", "/my/\(id)//\(token)",
            "/my/\(id)/\(token)/", "/my/\(id)/\(token)//", "///my///\(id)///\(token)///", "/my/\(id)/\(encoded)",
            "/my/\(id)/\(token)?x=1", "/my/\(id)/\(token)/unknown/more", "/my/\(id)/\(token)%2F",
        ]
        var statuses: [String: Int] = [:]  // a path with no answer is left out, and counted below
        for path in spellings {
            let connection = try RawConnection(port: port)
            connection.send("GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            statuses[path] = await connection.status()
        }
        for path in ["//my/\(id)//\(token)/missing", "/my/\(id)/\(token)//missing/"] {
            let connection = try RawConnection(port: port)
            connection.send(
                "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                    + "Content-Length: 12\r\nConnection: close\r\n\r\nmissing=true")
            statuses[path] = await connection.status()
        }
        #expect(statuses.count == spellings.count + 2 && statuses.values.allSatisfy { $0 < 500 }, "\(statuses)")
        #expect(statuses["//my/\(id)/\(token)"] == 200 && statuses["/my/\(id)//\(token)"] == 200, "\(statuses)")
        // Every request is logged before this returns; one more, after them, is waited for.
        let marker = try RawConnection(port: port)
        marker.send("GET /static/page.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(await marker.status() == 200)
        #expect(await eventually(within: 10) { registry.server.stderr.contains("/static/page.js") })
        let log = registry.server.stderr
        // The token, or any long piece of it (what percent-encoding one character leaves).
        for piece in [token, String(token.dropFirst(3)), String(token.dropLast(3))] {
            #expect(!log.contains(piece), "the token is in the log")
        }
        #expect(log.contains("/my/\(id)/-"), "the page is logged by its route, the token as -: \(log)")
    }
}
