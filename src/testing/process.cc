#include "testing/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "testing/services.h"

namespace faucet::testing {

Process::Process(const std::vector<std::string>& argv,
                 const std::map<std::string, std::string>& env, Stdout out) {
  output_path_ = TempDir("proc") + "/output";
  // kReaderGone: the read end is closed before the child exists, so no write can ever succeed.
  int pipe_fds[2] = {-1, -1};
  if (out == Stdout::kReaderGone) {
    if (pipe(pipe_fds) != 0) std::abort();
    close(pipe_fds[0]);
  }
  pid_ = fork();
  if (pid_ == 0) {
    int fd = open(output_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out == Stdout::kReaderGone ? pipe_fds[1] : fd, 1);
    dup2(fd, 2);
    close(fd);
    if (out == Stdout::kReaderGone) close(pipe_fds[1]);
    // An ignored signal stays ignored across exec: undo whatever this test process ignores.
    signal(SIGPIPE, SIG_DFL);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    for (const auto& [k, v] : env) {
      if (v.empty())
        unsetenv(k.c_str());
      else
        setenv(k.c_str(), v.c_str(), 1);
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  if (out == Stdout::kReaderGone) close(pipe_fds[1]);
}

Process::~Process() {
  if (!waited_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

void Process::Kill(int sig) { kill(pid_, sig); }

std::string Process::Output() const {
  std::ifstream in(output_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ProcessResult Process::Wait() {
  ProcessResult r;
  int status = 0;
  rusage usage{};
  wait4(pid_, &status, 0, &usage);
  waited_ = true;
  r.peak_rss_kib = usage.ru_maxrss;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.output = Output();
  return r;
}

ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env, Stdout out) {
  Process p(argv, env, out);
  return p.Wait();
}

}  // namespace faucet::testing
