// The report of `faucet doctor`: named checks, each ok, a warning or a failure with a sentence
// saying what was found and how to fix it. One shape for every source that has a doctor
// (postgres-cdc, mysql-cdc), so the command prints and exits the same way for each.
#pragma once

#include <string>
#include <vector>

#include "core/bookmark.h"

namespace faucet {

enum class DoctorOutcome { kOk, kWarn, kFail };

struct DoctorCheck {
  std::string name;  // "wal_level", "binlog_format", ...
  DoctorOutcome outcome = DoctorOutcome::kOk;
  std::string detail;
};

struct DoctorReport {
  std::vector<DoctorCheck> checks;

  // Appends a check.
  void Add(std::string name, DoctorOutcome outcome, std::string detail);
  // No check failed (warnings allowed).
  bool ok() const;
  // {"ok": bool, "checks": [{"check": name, "status": "ok"|"warn"|"fail", "detail": text}]}
  Json ToJson() const;
  // One line per check ("  warn  replica_identity  public.t has ..."), then a summary line.
  std::string ToText() const;
};

// "ok", "warn" or "fail".
const char* DoctorOutcomeName(DoctorOutcome outcome);

}  // namespace faucet
