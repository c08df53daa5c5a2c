// The status page served at `GET /`: one self-contained HTML document (no external assets, no
// build step). Its script polls /v1/mirror/{name} every 3 s and renders the mirror's tables
// (phase, snapshot progress, changes, lag, last error); a token in the URL fragment
// (#token=...) is sent as a bearer token. `__NAME__` is replaced by the mirror's name as a
// JSON string.
#pragma once

namespace faucet::observability {

inline constexpr const char* kStatusPage = R"html(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>faucet</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
  h1 { font-size: 1.3em; margin: 0 0 .2em; }
  #summary { color: #555; margin-bottom: 1em; }
  table { border-collapse: collapse; min-width: 60%; }
  th, td { padding: .3em .8em; border-bottom: 1px solid #ddd; text-align: left; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; }
  .phase-active { color: #176d2c; } .phase-paused, .phase-failed { color: #b00020; }
  .phase-snapshotting { color: #8a5a00; }
  .error { color: #b00020; }
  progress { width: 7em; }
</style>
</head>
<body>
<h1 id="title">faucet</h1>
<div id="summary">loading…</div>
<table id="tables" hidden>
  <thead><tr><th>Table</th><th>Phase</th><th>Snapshot</th><th>Changes</th><th>Lag</th>
  <th>Last error</th></tr></thead>
  <tbody></tbody>
</table>
<script>
"use strict";
const name = __NAME__;
const token = new URLSearchParams(location.hash.slice(1)).get("token");
document.getElementById("title").textContent = "mirror " + name;

function cell(row, text, cls) {
  const td = row.insertCell();
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

function ago(secs) {
  if (typeof secs !== "number") return "-";
  if (secs < 120) return secs + " s";
  if (secs < 7200) return Math.floor(secs / 60) + " min";
  return Math.floor(secs / 3600) + " h";
}

function render(status) {
  const s = status.summary || {};
  const phases = Object.entries(s.by_phase || {}).map(([p, n]) => n + " " + p).join(", ");
  document.getElementById("summary").textContent =
      (s.tables === undefined ? "" : s.tables + " tables: " + phases) +
      (s.lagging ? ", " + s.lagging + " lagging" : "") +
      " · updated " + new Date().toLocaleTimeString();
  const body = document.querySelector("#tables tbody");
  body.replaceChildren();
  // A single-table mirror's status has no tables: it is its one row.
  const snap = status.snapshot || {};
  const tables = status.tables || [{
    table: name, phase: status.phase, changes: null, lag_secs: null,
    last_error: status.last_error,
    snapshot: { rows: snap.rows, percent: snap.estimate > 0 && status.phase === "snapshot"
        ? Math.min(99, 100 * snap.rows / snap.estimate) : null },
  }];
  for (const t of tables) {
    const row = body.insertRow();
    row.dataset.table = t.table;
    cell(row, t.table);
    cell(row, t.phase, "phase-" + t.phase);
    const snap = t.snapshot || {};
    const td = cell(row, "");
    if (typeof snap.percent === "number") {
      const bar = document.createElement("progress");
      bar.max = 100;
      bar.value = snap.percent;
      td.append(bar, " " + Math.round(snap.percent) + "%");
    } else if (snap.rows > 0) {
      td.textContent = snap.rows.toLocaleString() + " rows";
    } else {
      td.textContent = "-";
    }
    cell(row, typeof t.changes === "number" ? t.changes.toLocaleString() : "-", "num");
    cell(row, ago(t.lag_secs), "num");
    cell(row, t.last_error || "", "error");
  }
  document.getElementById("tables").hidden = false;
}

async function refresh() {
  try {
    const headers = token ? { Authorization: "Bearer " + token } : {};
    const r = await fetch("v1/mirror/" + encodeURIComponent(name), { headers });
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || r.statusText);
    render(body);
  } catch (e) {
    document.getElementById("summary").textContent = "cannot read the status: " + e.message;
  }
}
refresh();
setInterval(refresh, 3000);
</script>
</body>
</html>
)html";

}  // namespace faucet::observability
