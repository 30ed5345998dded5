// The ops dashboard's only script (progressive: the page reads fully without it).
// Listens to /events (the journal's progress stream as server-sent events) and moves the
// progress bars live; an operation it has not seen gets a row; a finished one refreshes the
// operations section from /fragments/operations. window.mcbProgress keeps what was seen
// (per operation: [percent, state, event time (journal clock, ms), received (ms)]) for tests
// and the benchmark.
(function () {
  "use strict";
  if (!window.EventSource) { return; }
  var TERMINAL = { applied: 1, conflict: 1, cancelled: 1, failed: 1, recovery_required: 1 };
  var seen = window.mcbProgress = {};
  var live = document.getElementById("live");
  var refreshing = false;

  function pct(ev) {
    if (ev.state === "applied") { return 100; }
    return ev.batches_total ? Math.floor(100 * ev.batches_done / ev.batches_total) : 0;
  }

  function addRow(ev) {
    var table = document.getElementById("active-ops");
    if (!table) { return null; }
    var none = document.getElementById("no-active");
    if (none) { none.remove(); }
    var tr = document.createElement("tr");
    tr.setAttribute("data-op-row", ev.operation_id);
    var cells = [];
    for (var i = 0; i < 5; i++) { cells.push(document.createElement("td")); tr.appendChild(cells[i]); }
    var a = document.createElement("a");
    a.href = "/operations/" + encodeURIComponent(ev.operation_id);
    a.textContent = ev.operation_id;
    cells[0].appendChild(a);
    cells[1].textContent = ev.project_id || "";
    cells[2].className = "state";
    cells[2].setAttribute("data-state", ev.operation_id);
    var bar = document.createElement("progress");
    bar.max = 100; bar.value = 0; bar.id = "bar-" + ev.operation_id;
    bar.setAttribute("data-op", ev.operation_id);
    bar.setAttribute("aria-label", "progress of " + ev.operation_id);
    var label = document.createElement("span");
    label.className = "pct"; label.setAttribute("data-pct", ev.operation_id);
    cells[3].appendChild(bar); cells[3].appendChild(document.createTextNode(" ")); cells[3].appendChild(label);
    cells[4].textContent = "";
    table.tBodies[0].appendChild(tr);
    return bar;
  }

  function refreshOps() {
    var section = document.getElementById("operations");
    if (!section || refreshing) { return; }
    refreshing = true;
    // the same view as the page: ?old_worlds=1 keeps earlier worlds' operations listed
    var old = new URLSearchParams(window.location.search).get("old_worlds") === "1" ? "?old_worlds=1" : "";
    fetch("/fragments/operations" + old, { credentials: "same-origin" }).then(function (r) {
      return r.ok ? r.text() : null;
    }).then(function (html) {
      if (html) {
        var box = document.createElement("div");
        box.innerHTML = html;
        var fresh = box.querySelector("#operations");
        if (fresh) { section.replaceWith(fresh); }
      }
    }).catch(function () {}).then(function () { refreshing = false; });
  }

  function onProgress(msg) {
    var ev;
    try { ev = JSON.parse(msg.data); } catch (e) { return; }
    var id = ev.operation_id, p = pct(ev);
    (seen[id] = seen[id] || []).push([p, ev.state, ev.at_ms, Date.now()]);
    var bars = document.querySelectorAll('progress[data-op="' + CSS.escape(id) + '"]');
    if (!bars.length && !TERMINAL[ev.state]) { var b = addRow(ev); bars = b ? [b] : []; }
    bars.forEach(function (bar) { bar.value = p; bar.textContent = p + " %"; });
    document.querySelectorAll('[data-pct="' + CSS.escape(id) + '"]').forEach(function (el) { el.textContent = p + " %"; });
    document.querySelectorAll('[data-state="' + CSS.escape(id) + '"]').forEach(function (el) { el.textContent = ev.state; });
    if (live && TERMINAL[ev.state]) { live.textContent = id + " " + ev.state; }
    if (TERMINAL[ev.state]) { window.setTimeout(refreshOps, 300); }
  }

  var source = new EventSource("/events");
  source.addEventListener("progress", onProgress);
  source.addEventListener("open", function () { document.documentElement.setAttribute("data-live", "1"); });
})();

// The History page (issue 32): the time slider shows the time it points at while moved, and
// shows the map as of that time when let go (the page works without this: its Show button).
(function () {
  "use strict";
  var slider = document.getElementById("until");
  var text = document.getElementById("until-text");
  if (!slider || !slider.form) { return; }
  slider.addEventListener("input", function () {
    if (text) { text.textContent = new Date(Number(slider.value)).toISOString().replace("T", " ").replace("Z", " UTC"); }
  });
  slider.addEventListener("change", function () { slider.form.submit(); });
})();
