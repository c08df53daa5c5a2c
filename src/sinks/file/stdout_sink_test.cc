#include "sinks/file/stdout_sink.h"

#include <gtest/gtest.h>

#include "sinks/file/test_util.h"

namespace faucet {
namespace {

TEST(StdoutSink, WritesOneJsonLinePerChangeByFlush) {
  StdoutSink sink;
  ASSERT_TRUE(sink.Open(false).ok());
  ::testing::internal::CaptureStdout();
  Status write = sink.Write(testing::ItemsPage(1, 2));
  Status flush = sink.Flush();
  std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(write.ok());
  ASSERT_TRUE(flush.ok());
  EXPECT_EQ(out, "{\"id\":1,\"name\":\"n1\"}\n{\"id\":2,\"name\":\"n2\"}\n");
}

TEST(MakeStdoutSink, ReadsNoKeys) {
  config::Block cfg = testing::ConfigBlock("{}");
  EXPECT_TRUE(MakeStdoutSink(cfg).ok());
}

}  // namespace
}  // namespace faucet
