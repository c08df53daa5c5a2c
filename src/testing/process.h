// Runs the faucet binary (or any program) as a child process, for crash and CLI tests that must
// see what a real process leaves behind when it dies.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace faucet::testing {

struct ProcessResult {
  int exit_code = -1;     // when it exited
  int signal = 0;         // when a signal killed it
  std::string output;     // stdout and stderr, interleaved
  long peak_rss_kib = 0;  // its peak resident set size (getrusage's ru_maxrss)
};

// Where a child's standard output goes.
enum class Stdout {
  kCaptured,    // into ProcessResult::output, interleaved with stderr
  kReaderGone,  // a pipe whose read end is already closed (`faucet ... | true`); output has stderr
};

class Process {
 public:
  // Starts `argv` with the current environment plus `env` (empty value = unset), and SIGPIPE at
  // its default disposition, as a shell starts it, whatever this process ignores.
  Process(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
          Stdout out = Stdout::kCaptured);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  void Kill(int sig);
  // What the child has written so far (as ProcessResult::output), readable while it runs.
  std::string Output() const;
  // Waits for the exit and collects the output.
  ProcessResult Wait();

 private:
  pid_t pid_ = -1;
  std::string output_path_;
  bool waited_ = false;
};

// Starts and waits.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env = {},
                         Stdout out = Stdout::kCaptured);

}  // namespace faucet::testing
