#include "testing/services.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace faucet::testing {

int TimeScale() {
  const char* v = std::getenv("FAUCET_TEST_TIME_SCALE");
  const int scale = v == nullptr ? 1 : std::atoi(v);
  return scale < 1 ? 1 : scale;
}

std::string RequireEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    std::fprintf(stderr,
                 "%s is not set: run the tests through `make test`, which starts the servers "
                 "with scripts/services.sh\n",
                 name);
    std::abort();
  }
  return v;
}

std::string UniqueName(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
}

std::string TempDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::filesystem::path dir =
      std::filesystem::path(tmp ? tmp : "/tmp") / ("faucet-test-" + UniqueName(prefix));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace faucet::testing
