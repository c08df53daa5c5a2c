#include "sinks/file/stdout_sink.h"

#include <gtest/gtest.h>

#include "sinks/file/test_util.h"
#include "testing/status_matchers.h"

namespace faucet {
namespace {

TEST(StdoutSink, WritesOneJsonLinePerChangeByFlush) {
  StdoutSink sink;
  ASSERT_OK(sink.Open(false));
  ::testing::internal::CaptureStdout();
  Status write = sink.Write(testing::ItemsPage(1, 2));
  Status flush = sink.Flush();
  std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_OK(write);
  ASSERT_OK(flush);
  EXPECT_EQ(out, "{\"id\":1,\"name\":\"n1\"}\n{\"id\":2,\"name\":\"n2\"}\n");
}

TEST(MakeStdoutSink, ReadsNoKeys) {
  config::Block cfg = testing::ConfigBlock("{}");
  EXPECT_OK(MakeStdoutSink(cfg));
}

}  // namespace
}  // namespace faucet
