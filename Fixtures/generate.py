#!/usr/bin/env python3
"""Writes beacond's hand-made capture fixtures and their expected decodes.

Run from anywhere: `python3 Fixtures/generate.py`. Output is deterministic; the files it writes are
committed, so tests never need Python. Each capture NAME.EXT gets NAME.expected.jsonl beside it: one JSON
object per iBeacon advert the capture holds, with exactly the keys `beacond replay --format jsonl` prints.
The expectations come from this script's own model of each packet, not from beacond.

Edge cases (see PACKETS below): several reports per event, extended reports (legacy and extended PDUs),
a zero-length AD before an iBeacon, RSSI 127, an iBeacon plus scan response, legacy data over 31 bytes,
a report running past its event, an AD running past the data, a truncated event, non-Apple manufacturer
data, AltBeacon, Eddystone, Apple non-iBeacon and a wrong-length iBeacon, commands and ACL data.
Containers: pcap (us/ns, both byte orders, link types 201/187/254), pcapng (both byte orders, several
interfaces and sections, EPB/SPB, an unknown block), btsnoop (1002, 2001), hcidump -R text, hex lines.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
EDGE = os.path.join(HERE, "edge")
BASE_TIME_NS = 1714557600 * 10**9  # 2024-05-01T10:00:00Z
REGION_UUID = "21EECF71-D5C7-4A00-9B90-27C94B5146EA"
OTHER_UUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"


# ----------------------------------------------------------------- advertising data
def ad(ad_type, body):
    return bytes([len(body) + 1, ad_type]) + body


FLAGS = ad(0x01, b"\x06")


def ibeacon_ad(uuid, major, minor, power):
    return ad(0xFF, b"\x4c\x00\x02\x15" + bytes.fromhex(uuid.replace("-", "")) + struct.pack(">HHb", major, minor, power))


def addr_bytes(addr):
    return bytes(reversed(bytes.fromhex(addr.replace(":", ""))))


class Report:
    """One advertising report and, when it carries a decodable iBeacon, what beacond must print."""

    def __init__(self, addr, data, rssi, addr_type=0, evt_type=0, beacon=None):
        self.addr, self.data, self.rssi, self.addr_type, self.evt_type, self.beacon = addr, data, rssi, addr_type, evt_type, beacon

    def legacy(self):
        return bytes([self.evt_type, self.addr_type]) + addr_bytes(self.addr) + bytes([len(self.data)]) + self.data + struct.pack("b", self.rssi)

    def extended(self):
        return (struct.pack("<HB", self.evt_type, self.addr_type) + addr_bytes(self.addr)
                + bytes([1, 0, 0xFF, 0x7F]) + struct.pack("b", self.rssi) + b"\x00\x00" + b"\x00" + b"\x00" * 6
                + bytes([len(self.data)]) + self.data)

    def expected(self):
        if self.beacon is None:
            return []
        uuid, major, minor, power = self.beacon
        return [{"addr": self.addr, "addrType": "public" if self.addr_type in (0, 2) else "random", "uuid": uuid,
                 "major": major, "minor": minor, "power": power, "rssi": None if self.rssi == 127 else self.rssi}]


def beacon_report(addr, uuid, major, minor, power, rssi, **kw):
    return Report(addr, FLAGS + ibeacon_ad(uuid, major, minor, power), rssi, beacon=(uuid, major, minor, power), **kw)


def le_meta(subevent, body):
    params = bytes([subevent]) + body
    return bytes([0x3E, len(params)]) + params


def legacy_event(*reports):
    return le_meta(0x02, bytes([len(reports)]) + b"".join(r.legacy() for r in reports))


def extended_event(*reports):
    return le_meta(0x0D, bytes([len(reports)]) + b"".join(r.extended() for r in reports))


class Packet:
    """An HCI packet (without its H4 type byte), its direction, and the iBeacons it must decode to."""

    def __init__(self, kind, body, expected=(), incoming=True):
        self.kind, self.body, self.expected, self.incoming = kind, body, list(expected), incoming

    @property
    def h4(self):
        return bytes([{"command": 1, "acl": 2, "event": 4}[self.kind]]) + self.body

    @property
    def monitor_opcode(self):
        return {"command": 2, "event": 3, "acl": 5 if self.incoming else 4}[self.kind]


def event(body, *reports):
    return Packet("event", body, [e for r in reports for e in r.expected()])


def packets():
    a = beacon_report("C0:FF:EE:00:00:01", REGION_UUID, 1, 7, -59, -60)
    b = beacon_report("C0:FF:EE:00:00:02", REGION_UUID, 1, 65535, -65, 127, addr_type=1)  # RSSI not available
    microsoft = Report("11:22:33:44:55:66", FLAGS + ad(0xFF, b"\x06\x00\x01\x09\x20\x02"), -70)
    with_scan = beacon_report("C0:FF:EE:00:00:03", OTHER_UUID, 300, 4000, -70, -48)
    scan_rsp = Report("C0:FF:EE:00:00:03", ad(0x09, b"bike-3"), -49, evt_type=4)
    zero_first = Report("C0:FF:EE:00:00:04", FLAGS + b"\x00" + ibeacon_ad(REGION_UUID, 1, 9, -59), -55)
    too_long = Report("C0:FF:EE:00:00:05", FLAGS + ibeacon_ad(REGION_UUID, 1, 10, -59) + ad(0x09, b"x"), -50)  # 32 bytes
    after_long = beacon_report("C0:FF:EE:00:00:06", REGION_UUID, 1, 11, -59, -51)
    ad_past_end = Report("C0:FF:EE:00:00:07", FLAGS + ibeacon_ad(REGION_UUID, 1, 12, -59)[:-3] + b"", -52)  # cut iBeacon
    beacon_then_bad_ad = Report("C0:FF:EE:00:00:08", ibeacon_ad(REGION_UUID, 1, 13, -59) + b"\x05\x09ab", -53,
                                beacon=(REGION_UUID, 1, 13, -59))
    apple_other = Report("C0:FF:EE:00:00:09", FLAGS + ad(0xFF, b"\x4c\x00\x10\x05\x01\x18\x00\x00\x00"), -54)
    wrong_length = Report("C0:FF:EE:00:00:0A", ad(0xFF, b"\x4c\x00\x02\x15" + b"\x11" * 20), -56)
    altbeacon = Report("C0:FF:EE:00:00:0B", ad(0xFF, b"\x18\x01\xbe\xac" + b"\x22" * 20 + b"\xc5\x00"), -57)
    eddystone = Report("C0:FF:EE:00:00:0C", ad(0x03, b"\xaa\xfe") + ad(0x16, b"\xaa\xfe\x10\x00\x01abc"), -58)
    ext_legacy = beacon_report("C0:FF:EE:00:00:0D", REGION_UUID, 1, 14, -59, -61, evt_type=0x13)
    ext_long = Report("C0:FF:EE:00:00:0E", FLAGS + ibeacon_ad(REGION_UUID, 1, 15, -60) + ad(0x09, b"an extended advert name"), -62,
                      addr_type=1, evt_type=0x01, beacon=(REGION_UUID, 1, 15, -60))
    ext_legacy_too_long = Report("C0:FF:EE:00:00:0F", too_long.data, -63, evt_type=0x13)

    past_event = legacy_event(a, a)[:-10]  # second report cut short: fix the length bytes to match
    past_event = bytes([0x3E, len(past_event) - 2]) + past_event[2:]
    truncated = legacy_event(a)
    truncated = truncated[:-4]  # the parameter length still claims the full event

    return [
        Packet("command", bytes.fromhex("0b200701001000100000"), incoming=False),  # LE Set Scan Parameters
        Packet("event", bytes.fromhex("0e04010b2000")),                           # Command Complete
        event(legacy_event(a, microsoft, b), a, microsoft, b),                   # three reports in one event
        event(legacy_event(with_scan), with_scan),                               # iBeacon ...
        event(legacy_event(scan_rsp), scan_rsp),                                 # ... plus scan response
        event(legacy_event(zero_first), zero_first),                             # zero-length AD first: nothing
        event(legacy_event(too_long, after_long), too_long, after_long),         # >31 bytes dropped, next kept
        Packet("event", past_event, a.expected()),                               # 2nd report past the event
        event(legacy_event(ad_past_end, beacon_then_bad_ad), ad_past_end, beacon_then_bad_ad),
        event(legacy_event(apple_other, wrong_length, altbeacon, eddystone)),
        event(extended_event(ext_legacy, ext_long, ext_legacy_too_long), ext_legacy, ext_long),
        Packet("event", truncated),                                              # truncated event
        Packet("acl", bytes.fromhex("0020" "0700" "0300" "0400" "0a0100"), incoming=True),
    ]


# ----------------------------------------------------------------- containers
def time_of(index, nanos=False):
    return BASE_TIME_NS + index * 250_000_000 + index * 1_000 + (index * 7 if nanos else 0)


def iso(ns):
    seconds, fraction = divmod(ns, 10**9)
    import datetime
    stamp = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return stamp + (".%09d" % fraction if fraction % 1000 else ".%06d" % (fraction // 1000)) + "Z"


def line(frame, ns, adapter, beacon):
    return dict(frame=frame, time=iso(ns) if ns is not None else None, adapter=adapter, **{
        k: beacon[k] for k in ("addr", "addrType", "uuid", "major", "minor", "power", "rssi")})


def write(name, data, expected):
    with open(os.path.join(EDGE, name), "wb") as f:
        f.write(data)
    stem = name.rsplit(".", 1)[0]
    with open(os.path.join(EDGE, stem + ".expected.jsonl"), "w") as f:
        for e in expected:
            f.write(json.dumps(e, separators=(",", ":")) + "\n")


def pcap(name, link, order, nanos, adapter=None):
    magic = 0xA1B23C4D if nanos else 0xA1B2C3D4
    out = struct.pack(order + "IHHiIII", magic, 2, 4, 0, 0, 65535, link)
    expected = []
    for i, p in enumerate(packets()):
        ns = time_of(i, nanos)
        if link == 201:
            payload = struct.pack(">I", 1 if p.incoming else 0) + p.h4
        elif link == 187:
            payload = p.h4
        else:
            payload = struct.pack(">HH", adapter, p.monitor_opcode) + p.body
        sec, frac = divmod(ns, 10**9)
        out += struct.pack(order + "IIII", sec, frac if nanos else frac // 1000, len(payload), len(payload)) + payload
        ns_shown = ns if nanos else ns // 1000 * 1000
        expected += [line(i + 1, ns_shown, adapter if link == 254 else None, e) for e in p.expected]
    write(name, out, expected)


def pcapng_block(order, block_type, body):
    body += b"\x00" * (-len(body) % 4)
    length = 12 + len(body)
    return struct.pack(order + "II", block_type, length) + body + struct.pack(order + "I", length)


def pcapng_option(order, code, value):
    return struct.pack(order + "HH", code, len(value)) + value + b"\x00" * (-len(value) % 4)


def pcapng(name):
    """Two sections: little-endian with a H4+direction interface ("bluetooth0", microseconds) and a monitor
    interface (nanoseconds); then big-endian with a plain H4 interface ("hci2", 2^-20 s units)."""
    out = b""
    expected = []
    frame = 0
    all_packets = packets()
    # Section 1, little-endian.
    o = "<"
    out += pcapng_block(o, 0x0A0D0D0A, struct.pack(o + "IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += pcapng_block(o, 1, struct.pack(o + "HHI", 201, 0, 65535) + pcapng_option(o, 2, b"bluetooth0") + pcapng_option(o, 0, b""))
    out += pcapng_block(o, 1, struct.pack(o + "HHI", 254, 0, 65535) + pcapng_option(o, 9, b"\x09") + pcapng_option(o, 0, b""))
    out += pcapng_block(o, 0x4000_0001, b"a local-use block beacond must skip")
    for i, p in enumerate(all_packets[:7]):
        ns = time_of(i, nanos=True)
        frame += 1
        if i % 2 == 0:  # interface 0, microseconds
            payload = struct.pack(">I", 1 if p.incoming else 0) + p.h4
            units = ns // 1000
            out += pcapng_block(o, 6, struct.pack(o + "IIIII", 0, units >> 32, units & 0xFFFFFFFF, len(payload), len(payload)) + payload)
            expected += [line(frame, units * 1000, 0, e) for e in p.expected]
        else:  # interface 1, monitor, nanoseconds, adapter 3
            payload = struct.pack(">HH", 3, p.monitor_opcode) + p.body
            out += pcapng_block(o, 6, struct.pack(o + "IIIII", 1, ns >> 32, ns & 0xFFFFFFFF, len(payload), len(payload)) + payload)
            expected += [line(frame, ns, 3, e) for e in p.expected]
    # Section 2, big-endian: forgets section 1's interfaces.
    o = ">"
    out += pcapng_block(o, 0x0A0D0D0A, struct.pack(o + "IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += pcapng_block(o, 1, struct.pack(o + "HHI", 187, 0, 0) + pcapng_option(o, 2, b"hci2") + pcapng_option(o, 9, b"\x94") + pcapng_option(o, 0, b""))
    for i, p in enumerate(all_packets[7:], start=7):
        ns = time_of(i)
        units = (ns * 2**20) // 10**9
        frame += 1
        out += pcapng_block(o, 6, struct.pack(o + "IIIII", 0, units >> 32, units & 0xFFFFFFFF, len(p.h4), len(p.h4)) + p.h4)
        shown = units * 10**9 // 2**20
        expected += [line(frame, shown, 2, e) for e in p.expected]
    write(name, out, expected)


def pcapng_simple_packets(name):
    """Simple Packet Blocks (no interface ID, no timestamp) beside Enhanced ones, per the pcapng spec.
    (tshark 4.0 reports this file as cut short; beacond and the spec's layout agree.)"""
    o = "<"
    out = pcapng_block(o, 0x0A0D0D0A, struct.pack(o + "IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += pcapng_block(o, 1, struct.pack(o + "HHI", 201, 0, 65535) + pcapng_option(o, 2, b"bluetooth1") + pcapng_option(o, 0, b""))
    expected = []
    for i, p in enumerate(packets()):
        payload = struct.pack(">I", 1 if p.incoming else 0) + p.h4
        if i % 2:
            out += pcapng_block(o, 3, struct.pack(o + "I", len(payload)) + payload)
            expected += [line(i + 1, None, 1, e) for e in p.expected]
        else:
            units = time_of(i) // 1000
            out += pcapng_block(o, 6, struct.pack(o + "IIIII", 0, units >> 32, units & 0xFFFFFFFF, len(payload), len(payload)) + payload)
            expected += [line(i + 1, units * 1000, 1, e) for e in p.expected]
    write(name, out, expected)


def pcapng_big_endian(name):
    o = ">"
    out = pcapng_block(o, 0x0A0D0D0A, struct.pack(o + "IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += pcapng_block(o, 1, struct.pack(o + "HHI", 201, 0, 0))
    expected = []
    for i, p in enumerate(packets()):
        units = time_of(i) // 1000
        payload = struct.pack(">I", 1 if p.incoming else 0) + p.h4
        out += pcapng_block(o, 6, struct.pack(o + "IIIII", 0, units >> 32, units & 0xFFFFFFFF, len(payload), len(payload)) + payload)
        expected += [line(i + 1, units * 1000, None, e) for e in p.expected]
    write(name, out, expected)


BTSNOOP_EPOCH_US = 0x00DCDDB30F2F8000


def btsnoop(name, datalink):
    out = b"btsnoop\x00" + struct.pack(">II", 1, datalink)
    expected = []
    records = []
    if datalink == 2001:  # a New Index and a System Note record first: records, but no HCI packets
        records.append((struct.pack("<BB6s8s", 1, 0, addr_bytes("00:AA:01:00:00:00"), b"hci1\x00\x00\x00\x00"), (1 << 16) | 0))
        records.append((b"beacond fixture\x00", 0xFFFF << 16 | 12))
    for p in packets():
        if datalink == 1002:
            records.append((p.h4, (1 if p.incoming else 0) | (2 if p.kind != "acl" else 0), p))
        else:
            adapter = 1 if p.kind != "acl" else 0
            records.append((p.body, adapter << 16 | p.monitor_opcode, p))
    for i, record in enumerate(records):
        payload, flags = record[0], record[1]
        us = time_of(i) // 1000
        out += struct.pack(">IIIIq", len(payload), len(payload), flags, 0, us + BTSNOOP_EPOCH_US) + payload
        if len(record) == 3:
            adapter = (flags >> 16) if datalink == 2001 else None
            expected += [line(i + 1, us * 1000, adapter, e) for e in record[2].expected]
    write(name, out, expected)


def hcidump(name):
    """`hcidump -R -t` style: banner, timestamped `>`/`<` lines, 20 bytes a line, continuations indented."""
    text = "HCI sniffer - Bluetooth packet analyzer ver 5.66\ndevice: hci0 snap_len: 1500 filter: 0xffffffffffffffff\n"
    expected = []
    for i, p in enumerate(packets()):
        us = time_of(i) // 1000
        import datetime
        stamp = datetime.datetime.fromtimestamp(us // 10**6, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S") + ".%06d" % (us % 10**6)
        data = p.h4
        chunks = [data[k:k + 20] for k in range(0, len(data), 20)]
        text += stamp + " " + (">" if p.incoming else "<") + " " + " ".join("%02X" % x for x in chunks[0]) + " \n"
        for chunk in chunks[1:]:
            text += "  " + " ".join("%02X" % x for x in chunk) + " \n"
        expected += [line(i + 1, us * 1000, 0, e) for e in p.expected]
    write(name, text.encode(), expected)


def hex_lines(name):
    """One H4 packet per line, with comments, blank lines, a contiguous-hex line and a bad line."""
    text = "# beacond hex fixture: one H4 packet per line; '#' starts a comment\n\n"
    expected = []
    frame = 0
    for i, p in enumerate(packets()):
        frame += 1
        hexed = p.h4.hex().upper() if i % 3 == 0 else " ".join("%02x" % x for x in p.h4)
        text += hexed + ("  # packet %d\n" % i)
        expected += [line(frame, None, None, e) for e in p.expected]
        if i == 4:
            frame += 1
            text += "04 3E zz  # not hex: dropped, but still a record\n"
    write(name, text.encode(), expected)


def corrupt_pcap(name):
    """Three good records, then a record header claiming 16 MiB: the rest cannot be trusted."""
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 201)
    expected = []
    all_packets = packets()
    for i, p in enumerate(all_packets[2:5]):
        ns = time_of(i)
        payload = struct.pack(">I", 1) + p.h4
        out += struct.pack("<IIII", ns // 10**9, ns % 10**9 // 1000, len(payload), len(payload)) + payload
        expected += [line(i + 1, ns // 1000 * 1000, None, e) for e in p.expected]
    out += struct.pack("<IIII", 0, 0, 16 << 20, 16 << 20) + all_packets[2].h4
    write(name, out, expected)


def main():
    os.makedirs(EDGE, exist_ok=True)
    pcap("h4-phdr-us-le.pcap", 201, "<", False)
    pcap("h4-phdr-ns-be.pcap", 201, ">", True)
    pcap("h4-us-be.pcap", 187, ">", False)
    pcap("monitor-ns-le.pcap", 254, "<", True, adapter=2)
    pcapng("sections.pcapng")
    pcapng_big_endian("h4-phdr-be.pcapng")
    pcapng_simple_packets("simple-packets.pcapng")
    btsnoop("h4.btsnoop", 1002)
    btsnoop("monitor.btsnoop", 2001)
    hcidump("hcidump-R.txt")
    hex_lines("packets.hex")
    corrupt_pcap("corrupt-length.pcap")


if __name__ == "__main__":
    main()
