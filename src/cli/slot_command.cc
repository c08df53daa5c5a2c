#include <cstdio>

#include "cli/commands.h"
#include "cli/exit_code.h"
#include "config/document.h"
#include "core/redact.h"
#include "sources/mysql/doctor.h"
#include "sources/mysql/mysql_config.h"
#include "sources/postgres/doctor.h"
#include "sources/postgres/postgres_config.h"
#include "sources/postgres/slot.h"
#include "state/state_config.h"

namespace faucet::cli {
namespace {

// The postgres-cdc config of `config_path`'s source: slots exist only there.
Result<PostgresCdcConfig> CdcConfig(const std::string& config_path, const char* command) {
  ASSIGN_OR_RETURN(config::Document doc, config::LoadDocument(config_path));
  if (doc.source.type != "postgres-cdc") {
    return doc.source.spec.Error("type", std::string("faucet ") + command +
                                             " works on a postgres-cdc source, not '" +
                                             doc.source.type + "'");
  }
  return ParsePostgresCdcConfig(doc.source.config);
}

// The binlog position the next run of `doc` resumes from: its persisted bookmark, the mirror's
// CDC bookmark for a config with a mirror: block ("{name}::cdc"), else `faucet run`'s
// ("{name}::row-0"). None without a state store.
mysql::DoctorResume PersistedPosition(const config::Document& doc) {
  mysql::DoctorResume resume;
  if (!doc.state) return resume;
  resume.where = doc.name + (doc.mirror ? "::cdc" : "::row-0");
  Result<StateConfig> cfg = ParseStateConfig(doc.state->type, doc.state->config);
  if (!cfg.ok()) {
    resume.error = cfg.status().message();
    return resume;
  }
  Result<std::unique_ptr<StateStore>> store = OpenStateStore(*cfg);
  if (!store.ok()) {
    resume.error = store.status().message();
    return resume;
  }
  Result<std::optional<Json>> value = (*store)->Get(resume.where);
  if (!value.ok()) {
    resume.error = value.status().message();
  } else if (*value) {
    resume.bookmark = Bookmark{**value};
  }
  return resume;
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
  Result<config::Document> doc = config::LoadDocument(config_path);
  if (!doc.ok()) return ReportFailure(doc.status());
  Result<DoctorReport> report = DoctorReport();
  if (doc->source.type == "postgres-cdc") {
    Result<PostgresCdcConfig> cfg = ParsePostgresCdcConfig(doc->source.config);
    if (!cfg.ok()) return ReportFailure(cfg.status());
    report = postgres::RunDoctor(*cfg);
  } else if (doc->source.type == "mysql-cdc") {
    Result<MysqlCdcConfig> cfg = ParseMysqlCdcConfig(doc->source.config);
    if (!cfg.ok()) return ReportFailure(cfg.status());
    report = mysql::RunDoctor(*cfg, PersistedPosition(*doc));
  } else {
    return ReportFailure(doc->source.spec.Error(
        "type", "faucet doctor works on a postgres-cdc or mysql-cdc source, not '" +
                    doc->source.type + "'"));
  }
  if (!report.ok()) return ReportRunFailure(report.status());
  std::string out = json ? report->ToJson().dump(2) + "\n" : report->ToText();
  std::fputs(Redact(out).c_str(), stdout);
  return report->ok() ? kExitOk : kExitFailure;
}

}  // namespace faucet::cli
