import BeaconDBus
import Foundation
import Synchronization
import Testing

/// The libdbus layer against a real dbus-daemon: values survive the trip, errors come back as errors, and
/// a call keeps serving the other side's calls while it waits (what RegisterMonitor needs).
@Suite(.timeLimit(.minutes(20))) struct DBusConnectionTests {
    /// Serves `org.example.Fake` on its own thread until stopped: `Echo` returns its arguments; `Register`
    /// calls the caller's `GetManagedObjects` before answering with what it got; `Fail` answers an error.
    final class FakeService: @unchecked Sendable {
        final class Flag: Sendable {
            let value = Atomic<Bool>(false)
            func set() { value.store(true, ordering: .releasing) }
            var isSet: Bool { value.load(ordering: .acquiring) }
        }
        let stop = Flag()
        let ready = Flag()
        let done = Flag()

        init(address: String) {
            // The thread holds only the flags, not the service, so the service's deinit can stop it.
            let stop = self.stop
            let ready = self.ready
            let done = self.done
            Thread {
                guard let bus = try? DBusConnection.open(address: address),
                    (try? bus.requestName("org.example.Fake")) != nil
                else {
                    done.set()
                    return
                }
                ready.set()
                while !stop.isSet {
                    guard let call = bus.next(timeoutMilliseconds: 50), call.kind == .methodCall else { continue }
                    switch call.member {
                    case "Echo":
                        bus.send(call.reply(call.arguments))
                    case "Register":
                        let objects = try? bus.call(
                            .methodCall(
                                destination: call.sender!, path: call.arguments.first?.string ?? "/",
                                interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects"))
                        bus.send(call.reply(objects?.arguments ?? []))
                    default:
                        bus.send(call.error("org.example.Error.Nope", "no such thing"))
                    }
                }
                done.set()
            }.start()
            while !ready.isSet && !done.isSet { usleep(1_000) }
        }

        deinit {
            stop.set()
            while !done.isSet { usleep(1_000) }
        }
    }

    static func call(_ member: String, _ arguments: [DBusValue] = []) throws -> DBusMessage {
        try .methodCall(
            destination: "org.example.Fake", path: "/", interface: "org.example.Fake", member: member, arguments)
    }

    @Test func everyValueShapeSurvivesTheTrip() throws {
        let bus = try PrivateBus()
        let service = FakeService(address: bus.address)
        _ = service
        let client = try DBusConnection.open(address: bus.address)
        let values: [DBusValue] = [
            .byte(0xFE), .bool(true), .int16(-2), .uint16(0x004C), .int32(-59), .uint32(7), .int64(-1),
            .uint64(1 << 40),
            .double(2.5), .string("hé"), .objectPath("/org/bluez/hci0"), .signature("a{sv}"),
            .array(element: "s", []),
            .array(element: "(yyay)", [.structure([.byte(0), .byte(0xFF), .bytes([0x4C, 0x00, 0x02, 0x15])])]),
            .properties([("Type", .string("or_patterns")), ("RSSI", .int16(-70)), ("Data", .bytes([1, 2]))]),
            .array(element: "{qv}", [.dictEntry(.uint16(0x004C), .variant(.bytes([0x02, 0x15])))]),
        ]
        let reply = try client.call(Self.call("Echo", values))
        #expect(reply.arguments == values)
        #expect(reply.arguments[14]["RSSI"]?.int == -70)
        #expect(reply.arguments[15].entries?.first?.value.byteArray == [0x02, 0x15])
    }

    @Test func anErrorReplyIsThrownWithItsName() throws {
        let bus = try PrivateBus()
        let service = FakeService(address: bus.address)
        _ = service
        let client = try DBusConnection.open(address: bus.address)
        #expect { try client.call(Self.call("Fail")) } throws: { error in
            (error as? DBusError)?.name == "org.example.Error.Nope" && "\(error)".contains("no such thing")
        }
    }

    @Test func aCallServesTheCallsThatArriveWhileItWaits() throws {
        let bus = try PrivateBus()
        let service = FakeService(address: bus.address)
        _ = service
        let client = try DBusConnection.open(address: bus.address)
        var served: [String] = []
        let reply = try client.call(Self.call("Register", [.objectPath("/app")])) { incoming in
            guard incoming.kind == .methodCall else { return }  // the bus's NameAcquired signal, say
            served.append(incoming.member ?? "")
            client.send(incoming.reply([.array(element: "{oa{sa{sv}}}", [])]))
        }
        #expect(served == ["GetManagedObjects"])
        #expect(reply.arguments == [.array(element: "{oa{sa{sv}}}", [])])
    }

    @Test func noBusIsAClearError() {
        #expect { try DBusConnection.open(address: "unix:path=/nonexistent/bus") } throws: {
            "\($0)".contains("cannot connect to unix:path=/nonexistent/bus")
        }
    }
}
