#!/usr/bin/env python3
"""An owner's whole journey through bike-registry's pages in a real browser (Debian's chromium and chromedriver,
driven by Selenium), against a real server the calling test started (OwnerBrowserTests.swift):

register a bike with the claim code of a beacon the operator issued, save a webhook and send a test, report it
missing with a police reference (and see the station API list it), let a real station (beacond replaying the cafe
capture, run by --station) report it, see the sighting on the page in the reader's time zone; a finder on /found
looks the beacon up and reports it as placed on them, after which a sighting tells the owner nothing; the operator
restores the bike (`abuse resolve --restore`) and the next sighting tells the owner again; report it found, be
refused a second registration with the same code and a form without its CSRF token, make a new link (the old one
then opens nothing), and delete the bike.

Every page met is also checked as served: security headers, no inline script or style, valid HTML (tidy), under
50 KB, every input labelled, nothing wider than a 360 px screen. Each page is saved as a PNG at 360 and 1280 px
in --screenshots. The last line of stdout is a JSON summary for the calling test; any failed check exits 1.
"""

import argparse
import email
import email.policy
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
import uuid

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

PAGE_LIMIT = 50 * 1024
WIDTHS = (360, 1280)
HEADERS = {
    "content-security-policy": None,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}


class Journey:
    def __init__(self, arguments):
        self.base = arguments.base.rstrip("/")
        self.arguments = arguments
        self.failures = []
        self.checked = []
        self.shots = []
        self.tokens = []
        self.paused_sighting = None
        self.restored_sighting = None
        os.makedirs(arguments.screenshots, exist_ok=True)
        options = webdriver.ChromeOptions()
        options.binary_location = arguments.chromium
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--no-first-run", "--disable-extensions", "--window-size=1280,900"):
            options.add_argument(flag)
        self.driver = webdriver.Chrome(service=Service(executable_path=arguments.chromedriver), options=options)
        # The owner reads times in their own zone: Tokyo's (UTC+9, no summer time) is unlike the server's UTC.
        self.driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "Asia/Tokyo"})
        self.wait = WebDriverWait(self.driver, 20)

    def expect(self, condition, what):
        if not condition:
            self.failures.append(what)
            print(f"FAILED: {what}", file=sys.stderr)

    # Pages as a browser shows them

    def open(self, path):
        self.driver.get(self.base + path)

    def text(self, selector):
        return self.driver.find_element(By.CSS_SELECTOR, selector).text

    def click(self, selector):
        """Clicks, and waits for the page it leads to (each button here posts a form)."""
        element = self.driver.find_element(By.CSS_SELECTOR, selector)
        posts = element.tag_name == "button" and element.get_attribute("type") == "submit"
        element.click()
        if posts:
            self.wait.until(lambda _: self.left_document(element))

    @staticmethod
    def left_document(element):
        """Whether the page holding `element` has been replaced. Selenium's staleness_of knows only the stale-element
        error; chromedriver sometimes answers a node of a page being replaced with "Node with given id does not belong
        to the document" instead, which is the same fact (the journey failed on it about one run in eight)."""
        try:
            element.is_enabled()
            return False
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            if "does not belong to the document" in str(error):
                return True
            raise

    def fill(self, name, value):
        field = self.driver.find_element(By.NAME, name)
        field.clear()
        field.send_keys(value)

    def page_has(self, text, seconds=20):
        try:
            WebDriverWait(self.driver, seconds).until(
                expected_conditions.text_to_be_present_in_element((By.TAG_NAME, "main"), text))
            return True
        except Exception:
            return False

    def screenshot(self, name, posted=False):
        """The page as it is now, at each width: the whole page's height, and nothing wider than the screen. A page
        that answered a post is checked as the browser holds it (a GET of its address would be another page)."""
        for width in WIDTHS:
            self.driver.set_window_size(width, 900)
            height = self.driver.execute_script("return document.documentElement.scrollHeight")
            self.driver.set_window_size(width, max(900, min(height + 140, 6000)))
            overflow = self.driver.execute_script(
                "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
            self.expect(overflow <= 0, f"{name} at {width} px is {overflow} px wider than the screen")
            path = os.path.join(self.arguments.screenshots, f"{name}-{width}.png")
            self.driver.save_screenshot(path)
            self.shots.append(path)
        self.driver.set_window_size(1280, 900)
        if posted:
            # The browser's DOM as markup: without the doctype, and with the script's changes (times, the button).
            self.check_html(name, "<!DOCTYPE html>\n" + self.driver.page_source)
        else:
            self.check_served(name, self.driver.current_url)

    # Pages as served

    def fetch(self, url, data=None):
        request = urllib.request.Request(url, data=data)
        try:
            with urllib.request.urlopen(request, timeout=20) as answer:
                return answer.status, dict((k.lower(), v) for k, v in answer.headers.items()), answer.read()
        except urllib.error.HTTPError as error:
            return error.code, dict((k.lower(), v) for k, v in error.headers.items()), error.read()

    def check_served(self, name, url):
        """What the server sends for this page, read again without the browser (a GET: the pages that only
        answer a post are checked through the page they are part of)."""
        status, headers, body = self.fetch(url)
        self.expect(status < 400, f"{name}: GET {status}")
        for header, value in HEADERS.items():
            self.expect(header in headers, f"{name}: no {header} header")
            if value:
                self.expect(headers.get(header) == value, f"{name}: {header} is {headers.get(header)}")
        policy = headers.get("content-security-policy", "")
        self.expect("'unsafe-inline'" not in policy and "script-src 'self'" in policy, f"{name}: CSP {policy}")
        self.check_html(name, body.decode("utf-8"))

    def check_html(self, name, html):
        size = len(html.encode("utf-8"))
        self.expect(size < PAGE_LIMIT, f"{name}: {size} bytes")
        for script in re.findall(r"<script\b[^>]*>(.*?)</script>", html, re.S | re.I):
            self.expect(script.strip() == "", f"{name}: an inline script")
        self.expect(re.search(r"<script\b(?![^>]*\bsrc=)", html, re.I) is None, f"{name}: a script without src")
        self.expect(re.search(r"\son[a-z]+\s*=", html, re.I) is None, f"{name}: an inline event handler")
        self.expect(re.search(r"\sstyle\s*=|<style", html, re.I) is None, f"{name}: inline style")
        self.expect(re.search(r"https?://(?!www\.openstreetmap\.org)[^\"' ]*\.(js|css|woff2?)", html) is None,
                    f"{name}: an external font, script or stylesheet")
        ids = set(re.findall(r'<input\b[^>]*\bid="([^"]+)"', html))
        labelled = set(re.findall(r'<label\b[^>]*\bfor="([^"]+)"', html))
        inputs = [i for i in re.findall(r"<input\b[^>]*>", html) if 'type="hidden"' not in i]
        self.expect(all(re.search(r'\bid="', i) for i in inputs) and ids <= labelled,
                    f"{name}: an input without a label: {sorted(ids - labelled)}")
        for form in re.findall(r"<form\b.*?</form>", html, re.S):
            # A mail link's form posts to the link itself, whose code is the secret a forged post would need.
            if re.search(r'action="/(confirm|unsubscribe)/', form):
                continue
            self.expect('name="csrf"' in form, f"{name}: a form without a CSRF field")
        self.validate(name, html)
        self.checked.append({"page": name, "bytes": size})

    def validate(self, name, html):
        with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False) as page:
            page.write(html)
        said = subprocess.run(["tidy", "-q", "-e", "--show-warnings", "yes", page.name],
                              capture_output=True, text=True)
        os.unlink(page.name)
        self.expect(said.returncode == 0, f"{name}: tidy: {said.stderr.strip()}")

    def wait_mail(self, subject, count, seconds=30):
        """The messages the test's relay received whose subject starts with `subject`, once there are `count`."""
        deadline = time.time() + seconds
        while True:
            found = []
            for name in sorted(glob.glob(os.path.join(self.arguments.mail_spool, "*.eml"))):
                with open(name, "rb") as file:
                    message = email.message_from_bytes(file.read(), policy=email.policy.default)
                if str(message["Subject"]).startswith(subject):
                    found.append(message)
            if len(found) >= count or time.time() > deadline:
                return found
            time.sleep(0.1)

    def received(self, kind):
        """How many messages of this type the test's webhook has received."""
        with urllib.request.urlopen(self.arguments.receiver + "/received-count?type=" + kind, timeout=20) as answer:
            return int(answer.read())

    def wait_received(self, kind, count, seconds=30):
        deadline = time.time() + seconds
        while self.received(kind) < count and time.time() < deadline:
            time.sleep(0.1)
        return self.received(kind) >= count

    def post_sighting(self, bike_id, seconds_ago=0):
        """A sighting of the bike, first seen `seconds_ago`, as a station posts it; that time, to the second."""
        at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - seconds_ago))
        sighting_id = str(uuid.uuid4())
        body = {"bikeId": bike_id, "date": at + "Z", "latitude": 51.5412, "longitude": -0.2769,
                "sightingId": sighting_id, "kind": "enter", "stationId": "ace-cafe",
                "uuid": "21EECF71-D5C7-4A00-9B90-27C94B5146EA", "major": 1, "minor": 101, "firstSeen": at + "Z",
                "lastSeen": at + "Z", "count": 2, "rssi": -60.0, "proximity": "near"}
        request = urllib.request.Request(self.base + "/sightings", data=json.dumps(body).encode(), method="POST",
                                         headers={"Authorization": "Bearer " + self.arguments.station_key,
                                                  "Content-Type": "application/json", "Idempotency-Key": sighting_id})
        with urllib.request.urlopen(request, timeout=20) as answer:
            self.expect(answer.status == 201, f"a sighting posted: {answer.status}")
        return at

    def operator(self, *arguments):
        """bike-registry as the operator runs it beside the server."""
        done = subprocess.run([self.arguments.registry_binary, *arguments, "--database", self.arguments.database],
                              capture_output=True, text=True, timeout=60)
        self.expect(done.returncode == 0, f"bike-registry {' '.join(arguments)}: {done.stderr}")
        return done.stdout

    def station_lists(self, bike_id):
        request = urllib.request.Request(self.base + "/bikes?missing=true",
                                         headers={"Authorization": "Bearer " + self.arguments.station_key})
        with urllib.request.urlopen(request, timeout=20) as answer:
            return bike_id in [bike["id"] for bike in json.load(answer)]

    # The journey

    def run(self):
        self.open("/")
        self.expect(self.driver.title == "Register your bike", f"the first page is {self.driver.title}")
        self.expect(len(self.driver.find_elements(By.NAME, "claim_code")) == 1, "the form asks for the claim code")
        self.expect(len(self.driver.find_elements(By.NAME, "minor")) == 0, "and never for the beacon's numbers")
        self.screenshot("register")
        self.register()
        link = self.driver.find_element(By.ID, "private-link").get_attribute("href")
        path = urllib.parse.urlsplit(link).path
        self.expect(urllib.parse.urlsplit(link).query == "", "the private link has no query")
        bike_id, token = path.split("/")[2:4]
        self.tokens.append(token)
        self.screenshot("registered", posted=True)

        # Its page, in a browser that keeps no cookie: the link alone opens it.
        self.driver.delete_all_cookies()
        self.open(path)
        self.expect(self.page_has("Not missing"), "a new bike is not missing")
        self.expect(self.page_has("No station has heard it"), "no sightings yet")
        self.screenshot("bike-new")

        self.fill("webhook", self.arguments.webhook)
        self.click("form[action$='/notify'] button")
        self.expect(self.page_has("Where messages go"), "the page after saving")
        self.expect(self.driver.find_element(By.NAME, "webhook").get_attribute("value") == self.arguments.webhook,
                    "the webhook saved")
        self.click("#test-button")
        self.expect(self.page_has("Test to webhook: delivered"), "the test delivered: " + self.text("main")[:300])
        self.expect("bike.test" in self.text("#test-result pre"), "the test shows what was sent")
        self.screenshot("bike-test-sent", posted=True)

        # E-mail: the address, confirmed from the message the relay received, then a test that arrives.
        self.fill("email", self.arguments.email)
        self.click("#email-button")
        self.expect(self.page_has("Not confirmed yet"), "the address waits for its confirmation")
        self.screenshot("bike-email-unconfirmed")
        confirmations = self.wait_mail("Confirm your address", 1)
        self.expect(len(confirmations) == 1, "one confirmation message arrived")
        if confirmations:
            text = confirmations[0].get_body(preferencelist=("plain",)).get_content()
            found = re.search(r"/confirm/[A-Za-z0-9_-]+", text)
            self.expect(found is not None, f"the message has the link: {text}")
            if found:
                self.open(found.group(0))
                self.screenshot("confirm")
                self.click("#mail-link-button")
                self.expect(self.page_has("Address confirmed"), "the address is confirmed")
                self.screenshot("confirmed", posted=True)
        self.open(path)
        self.expect(self.page_has("Confirmed: every message"), "the bike's page says the address is confirmed")
        self.click("#test-button")
        self.expect(self.page_has("Test to email: delivered"), "the test mail delivered: " + self.text("main")[:300])
        self.expect(len(self.wait_mail("A test message about", 1)) == 1, "the test message arrived by mail")

        self.fill("police_reference", "CAD 4321/27NOV")
        self.fill("police_force", "Metropolitan Police")
        self.click("#missing-button")
        self.expect(self.page_has("Reported missing"), "reported missing")
        self.expect(self.page_has("Police reference CAD 4321/27NOV"), "the report's police reference shown")
        self.expect(self.page_has("The report lapses"), "when the report lapses shown")
        self.expect(self.station_lists(bike_id), "the station API lists the bike once it is reported missing")
        self.screenshot("bike-reported")

        station = subprocess.run([self.arguments.station], capture_output=True, text=True, timeout=240)
        self.expect(station.returncode == 0, f"the station: {station.returncode} {station.stderr[-2000:]}")

        # The sighting on the page, newest first, in Tokyo's time.
        self.open(path)
        self.expect(self.page_has("Ace Café"), "the page shows the sighting at the cafe")
        sightings = self.driver.find_elements(By.CSS_SELECTOR, ".sighting")
        self.expect(len(sightings) >= 1, "at least one sighting listed")
        first = sightings[0] if sightings else None
        if first is not None:
            shown = first.find_element(By.TAG_NAME, "time").text
            self.expect("GMT+9" in shown, f"the time in the owner's zone: {shown}")
            self.expect("51.54120, -0.27690" in first.text, f"the cafe's coordinates: {first.text}")
            geo = first.find_element(By.CSS_SELECTOR, "a[href^='geo:']").get_attribute("href")
            self.expect(geo == "geo:51.54120,-0.27690", f"a link for a map app: {geo}")
            times = [e.get_attribute("datetime") for e in self.driver.find_elements(By.CSS_SELECTOR, ".sighting time")]
            self.expect(times == sorted(times, reverse=True), "newest first")
        self.screenshot("bike-sighted")
        self.expect(self.wait_received("bike.seen", 1), "the owner was told of the station's sighting")
        # And by mail, whose link shows the sightings read-only, in the reader's zone too.
        mailed = self.wait_mail("Your green Triumph Bonneville was seen at", 1)
        self.expect(len(mailed) >= 1, "the sighting arrived by mail")
        if mailed:
            found = re.search(r"/seen/[A-Za-z0-9_-]+", mailed[0].get_body(preferencelist=("plain",)).get_content())
            self.expect(found is not None, "the message links to the sightings")
            if found:
                self.open(found.group(0))
                self.expect(self.page_has("Ace Café"), "the sightings page shows the cafe")
                shown = self.driver.find_element(By.CSS_SELECTOR, ".sighting time").text
                self.expect("GMT+9" in shown, f"the mail's reader's zone: {shown}")
                self.expect(len(self.driver.find_elements(By.ID, "missing-button")) == 0, "and changes nothing")
                self.screenshot("seen")

        # A finder: the beacon was on their things. They learn only that it is registered and missing, and report it.
        self.open("/found")
        for name, value in (("uuid", "21eecf71-d5c7-4a00-9b90-27c94b5146ea"), ("major", "1"), ("minor", "101")):
            self.fill(name, value)
        self.click("#lookup-button")
        self.expect(self.page_has("A bike is registered with this beacon"), "the lookup says registered")
        self.expect(self.page_has("It is reported missing"), "and missing")
        self.expect(not self.page_has("Triumph"), "and nothing of the bike")
        self.screenshot("found", posted=True)
        self.fill("message", "Found it in my jacket's pocket after a ride.")
        self.click("#abuse-button")
        self.expect(self.page_has("its messages are paused"), "the report is received")
        self.screenshot("found-reported", posted=True)
        self.expect(self.wait_received("bike.paused", 1), "the owner is told the bike's messages are paused")
        seen = self.received("bike.seen")
        self.paused_sighting = self.post_sighting(bike_id, seconds_ago=30)

        # The operator looks, and restores the bike: the next sighting tells its owner again.
        reports = [json.loads(line) for line in self.operator("abuse", "list", "--json", "--open").splitlines()]
        self.expect(len(reports) == 1 and reports[0]["bikeId"] == bike_id, f"the operator sees the report: {reports}")
        if reports:
            self.operator("abuse", "resolve", reports[0]["id"], "--restore")
        self.restored_sighting = self.post_sighting(bike_id)
        self.expect(self.wait_received("bike.seen", seen + 1), "the owner is told again once restored")

        self.open(path)
        self.click("#missing-button")
        self.expect(self.page_has("Not missing"), "reported found")
        self.expect(not self.station_lists(bike_id), "the station API no longer lists it")

        # The same code again: refused, with the one answer every code that claims nothing gets.
        self.open("/")
        self.register()
        self.expect(self.page_has("registers no beacon"), "a second registration with the code is refused")
        self.screenshot("register-taken", posted=True)

        # A form without its CSRF token: from the page in the browser, and as a bare post.
        self.open(path)
        self.driver.execute_script(
            "document.querySelectorAll('form[action$=\"/missing\"] input[name=csrf]').forEach(e => e.remove())")
        self.click("#missing-button")
        self.expect(self.page_has("Form refused"), "a form without its CSRF token is refused")
        self.screenshot("form-refused", posted=True)
        status, _, _ = self.fetch(self.base + path + "/missing", data=b"missing=true")
        self.expect(400 <= status < 500, f"a bare post without CSRF: {status}")
        status, _, _ = self.fetch(self.base + "/register",
                                  data=b"uuid=21EECF71-D5C7-4A00-9B90-27C94B5146EA&major=1&minor=7&make=a&model=b&colour=c")
        self.expect(400 <= status < 500, f"a registration without CSRF: {status}")

        # A new link; the old one opens nothing.
        self.open(path)
        self.click("#rotate-button")
        self.expect(self.page_has("new private link"), "the new link is shown")
        new_path = urllib.parse.urlsplit(self.driver.find_element(By.ID, "private-link").get_attribute("href")).path
        self.tokens.append(new_path.split("/")[3])
        self.expect(new_path != path, "a different link")
        self.screenshot("rotated", posted=True)
        self.open(path)
        self.expect(self.page_has("This link opens nothing"), "the old link opens nothing")
        self.open(new_path)
        self.expect(self.page_has("Not missing"), "the new link opens the bike")

        # Deleted.
        self.click("#confirm")
        self.click("#delete-button")
        self.expect(self.page_has("Deleted"), "deleted")
        self.screenshot("deleted", posted=True)
        status, _, _ = self.fetch(self.base + new_path)
        self.expect(status == 404, f"a deleted bike's link: {status}")
        return bike_id

    def register(self):
        # As an owner might type it off the label: lower case, spaces for dashes.
        typed = self.arguments.claim_code.lower().replace("-", " ")
        for name, value in (("claim_code", typed), ("make", "Triumph"), ("model", "Bonneville"), ("colour", "green")):
            self.fill(name, value)
        self.click("form[action='/register'] button")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the registry, http://127.0.0.1:PORT")
    parser.add_argument("--webhook", required=True, help="the test's webhook receiver")
    parser.add_argument("--station", required=True, help="a program that runs the station to its end")
    parser.add_argument("--station-key", required=True, help="the station's key, to read the missing list")
    parser.add_argument("--screenshots", required=True, help="where the PNGs go")
    parser.add_argument("--claim-code", required=True, help="the code of the beacon the operator issued (minor 101)")
    parser.add_argument("--receiver", required=True, help="the test's webhook receiver's base, to count messages")
    parser.add_argument("--registry-binary", required=True, help="bike-registry, for the operator's commands")
    parser.add_argument("--database", required=True, help="the server's database, for the operator's commands")
    parser.add_argument("--mail-spool", required=True, help="where the test's mail relay keeps what it receives")
    parser.add_argument("--email", required=True, help="the owner's address")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    journey = Journey(parser.parse_args())
    bike_id = None
    try:
        bike_id = journey.run()
    except Exception as error:
        journey.failures.append(f"{type(error).__name__}: {error}")
        traceback.print_exc()  # where in the journey: the test prints this script's stderr
        try:
            journey.driver.save_screenshot(os.path.join(journey.arguments.screenshots, "failure.png"))
            print(journey.driver.page_source[:4000], file=sys.stderr)
        except Exception:
            pass
    finally:
        journey.driver.quit()
    print(json.dumps({"bikeId": bike_id, "failures": journey.failures, "pages": journey.checked,
                      "screenshots": journey.shots, "tokens": journey.tokens,
                      "pausedSighting": journey.paused_sighting, "restoredSighting": journey.restored_sighting}))
    return 1 if journey.failures or bike_id is None else 0


if __name__ == "__main__":
    sys.exit(main())
