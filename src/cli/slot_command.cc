#include <cstdio>

#include "cli/commands.h"
#include "cli/exit_code.h"
#include "config/document.h"
#include "core/redact.h"
#include "sources/postgres/doctor.h"
#include "sources/postgres/postgres_config.h"
#include "sources/postgres/slot.h"

namespace faucet::cli {
namespace {

// The postgres-cdc config of `config_path`'s source: slots and doctor checks exist only there.
Result<PostgresCdcConfig> CdcConfig(const std::string& config_path, const char* command) {
  ASSIGN_OR_RETURN(config::Document doc, config::LoadDocument(config_path));
  if (doc.source.type != "postgres-cdc") {
    return doc.source.spec.Error("type", std::string("faucet ") + command +
                                             " works on a postgres-cdc source, not '" +
                                             doc.source.type + "'");
  }
  return ParsePostgresCdcConfig(doc.source.config);
}

}  // namespace

int SlotDropCommand(const std::string& config_path) {
  Result<PostgresCdcConfig> cfg = CdcConfig(config_path, "slot drop");
  if (!cfg.ok()) return ReportFailure(cfg.status());
  if (Status st = postgres::DropSlot(*cfg); !st.ok()) return ReportRunFailure(st);
  std::printf("dropped replication slot %s\n", cfg->slot_name.c_str());
  return kExitOk;
}

int DoctorCommand(const std::string& config_path, bool json) {
  Result<PostgresCdcConfig> cfg = CdcConfig(config_path, "doctor");
  if (!cfg.ok()) return ReportFailure(cfg.status());
  Result<postgres::DoctorReport> report = postgres::RunDoctor(*cfg);
  if (!report.ok()) return ReportRunFailure(report.status());
  std::string out = json ? report->ToJson().dump(2) + "\n" : report->ToText();
  std::fputs(Redact(out).c_str(), stdout);
  return report->ok() ? kExitOk : kExitFailure;
}

}  // namespace faucet::cli
