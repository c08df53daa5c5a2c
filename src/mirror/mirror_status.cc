#include "mirror/mirror_status.h"

#include <spdlog/spdlog.h>

#include <chrono>

namespace faucet::mirror {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string StatusKey(const std::string& name) { return name + "::__mirror_status__"; }
std::string MarkerKey(const std::string& name) { return name + "::__replication__"; }
std::string CdcKey(const std::string& name) { return name + "::cdc"; }
std::string LeaseKey(const std::string& name) { return name + "::__lease__"; }

Result<std::unique_ptr<StateLease>> TakeMirrorLease(StateStore& state, const std::string& name) {
  ASSIGN_OR_RETURN(std::unique_ptr<StateLease> lease, state.Lease(LeaseKey(name)));
  if (lease == nullptr) {
    spdlog::warn(
        "mirror {}: this state store cannot hold a lease, so nothing stops a second "
        "mirror of the same name from running at the same time",
        name);
  }
  return lease;
}

Json MirrorStatus::ToJson() const {
  Json j = {{"phase", phase},
            {"snapshot",
             {{"rows", snapshot_rows},
              {"estimate", snapshot_estimate ? Json(*snapshot_estimate) : Json()},
              {"started_at_ms", snapshot_started_ms},
              {"finished_at_ms", snapshot_finished_ms}}},
            {"last_commit_ms", last_commit_ms},
            {"last_error", last_error.empty() ? Json() : Json(last_error)},
            {"last_error_at_ms", last_error_ms},
            {"updated_at_ms", updated_ms}};
  return j;
}

MirrorStatus MirrorStatus::FromJson(const Json& j) {
  MirrorStatus s;
  s.phase = j.value("phase", "unknown");
  if (j.contains("snapshot") && j["snapshot"].is_object()) {
    const Json& snap = j["snapshot"];
    s.snapshot_rows = snap.value("rows", uint64_t{0});
    if (snap.contains("estimate") && snap["estimate"].is_number()) {
      s.snapshot_estimate = snap["estimate"].get<int64_t>();
    }
    s.snapshot_started_ms = snap.value("started_at_ms", int64_t{0});
    s.snapshot_finished_ms = snap.value("finished_at_ms", int64_t{0});
  }
  s.last_commit_ms = j.value("last_commit_ms", int64_t{0});
  if (j.contains("last_error") && j["last_error"].is_string()) s.last_error = j["last_error"];
  s.last_error_ms = j.value("last_error_at_ms", int64_t{0});
  s.updated_ms = j.value("updated_at_ms", int64_t{0});
  return s;
}

}  // namespace faucet::mirror
