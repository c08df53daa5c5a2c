#include "mirror/table_states.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "core/redact.h"

namespace faucet::mirror {
namespace {

constexpr size_t kMaxErrorChars = 500;

constexpr std::pair<TablePhase, const char*> kPhases[] = {
    {TablePhase::kPending, "pending"}, {TablePhase::kSnapshotting, "snapshotting"},
    {TablePhase::kActive, "active"},   {TablePhase::kPaused, "paused"},
    {TablePhase::kDropped, "dropped"}, {TablePhase::kRefused, "refused"},
};

Json TimeOrNull(int64_t ms) { return ms > 0 ? Json(Rfc3339(ms)) : Json(); }

int64_t TimeOf(const Json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_string()) return 0;
  return ParseRfc3339(j[key].get<std::string>()).value_or(0);
}

Json TableToJson(const TableState& t) {
  Json j = {{"phase", PhaseName(t.phase)}, {"since", TimeOrNull(t.since_ms)}};
  if (t.position) j["position"] = t.position->value;
  j["snapshot"] = {{"started_at", TimeOrNull(t.snapshot.started_ms)},
                   {"finished_at", TimeOrNull(t.snapshot.finished_ms)},
                   {"rows", t.snapshot.rows},
                   {"shards_total", t.snapshot.shards_total},
                   {"shards_done", t.snapshot.shards_done},
                   {"attempts", t.snapshot.attempts},
                   {"id", t.snapshot.id}};
  if (!t.snapshot.shard_plan.empty()) {
    j["snapshot"]["shard_plan"] = t.snapshot.shard_plan;
    j["snapshot"]["shards_finished"] = t.snapshot.shards_finished;
  }
  j["changes"] = t.changes;
  j["last_applied_at"] = TimeOrNull(t.last_applied_ms);
  j["last_commit_at"] = TimeOrNull(t.last_commit_ms);
  if (t.behind_since_ms > 0) j["behind_since"] = Rfc3339(t.behind_since_ms);
  j["consecutive_failures"] = t.consecutive_failures;
  j["last_error"] = t.last_error.empty() ? Json() : Json(t.last_error);
  j["key"] = t.key;
  j["write_mode"] = t.write_mode;
  j["id"] = t.id;
  j["estimated_rows"] = t.estimated_rows ? Json(*t.estimated_rows) : Json();
  if (!t.resync_required.empty()) j["resync_required"] = t.resync_required;
  return j;
}

Result<TableState> TableFromJson(const Json& j) {
  if (!j.is_object() || !j.contains("phase") || !j["phase"].is_string()) {
    return DataLoss("a table entry has no phase");
  }
  TableState t;
  const std::string phase = j["phase"].get<std::string>();
  bool known = false;
  for (auto [p, name] : kPhases) {
    if (phase == name) t.phase = p, known = true;
  }
  if (!known) return DataLoss("unknown table phase '" + phase + "'");
  t.since_ms = TimeOf(j, "since");
  if (j.contains("position") && !j["position"].is_null()) t.position = Bookmark{j["position"]};
  if (j.contains("snapshot") && j["snapshot"].is_object()) {
    const Json& s = j["snapshot"];
    t.snapshot.started_ms = TimeOf(s, "started_at");
    t.snapshot.finished_ms = TimeOf(s, "finished_at");
    t.snapshot.rows = s.value("rows", int64_t{0});
    t.snapshot.shards_total = s.value("shards_total", int64_t{0});
    t.snapshot.shards_done = s.value("shards_done", int64_t{0});
    t.snapshot.attempts = s.value("attempts", int64_t{0});
    t.snapshot.id = s.value("id", std::string());
    if (s.contains("shard_plan") && s["shard_plan"].is_array()) {
      for (const Json& part : s["shard_plan"]) {
        if (!part.is_object()) return DataLoss("a shard plan entry is not an object");
        std::map<std::string, std::string> patch;
        for (const auto& [key, value] : part.items()) {
          if (!value.is_string()) return DataLoss("a shard plan value is not a string");
          patch[key] = value.get<std::string>();
        }
        t.snapshot.shard_plan.push_back(std::move(patch));
      }
      if (s.contains("shards_finished") && s["shards_finished"].is_array()) {
        for (const Json& i : s["shards_finished"]) {
          if (!i.is_number_integer() || i.get<int64_t>() < 0 ||
              i.get<size_t>() >= t.snapshot.shard_plan.size()) {
            return DataLoss("a finished shard is not one of the plan's");
          }
          FinishShard(t, i.get<int64_t>());
        }
      }
    }
  }
  t.changes = j.value("changes", uint64_t{0});
  t.last_applied_ms = TimeOf(j, "last_applied_at");
  t.last_commit_ms = TimeOf(j, "last_commit_at");
  t.behind_since_ms = TimeOf(j, "behind_since");
  t.consecutive_failures = j.value("consecutive_failures", int64_t{0});
  if (j.contains("last_error") && j["last_error"].is_string()) t.last_error = j["last_error"];
  if (j.contains("key") && j["key"].is_array()) {
    for (const Json& k : j["key"]) {
      if (k.is_string()) t.key.push_back(k.get<std::string>());
    }
  }
  if (j.contains("write_mode") && j["write_mode"].is_string()) t.write_mode = j["write_mode"];
  if (j.contains("id") && j["id"].is_string()) t.id = j["id"];
  if (j.contains("estimated_rows") && j["estimated_rows"].is_number_integer()) {
    t.estimated_rows = j["estimated_rows"].get<int64_t>();
  }
  if (j.contains("resync_required") && j["resync_required"].is_string()) {
    t.resync_required = j["resync_required"];
  }
  return t;
}

}  // namespace

const char* PhaseName(TablePhase phase) {
  for (auto [p, name] : kPhases) {
    if (p == phase) return name;
  }
  return "unknown";
}

std::string Rfc3339(int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

std::optional<int64_t> ParseRfc3339(const std::string& text) {
  std::tm tm{};
  int millis = 0;
  int used = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis, &used) != 7 ||
      static_cast<size_t>(used) != text.size()) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + millis;
}

Json Marker::ToJson() const {
  Json tables_json = Json::object();
  for (const auto& [name, t] : tables) tables_json[name] = TableToJson(t);
  return {{"version", 2},
          {"tables", tables_json},
          {"discovered_at", TimeOrNull(discovered_ms)},
          {"updated_at", TimeOrNull(updated_ms)}};
}

Result<Marker> Marker::FromJson(const Json& json, const std::string& key) {
  if (json.is_object() && json.contains("snapshot_done")) {
    return FailedPrecondition(
        "the mirror's state holds a single-table marker; a multi-table mirror "
        "(`mirror.tables`) needs its own `name:` (or a fresh state store)");
  }
  if (!json.is_object() || json.value("version", 0) != 2 || !json.contains("tables") ||
      !json["tables"].is_object()) {
    return DataLoss("mirror marker " + key + " is malformed: " + json.dump());
  }
  Marker m;
  for (const auto& [name, entry] : json["tables"].items()) {
    Result<TableState> t = TableFromJson(entry);
    if (!t.ok())
      return DataLoss("mirror marker " + key + ", table '" + name + "': " + t.status().message());
    m.tables[name] = std::move(*t);
  }
  m.discovered_ms = TimeOf(json, "discovered_at");
  m.updated_ms = TimeOf(json, "updated_at");
  return m;
}

void EnterPhase(TableState& t, TablePhase phase, int64_t now_ms) {
  if (t.phase == phase) return;
  t.phase = phase;
  t.since_ms = now_ms;
}

void StartSnapshot(TableState& t, const Bookmark& position, const std::string& id, int64_t now_ms) {
  t.phase = TablePhase::kSnapshotting;
  t.since_ms = now_ms;
  t.position = position;
  t.snapshot.started_ms = now_ms;
  t.snapshot.finished_ms = 0;
  t.snapshot.rows = 0;
  t.snapshot.shards_done = 0;
  t.snapshot.shards_total = 0;
  t.snapshot.shard_plan.clear();
  t.snapshot.shards_finished.clear();
  t.snapshot.attempts += 1;
  t.snapshot.id = id;
}

void FinishShard(TableState& t, int64_t shard) {
  std::vector<int64_t>& done = t.snapshot.shards_finished;
  auto at = std::lower_bound(done.begin(), done.end(), shard);
  if (at == done.end() || *at != shard) done.insert(at, shard);
  t.snapshot.shards_done = static_cast<int64_t>(done.size());
}

void FinishSnapshot(TableState& t, int64_t now_ms) {
  EnterPhase(t, TablePhase::kActive, now_ms);
  t.snapshot.finished_ms = now_ms;
  t.consecutive_failures = 0;
  t.last_error.clear();
  t.last_applied_ms = now_ms;
}

bool RecordFailure(TableState& t, const std::string& error, int64_t max_failures, int64_t now_ms) {
  t.consecutive_failures += 1;
  t.last_error = Redact(error);
  if (t.last_error.size() > kMaxErrorChars) t.last_error.resize(kMaxErrorChars);
  if (t.consecutive_failures < std::max<int64_t>(max_failures, 1)) return false;
  EnterPhase(t, TablePhase::kPaused, now_ms);
  return true;
}

void RecordSuccess(TableState& t) { t.consecutive_failures = 0; }

bool RetryDue(const TableState& t, int64_t retry_secs, int64_t now_ms) {
  return t.phase == TablePhase::kPaused && retry_secs > 0 &&
         now_ms - t.since_ms >= retry_secs * 1000;
}

}  // namespace faucet::mirror
