"""schemathesis hooks for bike-registry: each request carries the credential its side needs.

Station operations (/bikes, /sightings) get the station key from $REGISTRY_STATION_KEY. Owner operations on one bike
get a bike registered for that request (so a DELETE cannot leave the next request without a bike) and its owner
token; the path's id is that bike's. Registration itself needs no credential.
"""
import json
import os
import re
import urllib.request
import uuid

import schemathesis

BASE = os.environ["REGISTRY_URL"]
KEY = os.environ["REGISTRY_STATION_KEY"]
# Visible ASCII: what a header value may hold everywhere (RFC 9110 field-vchar without obs-text).
HEADER_SAFE = re.compile(r"[\x21-\x7e]+")


def register():
    # A beacon of its own each time (a random UUID), so no registration meets a taken one.
    body = {"uuid": str(uuid.uuid4()), "major": 7, "minor": 1, "make": "Contract", "model": "Test", "colour": "grey"}
    request = urllib.request.Request(f"{BASE}/owner/bikes", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


@schemathesis.auth(refresh_interval=None).apply_to(path_regex="^/owner/bikes/")
class OwnerToken:
    def get(self, case, context):
        return register()

    def set(self, case, data, context):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data['ownerToken']}"
        case.path_parameters = {**(case.path_parameters or {}), "id": data["id"]}


@schemathesis.auth().apply_to(path_regex="^/(bikes|sightings)$")
class StationKey:
    def get(self, case, context):
        return KEY

    def set(self, case, data, context):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"
        # The contract says Idempotency-Key equals the body's sightingId, which a schema cannot say. Only an id that
        # can be a header value is copied: a generated one with a control character (which requests lets through but
        # HTTP does not) would be refused by the server's HTTP parser with a bare 400 before the registry saw it.
        sighting_id = case.body.get("sightingId") if case.path == "/sightings" and isinstance(case.body, dict) else None
        if isinstance(sighting_id, str) and HEADER_SAFE.fullmatch(sighting_id):
            case.headers["Idempotency-Key"] = sighting_id
