#!/usr/bin/env python3
"""The system clock's discipline, as NTP would set it (root, CAP_SYS_TIME), for tests in a VM with no network.

Usage: clock.py sync      the kernel calls the clock synchronised (maximum error 1 ms, STA_UNSYNC clear)
       clock.py unsync    as at boot before NTP: maximum error 16 s, STA_UNSYNC set
       clock.py show      prints the maximum error (µs) and whether STA_UNSYNC is set
"""
import ctypes
import sys

ADJ_MAXERROR, ADJ_ESTERROR, ADJ_STATUS = 0x0004, 0x0008, 0x0010
STA_UNSYNC = 0x0040
C_LONG, C_INT = ctypes.c_long, ctypes.c_int


class Timex(ctypes.Structure):  # struct timex, <sys/timex.h>
    _fields_ = [("modes", ctypes.c_uint), ("offset", C_LONG), ("freq", C_LONG), ("maxerror", C_LONG), ("esterror", C_LONG),
                ("status", C_INT), ("constant", C_LONG), ("precision", C_LONG), ("tolerance", C_LONG),
                ("tv_sec", C_LONG), ("tv_usec", C_LONG), ("tick", C_LONG), ("ppsfreq", C_LONG), ("jitter", C_LONG),
                ("shift", C_INT), ("stabil", C_LONG), ("jitcnt", C_LONG), ("calcnt", C_LONG), ("errcnt", C_LONG),
                ("stbcnt", C_LONG), ("tai", C_INT), ("padding", C_INT * 11)]


libc = ctypes.CDLL(None, use_errno=True)


def adjtimex(state):
    if libc.adjtimex(ctypes.byref(state)) < 0:
        sys.exit(f"clock.py: adjtimex: errno {ctypes.get_errno()}")
    return state


state = adjtimex(Timex())
command = sys.argv[1] if len(sys.argv) > 1 else "show"
if command == "sync":
    adjtimex(Timex(modes=ADJ_MAXERROR | ADJ_ESTERROR | ADJ_STATUS, maxerror=1000, esterror=1000, status=state.status & ~STA_UNSYNC))
elif command == "unsync":
    adjtimex(Timex(modes=ADJ_MAXERROR | ADJ_STATUS, maxerror=16_000_000, status=state.status | STA_UNSYNC))
elif command != "show":
    sys.exit(__doc__)
state = adjtimex(Timex())
print(f"maxerror={state.maxerror} unsync={'yes' if state.status & STA_UNSYNC else 'no'}")
