// Slot control and the doctor against a real server: a busy slot is retried, a slot ahead of
// the bookmark is a typed resync error, CapturePosition creates and reports the slot, DropSlot
// removes it, missing things are named, secrets stay out of errors, the doctor reports what a
// pipeline needs, and the stream's reader takes a queued burst whole and knows when one waits.
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <thread>

#include "core/pipeline.h"
#include "sources/postgres/doctor.h"
#include "sources/postgres/pg_test_support.h"
#include "sources/postgres/postgres_cdc_source.h"
#include "sources/postgres/slot.h"
#include "sources/postgres/walsender_protocol.h"
#include "testing/services.h"
#include "testing/status_matchers.h"
#include "testing/wait.h"

namespace faucet::postgres {
namespace {

using namespace std::chrono_literals;
using testing::CollectingSink;
using testing::LockedStateStore;
using testing::TestDb;

class PostgresSlotTest : public testing::CdcTest {
 protected:
  void SetUp() override {
    Name("slot");
    Publish("id int PRIMARY KEY");
  }

  Bookmark Capture() {
    PostgresCdcSource source(config_);
    Result<Bookmark> p = source.CapturePosition();
    EXPECT_OK(p);
    return p.ok() ? *p : Bookmark{};
  }

  // A replication connection streaming the slot (protocol 1), or an error.
  Result<ConnPtr> StartReplication() {
    ASSIGN_OR_RETURN(ConnPtr conn,
                     Connect(config_.connection_url, config_.tls, ConnectionKind::kReplication));
    RETURN_IF_ERROR(Exec(conn.get(),
                         "START_REPLICATION SLOT \"" + slot_ +
                             "\" LOGICAL 0/0 (proto_version '1', publication_names '\"" +
                             publication_ + "\"')",
                         "starting replication", PGRES_COPY_BOTH)
                        .status());
    return conn;
  }
};

TEST_F(PostgresSlotTest, CapturePositionCreatesAPermanentSlotAndReturnsItsConfirmedPosition) {
  ASSERT_FALSE(db_.ConfirmedFlush(slot_).has_value());
  Bookmark p = Capture();
  std::optional<Lsn> confirmed = db_.ConfirmedFlush(slot_);
  ASSERT_TRUE(confirmed.has_value());
  EXPECT_EQ(p.value, (Json{{"last_lsn", confirmed->ToString()}}));
  EXPECT_EQ(
      db_.Scalar("SELECT temporary FROM pg_replication_slots WHERE slot_name = '" + slot_ + "'"),
      "f");
  // Captured again later, it is still the slot's position, not the current WAL end.
  db_.Exec("INSERT INTO " + table_ + " VALUES (1)");
  EXPECT_EQ(Capture(), p);
}

// A slot another session is still creating when its creator dies (e.g. a mirror SIGKILLed
// while it bootstraps): the server drops it once that session ends. CapturePosition must not
// take the half-made slot's restart_lsn as a position, but wait and create the slot anew.
TEST_F(PostgresSlotTest, CapturePositionWaitsOutASlotWhoseCreatorDies) {
  // A write transaction in flight makes slot creation wait for it.
  TestDb writer;
  writer.Exec("BEGIN");
  writer.Exec("INSERT INTO " + table_ + " VALUES (1)");
  std::thread creator([this] {
    Result<ExportedSnapshot> made = CreateSlotWithSnapshot(config_);
    EXPECT_FALSE(made.ok()) << "its session is terminated while it waits";
  });
  ASSERT_TRUE(faucet::testing::WaitFor(
      [&] {
        return db_.Scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" +
                          slot_ + "' AND confirmed_flush_lsn IS NULL AND active_pid IS NOT NULL") ==
               "1";
      },
      10s, "the slot to be half made"));
  Result<Bookmark> captured = Internal("not captured");
  std::thread capture([&] {
    PostgresCdcSource source(config_);
    captured = source.CapturePosition();
  });
  std::this_thread::sleep_for(500ms);  // the capture is waiting on the half-made slot
  db_.Exec("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '" +
           slot_ + "'");
  creator.join();
  writer.Exec("COMMIT");
  capture.join();
  ASSERT_OK(captured);
  std::optional<Lsn> confirmed = db_.ConfirmedFlush(slot_);
  ASSERT_TRUE(confirmed.has_value()) << "the capture created the slot again";
  EXPECT_EQ(captured->value, (Json{{"last_lsn", confirmed->ToString()}}));
}

TEST_F(PostgresSlotTest, CapturePositionRefusesATemporarySlot) {
  config_.temporary_slot = true;
  PostgresCdcSource source(config_);
  EXPECT_EQ(source.CapturePosition().status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(PostgresSlotTest, MissingSlotWithoutCreateIsNotFound) {
  config_.create_slot_if_missing = false;
  PostgresCdcSource source(config_);
  Status s = source.Open(std::nullopt);
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find(slot_), std::string::npos);
  EXPECT_FALSE(db_.ConfirmedFlush(slot_).has_value());
}

TEST_F(PostgresSlotTest, MissingPublicationIsNotFound) {
  config_.publication_name = "no_such_publication";
  PostgresCdcSource source(config_);
  Status s = source.Open(std::nullopt);
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find("no_such_publication"), std::string::npos);
}

TEST_F(PostgresSlotTest, UnreachableServerIsUnavailableWithoutThePassword) {
  config_.connection_url = "postgres://faucet:sekret@127.0.0.1:1/faucet";
  PostgresCdcSource source(config_);
  Status s = source.Open(std::nullopt);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_EQ(s.message().find("sekret"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("faucet:***@"), std::string::npos) << s.message();
}

TEST_F(PostgresSlotTest, TlsModeIsAppliedToTheConnection) {
  // The test server has no TLS: `require` must refuse it, `disable` must work.
  config_.tls.mode = PostgresTlsMode::kRequire;
  Status s = PostgresCdcSource(config_).Open(std::nullopt);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("SSL"), std::string::npos) << s.message();
  config_.tls.mode = PostgresTlsMode::kDisable;
  EXPECT_OK(PostgresCdcSource(config_).Open(std::nullopt));
}

TEST_F(PostgresSlotTest, ActiveSlotIsRetriedUntilItsHolderLetsGo) {
  Capture();
  auto holder = std::make_unique<PostgresCdcSource>(config_);
  ASSERT_OK(holder->Open(std::nullopt));
  {
    // Few retries: gives up with kUnavailable naming the cause.
    PostgresCdcConfig impatient = config_;
    impatient.slot_acquire_retries = 1;
    PostgresCdcSource source(impatient);
    auto start = std::chrono::steady_clock::now();
    Status s = source.Open(std::nullopt);
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
    EXPECT_NE(s.message().find("active"), std::string::npos) << s.message();
    EXPECT_GE(std::chrono::steady_clock::now() - start, 250ms);
  }
  std::thread release([&] {
    // A fixed hold: the open below must keep retrying for all of it.
    std::this_thread::sleep_for(700ms);
    holder.reset();
  });
  PostgresCdcSource source(config_);
  auto start = std::chrono::steady_clock::now();
  Status s = source.Open(std::nullopt);
  release.join();
  EXPECT_OK(s);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 700ms);
}

TEST_F(PostgresSlotTest, SlotAheadOfTheBookmarkNeedsAResync) {
  const Bookmark old = Capture();
  db_.Exec("INSERT INTO " + table_ + " VALUES (1)");
  {
    PostgresCdcSource source(config_);
    CollectingSink sink;
    LockedStateStore state;
    PipelineOptions options;
    options.state_key = "pgtest::" + slot_;
    Pipeline pipeline(source, {}, sink, state, options);
    ASSERT_OK(pipeline.Run());
  }
  const Lsn old_lsn = *Lsn::Parse(old.value["last_lsn"].get<std::string>());
  ASSERT_TRUE(faucet::testing::WaitFor([&] { return db_.ConfirmedFlush(slot_) != old_lsn; }, 5s,
                                       "the slot to move past " + old_lsn.ToString()));
  // A state store restored from an old backup: the slot has moved past it.
  PostgresCdcSource source(config_);
  Status s = source.Open(old);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("resync"), std::string::npos) << s.message();
}

TEST_F(PostgresSlotTest, RecreatedSlotIsAheadOfAnyEarlierBookmark) {
  const Bookmark old = Capture();
  ASSERT_OK(DropSlot(config_));
  db_.Exec("INSERT INTO " + table_ + " VALUES (1)");  // lost with the slot
  PostgresCdcSource source(config_);
  Status s = source.Open(old);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
}

TEST_F(PostgresSlotTest, MalformedBookmarkIsDataLoss) {
  Capture();
  PostgresCdcSource source(config_);
  EXPECT_EQ(source.Open(Bookmark{Json{{"file", "binlog.1"}}}).code(), StatusCode::kDataLoss);
}

TEST_F(PostgresSlotTest, DropSlotRemovesItAndAMissingSlotIsNotFound) {
  Capture();
  ASSERT_TRUE(db_.ConfirmedFlush(slot_).has_value());
  Status s = DropSlot(config_);
  EXPECT_OK(s);
  EXPECT_FALSE(db_.ConfirmedFlush(slot_).has_value());
  EXPECT_EQ(DropSlot(config_).code(), StatusCode::kNotFound);
}

TEST_F(PostgresSlotTest, TemporarySlotLivesOnlyAsLongAsTheSession) {
  config_.temporary_slot = true;
  db_.Exec("INSERT INTO " + table_ + " VALUES (1)");
  {
    PostgresCdcSource source(config_);
    ASSERT_OK(source.Open(std::nullopt));
    EXPECT_EQ(
        db_.Scalar("SELECT temporary FROM pg_replication_slots WHERE slot_name = '" + slot_ + "'"),
        "t");
    db_.Exec("INSERT INTO " + table_ + " VALUES (2)");
    auto pages = testing::ReadPages(
        source, [](auto& p) { return testing::CountChanges(p) >= 1; }, 10s);
    // Only what was written after the slot existed.
    ASSERT_EQ(testing::CountChanges(pages), 1u);
  }
  EXPECT_TRUE(faucet::testing::WaitFor([&] { return !db_.ConfirmedFlush(slot_).has_value(); }, 5s,
                                       "the temporary slot to go with its session"));
}

TEST_F(PostgresSlotTest, ProtocolVersionOneStreamsWholeTransactions) {
  config_.proto_version = 1;
  Capture();
  db_.Exec("INSERT INTO " + table_ + " SELECT generate_series(1, 3000)");
  PostgresCdcSource source(config_);
  ASSERT_OK(source.Open(std::nullopt));
  auto pages = testing::ReadPages(
      source, [](auto& p) { return testing::CountChanges(p) >= 3000; }, 15s);
  EXPECT_EQ(testing::CountChanges(pages), 3000u);
  EXPECT_EQ(source.stats().streamed_transactions, 0u);
  std::vector<const Page*> chunks;
  for (const Page& p : pages) {
    if (!p.changes.empty()) chunks.push_back(&p);
  }
  ASSERT_EQ(chunks.size(), 3u) << "3000 rows in chunks of batch_size 1000";
  EXPECT_FALSE(chunks[0]->bookmark.has_value());
  EXPECT_FALSE(chunks[1]->bookmark.has_value());
  EXPECT_TRUE(chunks[2]->bookmark.has_value());
}

const DoctorCheck* Find(const DoctorReport& r, const std::string& name) {
  for (const DoctorCheck& c : r.checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

TEST_F(PostgresSlotTest, DoctorReportsAHealthySetup) {
  Capture();
  Result<DoctorReport> r = RunDoctor(config_);
  ASSERT_OK(r);
  EXPECT_TRUE(r->ok()) << r->ToText();
  for (const char* name : {"connection", "replication_connection", "server_version", "wal_level",
                           "replication_privilege", "publication", "replica_identity",
                           "max_slot_wal_keep_size", "slot", "slot_lag"}) {
    const DoctorCheck* c = Find(*r, name);
    ASSERT_NE(c, nullptr) << name << "\n" << r->ToText();
    EXPECT_EQ(c->outcome, DoctorOutcome::kOk) << name << ": " << c->detail;
  }
  EXPECT_NE(Find(*r, "publication")->detail.find(table_), std::string::npos);
  EXPECT_NE(Find(*r, "slot_lag")->detail.find("bytes"), std::string::npos);
  EXPECT_EQ(r->ToJson()["ok"], true);
  EXPECT_EQ(r->ToJson()["checks"][0]["check"], "connection");
  EXPECT_EQ(r->ToText().find("faucet:faucet@"), std::string::npos) << r->ToText();
  std::printf("%s", r->ToText().c_str());
}

TEST_F(PostgresSlotTest, DoctorWarnsAboutATableWithoutPrimaryKeyAndFailsOnAMissingPublication) {
  const std::string bare = faucet::testing::UniqueName("slot_bare");
  db_.Exec("CREATE TABLE " + bare + " (x int)");
  db_.Exec("ALTER PUBLICATION " + publication_ + " ADD TABLE " + bare);
  Result<DoctorReport> r = RunDoctor(config_);
  ASSERT_OK(r);
  const DoctorCheck* ri = Find(*r, "replica_identity");
  ASSERT_NE(ri, nullptr);
  EXPECT_EQ(ri->outcome, DoctorOutcome::kWarn);
  EXPECT_NE(ri->detail.find(bare), std::string::npos) << ri->detail;
  EXPECT_EQ(ri->detail.find(table_ + " "), std::string::npos) << ri->detail;
  EXPECT_EQ(Find(*r, "slot")->outcome, DoctorOutcome::kWarn) << "not created yet";
  EXPECT_TRUE(r->ok());

  config_.publication_name = "no_such_publication";
  r = RunDoctor(config_);
  ASSERT_OK(r);
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(Find(*r, "publication")->outcome, DoctorOutcome::kFail);
  EXPECT_EQ(r->ToJson()["ok"], false);
}

TEST_F(PostgresSlotTest, DoctorReportsAnUnreachableServerAsAFailedCheck) {
  config_.connection_url = "postgres://faucet:sekret@127.0.0.1:1/faucet";
  Result<DoctorReport> r = RunDoctor(config_);
  ASSERT_OK(r);
  ASSERT_EQ(r->checks.size(), 1u);
  EXPECT_EQ(r->checks[0].outcome, DoctorOutcome::kFail);
  EXPECT_EQ(r->ToText().find("sekret"), std::string::npos);
}

TEST_F(PostgresSlotTest, ReadAvailableTakesAllTheSocketHoldsIntoLibpq) {
  // A burst queued in the socket is in libpq's buffer after one ReadAvailable, where one
  // PQconsumeInput takes at most libpq's free buffer space (16 KiB at first).
  CreateSlot();
  db_.Exec("INSERT INTO " + table_ + " SELECT g FROM generate_series(1, 50000) g");
  Result<ConnPtr> conn = StartReplication();
  ASSERT_OK(conn);
  PGconn* c = conn->get();
  int queued = 0;
  constexpr int kBurst = 40 << 10;
  ASSERT_TRUE(faucet::testing::WaitFor(
      [&] { return ioctl(PQsocket(c), FIONREAD, &queued) == 0 && queued >= kBurst; }, 30s,
      "the server to queue 40 KiB of the stream"))
      << queued << " bytes queued";

  ASSERT_TRUE(ReadAvailable(c)) << PQerrorMessage(c);
  // What libpq holds now, read without touching the socket: every complete message (its
  // CopyData frame is 5 bytes more) of at least the bytes queued before the call.
  size_t buffered = 0;
  char* message = nullptr;
  int n = 0;
  while ((n = PQgetCopyData(c, &message, /*async=*/1)) > 0) {
    buffered += static_cast<size_t>(n) + 5;
    PQfreemem(message);
  }
  EXPECT_EQ(n, 0) << PQerrorMessage(c);
  // At most one message (a few dozen bytes here) may be cut at the end of what was queued.
  EXPECT_GE(buffered + 256, static_cast<size_t>(queued));
}

TEST_F(PostgresSlotTest, BurstQueuedOnceAQuarterOfTheReceiveBufferOrAMebibyteWaits) {
  // A reader naps rather than read a socket holding less than a burst, and reads at once a
  // socket holding one: kReadBurstBytes, or a quarter of its receive buffer, the most a reader
  // that has fallen behind can find queued.
  CreateSlot();
  Result<ConnPtr> conn = StartReplication();
  ASSERT_OK(conn);
  PGconn* c = conn->get();
  // Nothing to send yet: at most a keepalive queued.
  EXPECT_FALSE(BurstQueued(c));

  db_.Exec("INSERT INTO " + table_ + " SELECT g FROM generate_series(1, 50000) g");
  int queued = 0;
  int buffer = 0;
  auto measure = [&] {
    socklen_t size = sizeof buffer;
    return ioctl(PQsocket(c), FIONREAD, &queued) == 0 &&
           getsockopt(PQsocket(c), SOL_SOCKET, SO_RCVBUF, &buffer, &size) == 0;
  };
  // Nothing is read, so the socket fills up to its receive buffer (which stays small).
  ASSERT_TRUE(faucet::testing::WaitFor([&] { return BurstQueued(c); }, 30s,
                                       "a burst to queue in the socket"))
      << (measure()
              ? std::to_string(queued) + " bytes queued, receive buffer " + std::to_string(buffer)
              : "FIONREAD failed");
  // The quarter of the buffer said yes: a mebibyte never queues in a buffer this small.
  ASSERT_TRUE(measure());
  EXPECT_LT(static_cast<size_t>(queued), kReadBurstBytes) << "receive buffer " << buffer;
}

}  // namespace
}  // namespace faucet::postgres
