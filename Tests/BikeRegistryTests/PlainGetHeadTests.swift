import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import BikeRegistryServer

/// `PlainGetHead`: the heads `RefreshFastPath` reads itself, and everything it leaves to the HTTP decoder.
@Suite(.timeLimit(.minutes(20))) struct PlainGetHeadTests {
    static let station =
        "GET /bikes?missing=true HTTP/1.1\r\nHost: registry.example\r\nAuthorization: Bearer bks_abc\r\n"
        + "If-None-Match: \"m12\"\r\nUser-Agent: beacond/1.4\r\nAccept-Encoding: deflate, gzip\r\n"
        + "A-IM: bike-changes\r\n\r\n"

    static func parse(_ text: String) -> PlainGetHead? {
        Array(text.utf8).withUnsafeBytes(PlainGetHead.parse)
    }

    @Test func aStationsRefreshIsRead() throws {
        let head = try #require(Self.parse(Self.station))
        #expect(head.target == "/bikes?missing=true")
        #expect(head.authorization == "Bearer bks_abc" && head.ifNoneMatch == "\"m12\"")
        #expect(head.userAgent == "beacond/1.4" && head.acceptEncoding == "deflate, gzip")
        #expect(head.instanceManipulation == "bike-changes")
        #expect(head.length == Self.station.utf8.count)
    }

    /// Names in any case; a value without the space before it, and with any after it, as NIO's decoder reads it.
    @Test func namesInAnyCaseAndValuesAsTheDecoderReadsThem() throws {
        let head = try #require(Self.parse("GET /bikes HTTP/1.1\r\nIF-NONE-MATCH:\t \"m1\" \t\r\nx-empty:\r\n\r\n"))
        #expect(head.ifNoneMatch == "\"m1\" \t")
    }

    /// Pipelined: the first head's length is where the next starts, which is read on its own.
    @Test func theNextRequestStartsAfterTheHead() throws {
        let text = Self.station + "POST /sightings HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"
        let head = try #require(Self.parse(text))
        #expect(head.length == Self.station.utf8.count)
        #expect(Self.parse(String(text.dropFirst(head.length))) == nil)
    }

    /// The start of a `GET` head is kept for more bytes; anything else, and a head past the limit, is the decoder's.
    @Test func theFrontOfTheBytesRead() throws {
        func front(_ text: String) -> PlainGetHead.Front { Array(text.utf8).withUnsafeBytes(PlainGetHead.front) }
        #expect(front(Self.station) == .head(try #require(Self.parse(Self.station))))
        for cut in [1, 4, 9, 30, Self.station.utf8.count - 1] {
            #expect(front(String(Self.station.utf8.prefix(cut))!) == .incomplete, "cut at \(cut)")
        }
        #expect(front("POST /sightings HTTP/1.1\r\nHost: x") == .other)
        #expect(front("GET /bikes HTTP/1.1\r\nConnection: close\r\n\r\n") == .other)
        #expect(front("GET /bikes HTTP/1.1\r\nConnection: cl") == .incomplete)
        #expect(front("GET /bikes HTTP/1.1\r\nX: " + String(repeating: "a", count: 8200)) == .other)
    }

    @Test(arguments: [
        ("a head not yet whole", String(station.dropLast(2))),
        ("a head cut in its request line", "GET /bik"),
        ("another method", "POST /bikes HTTP/1.1\r\n\r\n"),
        ("HEAD", "HEAD /bikes HTTP/1.1\r\n\r\n"),
        ("HTTP/1.0", "GET /bikes HTTP/1.0\r\n\r\n"),
        ("a target in absolute form", "GET http://x/bikes HTTP/1.1\r\n\r\n"),
        ("a target with a byte past ASCII", "GET /bikes\u{e9} HTTP/1.1\r\n\r\n"),
        ("two spaces", "GET  /bikes HTTP/1.1\r\n\r\n"),
        ("a bare LF ending a line", "GET /bikes HTTP/1.1\nHost: x\r\n\r\n"),
        ("a bare LF in a value", "GET /bikes HTTP/1.1\r\nHost: x\ny: z\r\n\r\n"),
        ("a bare CR in a value", "GET /bikes HTTP/1.1\r\nHost: x\ry\r\n\r\n"),
        ("a folded line", "GET /bikes HTTP/1.1\r\nUser-Agent: a\r\n b\r\n\r\n"),
        ("space before the colon", "GET /bikes HTTP/1.1\r\nIf-None-Match : \"m1\"\r\n\r\n"),
        ("a name that is not a token", "GET /bikes HTTP/1.1\r\nIf(None): x\r\n\r\n"),
        ("a value with a byte past ASCII", "GET /bikes HTTP/1.1\r\nUser-Agent: caf\u{e9}\r\n\r\n"),
        ("Content-Length", "GET /bikes HTTP/1.1\r\nContent-Length: 0\r\n\r\n"),
        ("Transfer-Encoding", "GET /bikes HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("Connection", "GET /bikes HTTP/1.1\r\nConnection: close\r\n\r\n"),
        ("Upgrade", "GET /bikes HTTP/1.1\r\nUpgrade: h2c\r\n\r\n"),
        ("Expect", "GET /bikes HTTP/1.1\r\nExpect: 100-continue\r\n\r\n"),
        ("Authorization twice", "GET /bikes HTTP/1.1\r\nAuthorization: Bearer a\r\nauthorization: Bearer b\r\n\r\n"),
        ("If-None-Match twice", "GET /bikes HTTP/1.1\r\nIf-None-Match: \"m1\"\r\nIf-None-Match: \"m2\"\r\n\r\n"),
        ("a head past the limit", "GET /bikes HTTP/1.1\r\nX: " + String(repeating: "a", count: 8200) + "\r\n\r\n"),
    ])
    func everythingElseIsTheDecoders(what: String, text: String) {
        #expect(Self.parse(text) == nil, "\(what)")
    }

    /// Read nothing otherwise than the decoder does: 20,000 heads made from a station's by random changes (bytes
    /// inserted, replaced or dropped from an alphabet of the bytes HTTP's syntax turns on, lines repeated); every one
    /// read here is read by NIO's HTTP/1 decoder (llhttp) as the same method, target and fields, and ends where
    /// the decoder's head ends.
    @Test func whatIsReadHereTheDecoderReadsTheSame() throws {
        let alphabet = Array(" \t\r\n:;,\"/?=aZ0-".utf8) + [0, 0x7F, 0x80, 0xC3, 0xA9]
        var random = SystemRandomNumberGenerator()
        let station = Array(Self.station.utf8)
        var read = 0
        for _ in 0..<20_000 {
            var bytes = station
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes.insert(alphabet.randomElement(using: &random)!, at: at)
                case 1: bytes[at] = alphabet.randomElement(using: &random)!
                case 2: bytes.remove(at: at)
                default:
                    // A line given twice.
                    let lines = Self.station.components(separatedBy: "\r\n").dropFirst().dropLast(2)
                    let line = Array((lines.randomElement(using: &random)! + "\r\n").utf8)
                    if let end = Self.endOfRequestLine(bytes) { bytes.insert(contentsOf: line, at: end) }
                }
            }
            guard let head = bytes.withUnsafeBytes(PlainGetHead.parse) else { continue }
            read += 1
            let decoded = try Self.decode(Array(bytes[..<head.length]))
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(decoded.method == .GET && decoded.uri == head.target, "\(text.debugDescription)")
            let fields: [(String, String?)] = [
                ("Authorization", head.authorization), ("If-None-Match", head.ifNoneMatch),
                ("User-Agent", head.userAgent), ("Accept-Encoding", head.acceptEncoding),
                ("A-IM", head.instanceManipulation),
            ]
            for (name, value) in fields {
                #expect(decoded.headers[name].first == value, "\(name) in \(text.debugDescription)")
            }
        }
        // Most changes leave a head still read here (a changed value, a header renamed), so both ways are tried.
        #expect(read > 2_000)
    }

    static func endOfRequestLine(_ bytes: [UInt8]) -> Int? {
        (0..<bytes.count - 1).first { bytes[$0] == 13 && bytes[$0 + 1] == 10 }.map { $0 + 2 }
    }

    /// The head NIO's decoder reads from `bytes`, which must be exactly one whole head.
    static func decode(_ bytes: [UInt8]) throws -> HTTPRequestHead {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder()))
        defer { _ = try? channel.finish() }
        try channel.writeInbound(ByteBuffer(bytes: bytes))
        guard case .head(let head) = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            throw DecodeMismatch("no head")
        }
        guard case .end = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            throw DecodeMismatch("the head is not a whole request")
        }
        return head
    }

    struct DecodeMismatch: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
