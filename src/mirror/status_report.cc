#include "mirror/status_report.h"

#include "core/pipeline.h"
#include "mirror/mirror_status.h"

namespace faucet::mirror {

Result<Json> ReadMirrorStatus(const assembly::BuiltPipeline& built, StateStore& state,
                              const MirrorStatus* live) {
  const std::string& name = built.doc.name;
  ASSIGN_OR_RETURN(std::optional<Json> marker, state.Get(MarkerKey(name)));
  ASSIGN_OR_RETURN(std::optional<Json> bookmark, state.Get(CdcKey(name)));
  MirrorStatus status;
  if (live != nullptr) {
    status = *live;
  } else {
    ASSIGN_OR_RETURN(std::optional<Json> saved, state.Get(StatusKey(name)));
    if (saved) status = MirrorStatus::FromJson(*saved);
  }
  if (!marker) status.phase = "not started";

  Json out = status.ToJson();
  out["name"] = name;
  out["snapshot_done"] =
      marker && (*marker)["snapshot_done"].is_boolean() && (*marker)["snapshot_done"].get<bool>();
  // The committed position: the CDC bookmark, unwrapped if exactly-once wrapped it.
  Json position;
  if (bookmark) {
    if (std::optional<Bookmark> b = StateBookmark(*bookmark)) position = b->value;
  }
  out["position"] = position;
  out["lag_bytes"] = nullptr;
  out["lag_seconds"] = nullptr;
  if (!position.is_null()) {
    if (std::optional<int64_t> lag = built.parts.source->BytesBehind({Bookmark{position}})[0]) {
      out["lag_bytes"] = *lag;
      // Caught up means no lag in time either; otherwise the age of the last applied commit.
      out["lag_seconds"] = (*lag == 0 || status.last_commit_ms == 0)
                               ? 0.0
                               : (NowMs() - status.last_commit_ms) / 1000.0;
    }
  }
  return out;
}

std::string FormatMirrorStatus(const Json& s) {
  auto num = [](const Json& j) { return j.is_null() ? std::string("unknown") : j.dump(); };
  std::string text = "mirror " + s["name"].get<std::string>() + "\n";
  text += "  phase:     " + s["phase"].get<std::string>() + "\n";
  const Json& snap = s["snapshot"];
  text += "  snapshot:  " + std::string(s["snapshot_done"].get<bool>() ? "done, " : "") +
          snap["rows"].dump() + " rows";
  if (snap["estimate"].is_number()) text += " of ~" + snap["estimate"].dump() + " estimated";
  text += "\n  position:  " + (s["position"].is_null() ? "none" : s["position"].dump()) + "\n";
  text += "  lag:       " + num(s["lag_bytes"]) +
          " bytes of WAL; the last applied change committed " + num(s["lag_seconds"]) + " s ago\n";
  text += "  last error: " +
          (s["last_error"].is_null() ? std::string("none") : s["last_error"].get<std::string>()) +
          "\n";
  return text;
}

}  // namespace faucet::mirror
