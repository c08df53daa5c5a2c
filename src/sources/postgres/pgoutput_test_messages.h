// Test-only: builds pgoutput messages byte by byte, as the server would send them, for the
// decoder's unit and fuzz tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace faucet::postgres::testmsg {

struct TestCell {
  char kind;  // 'n', 'u', 't' (or anything else, for malformed input)
  std::string text;
};
inline TestCell T(std::string text) { return {'t', std::move(text)}; }
inline TestCell N() { return {'n', {}}; }
inline TestCell U() { return {'u', {}}; }

struct TestColumn {
  std::string name;
  uint32_t type_oid;
  bool key = false;
  int32_t typmod = -1;
};

class Bytes {
 public:
  explicit Bytes(char tag) { out_.push_back(tag); }
  Bytes& U8(uint8_t v) {
    out_.push_back(static_cast<char>(v));
    return *this;
  }
  Bytes& U16(uint16_t v) { return Int(v, 2); }
  Bytes& U32(uint32_t v) { return Int(v, 4); }
  Bytes& U64(uint64_t v) { return Int(v, 8); }
  Bytes& Str(const std::string& s) {
    out_ += s;
    out_.push_back('\0');
    return *this;
  }
  Bytes& Xid(std::optional<uint32_t> xid) { return xid ? U32(*xid) : *this; }
  Bytes& Tuple(const std::vector<TestCell>& cells) {
    U16(static_cast<uint16_t>(cells.size()));
    for (const TestCell& c : cells) {
      U8(static_cast<uint8_t>(c.kind));
      if (c.kind == 't' || c.kind == 'b') {
        U32(static_cast<uint32_t>(c.text.size()));
        out_ += c.text;
      }
    }
    return *this;
  }
  std::string str() const { return out_; }

 private:
  Bytes& Int(uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out_.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  std::string out_;
};

// `xid` is given for messages inside a Stream Start/Stop block (protocol 2) and omitted
// elsewhere, as the server does.

inline std::string Begin(uint64_t final_lsn, int64_t commit_time, uint32_t xid) {
  return Bytes('B').U64(final_lsn).U64(static_cast<uint64_t>(commit_time)).U32(xid).str();
}
inline std::string Commit(uint64_t commit_lsn, uint64_t end_lsn, int64_t commit_time) {
  return Bytes('C')
      .U8(0)
      .U64(commit_lsn)
      .U64(end_lsn)
      .U64(static_cast<uint64_t>(commit_time))
      .str();
}
inline std::string Relation(uint32_t oid, const std::string& schema, const std::string& name,
                            const std::vector<TestColumn>& columns,
                            std::optional<uint32_t> xid = std::nullopt, char identity = 'd') {
  Bytes b('R');
  b.Xid(xid).U32(oid).Str(schema).Str(name).U8(static_cast<uint8_t>(identity));
  b.U16(static_cast<uint16_t>(columns.size()));
  for (const TestColumn& c : columns) {
    b.U8(c.key ? 1 : 0).Str(c.name).U32(c.type_oid).U32(static_cast<uint32_t>(c.typmod));
  }
  return b.str();
}
inline std::string Type(uint32_t oid, const std::string& schema, const std::string& name,
                        std::optional<uint32_t> xid = std::nullopt) {
  return Bytes('Y').Xid(xid).U32(oid).Str(schema).Str(name).str();
}
inline std::string Origin(uint64_t lsn, const std::string& name) {
  return Bytes('O').U64(lsn).Str(name).str();
}
inline std::string Insert(uint32_t oid, const std::vector<TestCell>& row,
                          std::optional<uint32_t> xid = std::nullopt) {
  return Bytes('I').Xid(xid).U32(oid).U8('N').Tuple(row).str();
}
// `old_kind` 0 sends no old tuple.
inline std::string Update(uint32_t oid, char old_kind, const std::vector<TestCell>& old_row,
                          const std::vector<TestCell>& new_row,
                          std::optional<uint32_t> xid = std::nullopt) {
  Bytes b('U');
  b.Xid(xid).U32(oid);
  if (old_kind != 0) b.U8(static_cast<uint8_t>(old_kind)).Tuple(old_row);
  return b.U8('N').Tuple(new_row).str();
}
inline std::string Delete(uint32_t oid, char old_kind, const std::vector<TestCell>& old_row,
                          std::optional<uint32_t> xid = std::nullopt) {
  return Bytes('D').Xid(xid).U32(oid).U8(static_cast<uint8_t>(old_kind)).Tuple(old_row).str();
}
inline std::string Truncate(const std::vector<uint32_t>& oids, uint8_t options = 0,
                            std::optional<uint32_t> xid = std::nullopt) {
  Bytes b('T');
  b.Xid(xid).U32(static_cast<uint32_t>(oids.size())).U8(options);
  for (uint32_t oid : oids) b.U32(oid);
  return b.str();
}
inline std::string Message(bool transactional, uint64_t lsn, const std::string& prefix,
                           const std::string& content, std::optional<uint32_t> xid = std::nullopt) {
  return Bytes('M')
             .Xid(xid)
             .U8(transactional ? 1 : 0)
             .U64(lsn)
             .Str(prefix)
             .U32(static_cast<uint32_t>(content.size()))
             .str() +
         content;
}
inline std::string StreamStart(uint32_t xid, bool first) {
  return Bytes('S').U32(xid).U8(first ? 1 : 0).str();
}
inline std::string StreamStop() { return Bytes('E').str(); }
inline std::string StreamCommit(uint32_t xid, uint64_t commit_lsn, uint64_t end_lsn,
                                int64_t commit_time) {
  return Bytes('c')
      .U32(xid)
      .U8(0)
      .U64(commit_lsn)
      .U64(end_lsn)
      .U64(static_cast<uint64_t>(commit_time))
      .str();
}
inline std::string StreamAbort(uint32_t xid, uint32_t subxid) {
  return Bytes('A').U32(xid).U32(subxid).str();
}

}  // namespace faucet::postgres::testmsg
