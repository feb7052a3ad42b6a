# Sourced by the guest suites (see bt-vm-test): a real kernel, btvirt's two LE controllers, hci0 advertising
# the iBeacon E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 major 1 minor 2, hci1 up and idle.
# Every check prints "live: ok …" or "live: FAIL …"; a suite exits with the number of failures.
B=/extra/beacond
# The guest has no NTP, so its clock is never synchronised: live sightings would wait clock-sync-wait (10 min)
# for it. These suites are about capture; the clock's handling is tested under real systemd (Tests/systemd).
mkdir -p /etc/beacond
echo "clock-sync-wait = 0" > /etc/beacond/beacond.conf
UUID=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
failures=0
ok() { echo "live: ok $*"; }
fail() { echo "live: FAIL $*"; failures=$((failures + 1)); }
# btvirt sends one advertising report per advertise-enable edge (and per scan-enable edge): make one.
advertise_edge() { hcitool -i hci0 cmd 0x08 0x000a 00 >/dev/null; hcitool -i hci0 cmd 0x08 0x000a 01 >/dev/null; }
# wait_for COMMAND TENTHS: poll until COMMAND succeeds or the time is up.
wait_for() { i=0; while ! eval "$1" && [ $i -lt "$2" ]; do usleep 100000; i=$((i + 1)); done; eval "$1"; }
# adverts SOCKET: the adverts count a running daemon reports.
adverts() { $B status --control-socket "$1" --json 2>/dev/null | grep -o '"adverts" *: *[0-9]*' | grep -o '[0-9]*$'; }

finish() {
  echo "live: $failures failures after $(awk -v a="$start" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN{print b-a}') s"
  exit $failures
}
start=$(cut -d' ' -f1 /proc/uptime)
