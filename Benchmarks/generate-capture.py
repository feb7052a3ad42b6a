#!/usr/bin/env python3
"""Writes a pcap (link type 201) of N LE Advertising Report events, one report each, for the decode benchmark.

Usage: python3 Benchmarks/generate-capture.py [N] [OUT]   (default 1000000, Benchmarks/out/adverts-1m.pcap)

A café-like mix, deterministic: 30 % iBeacons (bikes in the FindMyBike region and other UUIDs), 25 % other
Apple adverts, 5 % Eddystone, 40 % other devices with flags, names and manufacturer data; data lengths 3-31.
"""
import os
import random
import struct
import sys

# AD structures are built by the fixtures' `ad`, which counts each one's length: a hand-counted length byte once
# left the Eddystone advert a byte longer than it claimed.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Fixtures"))
from generate import ad  # noqa: E402

count = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", "adverts-1m.pcap")
os.makedirs(os.path.dirname(out), exist_ok=True)
rng = random.Random(42)
REGION = bytes.fromhex("21EECF71D5C74A009B9027C94B5146EA")
OTHER = bytes.fromhex("E2C56DB5DFFB48D2B060D0F5A71096E0")


def advert(kind):
    if kind < 30:
        uuid = REGION if kind < 24 else OTHER
        return b"\x02\x01\x06\x1a\xff\x4c\x00\x02\x15" + uuid + struct.pack(">HHb", 1, rng.randrange(65536), -59)
    if kind < 55:
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(4, 20)))
        return b"\x02\x01\x1a" + ad(0xFF, b"\x4c\x00" + body)
    if kind < 60:
        return ad(0x03, b"\xaa\xfe") + ad(0x16, b"\xaa\xfe\x10\x00\x03beacond")
    name = b"device-%d" % rng.randrange(1000)
    return b"\x02\x01\x06" + ad(0x09, name) + ad(0xFF, b"\x59\x00\x01\x02")


# A pool of distinct adverts, cycled, keeps generation fast while the decoder sees varied bytes.
pool = []
for i in range(4096):
    data = advert(rng.randrange(100))[:31]
    addr = bytes(rng.randrange(256) for _ in range(6))
    report = bytes([0, rng.randrange(2)]) + addr + bytes([len(data)]) + data + struct.pack("b", -rng.randrange(40, 100))
    params = b"\x02\x01" + report
    h4 = b"\x04\x3e" + bytes([len(params)]) + params
    pool.append(struct.pack(">I", 1) + h4)

with open(out, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 201))
    chunk = []
    base = 1714557600
    for i in range(count):
        payload = pool[i % len(pool)]
        chunk.append(struct.pack("<IIII", base + i // 2000, (i % 2000) * 500, len(payload), len(payload)) + payload)
        if len(chunk) == 10000:
            f.write(b"".join(chunk))
            chunk = []
    f.write(b"".join(chunk))
print(out)
