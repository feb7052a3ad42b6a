// The plain C loop (Benchmarks/Sources/CDecodeLoop) as its own process, so scripts/bench-peers can measure its
// time and peak RSS the same way as every other peer's. Prints one JSON line: reports, iBeacons, checksum.
#include "decode_loop.h"
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s CAPTURE.pcap\n", argv[0]); return 64; }
    c_decode_result r = c_decode_pcap201(argv[1]);
    if (r.error) { fprintf(stderr, "%s: cannot decode (error %d)\n", argv[1], r.error); return 2; }
    printf("{\"reports\": %llu, \"ibeacons\": %llu, \"checksum\": %llu}\n",
           (unsigned long long)r.reports, (unsigned long long)r.ibeacons, (unsigned long long)r.checksum);
    return 0;
}
