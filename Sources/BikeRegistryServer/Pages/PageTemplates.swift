/// The owner pages' Mustache templates. `{{name}}` escapes what it shows (&, <, >, " and '); no template uses the
/// unescaped forms, so whatever an owner or a station wrote is shown as text. Each page fills the layout's blocks.
/// They live in the binary rather than in files beside it, so a package has nothing to lose on the way.
enum PageTemplates {
    static let all: [String: String] = [
        "layout": layout, "register": register, "registered": registered, "bike": bike, "rotated": rotated,
        "message": message, "found": found, "mailLink": mailLink, "seen": seen, "sightingList": sightingList,
    ]

    static let layout = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>{{$title}}Bike registry{{/title}}</title>
        <link rel="stylesheet" href="/static/style.css">
        <script src="/static/page.js" defer></script>
        </head>
        <body>
        <header><a href="/">Bike registry</a></header>
        <main>
        {{$main}}{{/main}}
        </main>
        <footer>Stations at cafés listen for missing bikes' beacons and tell their owners.</footer>
        </body>
        </html>

        """

    static let register = """
        {{<layout}}
        {{$title}}Register your bike{{/title}}
        {{$main}}
        <h1>Register your bike</h1>
        <p>Fit your beacon to your bike and enter the claim code from its label here. If the bike is ever stolen,
        report it missing on its page, and cafés' stations that hear its beacon will tell you where.</p>
        {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
        <form method="post" action="/register">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="claim_code">Claim code (on the beacon's label, such as 7KQ2-M9XD-3FJA)</label>
        <input id="claim_code" name="claim_code" value="{{claimCode}}" {{^open}}required {{/open}}maxlength="64" autocomplete="off" spellcheck="false">
        {{#open}}
        <p>Or, for a beacon without a code, its numbers:</p>
        <label for="uuid">Beacon UUID</label>
        <input id="uuid" name="uuid" value="{{uuid}}" maxlength="36" autocomplete="off" spellcheck="false">
        <label for="major">Major</label>
        <input id="major" name="major" type="number" min="0" max="65535" value="{{major}}">
        <label for="minor">Minor (your beacon's number, 0 to 65535)</label>
        <input id="minor" name="minor" type="number" min="0" max="65535" value="{{minor}}">
        {{/open}}
        <label for="make">Make</label>
        <input id="make" name="make" value="{{make}}" required maxlength="100">
        <label for="model">Model</label>
        <input id="model" name="model" value="{{model}}" required maxlength="100">
        <label for="colour">Colour</label>
        <input id="colour" name="colour" value="{{colour}}" required maxlength="100">
        <button type="submit">Register</button>
        </form>
        {{/main}}
        {{/layout}}
        """

    static let registered = """
        {{<layout}}
        {{$title}}Your bike's private link{{/title}}
        {{$main}}
        <h1>{{heading}}</h1>
        <p class="notice"><strong>Save this link now.</strong> It is the only key to your bike's page: anyone who has
        it can report the bike found or delete it, and it is shown this once. Bookmark it, or keep it in your password
        manager. If it leaks, open it and make a new one.</p>
        <p class="link"><a id="private-link" href="{{path}}">{{link}}</a></p>
        <button type="button" class="copy" data-copy="{{link}}" hidden>Copy the link</button>
        {{#webhookSecret}}
        <p>If you use a webhook, its messages are signed (Standard Webhooks) with this secret, also shown once:
        <code id="webhook-secret">{{webhookSecret}}</code></p>
        {{/webhookSecret}}
        <p><a href="{{path}}">Open your bike's page</a></p>
        {{/main}}
        {{/layout}}
        """

    static let bike = """
        {{<layout}}
        {{$title}}{{bike.make}} {{bike.model}}{{/title}}
        {{$main}}
        <h1>{{bike.make}} {{bike.model}}, {{bike.colour}}</h1>
        {{#rotatingBeacon}}<p class="beacon">Rotating beacon {{rotatingBeacon}}: its identity changes as it rotates, and only this registry can recognise it.</p>{{/rotatingBeacon}}
        {{^rotatingBeacon}}<p class="beacon">Beacon {{bike.uuid}}, major {{bike.major}}, minor {{bike.minor}}</p>{{/rotatingBeacon}}
        {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
        <section aria-labelledby="state">
        <h2 id="state">{{#bike.missing}}Reported missing{{/bike.missing}}{{^bike.missing}}Not missing{{/bike.missing}}</h2>
        {{#bike.missing}}<p id="missing-state" class="missing">Stations are listening for it.</p>
        {{#report}}
        <p id="report">Reported {{made}}.{{#policeReference}} Police reference {{policeReference}}{{#policeForce}} ({{policeForce}}){{/policeForce}}.{{/policeReference}}{{#lastSeenPlace}} Last seen: {{lastSeenPlace}}.{{/lastSeenPlace}}</p>
        {{#lapses}}<p id="lapses">The report lapses <time datetime="{{lapsesISO}}">{{lapses}}</time> unless you say it is still missing: then stations stop listening.</p>{{/lapses}}
        <form method="post" action="{{path}}/renew">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" id="renew-button">Still missing</button>
        </form>
        {{/report}}
        <form method="post" action="{{path}}/missing">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="missing" value="false">
        <label for="outcome">Why it is no longer missing</label>
        <select id="outcome" name="outcome">
        <option value="recovered">I have it back</option>
        <option value="withdrawn">I take the report back</option>
        </select>
        <button type="submit" id="missing-button">Report it found</button>
        </form>
        {{/bike.missing}}
        {{^bike.missing}}<p id="missing-state">Report it missing and stations will listen for it until the report lapses (it can be renewed).</p>
        <form method="post" action="{{path}}/missing">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="missing" value="true">
        <label for="last_seen_place">Where it was last seen (optional)</label>
        <input id="last_seen_place" name="last_seen_place" maxlength="200">
        <label for="police_reference">Police reference (optional)</label>
        <input id="police_reference" name="police_reference" maxlength="200" autocomplete="off">
        <label for="police_force">Police force (optional)</label>
        <input id="police_force" name="police_force" maxlength="200">
        <button type="submit" id="missing-button">Report it missing</button>
        </form>
        {{/bike.missing}}
        </section>
        <section aria-labelledby="notify">
        <h2 id="notify">Where messages go</h2>
        <form method="post" action="{{path}}/notify">
        <input type="hidden" name="csrf" value="{{csrf}}">
        {{#targetFields}}
        <label for="{{field}}">{{label}}</label>
        <input id="{{field}}" name="{{field}}" type="url" value="{{value}}" maxlength="2048">
        {{/targetFields}}
        <button type="submit">Save</button>
        </form>
        {{#mailOn}}
        <form method="post" action="{{path}}/email">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="email">E-mail address (a message asks it to confirm first)</label>
        <input id="email" name="email" type="email" value="{{email}}" maxlength="254" autocomplete="email">
        {{#emailStatus}}<p id="email-status"{{#emailFailing}} class="error"{{/emailFailing}}>{{emailStatus}}</p>{{/emailStatus}}
        <button type="submit" id="email-button">Save the address</button>
        </form>
        {{/mailOn}}
        <form method="post" action="{{path}}/test">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" id="test-button">Send a test</button>
        </form>
        {{#tests}}
        <div class="test" id="test-result">
        <h3>Test to {{channel}}: {{outcome}}</h3>
        <p>This is what was sent to {{target}}:</p>
        <pre>{{sent}}</pre>
        </div>
        {{/tests}}
        </section>
        <section aria-labelledby="sightings">
        <h2 id="sightings">Where it was heard</h2>
        {{^sightings}}<p id="no-sightings">No station has heard it{{#bike.missing}} yet{{/bike.missing}}.</p>{{/sightings}}
        {{#hasSightings}}
        {{> sightingList}}
        {{/hasSightings}}
        </section>
        <section aria-labelledby="link">
        <h2 id="link">This page's link</h2>
        <p>This page's address is the bike's key. If it may have leaked, make a new one: the old one stops working at once.</p>
        <form method="post" action="{{path}}/rotate">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" id="rotate-button">Make a new link</button>
        </form>
        <h2>Delete</h2>
        <form method="post" action="{{path}}/delete">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="checkbox" id="confirm" name="confirm" value="yes" required>
        <label for="confirm" class="inline">Delete this bike and every sighting of it</label>
        <button type="submit" class="danger" id="delete-button">Delete</button>
        </form>
        </section>
        {{/main}}
        {{/layout}}
        """

    static let rotated = registered

    static let message = """
        {{<layout}}
        {{$title}}{{heading}}{{/title}}
        {{$main}}
        <h1>{{heading}}</h1>
        <p id="message">{{text}}</p>
        <p><a href="{{back}}">{{backText}}</a></p>
        {{/main}}
        {{/layout}}
        """

    /// A bike's sightings, newest first, as its page and the mail's reader's page list them.
    static let sightingList = """
        <ol class="sightings">
        {{#sightings}}
        <li class="sighting">
        <time datetime="{{iso}}">{{utc}}</time>
        <span class="what">{{what}}</span> at <span class="cafe">{{cafe}}</span>, {{proximity}}
        {{#asReceived}}<span class="clock-note">the station's clock was wrong; shown as received</span>{{/asReceived}}
        <span class="place">{{latitude}}, {{longitude}}</span>
        <a href="geo:{{latitude}},{{longitude}}">open in a map app</a>
        <a href="https://www.openstreetmap.org/?mlat={{latitude}}&amp;mlon={{longitude}}#map=18/{{latitude}}/{{longitude}}" rel="noreferrer noopener">OpenStreetMap</a>
        </li>
        {{/sightings}}
        </ol>
        {{#more}}<p>The newest {{shown}} are shown.</p>{{/more}}
        """

    static let seen = """
        {{<layout}}
        {{$title}}{{heading}}{{/title}}
        {{$main}}
        <h1>{{heading}}</h1>
        <p>Where stations heard it, newest first, in your own time zone. Only the bike's owner can change anything, on its own page.</p>
        {{^sightings}}<p id="no-sightings">No station has heard it.</p>{{/sightings}}
        {{#hasSightings}}
        {{> sightingList}}
        {{/hasSightings}}
        <form method="post" action="{{unsubscribe}}">
        <button type="submit" id="mail-link-button">Stop these messages</button>
        </form>
        {{/main}}
        {{/layout}}
        """

    static let mailLink = """
        {{<layout}}
        {{$title}}{{heading}}{{/title}}
        {{$main}}
        <h1>{{heading}}</h1>
        <p id="message">{{text}}</p>
        <form method="post" action="{{action}}">
        <button type="submit" id="mail-link-button">{{button}}</button>
        </form>
        {{/main}}
        {{/layout}}
        """

    static let found = """
        {{<layout}}
        {{$title}}Found a beacon?{{/title}}
        {{$main}}
        <h1>Found a beacon?</h1>
        <p>If you found a small Bluetooth beacon on your things, a scanner app (nRF Connect, Beacon Scope) shows its
        UUID, major and minor. Type them here to learn whether a bike is registered with it. Nothing else about the
        bike or its owner is shown.</p>
        {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
        <form method="post" action="/found">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="uuid">Beacon UUID</label>
        <input id="uuid" name="uuid" value="{{uuid}}" required maxlength="36" autocomplete="off" spellcheck="false">
        <label for="major">Major</label>
        <input id="major" name="major" type="number" min="0" max="65535" value="{{major}}" required>
        <label for="minor">Minor</label>
        <input id="minor" name="minor" type="number" min="0" max="65535" value="{{minor}}" required>
        <button type="submit" id="lookup-button">Look it up</button>
        </form>
        {{#result}}
        <section aria-labelledby="result">
        <h2 id="result">{{#registered}}A bike is registered with this beacon{{/registered}}{{^registered}}No bike is registered with this beacon{{/registered}}</h2>
        {{#registered}}
        <p id="missing">{{#missing}}It is reported missing: stations that hear it tell its owner where.{{/missing}}{{^missing}}It is not reported missing: nobody is told where it is heard.{{/missing}}</p>
        <form method="post" action="/found/abuse">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="uuid" value="{{uuid}}">
        <input type="hidden" name="major" value="{{major}}">
        <input type="hidden" name="minor" value="{{minor}}">
        <label for="message">Anything the registry's operator should know (optional; not shown to the owner)</label>
        <textarea id="message" name="message" maxlength="1000" rows="3"></textarea>
        <button type="submit" id="abuse-button">This beacon was placed on me without my consent</button>
        </form>
        {{/registered}}
        </section>
        {{/result}}
        {{/main}}
        {{/layout}}
        """
}
