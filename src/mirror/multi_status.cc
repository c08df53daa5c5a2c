#include "mirror/multi_status.h"

#include <cstdio>
#include <map>

#include "core/pipeline.h"
#include "mirror/mirror_status.h"
#include "mirror/multi_mirror.h"
#include "mirror/table_states.h"
#include "observability/progress.h"

namespace faucet::mirror {
namespace {

Json TimeOrNull(int64_t ms) { return ms > 0 ? Json(Rfc3339(ms)) : Json(); }

Json Percent(const TableState& t) {
  if (t.snapshot.started_ms == 0) return nullptr;  // never snapshotted (e.g. refused)
  if (t.snapshot.finished_ms > 0 && t.phase != TablePhase::kSnapshotting) return 100.0;
  if (t.snapshot.shards_total > 1) {
    return 100.0 * static_cast<double>(t.snapshot.shards_done) /
           static_cast<double>(t.snapshot.shards_total);
  }
  if (t.estimated_rows && *t.estimated_rows > 0) {
    return std::min(99.0, 100.0 * static_cast<double>(t.snapshot.rows) /
                              static_cast<double>(*t.estimated_rows));
  }
  return nullptr;
}

std::string Ago(const Json& secs) {
  if (!secs.is_number()) return "-";
  const int64_t s = secs.get<int64_t>();
  if (s < 120) return std::to_string(s) + "s";
  if (s < 7200) return std::to_string(s / 60) + "m";
  return std::to_string(s / 3600) + "h";
}

std::string Row(const std::string& table, size_t width, const std::string& phase,
                const std::string& snapshot, const std::string& changes, const std::string& lag,
                const std::string& note) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-*s  %-12s  %9s  %10s  %6s  ", static_cast<int>(width),
                table.c_str(), phase.c_str(), snapshot.c_str(), changes.c_str(), lag.c_str());
  std::string line = buf + note;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

}  // namespace

Result<Json> ReadMultiStatus(const assembly::BuiltPipeline& built, const TablesConfig& tables,
                             StateStore& state) {
  const std::string& name = built.doc.name;
  ASSIGN_OR_RETURN(std::optional<Json> stored, state.Get(MarkerKey(name)));
  if (!stored) {
    return NotFound("mirror '" + name + "' has not started yet (no state under '" +
                    MarkerKey(name) + "')");
  }
  ASSIGN_OR_RETURN(Marker marker, Marker::FromJson(*stored, MarkerKey(name)));
  return MultiStatus(built, tables, marker, state);
}

Result<Json> MultiStatus(const assembly::BuiltPipeline& built, const TablesConfig& tables,
                         const Marker& marker, StateStore& state) {
  const std::string& name = built.doc.name;
  const int64_t now = NowMs();
  Json rows = Json::array();
  Json by_phase = Json::object();
  int lagging_count = 0;
  int resync_count = 0;
  // Each table's committed position, and how far the source's log is ahead of the active
  // ones' (read at one moment).
  std::map<std::string, Json> positions;
  std::vector<std::string> active;
  std::vector<Bookmark> active_positions;
  for (const auto& [table, t] : marker.tables) {
    ASSIGN_OR_RETURN(std::optional<Json> value, state.Get(TableKey(name, t.id)));
    std::optional<Bookmark> b = value ? StateBookmark(*value) : std::nullopt;
    positions[table] = b ? b->value : Json();
    if (b && t.phase == TablePhase::kActive) {
      active.push_back(table);
      active_positions.push_back(*b);
    }
  }
  std::map<std::string, std::optional<int64_t>> bytes_behind;
  std::vector<std::optional<int64_t>> behind = built.parts.source->BytesBehind(active_positions);
  for (size_t i = 0; i < active.size() && i < behind.size(); ++i)
    bytes_behind[active[i]] = behind[i];

  for (const auto& [table, t] : marker.tables) {
    const Json& position = positions[table];
    // Lag: how long the oldest change routed to the table has waited for its sink (0 when it
    // had everything routed to it at the marker's last save).
    Json lag;
    Json lag_bytes;
    bool lagging = false;
    if (t.phase == TablePhase::kActive) {
      const int64_t secs =
          t.behind_since_ms > 0 ? std::max<int64_t>(0, (now - t.behind_since_ms) / 1000) : 0;
      lag = secs;
      lagging = tables.lag_warning_secs > 0 && secs >= tables.lag_warning_secs;
      if (auto it = bytes_behind.find(table); it != bytes_behind.end() && it->second) {
        lag_bytes = *it->second;
      }
    }
    lagging_count += lagging ? 1 : 0;
    resync_count += t.resync_required.empty() ? 0 : 1;
    by_phase[PhaseName(t.phase)] = by_phase.value(PhaseName(t.phase), 0) + 1;
    Json row = {{"table", table},
                {"phase", PhaseName(t.phase)},
                {"since", TimeOrNull(t.since_ms)},
                {"snapshot",
                 {{"started_at", TimeOrNull(t.snapshot.started_ms)},
                  {"finished_at", TimeOrNull(t.snapshot.finished_ms)},
                  {"rows", t.snapshot.rows},
                  {"estimated_rows", t.estimated_rows ? Json(*t.estimated_rows) : Json()},
                  {"shards_done", t.snapshot.shards_done},
                  {"shards_total", t.snapshot.shards_total},
                  {"percent", Percent(t)},
                  {"attempts", t.snapshot.attempts}}},
                {"changes", t.changes},
                {"position", position},
                {"lag_secs", lag},
                {"lag_bytes", lag_bytes},
                {"lagging", lagging},
                {"last_commit_at", TimeOrNull(t.last_commit_ms)},
                {"consecutive_failures", t.consecutive_failures},
                {"last_error", t.last_error.empty() ? Json() : Json(t.last_error)},
                {"key", t.key},
                {"write_mode", t.write_mode.empty() ? Json() : Json(t.write_mode)}};
    if (!t.resync_required.empty()) row["resync_required"] = t.resync_required;
    rows.push_back(std::move(row));
  }
  return Json{{"name", name},
              {"mode", "tables"},
              {"updated_at", TimeOrNull(marker.updated_ms)},
              {"discovered_at", TimeOrNull(marker.discovered_ms)},
              {"summary",
               {{"tables", rows.size()},
                {"by_phase", by_phase},
                {"lagging", lagging_count},
                {"resync_required", resync_count}}},
              {"tables", rows}};
}

std::string FormatMultiStatus(const Json& s) {
  const Json& summary = s["summary"];
  const size_t n = summary["tables"].get<size_t>();
  std::string head = "mirror " + s["name"].get<std::string>() + " (" + std::to_string(n) +
                     (n == 1 ? " table" : " tables");
  std::string phases;
  for (const auto& [phase, count] : summary["by_phase"].items()) {
    phases += (phases.empty() ? ": " : ", ") + count.dump() + " " + phase;
  }
  head += phases;
  if (summary["lagging"].get<int>() > 0) head += ", " + summary["lagging"].dump() + " lagging";
  std::string text = head + ")\n";
  size_t width = 5;
  for (const Json& row : s["tables"]) {
    width = std::max(width, row["table"].get<std::string>().size());
    if (row.contains("resync_required")) {
      text += "  ! " + row["table"].get<std::string>() + ": " +
              row["resync_required"].get<std::string>() + "\n";
    }
  }
  text += Row("TABLE", width, "PHASE", "SNAPSHOT", "CHANGES", "LAG", "NOTE");
  for (const Json& row : s["tables"]) {
    const Json& snap = row["snapshot"];
    std::string snapshot = "-";
    if (snap["percent"].is_number()) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%.0f%%", snap["percent"].get<double>());
      snapshot = buf;
    } else if (snap["rows"].get<int64_t>() > 0) {
      snapshot = snap["rows"].dump() + " rows";
    }
    std::string note;
    if (row.contains("resync_required")) note += "resync required; ";
    if (row["lagging"].get<bool>()) note += "lagging; ";
    if (row["last_error"].is_string()) note += row["last_error"].get<std::string>();
    while (note.size() >= 2 && note.compare(note.size() - 2, 2, "; ") == 0) {
      note.resize(note.size() - 2);
    }
    text +=
        Row(row["table"].get<std::string>(), width, row["phase"].get<std::string>(), snapshot,
            observability::Thousands(row["changes"].get<uint64_t>()), Ago(row["lag_secs"]), note);
  }
  return text;
}

}  // namespace faucet::mirror
