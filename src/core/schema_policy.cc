#include "core/schema_policy.h"

namespace faucet {

const char* OnDriftName(OnDrift on_drift) {
  switch (on_drift) {
    case OnDrift::kWarn:
      return "warn";
    case OnDrift::kEvolve:
      return "evolve";
    case OnDrift::kIgnore:
      return "ignore";
    case OnDrift::kQuarantine:
      return "quarantine";
    case OnDrift::kFail:
      return "fail";
  }
  return "warn";
}

}  // namespace faucet
