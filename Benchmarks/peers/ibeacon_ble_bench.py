"""Home Assistant's iBeacon parser (PyPI ibeacon-ble) fed the adverts of a pcap (link type 201).

Run by scripts/bench-peers inside a throw-away virtualenv. Each report goes the way Home Assistant takes a raw
advert: bluetooth-data-tools turns the AD bytes into manufacturer data, a BluetoothServiceInfo carries it,
and iBeaconParser.parse decides. Reading the pcap is not timed: reports are taken out in chunks, then each
chunk is parsed under the clock. Prints one JSON line: reports, iBeacons, checksum, seconds.
"""
import asyncio
import json
import struct
import sys
import time

from bluetooth_data_tools import parse_advertisement_data_tuple
from home_assistant_bluetooth import BluetoothServiceInfo
from ibeacon_ble import iBeaconParser

CHUNK = 20_000


def reports(path):
    """(address, rssi, AD bytes) of every legacy LE Advertising Report, as the C loop reads them."""
    with open(path, "rb") as f:
        header = f.read(24)
        if struct.unpack("<I", header[:4])[0] != 0xA1B2C3D4 or struct.unpack("<I", header[20:24])[0] != 201:
            sys.exit(f"{path}: not a little-endian microsecond pcap of link type 201")
        while record := f.read(16):
            if len(record) < 16:
                return
            length = struct.unpack("<I", record[8:12])[0]
            p = f.read(length)
            if len(p) < 7 or p[4] != 0x04 or p[5] != 0x3E or p[7] != 0x02:
                continue
            end, q = 7 + p[6], 9
            for _ in range(p[8]):
                if end - q < 9 or end - q < 10 + p[q + 8]:
                    break
                n = p[q + 8]
                if n <= 31:
                    address = ":".join(f"{b:02X}" for b in reversed(p[q + 2:q + 8]))
                    yield address, struct.unpack("b", p[q + 9 + n:q + 10 + n])[0], p[q + 9:q + 9 + n]
                q += 10 + n


def main():
    parser = iBeaconParser()
    asyncio.run(parser.async_setup())  # loads the OUI table parse() looks vendors up in
    count = ibeacons = checksum = 0
    seconds = 0.0
    source = reports(sys.argv[1])
    while chunk := [r for _, r in zip(range(CHUNK), source)]:
        start = time.perf_counter()
        for address, rssi, data in chunk:
            name, uuids, service_data, manufacturer_data, _ = parse_advertisement_data_tuple((data,))
            info = BluetoothServiceInfo(name or "", address, rssi, manufacturer_data, service_data, uuids, "hci0")
            beacon = parser.parse(info)
            if beacon is not None:
                ibeacons += 1
                checksum += beacon.major + beacon.minor + (beacon.power & 0xFFFFFFFFFFFFFFFF)
        seconds += time.perf_counter() - start
        count += len(chunk)
    print(json.dumps({"reports": count, "ibeacons": ibeacons, "checksum": checksum % 2**64, "seconds": seconds}))


main()
