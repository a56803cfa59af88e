// avo serve: the live view's script.  Without it the page refreshes itself
// (<meta http-equiv="refresh"> in <noscript>); with it the server pushes a
// "change" event (server-sent events) whenever the archive changes, and the
// page fetches its main part again and swaps it in, keeping each <details>
// with an id open or closed as the reader left it.
(function () {
  "use strict";
  var main = document.getElementById("live");
  // Pages with nothing to follow (a candidate, an experiment) have no stream.
  if (!main || !main.getAttribute("data-events") || !window.EventSource || !window.fetch) return;
  document.documentElement.className += " js";
  var state = document.getElementById("live-state");
  var updates = 0, busy = false, again = false, timer = null, done = 0, took = 0;
  function say(text) { if (state) state.textContent = text; }
  function refresh() {
    if (busy) { again = true; return; }
    // A run that commits often would have the page fetched back to back:
    // wait at least a second, and three times what the last fetch took.
    var wait = done + Math.max(1000, 3 * took) - Date.now();
    if (wait > 0) {
      if (!timer) timer = setTimeout(function () { timer = null; refresh(); }, wait);
      return;
    }
    busy = true;
    var started = Date.now();
    var open = {};
    var ds = main.querySelectorAll("details[id]");
    for (var i = 0; i < ds.length; i++) open[ds[i].id] = ds[i].open;
    fetch(main.getAttribute("data-part"), { credentials: "same-origin", cache: "no-store" })
      .then(function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status);
        return r.text();
      })
      .then(function (html) {
        main.innerHTML = html;
        for (var id in open) {
          var d = document.getElementById(id);
          if (d) d.open = open[id];
        }
        updates++;
        document.body.setAttribute("data-updates", String(updates));
        say("live: updated " + new Date().toLocaleTimeString());
      })
      .catch(function (e) { say("live: update failed (" + e.message + ")"); })
      .then(function () {
        busy = false;
        done = Date.now();
        took = done - started;
        if (again) { again = false; refresh(); }
      });
  }
  var es = new EventSource(main.getAttribute("data-events"));
  es.addEventListener("change", function (e) {
    say("live");
    // The page carries the archive's state it was made from; an event
    // naming the same state is not news.
    if (e.data === main.getAttribute("data-stamp")) return;
    main.setAttribute("data-stamp", e.data);
    refresh();
  });
  es.onerror = function () { say("live: disconnected, retrying"); };
})();
