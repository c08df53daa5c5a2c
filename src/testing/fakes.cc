#include "testing/fakes.h"

namespace faucet::testing {

Status FakeSource::Open(const std::optional<Bookmark>& start) {
  opened_at = start;
  return Status::Ok();
}

Result<SourceEvent> FakeSource::Next(std::chrono::milliseconds) {
  if (next_ < pages_.size()) {
    SourceEvent e{SourceEvent::Kind::kPage, std::move(pages_[next_])};
    ++next_;
    return e;
  }
  if (!read_token_of.empty() && token_reader) {
    Result<std::optional<std::string>> token = token_reader(read_token_of);
    if (!token.ok()) return token.status();
    token_read = *token;
  }
  if (!final_error.ok()) return final_error;
  return SourceEvent{SourceEvent::Kind::kEnd, {}};
}

Status FakeSource::Acknowledge(const Bookmark& durable) {
  MutexLock lock(mu_);
  acknowledged_.push_back(durable);
  return acknowledge_error;
}

std::vector<Bookmark> FakeSource::Acknowledged() {
  MutexLock lock(mu_);
  return acknowledged_;
}

Status FakeSink::Open(bool resuming) {
  opened_resuming = resuming;
  return Status::Ok();
}

Status FakeSink::Write(const Page& page) {
  if (writes_++ == fail_write_at) return Unavailable("injected write failure");
  log->push_back(prefix + "write:" + std::to_string(page.changes.size()));
  rows_written += page.changes.size();
  return Status::Ok();
}

Status FakeSink::Flush() {
  if (fail_flush) return Unavailable("injected flush failure");
  log->push_back(prefix + "flush");
  rows_flushed = rows_written;
  return Status::Ok();
}

Status FakeSink::WriteIdempotent(const Page& page, const std::string& scope,
                                 const std::string& token) {
  log->push_back(prefix + "write_idempotent:" + token);
  rows_written += page.changes.size();
  tokens[scope] = token;
  return Status::Ok();
}

Status FakeSink::WriteIsolating(const Page& page, std::vector<RejectedRow>* rejected) {
  if (fail_isolating) return Unavailable("injected page failure");
  size_t kept = 0;
  for (size_t i = 0; i < page.changes.size(); ++i) {
    if (reject.count(i)) {
      rejected->push_back({i, InvalidArgument("injected rejection of row " + std::to_string(i))});
    } else {
      ++kept;
    }
  }
  log->push_back(prefix + "write_isolating:" + std::to_string(kept));
  rows_written += kept;
  return Status::Ok();
}

Result<std::optional<std::string>> FakeSink::CommittedToken(const std::string& scope) {
  auto it = tokens.find(scope);
  if (it == tokens.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Result<std::optional<Json>> FakeStateStore::Get(const std::string& key) {
  auto it = values.find(key);
  if (it == values.end()) return std::optional<Json>();
  return std::optional<Json>(it->second);
}

Status FakeStateStore::Put(const std::string& key, const Json& value) {
  if (call_log) call_log->push_back("put");
  if (fail_put) return Unavailable("injected put failure");
  values[key] = value;
  return Status::Ok();
}

Status FakeStateStore::Delete(const std::string& key) {
  values.erase(key);
  return Status::Ok();
}

Page MakePage(int rows, std::optional<Json> bookmark) {
  static const RelationPtr kRelation = std::make_shared<Relation>(
      Relation{1, "public", "t", {Column{"id", ValueType::kInt, 20, -1, true}}});
  Page page;
  for (int i = 0; i < rows; ++i) {
    Change c;
    c.op = ChangeOp::kInsert;
    c.relation = kRelation;
    c.after = Row{Cell::Value(std::to_string(i + 1))};
    page.changes.push_back(std::move(c));
  }
  if (bookmark) page.bookmark = Bookmark{*bookmark};
  return page;
}

}  // namespace faucet::testing
