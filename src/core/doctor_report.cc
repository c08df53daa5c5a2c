#include "core/doctor_report.h"

#include <algorithm>

namespace faucet {

const char* DoctorOutcomeName(DoctorOutcome outcome) {
  switch (outcome) {
    case DoctorOutcome::kOk:
      return "ok";
    case DoctorOutcome::kWarn:
      return "warn";
    case DoctorOutcome::kFail:
      return "fail";
  }
  return "?";
}

void DoctorReport::Add(std::string name, DoctorOutcome outcome, std::string detail) {
  checks.push_back({std::move(name), outcome, std::move(detail)});
}

bool DoctorReport::ok() const {
  return std::none_of(checks.begin(), checks.end(),
                      [](const DoctorCheck& c) { return c.outcome == DoctorOutcome::kFail; });
}

Json DoctorReport::ToJson() const {
  Json list = Json::array();
  for (const DoctorCheck& c : checks) {
    list.push_back(
        {{"check", c.name}, {"status", DoctorOutcomeName(c.outcome)}, {"detail", c.detail}});
  }
  return Json{{"ok", ok()}, {"checks", std::move(list)}};
}

std::string DoctorReport::ToText() const {
  size_t width = 0;
  for (const DoctorCheck& c : checks) width = std::max(width, c.name.size());
  std::string out;
  int warnings = 0;
  int failures = 0;
  for (const DoctorCheck& c : checks) {
    std::string outcome = DoctorOutcomeName(c.outcome);
    out += "  " + outcome + std::string(6 - outcome.size(), ' ') + c.name +
           std::string(width + 2 - c.name.size(), ' ') + c.detail + "\n";
    warnings += c.outcome == DoctorOutcome::kWarn;
    failures += c.outcome == DoctorOutcome::kFail;
  }
  out += std::to_string(failures) + " failed, " + std::to_string(warnings) + " warning" +
         (warnings == 1 ? "" : "s") + "\n";
  return out;
}

}  // namespace faucet
