import BeaconRegistryClient
import BeaconTestSupport
import Foundation
import StationSettings
import Testing

@Suite(.timeLimit(.minutes(20))) struct APIKeyTests {
    @Test func loadsTheFirstLineAndNeverShowsIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("api-key")
        try Data("  \(secretKey)  \nsecond line\n".utf8).write(to: URL(fileURLWithPath: path))
        let key = try APIKey.load(path: path)
        #expect(key.secret == secretKey)
        #expect("\(key)" == "<redacted>" && String(reflecting: key) == "<redacted>")
        let configuration = RegistryConfiguration(
            location: .http(base: "https://r.example"), apiKey: key, stationID: "s")
        #expect(!String(describing: configuration).contains(secretKey))
        #expect(!String(reflecting: configuration).contains(secretKey))
    }

    @Test func systemdCredentials() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Data(secretKey.utf8).write(to: URL(fileURLWithPath: directory.file("registry-key")))
        let key = try APIKey.fromCredentials(
            name: "registry-key", environment: ["CREDENTIALS_DIRECTORY": directory.path])
        #expect(key?.secret == secretKey)
        #expect(try APIKey.fromCredentials(name: "registry-key", environment: [:]) == nil)
    }

    @Test func badKeyFilesAreClearErrors() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let empty = directory.file("empty")
        try Data("\n".utf8).write(to: URL(fileURLWithPath: empty))
        #expect { try APIKey.load(path: empty) } throws: { "\($0)" == "API key file \(empty): empty" }
        #expect { try APIKey.load(path: "/nonexistent/key") } throws: {
            "\($0)" == "API key file /nonexistent/key: no such file or directory"
        }
    }
}
