// faucet: the command table. Each command's work is in its own file.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli/commands.h"
#include "cli/logging.h"
#include "cli/signals.h"

#ifndef FAUCET_VERSION
#define FAUCET_VERSION "0.0.0"
#endif

namespace {

// SIGPIPE is ignored, so a reader of stdout that went away (a pipe into a program that has
// exited) shows here as a failed write: a command that otherwise succeeded fails (1) instead of
// exiting 0 with its output lost. A command that failed has reported its own error already.
int CheckStdout(int exit_code) {
  using namespace faucet::cli;
  const bool flushed = std::fflush(stdout) == 0;
  if (exit_code != kExitOk || (flushed && std::ferror(stdout) == 0)) return exit_code;
  PrintError(std::string("cannot write to standard output") +
             (flushed ? "" : std::string(": ") + std::strerror(errno)));
  return kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace faucet::cli;
  // For every command: a write to a closed pipe or socket (stdout, a database or Redis
  // connection) must be an error the code handles, never a silent death by signal.
  std::signal(SIGPIPE, SIG_IGN);
  // Named, so that usage lines say "faucet", not the path the binary was started by.
  CLI::App app{"faucet: change data capture and mirroring that never loses a committed change",
               "faucet"};
  app.require_subcommand(1);
  const char* env_level = std::getenv("FAUCET_LOG");
  std::string log_level = env_level ? env_level : "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off (env FAUCET_LOG)");

  int exit_code = kExitOk;
  std::string config;
  std::string key;
  bool json = false;

  CLI::App* validate =
      app.add_subcommand("validate", "Check a config file and print its delivery guarantee");
  validate->add_option("config", config, "config file (YAML or JSON)")->required();
  validate->add_flag("--json", json, "machine-readable output");
  validate->callback([&] { exit_code = ValidateCommand(config, json); });

  CLI::App* run =
      app.add_subcommand("run", "Run the pipeline until its source ends or a signal stops it");
  run->add_option("config", config, "config file")->required();
  run->callback([&] {
    InstallStopHandlers();
    exit_code = RunCommand(config);
  });

  CLI::App* state = app.add_subcommand("state", "Read or delete a pipeline's persisted state");
  state->require_subcommand(1);
  CLI::App* state_get = state->add_subcommand("get", "Print the JSON value under KEY");
  CLI::App* state_delete = state->add_subcommand("delete", "Delete the value under KEY");
  for (CLI::App* sub : {state_get, state_delete}) {
    sub->add_option("config", config, "config file")->required();
    sub->add_option("key", key, "state key, e.g. 'orders::row-0', or a suffix like 'row-0'")
        ->required();
  }
  state_get->callback([&] { exit_code = StateGetCommand(config, key); });
  state_delete->callback([&] { exit_code = StateDeleteCommand(config, key); });

  CLI::App* mirror = app.add_subcommand(
      "mirror", "Snapshot the table, then stream its changes (the config's mirror: block)");
  mirror->alias("replicate");
  mirror->add_option("config", config, "config file");
  mirror->require_subcommand(0, 1);
  CLI::App* mirror_status = mirror->add_subcommand(
      "status", "Show a mirror's phase, progress, position, lag, last error");
  mirror_status->add_option("config", config, "config file")->required();
  mirror_status->add_flag("--json", json, "machine-readable output");
  mirror_status->callback([&] { exit_code = MirrorStatusCommand(config, json); });
  mirror->callback([&] {
    if (mirror_status->parsed()) return;
    if (config.empty()) throw CLI::RequiredError("config");
    InstallStopHandlers();
    exit_code = MirrorCommand(config);
  });

  CLI::App* slot = app.add_subcommand("slot", "Manage the Postgres replication slot of a config");
  slot->require_subcommand(1);
  CLI::App* slot_drop =
      slot->add_subcommand("drop", "Drop the slot, so the server stops retaining WAL for it");
  slot_drop->add_option("config", config, "config file")->required();
  slot_drop->callback([&] { exit_code = SlotDropCommand(config); });

  CLI::App* doctor =
      app.add_subcommand("doctor",
                         "Check the source database is ready for CDC (postgres-cdc: wal_level, "
                         "privileges, publication, replica identity, slot lag; mysql-cdc: "
                         "binlog format, row image and metadata, privileges, server_id, "
                         "retention)");
  doctor->add_option("config", config, "config file")->required();
  doctor->add_flag("--json", json, "machine-readable output");
  doctor->callback([&] { exit_code = DoctorCommand(config, json); });

  CLI::App* version = app.add_subcommand("version", "Print the version");
  version->callback([&] { std::printf("faucet %s\n", FAUCET_VERSION); });

  CLI::App* debug = app.add_subcommand("debug", "Tools for testing faucet itself");
  debug->group("");  // hidden from the main help
  debug->require_subcommand(1);
  debug->add_subcommand("crash-points", "List the named crash points (FAUCET_CRASH_AT=name[:nth])")
      ->callback([&] { exit_code = CrashPointsCommand(); });

  app.parse_complete_callback([&] { SetUpLogging(log_level); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    exit_code = app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  return CheckStdout(exit_code);
}
