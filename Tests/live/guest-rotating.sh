#!/bin/sh
# A rotating beacon through a real kernel (issue 41): hci0 runs scripts/rotating-beacon with a 20 s period, and
# `beacond run` on hci1, with the registry's missing list, hears it across at least three rotations
# as one visit: one enter and one exit. The capture shows the address changing with each identity.
. /extra/guest-lib.sh

# The missing list as the registry gave it (Tests/live/registry-list, on the host, just before this boot): the bike
# once, with the identities of its window, and the key its beacon was issued with.
KEY=$(cat /extra/rotating-key)
PERIOD=20
REGION=21EECF71-D5C7-4A00-9B90-27C94B5146EA  # FindMyBike's UUID with no major: identities use every major
T=/extra/rotating-id
mkdir -p /tmp/rot
cp /extra/bikes.json /tmp/rot/bikes.json
BIKE=$(grep -o '"id":"[^"]*"' /tmp/rot/bikes.json | head -1 | cut -d'"' -f4)
echo "list: $(cut -c1-160 /tmp/rot/bikes.json)…"

$B run --backend hci --adapter hci1 --region $REGION --station-id vm --state-dir /tmp/rot \
    --control-socket /tmp/rot.sock > /tmp/rot-run.log 2>&1 &
DAEMON=$!
wait_for '[ -S /tmp/rot.sock ]' 300 || fail "no control socket"
# 70 s: at least three changes of identity at a 20 s period. btvirt reports one advert per enable: every 2 s.
/extra/rotating-beacon --key $KEY --period $PERIOD --uuid $REGION --adapter hci0 --duration 70 --reenable 2 \
    --tool $T > /tmp/beacon.log 2>&1
rc=$?
sed 's/^/beacon: /' /tmp/beacon.log
[ $rc = 0 ] && ok "rotating-beacon ran 70 s and stopped" || fail "rotating-beacon exited $rc"
# The bike leaves when the beacon stops: the exit comes after the exit timeout (30 s) of silence.
wait_for 'grep -q "\"kind\":\"exit\"" /tmp/rot/sightings.jsonl 2>/dev/null' 600 || fail "no exit within 60 s"
kill -TERM $DAEMON; wait $DAEMON; rc=$?
[ $rc = 0 ] && ok "run stopped cleanly on SIGTERM" || { fail "run exited $rc"; tail -20 /tmp/rot-run.log; }

epochs=$(grep -c '^rotating-beacon: epoch' /tmp/beacon.log)
[ "$epochs" -ge 4 ] && ok "the beacon took $epochs identities (at least three rotations)" ||
    fail "the beacon took $epochs identities"

# The capture: each identity's address is the address hci1 heard it from.
btmon -r /tmp/btmon.snoop 2>/dev/null | grep -A8 'LE Advertising Report' | grep 'Address:' > /tmp/heard.txt
heard=0
for address in $(grep '^rotating-beacon: epoch' /tmp/beacon.log | awk '{print $9}'); do
    grep -q "$address" /tmp/heard.txt && heard=$((heard + 1)) || fail "no advertising report from $address"
done
[ "$heard" = "$epochs" ] && ok "hci1 heard each identity from its own address ($heard addresses)"

sed 's/^/sighting: /' /tmp/rot/sightings.jsonl | cut -c1-220
kinds=$(grep -o '"kind":"[a-z]*"' /tmp/rot/sightings.jsonl | cut -d'"' -f4 | tr '\n' ' ')
[ "$kinds" = "enter exit " ] && ok "one enter and one exit for the whole stay" || fail "sightings: $kinds"
[ "$(grep -c "$BIKE" /tmp/rot/sightings.jsonl)" = 2 ] && ok "both name the bike" || fail "not all name the bike"
# The exit carries the identity heard last: the last epoch's major and minor.
set -- $(grep '^rotating-beacon: epoch' /tmp/beacon.log | tail -1)
last_major=$5 last_minor=$7
grep '"kind":"exit"' /tmp/rot/sightings.jsonl | grep -q "\"major\":$last_major,\"minor\":$last_minor" &&
    ok "the exit carries the identity heard last ($last_major, $last_minor)" ||
    fail "the exit does not carry $last_major, $last_minor"
finish
