// One function per command; main.cc maps the command line onto them. Each returns the process
// exit code: 0 success, 1 run failure, 2 usage or config error.
#pragma once

#include <string>

namespace faucet::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

int ValidateCommand(const std::string& config_path, bool json);
int RunCommand(const std::string& config_path);
int StateGetCommand(const std::string& config_path, const std::string& key);
int StateDeleteCommand(const std::string& config_path, const std::string& key);
int CrashPointsCommand();
int SlotDropCommand(const std::string& config_path);
int DoctorCommand(const std::string& config_path, bool json);
int MirrorCommand(const std::string& config_path);
int MirrorStatusCommand(const std::string& config_path, bool json);

}  // namespace faucet::cli
