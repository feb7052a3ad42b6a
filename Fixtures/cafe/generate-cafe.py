#!/usr/bin/env python3
"""Writes the café capture: 40 minutes of what a Raspberry Pi outside a biker café hears, with ground truth.

Run from anywhere: `python3 Fixtures/cafe/generate-cafe.py`. Deterministic (fixed seed); the output is
committed, so neither the tests nor the demo need Python. Files written beside this script:

- cafe.pcap: pcap, link type 201 (H4 with direction header), microsecond timestamps;
- bikes.json: the registry's answer to GET /bikes for this café (with owner fields beacond must ignore,
  bikes that are not missing, and malformed entries it must skip);
- cafe.sightings.jsonl: the sightings beacond must report, computed here from the adverts this script
  emitted and the sighting policy in the engine issue (enter when first heard, an update at the first advert
  at least 10 minutes after the last report, exit at the last advert of a visit), not from beacond.
  Each line has the keys beacond prints except sightingId and the filtered RSSI/distance, which only
  beacond computes; `rssiMean` (the model's mean RSSI) and `proximity` (from the bike's true distance)
  let the test check those within a tolerance.

The cast (times in minutes from 08:00:00Z):
- the station's own beacon (FindMyBike UUID, major 2, minor 1), every 2 s throughout;
- bike-101 missing, parked 1.5 m away for 26 minutes: enter, two updates, exit;
- bike-102 missing, rides past at 8 m: enter, exit;
- bike-103 missing, stops twice with 4 minutes away between: two visits;
- bike-104 not missing, parked all along: nothing;
- bike-105 missing, a slow beacon (one advert per 10 s) that loses three adverts in a row once: one visit,
  because the engine lengthens the exit timeout for slow beacons (a fixed 30 s would split it);
- bike-106 missing, 30 cm from the antenna: immediate;
- bike-107 missing, a beacon advertising a nonsense measured power (0 dBm): proximity unknown;
- bike-108 missing, still parked when the capture ends: its exit comes at its last advert;
- bike-4242 missing but in another major: outside the region, nothing;
- noise: another company's iBeacons, Apple non-iBeacon adverts, phones, sometimes two reports per event.
"""
import json
import math
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from generate import FLAGS, ad, beacon_report, Report, legacy_event  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
START_NS = 1717228800 * 10**9  # 2024-06-01T08:00:00Z
LENGTH_S = 40 * 60
REGION = "21EECF71-D5C7-4A00-9B90-27C94B5146EA"
OTHER = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
POWER = -59
REPORT_INTERVAL_S = 600

rng = random.Random(20240601)


def mean_rssi(distance, power=POWER):
    return power - 20 * math.log10(distance)


def noisy_rssi(distance, power=POWER):
    # ±4 dB at most (a factor of 1.6 in distance), and every bike sits far enough inside its proximity band
    # (immediate < 0.5 m, near < 3 m) that even a single sample lands in the right one.
    return int(round(mean_rssi(distance, power) + max(-4.0, min(4.0, rng.gauss(0, 2)))))


def proximity(distance):
    return "immediate" if distance < 0.5 else "near" if distance < 3 else "far"


class Bike:
    def __init__(self, bike_id, minor, missing, distance, visits, interval=1.0, power=POWER, major=1,
                 address=None, forced_gap=None):
        self.bike_id, self.minor, self.missing, self.distance = bike_id, minor, missing, distance
        self.visits, self.interval, self.power, self.major = visits, interval, power, major
        self.address = address or "C0:%02X:%02X:00:00:01" % (minor >> 8, minor & 0xFF)
        self.forced_gap = forced_gap  # (visit index, advert index, adverts lost)

    def adverts(self):
        """Per visit, the (time_ns, rssi) of every advert heard (some are lost, as on the air)."""
        per_visit = []
        for v, (start_min, end_min) in enumerate(self.visits):
            heard = []
            t = start_min * 60.0 + rng.uniform(0, self.interval)
            index = 0
            lost_run = 0
            while t < end_min * 60.0:
                skip = False
                if self.forced_gap and self.forced_gap[0] == v and \
                        self.forced_gap[1] <= index < self.forced_gap[1] + self.forced_gap[2]:
                    skip = True
                elif self.interval < 5 and lost_run < 2 and rng.random() < 0.1:
                    skip = True  # ordinary loss, never long enough to look like leaving
                if skip:
                    lost_run += 1
                else:
                    lost_run = 0
                    heard.append((START_NS + int(t * 1e6) * 1000, noisy_rssi(self.distance)))
                t += self.interval * rng.uniform(0.97, 1.03)
                index += 1
            per_visit.append(heard)
        return per_visit


BIKES = [
    Bike("bike-101", 101, True, 1.5, [(0.5, 27.0)]),
    Bike("bike-102", 102, True, 8.0, [(5.0, 6.2)]),
    Bike("bike-103", 103, True, 1.2, [(2.0, 8.0), (12.0, 20.0)]),
    Bike("bike-104", 104, False, 2.5, [(0.0, 40.0)], interval=2.0),
    Bike("bike-105", 105, True, 6.0, [(10.0, 32.0)], interval=10.0, forced_gap=(0, 20, 3)),
    Bike("bike-106", 106, True, 0.3, [(30.0, 34.0)]),
    Bike("bike-107", 107, True, 1.5, [(15.0, 17.0)], power=0),
    Bike("bike-108", 108, True, 1.5, [(36.0, 41.0)]),
    Bike("bike-4242", 4242, True, 2.0, [(20.0, 25.0)], major=2),
]


def expected_sightings(bike, visits):
    """The policy, applied to the adverts emitted: enter, updates every >= 10 min, exit."""
    out = []
    for heard in visits:
        if not heard:
            continue
        times = [t for t, _ in heard]

        def line(kind, upto):
            rssis = [r for _, r in heard[:upto + 1]]
            return {"kind": kind, "bikeId": bike.bike_id, "uuid": REGION, "major": bike.major, "minor": bike.minor,
                    "firstSeen": iso(times[0]), "lastSeen": iso(times[upto]), "count": upto + 1,
                    "rssiMax": max(rssis), "rssiMean": round(mean_rssi(bike.distance), 1),
                    "proximity": "unknown" if bike.power >= 0 else proximity(bike.distance)}
        out.append(line("enter", 0))
        last_report = times[0]
        for k, t in enumerate(times):
            if t - last_report >= REPORT_INTERVAL_S * 10**9:
                out.append(line("update", k))
                last_report = t
        out.append(line("exit", len(times) - 1))
    return out


def iso(ns):
    sec, frac = divmod(ns, 10**9)
    days, rem = divmod(sec, 86400)
    import datetime
    d = datetime.datetime(1970, 1, 1) + datetime.timedelta(days=days, seconds=rem)
    return d.strftime("%Y-%m-%dT%H:%M:%S") + ".%06dZ" % (frac // 1000)


def noise_reports():
    """(time_ns, Report) for everything that is not a bike: the café's beacon, other beacons, phones."""
    out = []
    t = 0.7
    while t < LENGTH_S:  # the station beacon
        out.append((t, beacon_report("D8:00:00:00:00:01", REGION, 2, 1, -60, noisy_rssi(3.0, -60))))
        t += 2.0
    for i in range(LENGTH_S):  # everything else, about two adverts a second
        t = i + rng.random()
        choice = rng.random()
        if choice < 0.3:
            minor = rng.randrange(1, 6)
            out.append((t, beacon_report("E0:00:00:00:00:%02X" % minor, OTHER, 7, minor, -65, rng.randrange(-95, -60))))
        elif choice < 0.7:
            apple = ad(0xFF, b"\x4c\x00\x10\x05" + bytes(rng.randrange(256) for _ in range(5)))
            out.append((t, Report("7A:%02X:00:00:00:10" % rng.randrange(256), FLAGS + apple, rng.randrange(-100, -50), addr_type=1)))
        else:
            name = ad(0x09, b"phone-%d" % rng.randrange(100))
            out.append((t, Report("5E:%02X:11:22:33:44" % rng.randrange(256), FLAGS + name, rng.randrange(-100, -50), addr_type=1)))
        if rng.random() < 0.5:
            t2 = i + rng.random()
            out.append((t2, Report("6C:00:00:00:%02X:20" % rng.randrange(256), FLAGS, rng.randrange(-100, -60), addr_type=1)))
    return [(START_NS + int(t * 1e6) * 1000, r) for t, r in out]


def main():
    timed = noise_reports()
    expected = []
    for bike in BIKES:
        visits = bike.adverts()
        for heard in visits:
            for ns, rssi in heard:
                timed.append((ns, beacon_report(bike.address, REGION, bike.major, bike.minor, bike.power, rssi)))
        if bike.missing and bike.major == 1:
            expected += expected_sightings(bike, visits)
    timed.sort(key=lambda item: item[0])

    # Reports within 2 ms of each other share an event now and then, as controllers do.
    events = []
    i = 0
    while i < len(timed):
        ns, report = timed[i]
        if i + 1 < len(timed) and timed[i + 1][0] - ns < 2_000_000 and rng.random() < 0.5:
            events.append((timed[i + 1][0], legacy_event(report, timed[i + 1][1])))
            i += 2
        else:
            events.append((ns, legacy_event(report)))
            i += 1

    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 201)
    for ns, event in events:
        payload = struct.pack(">I", 1) + b"\x04" + event
        sec, frac = divmod(ns, 10**9)
        out += struct.pack("<IIII", sec, frac // 1000, len(payload), len(payload)) + payload
    with open(os.path.join(HERE, "cafe.pcap"), "wb") as f:
        f.write(out)

    expected.sort(key=lambda e: (e["lastSeen"], e["bikeId"], e["kind"]))
    with open(os.path.join(HERE, "cafe.sightings.jsonl"), "w") as f:
        for e in expected:
            f.write(json.dumps(e, separators=(",", ":")) + "\n")

    bikes = []
    for bike in BIKES:
        entry = {"id": bike.bike_id, "beaconMinor": bike.minor, "missing": bike.missing,
                 "make": "Triumph", "model": "Bonneville", "colour": "green",
                 "ownerName": "not for beacond", "deviceToken": "fcm:SECRET-TOKEN-%d" % bike.minor}
        if bike.major != 1:
            entry["beaconMajor"] = bike.major
        if bike.minor == 103:
            entry["beaconUUID"] = REGION.lower()
        bikes.append(entry)
    bikes += [{"id": "bike-900", "beaconMinor": 900, "missing": False},
              {"id": "", "beaconMinor": 901, "missing": True},
              {"id": "bike-902", "beaconMinor": 70000, "missing": True},
              "not an object"]
    with open(os.path.join(HERE, "bikes.json"), "w") as f:
        json.dump(bikes, f, indent=1)
        f.write("\n")
    print("cafe.pcap: %d events, %d bytes; %d expected sightings" % (len(events), len(out), len(expected)))


if __name__ == "__main__":
    main()
