#include "core/json_render.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "core/lsn.h"
#include "core/text.h"

namespace faucet {
namespace {

// The output is what RapidJSON's Writer (UTF-8 to UTF-8, default flags) writes for the same
// calls; it is written by hand because this is the hot path of every JSON sink: a change is
// rendered into a per-thread buffer with one capacity check per piece, then appended to the
// caller's string at once, and the parts that repeat from row to row (a relation's quoted
// column names and envelope head, the commit position) are rendered once and reused.

// Writes into a growable buffer through a raw pointer; Reserve(n) before writing n bytes.
class Buffer {
 public:
  void Clear() { end_ = data_.get(); }
  size_t size() const { return static_cast<size_t>(end_ - data_.get()); }
  const char* data() const { return data_.get(); }

  void Reserve(size_t n) {
    if (static_cast<size_t>(limit_ - end_) >= n) return;
    size_t used = size();
    size_t capacity =
        std::max<size_t>({4096, 2 * static_cast<size_t>(limit_ - data_.get()), used + n});
    std::unique_ptr<char[]> grown(new char[capacity]);
    if (used > 0) std::memcpy(grown.get(), data_.get(), used);
    data_ = std::move(grown);
    end_ = data_.get() + used;
    limit_ = data_.get() + capacity;
  }
  void Put(char c) { *end_++ = c; }      // REQUIRES: reserved
  void Write(const char* p, size_t n) {  // REQUIRES: reserved
    std::memcpy(end_, p, n);
    end_ += n;
  }
  void Write(std::string_view s) { Write(s.data(), s.size()); }
  // Reserves, then writes.
  void Append(std::string_view s) {
    Reserve(s.size());
    Write(s);
  }
  void Append(char c) {
    Reserve(1);
    Put(c);
  }
  char* end() { return end_; }
  void set_end(char* e) { end_ = e; }

 private:
  std::unique_ptr<char[]> data_;
  char* end_ = nullptr;
  char* limit_ = nullptr;
};

// RapidJSON's escape table: control characters, '"' and '\\'; everything else is copied
// (UTF-8 passes through unvalidated).
constexpr char kEscape[256] = {
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f',  'r', 'u', 'u',  // 00
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',  'u', 'u', 'u',  // 10
    0,   0,   '"', 0,   0,   0,   0,   0,   0,   0,   0,   0,   0,    0,   0,   0,    // 20
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,    0,   0,   0,    // 30
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,    0,   0,   0,    // 40
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   '\\', 0,   0,   0,    // 50
};

// A JSON string literal of `s`, quotes included.
void WriteString(Buffer& b, std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  b.Reserve(2 + 6 * s.size());
  char* out = b.end();
  *out++ = '"';
  const char* p = s.data();
  const char* const end = p + s.size();
  while (p < end) {
    // Copy the run of characters that need no escape at once.
    const char* run = p;
    while (p < end && kEscape[static_cast<unsigned char>(*p)] == 0) ++p;
    const size_t n = static_cast<size_t>(p - run);
    std::memcpy(out, run, n);
    out += n;
    if (p == end) break;
    const unsigned char c = static_cast<unsigned char>(*p++);
    const char e = kEscape[c];
    *out++ = '\\';
    *out++ = e;
    if (e == 'u') {
      *out++ = '0';
      *out++ = '0';
      *out++ = kHex[c >> 4];
      *out++ = kHex[c & 0xF];
    }
  }
  *out++ = '"';
  b.set_end(out);
}

void WriteRaw(Buffer& b, std::string_view s) { b.Append(s); }

void WriteNull(Buffer& b) { b.Append("null"); }

void WriteBool(Buffer& b, bool v) { b.Append(v ? std::string_view("true") : "false"); }

void WriteInt64(Buffer& b, int64_t v) {
  b.Reserve(20);
  char* out = b.end();
  b.set_end(std::to_chars(out, out + 20, v).ptr);
}

// A one-dimensional array literal split into its elements, unescaped.
struct ArrayElements {
  struct Element {
    size_t begin = 0;  // into `text`
    size_t size = 0;
    bool null = false;
  };
  std::string text;
  std::vector<Element> elements;
};

// The parts of a relation's rendering that do not change from row to row.
struct RelationText {
  RelationPtr relation;            // held, so that the address cannot be reused meanwhile
  std::vector<std::string> keys;   // per column: "name":
  std::vector<std::string> names;  // per column: "name" (for __unchanged_toast__)
  std::string schema_table;        // ,"schema":"..","table":".."
  // {"schema":<the envelope's or, debezium_key, the key's struct>,"payload":{ of Debezium's
  // rendering for server `debezium_server`.
  std::string debezium_head;
  std::string debezium_server;
  bool debezium_key = false;
};

// Per-thread state reused across calls: once its buffers have grown to the largest value seen,
// rendering a row allocates nothing beyond the growth of the caller's buffer. The texts of the
// last few relations are kept, so that a transaction alternating between tables does not
// render its column names again for every row.
struct RenderState {
  Buffer out;
  Buffer relation_scratch;  // for rendering a RelationText
  std::string scratch;      // a converted value (base64, json with line breaks replaced)
  ArrayElements array;
  std::array<RelationText, 8> relations;
  size_t next_relation = 0;  // the slot the next new relation takes (round robin)
  bool debezium = false;     // rendering Debezium's value shapes (AppendDebeziumJson)
  uint64_t lsn = 0;
  std::string lsn_text = "\"0/0\"";
  std::string lsn_base;  // the binlog_base lsn_text was made for
};

// The commit position as the envelope's "lsn": an Lsn, or a binlog file and offset.
std::string PositionText(uint64_t position, const std::string& binlog_base) {
  if (binlog_base.empty()) return '"' + Lsn(position).ToString() + '"';
  char number[16];
  std::snprintf(number, sizeof number, "%06u", static_cast<unsigned>(position >> 32));
  Buffer b;
  b.Append("{\"file\":");
  WriteString(b, binlog_base + "." + number);
  b.Append(",\"pos\":");
  WriteInt64(b, static_cast<int64_t>(position & 0xffffffffULL));
  b.Append('}');
  return std::string(b.data(), b.size());
}

RelationText& TextOf(RenderState& st, const RelationPtr& relation) {
  for (RelationText& cached : st.relations) {
    if (cached.relation == relation) return cached;
  }
  RelationText& t = st.relations[st.next_relation];
  st.next_relation = (st.next_relation + 1) % st.relations.size();
  t.relation = relation;
  t.keys.clear();
  t.names.clear();
  t.debezium_head.clear();
  t.debezium_server.clear();
  Buffer& b = st.relation_scratch;
  for (const Column& c : relation->columns) {
    b.Clear();
    WriteString(b, c.name);
    t.names.emplace_back(b.data(), b.size());
    b.Append(':');
    t.keys.emplace_back(b.data(), b.size());
  }
  b.Clear();
  b.Append(",\"schema\":");
  WriteString(b, relation->schema);
  b.Append(",\"table\":");
  WriteString(b, relation->name);
  t.schema_table.assign(b.data(), b.size());
  return t;
}

// The JSON number grammar (RFC 8259 §6): -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool IsJsonNumber(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

// Base64 (RFC 4648, padded) of the bytes spelled by Postgres bytea hex output "\x0a0b..".
// Returns false, leaving `out` partly written, when `hex` is not in that form.
bool AppendBase64OfByteaHex(std::string_view hex, std::string& out) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (hex.size() < 2 || hex[0] != '\\' || hex[1] != 'x' || hex.size() % 2 != 0) return false;
  uint32_t group = 0;
  int bytes = 0;
  for (size_t i = 2; i < hex.size(); i += 2) {
    int hi = HexDigit(hex[i]);
    int lo = HexDigit(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    group = (group << 8) | static_cast<uint32_t>(hi << 4 | lo);
    if (++bytes == 3) {
      for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kAlphabet[(group >> shift) & 63]);
      group = 0;
      bytes = 0;
    }
  }
  if (bytes > 0) {
    group <<= 8 * (3 - bytes);
    for (int k = 0; k <= bytes; ++k) out.push_back(kAlphabet[(group >> (18 - 6 * k)) & 63]);
    out.append(3 - bytes, '=');
  }
  return true;
}

// Postgres array type OID -> how its elements render. Unlisted types render as strings.
ValueType ArrayElementType(uint32_t array_oid) {
  switch (array_oid) {
    case 1000:  // _bool
      return ValueType::kBool;
    case 1001:  // _bytea
      return ValueType::kBytes;
    case 1005:  // _int2
    case 1007:  // _int4
    case 1016:  // _int8
      return ValueType::kInt;
    case 1021:  // _float4
    case 1022:  // _float8
      return ValueType::kFloat;
    case 1231:  // _numeric
      return ValueType::kNumeric;
    case 199:   // _json
    case 3807:  // _jsonb
      return ValueType::kJson;
    default:
      return ValueType::kText;
  }
}

bool IsArraySpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Splits a one-dimensional Postgres array literal ("{1,NULL,\"a \\\"b\\\"\"}") into `out`,
// following array_in: elements separated by `delimiter`, double-quoted when they contain
// special characters, a backslash escaping the next character, unquoted NULL (any case) for
// null, whitespace around unquoted elements ignored. Returns false for anything else
// (multi-dimensional, explicit bounds "[0:1]={..}", malformed).
bool ParseArrayLiteral(std::string_view s, char delimiter, ArrayElements& out) {
  out.text.clear();
  out.elements.clear();
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') return false;
  const size_t end = s.size() - 1;
  size_t i = 1;
  auto skip_space = [&] {
    while (i < end && IsArraySpace(s[i])) ++i;
  };
  skip_space();
  if (i == end) return true;
  while (true) {
    skip_space();
    if (i == end || s[i] == '{' || s[i] == '}') return false;
    ArrayElements::Element e;
    e.begin = out.text.size();
    if (s[i] == '"') {
      ++i;
      while (i < end && s[i] != '"') {
        if (s[i] == '\\' && ++i == end) return false;
        out.text.push_back(s[i++]);
      }
      if (i == end) return false;
      ++i;
    } else {
      bool escaped = false;
      size_t kept = out.text.size();  // length without trailing unescaped whitespace
      while (i < end && s[i] != delimiter) {
        char c = s[i];
        if (c == '"' || c == '{' || c == '}') return false;
        if (c == '\\') {
          if (++i == end) return false;
          escaped = true;
          out.text.push_back(s[i++]);
          kept = out.text.size();
          continue;
        }
        out.text.push_back(c);
        ++i;
        if (!IsArraySpace(c)) kept = out.text.size();
      }
      out.text.resize(kept);
      std::string_view word(out.text.data() + e.begin, kept - e.begin);
      if (word.empty()) return false;
      e.null = !escaped && word.size() == 4 &&
               std::equal(word.begin(), word.end(), "NULL",
                          [](char a, char b) { return (a & ~0x20) == b; });
    }
    e.size = out.text.size() - e.begin;
    out.elements.push_back(e);
    skip_space();
    if (i == end) return true;
    if (s[i] != delimiter) return false;
    ++i;
  }
}

void WriteValue(RenderState& st, ValueType type, uint32_t type_oid, std::string_view text);

void WriteJsonText(RenderState& st, std::string_view text) {
  // json keeps its input verbatim, line breaks included. JSON forbids raw line breaks inside
  // strings, so any line break is insignificant whitespace and a space keeps the output on
  // one line.
  if (text.find_first_of("\r\n") == std::string_view::npos) {
    WriteRaw(st.out, text);
    return;
  }
  st.scratch.assign(text);
  std::replace_if(
      st.scratch.begin(), st.scratch.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  WriteRaw(st.out, st.scratch);
}

void WriteArray(RenderState& st, uint32_t type_oid, std::string_view text) {
  const char delimiter = type_oid == 1020 ? ';' : ',';  // _box is the one type delimited by ';'
  if (!ParseArrayLiteral(text, delimiter, st.array)) {
    WriteString(st.out, text);
    return;
  }
  const ValueType element_type = ArrayElementType(type_oid);
  // Elements are never arrays, so WriteValue leaves st.array alone while we walk it.
  const std::vector<ArrayElements::Element>& elements = st.array.elements;
  const std::string_view elements_text = st.array.text;
  st.out.Append('[');
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) st.out.Append(',');
    const ArrayElements::Element& e = elements[i];
    if (e.null) {
      WriteNull(st.out);
    } else {
      WriteValue(st, element_type, 0, elements_text.substr(e.begin, e.size));
    }
  }
  st.out.Append(']');
}

void WriteValue(RenderState& st, ValueType type, uint32_t type_oid, std::string_view text) {
  Buffer& b = st.out;
  switch (type) {
    case ValueType::kBool:
      if (std::optional<bool> v = ParseBoolText(text)) {
        WriteBool(b, *v);
        return;
      }
      break;
    case ValueType::kInt:
    case ValueType::kFloat:
    case ValueType::kNumeric:
      if (IsJsonNumber(text)) {
        WriteRaw(b, text);
        return;
      }
      break;
    case ValueType::kJson:
      WriteJsonText(st, text);
      return;
    case ValueType::kBytes:
      st.scratch.assign(1, '"');
      if (AppendBase64OfByteaHex(text, st.scratch)) {
        st.scratch.push_back('"');
        WriteRaw(b, st.scratch);
        return;
      }
      break;
    case ValueType::kArray:
      WriteArray(st, type_oid, text);
      return;
    default:
      break;
  }
  WriteString(b, text);
}

// --- Debezium ---------------------------------------------------------------------------

// What Debezium (unavailable.value.placeholder) writes for a value the source did not send.
constexpr std::string_view kUnavailable = "__debezium_unavailable_value";

// A column's Kafka Connect schema type as Debezium's JsonConverter declares it, and the
// semantic name when ours renders the value the way that name says ("" for none). Exact
// numbers that JSON numbers would round (numeric, unsigned 64-bit) are strings, as under
// Debezium's decimal.handling.mode=string; json is a string (io.debezium.data.Json); arrays,
// times and the rest are their source text.
struct ConnectType {
  std::string_view type;
  std::string_view name;
};
ConnectType ConnectTypeOf(const Column& c) {
  switch (c.type) {
    case ValueType::kBool:
      return {"boolean", ""};
    case ValueType::kInt: {
      const int bits = c.type_oid == 21   ? 16
                       : c.type_oid == 23 ? 32
                       : c.type_oid == 20 ? 64
                                          : c.width;
      if (bits > 64) return {"string", ""};
      if (bits > 0 && bits <= 16) return {"int16", ""};
      if (bits > 0 && bits <= 32) return {"int32", ""};
      return {"int64", ""};
    }
    case ValueType::kFloat:
      return {c.type_oid == 700 || (c.width > 0 && c.width <= 32) ? "float" : "double", ""};
    case ValueType::kBytes:
      return {"bytes", ""};
    case ValueType::kJson:
      return {"string", "io.debezium.data.Json"};
    case ValueType::kUuid:
      return {"string", "io.debezium.data.Uuid"};
    default:
      return {"string", ""};
  }
}

void WriteDebeziumValue(RenderState& st, const Column& column, const Cell& cell) {
  const ConnectType type = ConnectTypeOf(column);
  if (cell.state == CellState::kUnchangedToast) {
    if (type.type == "bytes") {  // base64 of the placeholder's bytes
      st.scratch = "\\x";
      static constexpr char kHex[] = "0123456789abcdef";
      for (unsigned char ch : kUnavailable) {
        st.scratch += kHex[ch >> 4];
        st.scratch += kHex[ch & 15];
      }
      const std::string hex = st.scratch;
      WriteValue(st, ValueType::kBytes, 0, hex);
    } else {
      WriteString(st.out, kUnavailable);
    }
    return;
  }
  if (type.type == "string") {
    WriteString(st.out, cell.text);
  } else {
    WriteValue(st, column.type, column.type_oid, cell.text);
  }
}

// {"type":"struct","optional":..,"name":"<name>","fields":[<one per column>]} (with
// ,"field":"<field>" when `field` is set), into `b`.
void WriteConnectStruct(Buffer& b, const Relation& relation, const std::string& name, bool optional,
                        std::string_view field) {
  b.Append("{\"type\":\"struct\",\"optional\":");
  WriteBool(b, optional);
  b.Append(",\"name\":");
  WriteString(b, name);
  b.Append(",\"fields\":[");
  for (size_t i = 0; i < relation.columns.size(); ++i) {
    const Column& c = relation.columns[i];
    const ConnectType type = ConnectTypeOf(c);
    if (i > 0) b.Append(',');
    b.Append("{\"type\":\"");
    b.Append(type.type);
    b.Append("\",\"optional\":");
    WriteBool(b, !c.key);
    if (!type.name.empty()) {
      b.Append(",\"name\":\"");
      b.Append(type.name);
      b.Append('"');
    }
    b.Append(",\"field\":");
    WriteString(b, c.name);
    b.Append('}');
  }
  b.Append(']');
  if (!field.empty()) {
    b.Append(",\"field\":\"");
    b.Append(field);
    b.Append('"');
  }
  b.Append('}');
}

// The envelope's schema (or, `key`, the key's), then "payload":{ (rendered once per relation,
// server and kind).
const std::string& DebeziumHead(RenderState& st, RelationText& text, const std::string& server,
                                bool key) {
  if (!text.debezium_head.empty() && text.debezium_server == server && text.debezium_key == key) {
    return text.debezium_head;
  }
  const Relation& r = *text.relation;
  const bool binlog = !r.binlog_base.empty();
  const std::string prefix = server + "." + r.schema + "." + r.name;
  Buffer& b = st.relation_scratch;
  b.Clear();
  text.debezium_server = server;
  text.debezium_key = key;
  if (key) {
    b.Append("{\"schema\":");
    WriteConnectStruct(b, r, prefix + ".Key", false, "");
    b.Append(",\"payload\":{");
    text.debezium_head.assign(b.data(), b.size());
    return text.debezium_head;
  }
  b.Append("{\"schema\":{\"type\":\"struct\",\"optional\":false,\"name\":");
  WriteString(b, prefix + ".Envelope");
  b.Append(",\"version\":1,\"fields\":[");
  WriteConnectStruct(b, r, prefix + ".Value", true, "before");
  b.Append(',');
  WriteConnectStruct(b, r, prefix + ".Value", true, "after");
  b.Append(",{\"type\":\"struct\",\"optional\":false,\"name\":\"io.debezium.connector.");
  b.Append(binlog ? std::string_view("mysql") : std::string_view("postgresql"));
  b.Append(
      ".Source\",\"field\":\"source\",\"fields\":["
      "{\"type\":\"string\",\"optional\":false,\"field\":\"version\"},"
      "{\"type\":\"string\",\"optional\":false,\"field\":\"connector\"},"
      "{\"type\":\"string\",\"optional\":false,\"field\":\"name\"},"
      "{\"type\":\"int64\",\"optional\":true,\"field\":\"ts_ms\"},"
      "{\"type\":\"string\",\"optional\":true,\"field\":\"snapshot\"},"
      "{\"type\":\"string\",\"optional\":true,\"field\":\"db\"},"
      "{\"type\":\"string\",\"optional\":true,\"field\":\"schema\"},"
      "{\"type\":\"string\",\"optional\":false,\"field\":\"table\"},");
  b.Append(
      binlog ? std::string_view("{\"type\":\"string\",\"optional\":false,\"field\":\"file\"},"
                                "{\"type\":\"int64\",\"optional\":false,\"field\":\"pos\"},"
                                "{\"type\":\"string\",\"optional\":true,\"field\":\"gtid\"},"
                                "{\"type\":\"int64\",\"optional\":true,\"field\":\"server_id\"}]},")
             : std::string_view("{\"type\":\"int64\",\"optional\":true,\"field\":\"lsn\"}]},"));
  b.Append(
      "{\"type\":\"string\",\"optional\":false,\"field\":\"op\"},"
      "{\"type\":\"int64\",\"optional\":true,\"field\":\"ts_ms\"}]},\"payload\":{");
  text.debezium_head.assign(b.data(), b.size());
  return text.debezium_head;
}

// ,"source":{...} of `change`.
void WriteDebeziumSource(RenderState& st, const Change& change, const std::string& server) {
  Buffer& b = st.out;
  const Relation& r = *change.relation;
  const bool binlog = !r.binlog_base.empty();
  b.Append(",\"source\":{\"version\":\"faucet\",\"connector\":\"");
  b.Append(binlog ? std::string_view("mysql") : std::string_view("postgresql"));
  b.Append("\",\"name\":");
  WriteString(b, server);
  b.Append(",\"ts_ms\":");
  if (change.commit_time_us == 0) {
    WriteNull(b);
  } else {
    WriteInt64(b, change.commit_time_us / 1000);
  }
  b.Append(change.op == ChangeOp::kRead ? std::string_view(",\"snapshot\":\"true\"")
                                        : std::string_view(",\"snapshot\":\"false\""));
  // A MySQL table's schema is its database; Postgres's database is not known here.
  b.Append(",\"db\":");
  if (binlog) {
    WriteString(b, r.schema);
    b.Append(",\"schema\":null");
  } else {
    WriteNull(b);
    b.Append(",\"schema\":");
    WriteString(b, r.schema);
  }
  b.Append(",\"table\":");
  WriteString(b, r.name);
  if (binlog) {
    char file[16];
    std::snprintf(file, sizeof file, "%06u", static_cast<unsigned>(change.commit_position >> 32));
    b.Append(",\"file\":");
    WriteString(b, r.binlog_base + "." + file);
    b.Append(",\"pos\":");
    WriteInt64(b, static_cast<int64_t>(change.commit_position & 0xffffffffULL));
    b.Append(",\"gtid\":");
    if (change.txn && !change.txn->gtid.empty()) {
      WriteString(b, change.txn->gtid);
    } else {
      WriteNull(b);
    }
    b.Append(",\"server_id\":");
    if (change.txn) {
      WriteInt64(b, change.txn->server_id);
    } else {
      WriteNull(b);
    }
  } else {
    b.Append(",\"lsn\":");
    if (change.op == ChangeOp::kRead) {
      WriteNull(b);
    } else {
      WriteInt64(b, static_cast<int64_t>(change.commit_position));
    }
  }
  b.Append('}');
}

void WriteRow(RenderState& st, const RelationText& text, const Relation& relation, const Row& row) {
  Buffer& b = st.out;
  const size_t n = std::min(row.size(), relation.columns.size());
  bool has_unchanged_toast = false;
  bool first = true;
  b.Append('{');
  for (size_t i = 0; i < n; ++i) {
    const Cell& cell = row[i];
    if (cell.state == CellState::kUnchangedToast && !st.debezium) {
      has_unchanged_toast = true;
      continue;
    }
    const std::string& key = text.keys[i];
    b.Reserve(key.size() + 1);
    if (!first) b.Put(',');
    first = false;
    b.Write(key);
    const Column& column = relation.columns[i];
    if (cell.state == CellState::kNull) {
      WriteNull(b);
    } else if (!st.debezium) {
      WriteValue(st, column.type, column.type_oid, cell.text);
    } else {
      WriteDebeziumValue(st, column, cell);
    }
  }
  if (has_unchanged_toast) {
    b.Append(first ? std::string_view("\"__unchanged_toast__\":[")
                   : std::string_view(",\"__unchanged_toast__\":["));
    bool first_name = true;
    for (size_t i = 0; i < n; ++i) {
      if (row[i].state != CellState::kUnchangedToast) continue;
      if (!first_name) b.Append(',');
      first_name = false;
      b.Append(text.names[i]);
    }
    b.Append(']');
  }
  b.Append('}');
}

void WriteOptionalRow(RenderState& st, const RelationText& text, const Relation& relation,
                      const std::optional<Row>& row) {
  if (row) {
    WriteRow(st, text, relation, *row);
  } else {
    WriteNull(st.out);
  }
}

// The envelope's ,"ts_ms":.. for a commit at `commit_time_us` (0: unknown, null).
void WriteCommitTime(Buffer& b, int64_t commit_time_us) {
  b.Append(",\"ts_ms\":");
  if (commit_time_us == 0) {
    WriteNull(b);
  } else {
    WriteInt64(b, commit_time_us / 1000);
  }
}

// Renders `change` into st.out: a kRead's row, or the change envelope, with its commit fields
// (,"lsn":..[,"gtid":..,"server_id":..],"ts_ms":..) unless `commit_at` is set, which then
// receives the offset in st.out where they belong.
void RenderChange(RenderState& st, const Change& change, size_t* commit_at) {
  Buffer& b = st.out;
  b.Clear();
  const Relation& relation = *change.relation;
  const RelationText& text = TextOf(st, change.relation);
  if (change.op == ChangeOp::kRead) {
    WriteOptionalRow(st, text, relation, change.after);
    return;
  }
  const char head[] = {'{', '"', 'o', 'p', '"', ':', '"', ChangeOpCode(change.op), '"'};
  b.Append(std::string_view(head, sizeof head));
  b.Append(text.schema_table);
  if (commit_at != nullptr) {
    *commit_at = b.size();
  } else {
    if (change.commit_position != st.lsn || relation.binlog_base != st.lsn_base) {
      st.lsn = change.commit_position;
      st.lsn_base = relation.binlog_base;
      st.lsn_text = PositionText(change.commit_position, relation.binlog_base);
    }
    b.Append(",\"lsn\":");
    b.Append(st.lsn_text);
    if (change.txn) {
      b.Append(",\"gtid\":");
      if (change.txn->gtid.empty()) {
        WriteNull(b);
      } else {
        WriteString(b, change.txn->gtid);
      }
      b.Append(",\"server_id\":");
      WriteInt64(b, change.txn->server_id);
    }
    WriteCommitTime(b, change.commit_time_us);
  }
  b.Append(",\"before\":");
  WriteOptionalRow(st, text, relation, change.before);
  b.Append(",\"after\":");
  WriteOptionalRow(st, text, relation, change.after);
  b.Append('}');
}

// The state AppendChangeJson and AppendUncommittedChangeJson share on this thread.
RenderState& ChangeState() {
  thread_local RenderState st;
  return st;
}

}  // namespace

void AppendJsonString(std::string_view s, std::string& out) {
  thread_local Buffer b;
  b.Clear();
  WriteString(b, s);
  out.append(b.data(), b.size());
}

std::optional<bool> ParseBoolText(std::string_view text) {
  if (text == "t" || text == "true" || text == "1") return true;
  if (text == "f" || text == "false" || text == "0") return false;
  return std::nullopt;
}

void AppendChangeJson(const Change& change, std::string& out) {
  RenderState& st = ChangeState();
  RenderChange(st, change, nullptr);
  out.append(st.out.data(), st.out.size());
}

size_t AppendUncommittedChangeJson(const Change& change, std::string& out) {
  RenderState& st = ChangeState();
  size_t commit_at = 0;
  RenderChange(st, change, &commit_at);
  out.append(st.out.data(), st.out.size());
  return commit_at;
}

void AppendCommitJson(uint64_t commit_position, int64_t commit_time_us, std::string& out) {
  Buffer b;
  b.Append(",\"lsn\":");
  b.Append(PositionText(commit_position, ""));
  WriteCommitTime(b, commit_time_us);
  out.append(b.data(), b.size());
}

void AppendDebeziumJson(const Change& change, const std::string& server, std::string& out) {
  thread_local RenderState st;
  st.debezium = true;
  Buffer& b = st.out;
  b.Clear();
  const Relation& relation = *change.relation;
  RelationText& text = TextOf(st, change.relation);
  b.Append(DebeziumHead(st, text, server, /*key=*/false));
  b.Append("\"before\":");
  if (change.op == ChangeOp::kRead) {
    WriteNull(b);
  } else {
    WriteOptionalRow(st, text, relation, change.before);
  }
  b.Append(",\"after\":");
  WriteOptionalRow(st, text, relation, change.after);
  WriteDebeziumSource(st, change, server);
  const char op[] = {',', '"', 'o', 'p', '"', ':', '"', ChangeOpCode(change.op), '"'};
  b.Append(std::string_view(op, sizeof op));
  b.Append(",\"ts_ms\":");
  WriteInt64(b, std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count());
  b.Append("}}");
  out.append(b.data(), b.size());
}

void AppendDebeziumKeyJson(const RelationPtr& key, const Row& row, const std::string& server,
                           std::string& out) {
  thread_local RenderState st;
  st.debezium = true;
  Buffer& b = st.out;
  b.Clear();
  RelationText& text = TextOf(st, key);
  b.Append(DebeziumHead(st, text, server, /*key=*/true));
  const size_t n = std::min(row.size(), key->columns.size());
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) b.Append(',');
    b.Append(text.keys[i]);
    if (row[i].state == CellState::kNull) {
      WriteNull(b);
    } else {
      WriteDebeziumValue(st, key->columns[i], row[i]);
    }
  }
  b.Append("}}");
  out.append(b.data(), b.size());
}

}  // namespace faucet
