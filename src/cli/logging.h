// Logging setup: every line goes to stderr through Redact, so a password in a connection URL
// never reaches a terminal or a log file, whoever wrote the message.
#pragma once

#include <string>

namespace faucet::cli {

// Installs the redacting stderr logger at `level` (trace, debug, info, warn, error, off).
void SetUpLogging(const std::string& level);

// Prints "error: <message>" (redacted) to stderr.
void PrintError(const std::string& message);

}  // namespace faucet::cli
