#include "sources/postgres/pgoutput.h"

#include <cstring>

#include "core/text.h"
#include "sources/postgres/pg_types.h"

namespace faucet::postgres {
namespace {

// Big-endian reads with a sticky failure: after the first out-of-bounds read every further read
// yields zero and the error names the first offset that failed. Error text is built only on
// failure: this runs once per row.
class Reader {
 public:
  // Reads `data` from `start`; offsets in errors count from the beginning of `data`.
  // With `copy_values` false, tuple values are checked and skipped, not copied.
  Reader(std::string_view data, size_t start, bool copy_values)
      : data_(data), pos_(start), copy_values_(copy_values) {}

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  StatusCode code() const { return code_; }
  size_t offset() const { return pos_; }
  size_t remaining() const { return failed() ? 0 : data_.size() - pos_; }
  bool copy_values() const { return copy_values_; }

  void Fail(std::string message, StatusCode code = StatusCode::kDataLoss) {
    if (!error_.empty()) return;
    error_ = std::move(message) + " at byte " + std::to_string(pos_);
    code_ = code;
  }

  template <size_t kBytes>
  uint64_t Uint() {
    if (!Need(kBytes, /*value=*/false)) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < kBytes; ++i) v = (v << 8) | static_cast<uint8_t>(data_[pos_ + i]);
    pos_ += kBytes;
    return v;
  }
  uint8_t U8() { return static_cast<uint8_t>(Uint<1>()); }
  uint16_t U16() { return static_cast<uint16_t>(Uint<2>()); }
  uint32_t U32() { return static_cast<uint32_t>(Uint<4>()); }
  int32_t I32() { return static_cast<int32_t>(U32()); }
  uint64_t U64() { return Uint<8>(); }
  int64_t I64() { return static_cast<int64_t>(U64()); }
  Lsn ReadLsn() { return Lsn(U64()); }

  // A NUL-terminated string.
  std::string String() {
    if (failed()) return {};
    const void* nul = std::memchr(data_.data() + pos_, '\0', data_.size() - pos_);
    if (nul == nullptr) {
      Fail("unterminated string");
      return {};
    }
    size_t len = static_cast<const char*>(nul) - (data_.data() + pos_);
    std::string s(data_.substr(pos_, len));
    pos_ += len + 1;
    return s;
  }

  // The next `n` bytes, or an empty view after a failure. The view points into `data`.
  std::string_view Bytes(size_t n) {
    if (!Need(n, /*value=*/true)) return {};
    std::string_view s = data_.substr(pos_, n);
    pos_ += n;
    return s;
  }

 private:
  // True when `n` more bytes are there; `value` says what is read, for the error.
  bool Need(size_t n, bool value) {
    if (!failed() && data_.size() - pos_ >= n) [[likely]]
      return true;
    NeedFailed(n, value);
    return false;
  }

  [[gnu::noinline, gnu::cold]] void NeedFailed(size_t n, bool value) {
    if (failed()) return;
    Fail("message ends inside a " + (value ? std::to_string(n) + "-byte value" : "field") + " (" +
         std::to_string(data_.size()) + " bytes)");
  }

  std::string_view data_;
  size_t pos_;
  bool copy_values_;
  std::string error_;
  StatusCode code_ = StatusCode::kDataLoss;
};

std::string Hex(uint8_t b) {
  std::string out = "0x";
  AppendHex(std::string_view(reinterpret_cast<const char*>(&b), 1), out);
  return out;
}

// TupleData: Int16 column count, then per column a kind byte and, for 't'/'b', Int32 length
// and the bytes. Without copy_values the cells are checked the same way and the row stays empty.
Row ReadTuple(Reader& r) {
  uint16_t n = r.U16();
  Row row;
  // Every cell takes at least its kind byte: a count beyond that is malformed, and checking it
  // first keeps a corrupt count from reserving memory.
  if (n > r.remaining()) {
    r.Fail("tuple claims " + std::to_string(n) + " columns in " + std::to_string(r.remaining()) +
           " bytes");
    return row;
  }
  const bool copy = r.copy_values();
  // One cell more than the tuple: cdc_unwrap appends its marker without reallocating. Cells are
  // built in place, each value constructed from its bytes (not assigned over an empty one).
  if (copy) row.reserve(n + 1);
  for (uint16_t i = 0; i < n && !r.failed(); ++i) {
    char kind = static_cast<char>(r.U8());
    switch (kind) {
      case 'n':
        if (copy) row.emplace_back();
        break;
      case 'u':
        if (copy) row.push_back(Cell::UnchangedToast());
        break;
      case 't': {
        int32_t len = r.I32();
        if (len < 0) {
          r.Fail("negative value length " + std::to_string(len) + " in column " +
                 std::to_string(i + 1));
          break;
        }
        std::string_view value = r.Bytes(static_cast<size_t>(len));
        if (copy && !r.failed()) row.emplace_back(CellState::kValue, value);
        break;
      }
      case 'b':
        r.Fail(
            "binary value in column " + std::to_string(i + 1) + " (binary mode was not requested)",
            StatusCode::kInternal);
        break;
      default:
        if (!r.failed()) {
          r.Fail("unknown tuple cell kind " + Hex(static_cast<uint8_t>(kind)) + " in column " +
                 std::to_string(i + 1));
        }
    }
  }
  return row;
}

// The byte that introduces a tuple: one of `allowed`.
char ReadTupleKind(Reader& r, std::string_view allowed) {
  char c = static_cast<char>(r.U8());
  if (!r.failed() && allowed.find(c) == std::string_view::npos) {
    r.Fail("unexpected tuple marker " + Hex(static_cast<uint8_t>(c)) + " (expected one of '" +
           std::string(allowed) + "')");
  }
  return c;
}

Result<PgoutputMessage> Parse(Reader& r, char tag, bool in_stream) {
  auto xid = [&]() -> uint32_t { return in_stream ? r.U32() : 0; };
  switch (tag) {
    case 'B': {
      BeginMessage m;
      m.final_lsn = r.ReadLsn();
      m.commit_time = r.I64();
      m.xid = r.U32();
      return PgoutputMessage(m);
    }
    case 'C': {
      CommitMessage m;
      r.U8();  // flags, unused
      m.commit_lsn = r.ReadLsn();
      m.end_lsn = r.ReadLsn();
      m.commit_time = r.I64();
      return PgoutputMessage(m);
    }
    case 'O': {
      OriginMessage m;
      m.commit_lsn = r.ReadLsn();
      m.name = r.String();
      return PgoutputMessage(std::move(m));
    }
    case 'R': {
      RelationMessage m;
      m.xid = xid();
      m.relation.id = r.U32();
      m.relation.schema = r.String();
      m.relation.name = r.String();
      m.replica_identity = static_cast<char>(r.U8());
      uint16_t n = r.U16();
      // flags + name NUL + type + typmod: at least 10 bytes per column.
      if (n > r.remaining() / 10) {
        r.Fail("relation claims " + std::to_string(n) + " columns in " +
               std::to_string(r.remaining()) + " bytes");
      }
      m.relation.columns.reserve(r.failed() ? 0 : n);
      for (uint16_t i = 0; i < n && !r.failed(); ++i) {
        Column c;
        c.key = (r.U8() & 1) != 0;
        c.name = r.String();
        c.type_oid = r.U32();
        c.type_modifier = r.I32();
        c.type = ValueTypeForOid(c.type_oid);
        m.relation.columns.push_back(std::move(c));
      }
      return PgoutputMessage(std::move(m));
    }
    case 'Y': {
      TypeMessage m;
      m.xid = xid();
      m.oid = r.U32();
      m.schema = r.String();
      m.name = r.String();
      return PgoutputMessage(std::move(m));
    }
    case 'I': {
      InsertMessage m;
      m.xid = xid();
      m.relation_id = r.U32();
      ReadTupleKind(r, "N");
      m.new_tuple = ReadTuple(r);
      return PgoutputMessage(std::move(m));
    }
    case 'U': {
      UpdateMessage m;
      m.xid = xid();
      m.relation_id = r.U32();
      char kind = ReadTupleKind(r, "KON");
      if (kind == 'K' || kind == 'O') {
        m.old_kind = kind;
        m.old_tuple = ReadTuple(r);
        ReadTupleKind(r, "N");
      }
      m.new_tuple = ReadTuple(r);
      return PgoutputMessage(std::move(m));
    }
    case 'D': {
      DeleteMessage m;
      m.xid = xid();
      m.relation_id = r.U32();
      m.old_kind = ReadTupleKind(r, "KO");
      m.old_tuple = ReadTuple(r);
      return PgoutputMessage(std::move(m));
    }
    case 'T': {
      TruncateMessage m;
      m.xid = xid();
      uint32_t n = r.U32();
      m.options = r.U8();
      if (n > r.remaining() / 4) {
        r.Fail("truncate claims " + std::to_string(n) + " relations in " +
               std::to_string(r.remaining()) + " bytes");
      }
      m.relation_ids.reserve(r.failed() ? 0 : n);
      for (uint32_t i = 0; i < n && !r.failed(); ++i) m.relation_ids.push_back(r.U32());
      return PgoutputMessage(std::move(m));
    }
    case 'M': {
      LogicalMessage m;
      m.xid = xid();
      m.transactional = (r.U8() & 1) != 0;
      m.lsn = r.ReadLsn();
      m.prefix = r.String();
      int32_t len = r.I32();
      if (len < 0) r.Fail("negative content length " + std::to_string(len));
      m.content = std::string(r.Bytes(len < 0 ? 0 : static_cast<size_t>(len)));
      return PgoutputMessage(std::move(m));
    }
    case 'S': {
      StreamStartMessage m;
      m.xid = r.U32();
      m.first_segment = r.U8() == 1;
      return PgoutputMessage(m);
    }
    case 'E':
      return PgoutputMessage(StreamStopMessage{});
    case 'c': {
      StreamCommitMessage m;
      m.xid = r.U32();
      r.U8();  // flags, unused
      m.commit_lsn = r.ReadLsn();
      m.end_lsn = r.ReadLsn();
      m.commit_time = r.I64();
      return PgoutputMessage(m);
    }
    case 'A': {
      StreamAbortMessage m;
      m.xid = r.U32();
      m.subxid = r.U32();
      return PgoutputMessage(m);
    }
    default:
      return DataLoss("pgoutput: unknown message tag " + Hex(static_cast<uint8_t>(tag)));
  }
}

}  // namespace

std::string PgoutputMessageName(char tag) {
  switch (tag) {
    case 'B':
      return "Begin";
    case 'C':
      return "Commit";
    case 'O':
      return "Origin";
    case 'R':
      return "Relation";
    case 'Y':
      return "Type";
    case 'I':
      return "Insert";
    case 'U':
      return "Update";
    case 'D':
      return "Delete";
    case 'T':
      return "Truncate";
    case 'M':
      return "Message";
    case 'S':
      return "Stream Start";
    case 'E':
      return "Stream Stop";
    case 'c':
      return "Stream Commit";
    case 'A':
      return "Stream Abort";
    default:
      return "unknown";
  }
}

namespace {

Result<PgoutputMessage> ParseMessage(std::string_view data, bool in_stream, bool copy_values) {
  if (data.empty()) return DataLoss("pgoutput: empty message");
  char tag = data[0];
  Reader r(data, 1, copy_values);
  Result<PgoutputMessage> m = Parse(r, tag, in_stream);
  if (!m.ok()) return m;
  if (r.failed()) [[unlikely]] {
    return Status(r.code(), "pgoutput: " + PgoutputMessageName(tag) + " message: " + r.error());
  }
  if (r.remaining() != 0) [[unlikely]] {
    return DataLoss("pgoutput: " + PgoutputMessageName(tag) +
                    " message: " + std::to_string(r.remaining()) +
                    " unexpected trailing bytes at byte " + std::to_string(r.offset()));
  }
  return m;
}

}  // namespace

Result<PgoutputMessage> ParsePgoutputMessage(std::string_view data, bool in_stream) {
  return ParseMessage(data, in_stream, /*copy_values=*/true);
}

Result<PgoutputMessage> CheckPgoutputMessage(std::string_view data, bool in_stream) {
  return ParseMessage(data, in_stream, /*copy_values=*/false);
}

}  // namespace faucet::postgres
