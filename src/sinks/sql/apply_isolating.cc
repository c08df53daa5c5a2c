#include "sinks/sql/apply_isolating.h"

namespace faucet::sql {
namespace {

class Isolator {
 public:
  Isolator(const std::function<RangeResult(size_t, size_t)>& apply, bool stop_at_first,
           std::vector<FailedRow>& failed)
      : apply_(apply), stop_at_first_(stop_at_first), failed_(failed) {}

  bool stopped() const { return stop_at_first_ && !failed_.empty(); }

  Status Apply(size_t begin, size_t end) {
    while (begin < end && !stopped()) {
      RangeResult result = apply_(begin, end);
      if (result.status.ok()) return Status::Ok();
      if (result.status.code() != StatusCode::kInvalidArgument) return result.status;
      if (result.failed_at && *result.failed_at >= begin && *result.failed_at < end) {
        size_t at = *result.failed_at;
        if (!result.prefix_applied) RETURN_IF_ERROR(Apply(begin, at));
        if (stopped()) return Status::Ok();
        failed_.push_back({at, result.status, result.column});
        begin = at + 1;
        continue;
      }
      if (end - begin == 1) {
        failed_.push_back({begin, result.status, result.column});
        return Status::Ok();
      }
      size_t mid = begin + (end - begin) / 2;
      RETURN_IF_ERROR(Apply(begin, mid));
      begin = mid;
    }
    return Status::Ok();
  }

 private:
  const std::function<RangeResult(size_t, size_t)>& apply_;
  bool stop_at_first_;
  std::vector<FailedRow>& failed_;
};

}  // namespace

Status ApplyIsolating(size_t n, const std::function<RangeResult(size_t, size_t)>& apply,
                      bool stop_at_first, std::vector<FailedRow>& failed) {
  return Isolator(apply, stop_at_first, failed).Apply(0, n);
}

}  // namespace faucet::sql
