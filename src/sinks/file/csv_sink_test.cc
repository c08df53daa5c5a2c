#include "sinks/file/csv_sink.h"

#include <gtest/gtest.h>

#include "sinks/file/test_util.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet {
namespace {

using testing::ConfigBlock;
using testing::ItemsPage;
using testing::ReadAll;
using testing::RecordingFileSystem;
using testing::TempDir;
using testing::WriteAll;

CsvSinkOptions Options(const std::string& path) {
  CsvSinkOptions o;
  o.path = path;
  return o;
}

void RunOnce(const CsvSinkOptions& options, bool resuming, const Page& page) {
  CsvSink sink(options);
  ASSERT_OK(sink.Open(resuming));
  ASSERT_OK(sink.Write(page));
  ASSERT_OK(sink.Flush());
}

// One row of a relation with a single text column "v" whose cell is `cell`.
Page TextPage(Cell cell) {
  auto r = std::make_shared<Relation>();
  r->columns = {{"v", ValueType::kText}};
  Change c;
  c.relation = r;
  c.after = Row{std::move(cell)};
  Page page;
  page.changes.push_back(std::move(c));
  return page;
}

TEST(CsvSink, WritesHeaderThenRecords) {
  std::string path = TempDir("file_sink") + "/out.csv";
  RunOnce(Options(path), false, ItemsPage(1, 2));
  EXPECT_EQ(ReadAll(path), "id,name\n1,n1\n2,n2\n");
}

TEST(CsvSink, HeaderIsWrittenOnceAcrossRuns) {
  std::string path = TempDir("file_sink") + "/out.csv";
  RunOnce(Options(path), false, ItemsPage(1, 1));
  RunOnce(Options(path), /*resuming=*/true, ItemsPage(2, 1));
  CsvSinkOptions append = Options(path);
  append.append = true;
  RunOnce(append, false, ItemsPage(3, 1));
  EXPECT_EQ(ReadAll(path), "id,name\n1,n1\n2,n2\n3,n3\n");
}

TEST(CsvSink, ResumingRunCutsOffATornRecordAndRewritesATornHeader) {
  std::string path = TempDir("file_sink") + "/out.csv";
  WriteAll(path, "id,name\n1,n1\n2,\"n");
  RunOnce(Options(path), /*resuming=*/true, ItemsPage(2, 1));
  EXPECT_EQ(ReadAll(path), "id,name\n1,n1\n2,n2\n");

  WriteAll(path, "id,na");  // torn in the header: the file holds no record
  RunOnce(Options(path), /*resuming=*/true, ItemsPage(1, 1));
  EXPECT_EQ(ReadAll(path), "id,name\n1,n1\n");
}

TEST(CsvSink, AppendToAnEmptyFileWritesTheHeader) {
  std::string path = TempDir("file_sink") + "/out.csv";
  WriteAll(path, "");
  CsvSinkOptions append = Options(path);
  append.append = true;
  RunOnce(append, false, ItemsPage(1, 1));
  EXPECT_EQ(ReadAll(path), "id,name\n1,n1\n");
}

TEST(CsvSink, FreshRunWithoutAppendTruncatesAndWritesTheHeader) {
  std::string path = TempDir("file_sink") + "/out.csv";
  WriteAll(path, "id,name\n9,n9\n");
  RunOnce(Options(path), false, ItemsPage(1, 1));
  EXPECT_EQ(ReadAll(path), "id,name\n1,n1\n");
}

TEST(CsvSink, WriteHeadersFalseWritesNoHeader) {
  std::string path = TempDir("file_sink") + "/out.csv";
  CsvSinkOptions o = Options(path);
  o.write_headers = false;
  RunOnce(o, false, ItemsPage(1, 1));
  EXPECT_EQ(ReadAll(path), "1,n1\n");
}

TEST(CsvSink, FieldsAreQuotedPerRfc4180) {
  std::string path = TempDir("file_sink") + "/out.csv";
  CsvSinkOptions o = Options(path);
  o.write_headers = false;
  CsvSink sink(o);
  ASSERT_OK(sink.Open(false));
  for (const char* text : {"a,b", "say \"hi\"", "two\nlines", "cr\rhere", "plain", " spaced "}) {
    ASSERT_OK(sink.Write(TextPage(Cell::Value(text))));
  }
  ASSERT_OK(sink.Flush());
  EXPECT_EQ(ReadAll(path),
            "\"a,b\"\n\"say \"\"hi\"\"\"\n\"two\nlines\"\n\"cr\rhere\"\nplain\n spaced \n");
}

TEST(CsvSink, NullIsEmptyAndEmptyStringIsQuoted) {
  std::string path = TempDir("file_sink") + "/out.csv";
  CsvSinkOptions o = Options(path);
  o.write_headers = false;
  CsvSink sink(o);
  ASSERT_OK(sink.Open(false));
  ASSERT_OK(sink.Write(TextPage(Cell::Null())));
  ASSERT_OK(sink.Write(TextPage(Cell::Value(""))));
  ASSERT_OK(sink.Write(TextPage(Cell::UnchangedToast())));
  ASSERT_OK(sink.Flush());
  EXPECT_EQ(ReadAll(path), "\n\"\"\n\n");
}

TEST(CsvSink, CustomDelimiterIsUsedAndQuoted) {
  std::string path = TempDir("file_sink") + "/out.csv";
  CsvSinkOptions o = Options(path);
  o.delimiter = ';';
  Page page = ItemsPage(1, 1);
  page.changes[0].after->at(1) = Cell::Value("a;b,c");
  RunOnce(o, false, page);
  EXPECT_EQ(ReadAll(path), "id;name\n1;\"a;b,c\"\n");
}

TEST(CsvSink, BoolsAreTrueOrFalse) {
  std::string path = TempDir("file_sink") + "/out.csv";
  auto r = std::make_shared<Relation>();
  r->columns = {{"a", ValueType::kBool}, {"b", ValueType::kBool}, {"t", ValueType::kText}};
  Change c;
  c.relation = r;
  c.after = Row{Cell::Value("t"), Cell::Value("f"), Cell::Value("t")};
  Page page;
  page.changes.push_back(c);
  RunOnce(Options(path), false, page);
  EXPECT_EQ(ReadAll(path), "a,b,t\ntrue,false,t\n");
}

TEST(CsvSink, DeleteWritesBeforeAndTruncateWritesNothing) {
  std::string path = TempDir("file_sink") + "/out.csv";
  Page page = ItemsPage(1, 3);
  page.changes[1].op = ChangeOp::kDelete;
  page.changes[1].before = std::move(page.changes[1].after);
  page.changes[1].after.reset();
  page.changes[2].op = ChangeOp::kTruncate;
  page.changes[2].after.reset();
  RunOnce(Options(path), false, page);
  EXPECT_EQ(ReadAll(path), "id,name\n1,n1\n2,n2\n");
}

TEST(CsvSink, RowsWithOtherColumnsThanTheHeaderFail) {
  std::string path = TempDir("file_sink") + "/out.csv";
  CsvSink sink(Options(path));
  ASSERT_OK(sink.Open(false));
  ASSERT_OK(sink.Write(ItemsPage(1, 1)));
  Status st = sink.Write(TextPage(Cell::Value("x")));
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
}

TEST(CsvSink, AnotherRelationWithTheSameColumnsIsAccepted) {
  std::string path = TempDir("file_sink") + "/out.csv";
  CsvSink sink(Options(path));
  ASSERT_OK(sink.Open(false));
  ASSERT_OK(sink.Write(ItemsPage(1, 1)));
  ASSERT_OK(sink.Write(ItemsPage(2, 1)));  // a new but equal Relation
  ASSERT_OK(sink.Flush());
  EXPECT_EQ(ReadAll(path), "id,name\n1,n1\n2,n2\n");
}

TEST(CsvSink, WriteDoesNotSyncAndFlushDoes) {
  std::string path = TempDir("file_sink") + "/out.csv";
  RecordingFileSystem fs;
  CsvSink sink(Options(path), fs);
  ASSERT_OK(sink.Open(false));
  ASSERT_OK(sink.Write(ItemsPage(1, 2)));
  EXPECT_EQ(fs.syncs, 0);
  ASSERT_OK(sink.Flush());
  EXPECT_EQ(fs.syncs, 1);
  EXPECT_EQ(ReadAll(path), "id,name\n1,n1\n2,n2\n");
}

TEST(CsvSinkOptions, ReadsEveryKey) {
  config::Block cfg = ConfigBlock(
      "{path: out.csv, delimiter: \"\\t\", write_headers: false, append: true, batch_size: 10}");
  Result<CsvSinkOptions> o = CsvSinkOptions::FromConfig(cfg);
  ASSERT_OK(o);
  EXPECT_EQ(o->path, "out.csv");
  EXPECT_EQ(o->delimiter, '\t');
  EXPECT_FALSE(o->write_headers);
  EXPECT_TRUE(o->append);
  EXPECT_TRUE(cfg.UnreadKeys().empty());
}

TEST(CsvSinkOptions, Defaults) {
  Result<CsvSinkOptions> o = CsvSinkOptions::FromConfig(ConfigBlock("{path: out.csv}"));
  ASSERT_OK(o);
  EXPECT_EQ(o->delimiter, ',');
  EXPECT_TRUE(o->write_headers);
  EXPECT_FALSE(o->append);
}

TEST(MakeCsvSink, ConfigErrorsNameTheKey) {
  for (auto [yaml, key] : std::vector<std::pair<std::string, std::string>>{
           {"{delimiter: ','}", "sink.config.path"},
           {"{path: out.csv, delimiter: ';;'}", "sink.config.delimiter"},
           {"{path: out.csv, delimiter: '\"'}", "sink.config.delimiter"},
           {"{path: out.csv, write_headers: 3}", "sink.config.write_headers"},
           {"{path: out.csv, append: yes please}", "sink.config.append"},
       }) {
    Result<std::unique_ptr<Sink>> sink = MakeCsvSink(ConfigBlock(yaml));
    ASSERT_FALSE(sink.ok()) << yaml;
    EXPECT_EQ(sink.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(sink.status().message().find("pipe.yaml:1:"), std::string::npos)
        << sink.status().message();
    EXPECT_NE(sink.status().message().find(key), std::string::npos) << sink.status().message();
  }
}

}  // namespace
}  // namespace faucet
