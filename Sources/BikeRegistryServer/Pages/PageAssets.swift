/// The pages' stylesheet and script, served from the registry itself (no external fonts, scripts or tiles: the
/// Content-Security-Policy allows only this origin). The pages work without the script; it only shows times in the
/// reader's time zone and adds a copy button.
enum PageAssets {
    static let style = """
        *{box-sizing:border-box}
        body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1b1b1b;background:#fafafa}
        header,main,footer{max-width:42rem;margin:0 auto;padding:0 1rem}
        header{padding-top:.75rem}header a{font-weight:bold;color:inherit;text-decoration:none}
        footer{color:#555;font-size:.875rem;margin-top:2.5rem;padding-bottom:2rem}
        h1{font-size:1.5rem;line-height:1.25}h2{font-size:1.2rem;margin-top:2rem}
        label{display:block;margin-top:.75rem;font-weight:600}label.inline{display:inline;font-weight:normal}
        input:not([type=checkbox]){display:block;width:100%;padding:.5rem;font:inherit;border:1px solid #888;border-radius:4px}
        button{margin-top:.75rem;padding:.6rem 1rem;font:inherit;border:0;border-radius:4px;background:#0b57d0;color:#fff;cursor:pointer}
        button.danger{display:block;background:#b3261e}button.copy{background:#444}
        .error{color:#b3261e;font-weight:600}.notice{background:#fff4ce;padding:.75rem;border-radius:4px}
        .missing{color:#b3261e;font-weight:600}
        .link a{word-break:break-all;font-family:ui-monospace,monospace}
        code,pre{word-break:break-all;white-space:pre-wrap;font-size:.875rem}
        pre{background:#eee;padding:.5rem;border-radius:4px}
        .sightings{padding-left:1.25rem}.sighting{margin-bottom:.75rem}
        .sighting time{display:block;font-weight:600}.sighting a{margin-right:.75rem}
        .place{display:block;font-family:ui-monospace,monospace;font-size:.875rem}
        .clock-note{display:block;color:#8a4b00;font-size:.875rem}

        """

    static let script = """
        "use strict";
        document.addEventListener("DOMContentLoaded", function () {
          // (dateStyle cannot be combined with timeZoneName: the fields one by one.)
          var format = new Intl.DateTimeFormat(undefined, {year: "numeric", month: "short", day: "numeric",
            hour: "2-digit", minute: "2-digit", timeZoneName: "short"});
          document.querySelectorAll("time[datetime]").forEach(function (element) {
            var date = new Date(element.getAttribute("datetime"));
            if (!isNaN(date)) { element.textContent = format.format(date); element.title = element.getAttribute("datetime"); }
          });
          // A link shown relative to the site (no public URL configured) is written whole from the address bar.
          document.querySelectorAll("a#private-link").forEach(function (link) {
            if (link.textContent.charAt(0) === "/") { link.textContent = link.href; }
          });
          document.querySelectorAll("button[data-copy]").forEach(function (button) {
            if (!navigator.clipboard) { return; }
            button.hidden = false;
            button.addEventListener("click", function () {
              var whole = new URL(button.getAttribute("data-copy"), document.location.href).href;
              navigator.clipboard.writeText(whole).then(function () {
                button.textContent = "Copied";
              });
            });
          });
        });

        """
}
