// Connection URLs of the throwaway servers scripts/services.sh starts for the tests.
#pragma once

#include <string>

namespace faucet::testing {

// The value of environment variable `name` (FAUCET_TEST_PG_URL, FAUCET_TEST_MYSQL_URL,
// FAUCET_TEST_REDIS_URL, ...). A test that needs a server must fail, not skip, when it is
// missing: this aborts with a message saying to run the tests through `make test`.
std::string RequireEnv(const char* name);

// A name unique within this machine and run ("<prefix>_<pid>_<counter>"), for databases,
// tables, slots and state keys, so tests never collide.
std::string UniqueName(const std::string& prefix);

// How much longer than usual a deadline of a test should be: FAUCET_TEST_TIME_SCALE (a whole
// number, default 1), which the sanitizer runs of scripts/check.sh set because instrumented
// binaries are several times slower. Deadlines, and the pace of a load the code under test must
// keep up with; a fixed duration of load stays as it is.
int TimeScale();

// A fresh empty directory under $TMPDIR, removed by nobody (tests leave it for inspection).
std::string TempDir(const std::string& prefix);

}  // namespace faucet::testing
