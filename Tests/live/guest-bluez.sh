#!/bin/sh
# The monitor and dbus backends: bluetoothd owns the radios, and scans when beacond asks it over D-Bus.
. /extra/guest-lib.sh

mkdir -p /run/dbus
dbus-daemon --system || fail "dbus-daemon did not start"
# start_bluetoothd [-E]: -E (experimental) is what makes AdvertisementMonitorManager1 appear in BlueZ 5.66.
start_bluetoothd() {
  /usr/libexec/bluetooth/bluetoothd -n "$@" > /tmp/bluetoothd.log 2>&1 &
  BLUETOOTHD=$!
  wait_for 'dbus-send --system --print-reply --dest=org.bluez / org.freedesktop.DBus.ObjectManager.GetManagedObjects 2>/dev/null | grep -q /org/bluez/hci1' 100 \
    || fail "bluetoothd $* did not come up: $(cat /tmp/bluetoothd.log)"
}
stop_bluetoothd() { kill $BLUETOOTHD; wait $BLUETOOTHD 2>/dev/null; }
# hci0 advertises through bluetoothd's kernel API (mgmt, a random address); again = a new enable edge.
advertise() {
  btmgmt --index 0 power on > /dev/null 2>&1
  btmgmt --index 0 rm-adv 1 > /dev/null 2>&1
  btmgmt --index 0 add-adv -d 1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5 -g 1 > /dev/null 2>&1
}
discovering() {
  dbus-send --system --print-reply --dest=org.bluez /org/bluez/hci1 org.freedesktop.DBus.Properties.Get \
    string:org.bluez.Adapter1 string:Discovering 2>/dev/null | grep -q 'boolean true'
}

# run_backend BACKEND METHOD: the daemon on hci1 reports the missing bike, says how it scans, stops cleanly.
run_backend() {
  dir=/tmp/$1-$(echo "$2" | tr ' ' -)
  mkdir -p $dir
  echo '[{"id":"vm-bike","beaconMinor":2,"missing":true}]' > $dir/bikes.json
  $B run --backend $1 --adapter hci1 --region $UUID:1 --station-id vm --state-dir $dir --control-socket $dir/c.sock > $dir/run.log 2>&1 &
  D=$!
  wait_for "[ -S $dir/c.sock ] || ! kill -0 $D 2>/dev/null" 300
  advertise
  if wait_for "grep -q vm-bike $dir/sightings.jsonl 2>/dev/null" 150; then
    ok "$1 backend ($2) reported vm-bike"
  else
    fail "$1 backend ($2): no sighting"
  fi
  $B status --control-socket $dir/c.sock > $dir/status.txt 2>&1
  grep -q "hci1: scanning ($2)" $dir/status.txt && ok "$1 status: hci1 scanning ($2)" || { fail "$1 status:"; sed 's/^/  /' $dir/status.txt; }
  kill -TERM $D; wait $D; rc=$?
  sed "s/^/$1: /" $dir/run.log | tail -6
  [ $rc = 0 ] && ok "$1 backend stopped cleanly" || fail "$1 backend exited $rc"
}

start_bluetoothd -E
advertise
run_backend monitor "advertisement monitor"
run_backend dbus "advertisement monitor"

# bluetoothd dying and starting again under a running daemon: the monitor is registered again and adverts flow.
mkdir -p /tmp/restart && cp /tmp/monitor-advertisement-monitor/bikes.json /tmp/restart/
$B run --backend monitor --adapter hci1 --region $UUID:1 --station-id vm --state-dir /tmp/restart \
  --control-socket /tmp/restart/c.sock > /tmp/restart/run.log 2>&1 &
D=$!
wait_for "[ -S /tmp/restart/c.sock ]" 300
# Killed outright, bluetoothd says nothing about its adapters: only the bus tells that org.bluez lost its owner.
kill -9 $BLUETOOTHD; wait $BLUETOOTHD 2>/dev/null
wait_for "grep -q 'bluetoothd stopped' /tmp/restart/run.log" 50 && ok "the daemon saw bluetoothd die" || fail "bluetoothd dying went unnoticed"
start_bluetoothd -E
if wait_for "grep -q 'adapter is back' /tmp/restart/run.log" 100; then ok "the monitor was registered with the new bluetoothd"; else fail "not taken up again"; fi
before=$(adverts /tmp/restart/c.sock)
advertise
wait_for '[ "$(adverts /tmp/restart/c.sock)" -gt "$before" ]' 100 && ok "adverts flow after bluetoothd restarted" || fail "no adverts after the restart"
kill -TERM $D; wait $D; rc=$?
sed 's/^/restart: /' /tmp/restart/run.log | tail -6
[ $rc = 0 ] && ok "restart daemon stopped cleanly" || fail "restart daemon exited $rc"
$B scan --backend monitor --adapter hci1 --duration 3 --region $UUID:1 --config /dev/null > /tmp/scan.out 2>/tmp/scan.err &
S=$!; usleep 1500000; advertise; wait $S
sed 's/^/scan: /' /tmp/scan.out
grep -q "^$UUID  *1  *2 " /tmp/scan.out && ok "scan --backend monitor shows the beacon" || fail "scan --backend monitor: $(cat /tmp/scan.err)"
stop_bluetoothd

# Without the monitor API, a discovery session (kept while beacond is connected, stopped when it stops).
start_bluetoothd
advertise
run_backend dbus discovery
discovering && fail "discovery still on after the dbus backend stopped" || ok "discovery stopped with the daemon"
run_backend monitor discovery
stop_bluetoothd

# No bluetoothd: one clear line, exit 69.
$B run --backend monitor --adapter hci1 --station-id vm --state-dir /tmp/nobt --control-socket /tmp/nobt.sock > /tmp/nobt.txt 2>&1; rc=$?
[ $rc = 69 ] && ok "no bluetoothd: exit 69: $(tail -1 /tmp/nobt.txt)" || fail "no bluetoothd: exit $rc: $(cat /tmp/nobt.txt)"

finish
