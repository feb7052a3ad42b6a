# The real-systemd test's bike-registry part, sourced by guest.sh (its ok, fail, wait_for, json, show, advertising):
# the registry's package installed with apt beside beacond, on its SQLite file and then on PostgreSQL; the café's
# beacond reports to it, and the owner's webhook (receiver.py) is told, signed, that the bike was seen at the café;
# on SQLite the owner is also told by mail, through a relay in the guest (smtp-relay, the tests' aiosmtpd one).

R=/usr/bin/bike-registry
export REGISTRY_PORT=8180
rshow() { systemctl show -p "$1" --value bike-registry; }
# api METHOD PATH [TOKEN] [BODY]: the registry's answer, as "STATUS BODY".
api() {
    python3 - "$@" << 'EOF'
import json, os, sys, urllib.error, urllib.request
method, path = sys.argv[1], sys.argv[2]
token = sys.argv[3] if len(sys.argv) > 3 else ""
body = sys.argv[4].encode() if len(sys.argv) > 4 else None
request = urllib.request.Request(f"http://127.0.0.1:{os.environ['REGISTRY_PORT']}" + path, data=body, method=method)
if token: request.add_header("Authorization", "Bearer " + token)
if body: request.add_header("Content-Type", "application/json")
try:
    with urllib.request.urlopen(request, timeout=10) as answer: print(answer.status, answer.read().decode())
except urllib.error.HTTPError as error: print(error.code, error.read().decode())
EOF
}
seen() { grep -c '"bike.seen"' /srv/hooks/received.jsonl 2> /dev/null || echo 0; }

# registry_round DATABASE LABEL: a station added as the service's user, an owner registering the beacon, beacond
# reporting to this registry with the station's key, and the owner told.
registry_round() {
    local database=$1 label=$2 added key code registered bike token secret before started
    added=$(sudo -u bike-registry $R station add "VM Café" --latitude 51.5412 --longitude=-0.2769 --json --database "$database" 2> /tmp/station.err)
    key=$(echo "$added" | json 'd["key"]')
    [ -n "$key" ] && ok "$label: station added as the service's user beside the running server" || { fail "$label: station add: $(cat /tmp/station.err)"; return; }
    # The operator issues the beacon (claim-code registration, the default); the owner registers it by its label's code.
    code=$(sudo -u bike-registry $R beacons issue --region E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1 --count 1 --first-minor 2 --database "$database" 2> /tmp/beacons.err | awk -F, 'NR == 2 && $3 == 2 { print $4 }')
    [ -n "$code" ] && ok "$label: beacon issued with its claim code" || { fail "$label: beacons issue: $(cat /tmp/beacons.err)"; return; }
    registered=$(api POST /owner/bikes "" '{"claimCode":"'"$code"'","make":"Honda","model":"CB500","colour":"red"}')
    bike=$(echo "${registered#* }" | json 'd["id"]'); token=$(echo "${registered#* }" | json 'd["ownerToken"]')
    secret=$(echo "${registered#* }" | json 'd["webhookSecret"]')
    [ "${registered%% *}" = 201 ] && [ -n "$bike" ] && ok "$label: an owner registered the beacon" || { fail "$label: register: $registered"; return; }
    echo "$secret" > /srv/hooks/secret
    api PATCH "/owner/bikes/$bike" "$token" '{"missing":true,"notify":{"webhook":"http://127.0.0.1:8090/hook"}}' | grep -q '^200 ' \
        && ok "$label: reported missing, with a webhook" || fail "$label: could not report the bike missing"
    before=$(seen)
    stop_advertising
    sed -i "s|^registry = .*|registry = http://127.0.0.1:$REGISTRY_PORT|" $CONF
    printf '%s\n' "$key" > /etc/beacond/registry-api-key
    started=$(date +%s)
    systemctl restart beacond
    advertising & ADVERTISING=$!
    wait_for '[ "$(seen)" -gt "$before" ]' 120 && ok "$label: beacond heard the bike and the owner was told" \
        || { fail "$label: no notification"; $B status; journal_since $started -u bike-registry | tail -10; }
    tail -1 /srv/hooks/received.jsonl | python3 -c '
import json, sys
r = json.load(sys.stdin); d = r["body"]["data"]
good = r["valid"] and d["station"] == {"name": "VM Café", "latitude": 51.5412, "longitude": -0.2769} and d["bikeId"] == sys.argv[1]
print("systemd-vm: %s %s: the message is signed with the bike'"'"'s secret and names the café and its place (%s)" % ("ok" if good else "FAIL", sys.argv[2], d))
sys.exit(0 if good else 1)' "$bike" "$label" || failures=$((failures + 1))
    # Stations' refreshes are written every 5 s (StationRefreshLog), so the count can lag the first refresh that long.
    wait_for '[ "$(api GET "/owner/bikes/$bike/sightings" "$token" | cut -d" " -f2- | json '"'"'len(d["sightings"]) >= 1 and d["stationsListeningLastHour"] == 1'"'"')" = True ]' 15 \
        && ok "$label: the owner reads where the bike was heard, and that one station is listening" || fail "$label: sightings: $(api GET "/owner/bikes/$bike/sightings" "$token")"
    sudo -u bike-registry $R station list --json --database "$database" | json 'd["userAgent"].startswith("beacond/") and d["lastSighting"] is not None' | grep -q True \
        && ok "$label: station list shows the café's beacond and its last sighting" || fail "$label: station list: $(sudo -u bike-registry $R station list --database "$database")"
    journalctl --no-pager -o cat -u bike-registry | grep -qF -e "$key" -e "$token" -e "${secret#whsec_}" -e "$code" \
        && fail "$label: a key, token, secret or claim code is in the registry's journal" || ok "$label: no key, token, secret or claim code in the registry's journal"
    ROUND_BIKE=$bike ROUND_TOKEN=$token ROUND_KEY=$key
}

# mail_round: e-mail to the owner through a relay on loopback (aiosmtpd with STARTTLS and AUTH, its certificate made
# on the host), the password given to the service as the systemd credential smtp-password; the owner confirms the
# address from the message received, and a sighting of the bike (ROUND_BIKE, ROUND_KEY) reaches it by mail.
mail_round() {
    local spool=/srv/mail/spool password="vm relay password $(od -An -N6 -tx1 /dev/urandom | tr -d ' ')" started link answer
    mkdir -p $spool /etc/bike-registry
    python3 ./smtp-relay --port 2525 --spool $spool --cert relay.pem --key relay.key --user registry --password "$password" \
        2> /tmp/relay.err & RELAY=$!
    printf '%s\n' "$password" > /etc/bike-registry/smtp-password && chmod 0600 /etc/bike-registry/smtp-password
    install -m 0644 relay.pem /etc/bike-registry/relay-ca.pem
    # The relay's settings as an operator writes them: in the packaged settings file, one more in the unit's
    # EnvironmentFile=, the password a credential; the unit's own ExecStart= (no flags).
    cp /etc/bike-registry/bike-registry.conf /tmp/bike-registry.conf.packaged
    printf 'public-url = http://127.0.0.1:8180\nsmtp = smtp://127.0.0.1:2525\nsmtp-user = registry\nsmtp-ca-file = /etc/bike-registry/relay-ca.pem\nmail-from = "FindMyBike <noreply@vm.test>"\n' \
        >> /etc/bike-registry/bike-registry.conf
    printf 'BIKE_REGISTRY_ALLOW_PRIVATE_WEBHOOKS=true\n' > /etc/default/bike-registry
    printf '[Service]\nLoadCredential=smtp-password:/etc/bike-registry/smtp-password\n' > /etc/systemd/system/bike-registry.service.d/test.conf
    started=$(date +%s)
    systemctl daemon-reload && systemctl restart bike-registry
    wait_for '[ "$(systemctl is-active bike-registry)" = active ]' 30 && journal_since $started -u bike-registry | grep -q "e-mail to owners through smtp://127.0.0.1:2525" \
        && ok "mail: bike-registry serves with the relay from /etc/bike-registry/bike-registry.conf and /etc/default/bike-registry, its password the credential smtp-password" \
        || { fail "mail: $(systemctl is-active bike-registry)"; journal_since $started -u bike-registry | tail -10; }
    api PATCH "/owner/bikes/$ROUND_BIKE" "$ROUND_TOKEN" '{"notify":{"email":"rider@vm.test"}}' | grep -q '^200 ' \
        && ok "mail: the owner saved an address" || fail "mail: could not save the address"
    # mail SUBJECT: the text of the first message received whose subject starts so.
    mail() { python3 -c '
import email, email.policy, glob, sys
for name in sorted(glob.glob(sys.argv[1] + "/*.eml")):
    message = email.message_from_bytes(open(name, "rb").read(), policy=email.policy.default)
    if str(message["Subject"]).startswith(sys.argv[2]) and str(message["To"]) == "rider@vm.test":
        print(message.get_body(preferencelist=("plain",)).get_content()); break' $spool "$1"; }
    wait_for '[ -n "$(mail "Confirm your address")" ]' 60 && ok "mail: the confirmation reached the relay over STARTTLS with AUTH" \
        || { fail "mail: no confirmation"; cat /tmp/relay.err; journal_since $started -u bike-registry | tail -10; }
    link=$(mail "Confirm your address" | grep -o '/confirm/[A-Za-z0-9_-]*' | head -1)
    answer=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:8180" + sys.argv[1], data=b"", method="POST"), timeout=10).status)' "$link" 2>&1)
    [ "$answer" = 200 ] && ok "mail: the address confirmed from its link" || fail "mail: confirm $link: $answer"
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    python3 -c '
import json, sys, urllib.request, uuid
bike, key, at = sys.argv[1:4]
sid = str(uuid.uuid4())
body = {"bikeId": bike, "date": at, "latitude": 0, "longitude": 0, "sightingId": sid, "kind": "enter", "stationId": "vm",
        "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 2, "firstSeen": at, "lastSeen": at, "count": 1,
        "rssi": -60.0, "proximity": "near"}
request = urllib.request.Request("http://127.0.0.1:8180/sightings", data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": "Bearer " + key, "Content-Type": "application/json", "Idempotency-Key": sid})
urllib.request.urlopen(request, timeout=10)' "$ROUND_BIKE" "$ROUND_KEY" "$now" 2> /tmp/sighting.err || fail "mail: sighting: $(tail -2 /tmp/sighting.err)"
    wait_for '[ -n "$(mail "Your red Honda CB500 was seen at VM Café")" ]' 60 \
        && ok "mail: the station's sighting reached the owner by mail" || { fail "mail: no sighting by mail"; ls $spool; }
    journalctl --no-pager -o cat -u bike-registry | grep -qF -e "rider@vm.test" -e "$password" \
        && fail "mail: an address or the relay's password is in the journal" || ok "mail: no address and no password in the journal"
    kill $RELAY 2> /dev/null
    cp /tmp/bike-registry.conf.packaged /etc/bike-registry/bike-registry.conf && rm -f /etc/default/bike-registry
}

# ---------------------------------------------------------------------------------------------------- install
apt-get install -y -q ./bike-registry_current.deb > /tmp/apt-registry.log 2>&1 || { fail "apt install bike-registry"; tail -20 /tmp/apt-registry.log; }
[ "$(systemctl is-enabled bike-registry)" = enabled ] && ok "bike-registry: installed and enabled" || fail "bike-registry: not enabled"
# Type=notify: active only once it said READY=1, which it does once it listens.
wait_for '[ "$(systemctl is-active bike-registry)" = active ]' 60 && ok "bike-registry: active (READY=1) on its SQLite file" \
    || { fail "bike-registry: $(systemctl is-active bike-registry)"; journalctl -u bike-registry --no-pager | tail -15; }
# The owner's pages come with the package: the registration page, with its Content-Security-Policy.
python3 -c '
import urllib.request
with urllib.request.urlopen("http://127.0.0.1:8180/", timeout=10) as answer:
    assert answer.status == 200 and "default-src '"'"'none'"'"'" in answer.headers["Content-Security-Policy"]
    assert b"Register your bike" in answer.read()
' 2> /tmp/page.err && ok "bike-registry: the owner page served as installed, with its CSP" || fail "bike-registry: owner page: $(tail -3 /tmp/page.err)"
systemd-analyze verify --man=no bike-registry.service > /tmp/verify-registry.txt 2>&1 && ok "bike-registry: systemd-analyze verify" || { fail "verify:"; cat /tmp/verify-registry.txt; }
exposure=$(systemd-analyze security bike-registry --no-pager 2> /dev/null | sed -n 's/.*Overall exposure level for bike-registry.service: \([0-9.]*\).*/\1/p')
awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 2.0) }' && ok "bike-registry: exposure $exposure (2.0 or lower) as installed" || fail "bike-registry: exposure $exposure"
# The database and the files beside it: the service's user and group only (0640, whatever the umask); an operator's
# `station add` as its user beside it leaves them so.
modes=$(stat -c '%a %U %G' /var/lib/bike-registry/registry.sqlite* 2> /dev/null | sort -u)
[ "$modes" = "640 bike-registry bike-registry" ] \
    && ok "bike-registry: its database and the files beside it are its own, 0640" || fail "bike-registry: $(ls -l /var/lib/bike-registry 2>&1)"
[ "$(systemctl show -P LimitNOFILE bike-registry)" = 16384 ] && ok "bike-registry: LimitNOFILE=16384" \
    || fail "bike-registry: LimitNOFILE $(systemctl show -P LimitNOFILE bike-registry)"
for page in bike-registry bike-registry-serve bike-registry-station-add; do [ -f /usr/share/man/man1/$page.1.gz ] || fail "no man page $page"; done
$R --version | grep -qx "$($B --version)" && ok "bike-registry --version is beacond's" || fail "versions: $($R --version) $($B --version)"

# The owner's receiver is on loopback: a café's own network is allowed with --allow-private-webhooks, in a drop-in.
mkdir -p /srv/hooks /etc/systemd/system/bike-registry.service.d
python3 receiver.py 8090 /srv/hooks & RECEIVER=$!
printf '[Service]\nExecStart=\nExecStart=/usr/bin/bike-registry serve --listen 127.0.0.1:8180 --allow-private-webhooks\n' \
    > /etc/systemd/system/bike-registry.service.d/test.conf
systemctl daemon-reload && systemctl restart bike-registry
wait_for '[ "$(systemctl is-active bike-registry)" = active ]' 30 || fail "bike-registry: not active after the drop-in"
registry_round /var/lib/bike-registry/registry.sqlite "bike-registry on SQLite"
mail_round

started=$(date +%s.%N)
systemctl stop bike-registry
stop_ms=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%d", (b - a) * 1000 }')
[ "$(rshow Result)" = success ] && [ "$(rshow ExecMainStatus)" = 0 ] && ok "bike-registry: systemctl stop, exit 0 in $stop_ms ms" \
    || fail "bike-registry stop: $(rshow Result) $(rshow ExecMainStatus)"

# ---------------------------------------------------------------------------------------------------- PostgreSQL
# Debian's server on this machine; the service's user reaches it over the Unix socket by peer authentication.
systemctl start postgresql
# The cluster's own port (Debian numbers a second cluster 5433, say), as its socket is named by it.
pg_port=$(pg_lsclusters --no-header | awk '$4 == "online" { print $3; exit }')
echo "systemd-vm: info: PostgreSQL clusters: $(pg_lsclusters --no-header | tr -s ' ' | tr '\n' ';')"
PG=postgres:///bike_registry?port=${pg_port:-5432}
runuser -u postgres -- psql -q -c "CREATE ROLE \"bike-registry\" LOGIN" -c 'CREATE DATABASE bike_registry OWNER "bike-registry"' \
    && ok "PostgreSQL: a role for the service's user and its database" || fail "PostgreSQL: could not make the role and database"
# Another address, as another registry is to beacond (it does not take one registry's list, or its ETag, for another's).
export REGISTRY_PORT=8181
printf '[Unit]\nAfter=postgresql.service\n[Service]\nExecStart=\nExecStart=/usr/bin/bike-registry serve --listen 127.0.0.1:%s --allow-private-webhooks --database %s\n' \
    "$REGISTRY_PORT" "$PG" > /etc/systemd/system/bike-registry.service.d/test.conf
systemctl daemon-reload && systemctl start bike-registry
wait_for '[ "$(systemctl is-active bike-registry)" = active ]' 60 && ok "bike-registry: active on PostgreSQL, under the same sandbox" \
    || { fail "bike-registry on PostgreSQL: $(systemctl is-active bike-registry)"; journalctl -u bike-registry --no-pager | tail -15; }
registry_round "$PG" "bike-registry on PostgreSQL"
runuser -u postgres -- psql -At -d bike_registry -c "SELECT count(*) FROM notification WHERE deliveredAt IS NOT NULL" | grep -qx 1 \
    && ok "PostgreSQL: the delivered notification is recorded there" || fail "PostgreSQL: notifications: $(runuser -u postgres -- psql -At -d bike_registry -c 'SELECT count(*) FROM notification')"

# ---------------------------------------------------------------------------------------------------- purge
rm -rf /etc/systemd/system/bike-registry.service.d
apt-get purge -y -q bike-registry > /tmp/apt-purge-registry.log 2>&1 || { fail "apt purge bike-registry"; tail -10 /tmp/apt-purge-registry.log; }
systemctl daemon-reload
left=""
for path in /var/lib/bike-registry /usr/bin/bike-registry /usr/lib/systemd/system/bike-registry.service /usr/lib/sysusers.d/bike-registry.conf \
    /usr/share/doc/bike-registry /etc/systemd/system/multi-user.target.wants/bike-registry.service /etc/bike-registry/bike-registry.conf; do
    [ -e "$path" ] && left="$left $path"
done
[ -z "$left" ] && ok "bike-registry: purge left no file behind" || fail "bike-registry: purge left:$left"
runuser -u postgres -- psql -At -c "SELECT 1 FROM pg_database WHERE datname = 'bike_registry'" | grep -qx 1 \
    && ok "bike-registry: purge leaves the PostgreSQL database, which is the administrator's" || fail "bike-registry: the PostgreSQL database is gone"
kill $RECEIVER 2> /dev/null
