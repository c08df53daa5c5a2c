#include "core/json_render.h"

#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/lsn.h"

namespace faucet {
namespace {

// RapidJSON output stream that appends to a caller's string.
class StringAppender {
 public:
  using Ch = char;
  explicit StringAppender(std::string& out) : out_(out) {}
  void Put(char c) { out_.push_back(c); }
  void Flush() {}

 private:
  std::string& out_;
};

using JsonWriter = rapidjson::Writer<StringAppender>;

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

// Per-thread state reused across calls: once its buffers have grown to the largest value seen,
// rendering a row allocates nothing beyond the growth of the caller's buffer.
struct RenderState {
  JsonWriter writer;
  std::string scratch;  // a converted value (base64, json with line breaks replaced)
  ArrayElements array;
};

void WriteString(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void WriteKey(JsonWriter& w, std::string_view s) {
  w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void WriteRaw(JsonWriter& w, std::string_view s, rapidjson::Type type) {
  w.RawValue(s.data(), s.size(), type);
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

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
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
    int hi = HexValue(hex[i]);
    int lo = HexValue(hex[i + 1]);
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
    WriteRaw(st.writer, text, rapidjson::kObjectType);
    return;
  }
  st.scratch.assign(text);
  std::replace_if(
      st.scratch.begin(), st.scratch.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  WriteRaw(st.writer, st.scratch, rapidjson::kObjectType);
}

void WriteArray(RenderState& st, uint32_t type_oid, std::string_view text) {
  const char delimiter = type_oid == 1020 ? ';' : ',';  // _box is the one type delimited by ';'
  if (!ParseArrayLiteral(text, delimiter, st.array)) {
    WriteString(st.writer, text);
    return;
  }
  const ValueType element_type = ArrayElementType(type_oid);
  st.writer.StartArray();
  for (const ArrayElements::Element& e : st.array.elements) {
    if (e.null) {
      st.writer.Null();
    } else {
      WriteValue(st, element_type, 0, std::string_view(st.array.text).substr(e.begin, e.size));
    }
  }
  st.writer.EndArray();
}

void WriteValue(RenderState& st, ValueType type, uint32_t type_oid, std::string_view text) {
  JsonWriter& w = st.writer;
  switch (type) {
    case ValueType::kBool:
      if (std::optional<bool> b = ParseBoolText(text)) {
        w.Bool(*b);
        return;
      }
      break;
    case ValueType::kInt:
    case ValueType::kFloat:
    case ValueType::kNumeric:
      if (IsJsonNumber(text)) {
        WriteRaw(w, text, rapidjson::kNumberType);
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
        WriteRaw(w, st.scratch, rapidjson::kStringType);
        return;
      }
      break;
    case ValueType::kArray:
      WriteArray(st, type_oid, text);
      return;
    default:
      break;
  }
  WriteString(w, text);
}

void WriteRow(RenderState& st, const Relation& relation, const Row& row) {
  JsonWriter& w = st.writer;
  const size_t n = std::min(row.size(), relation.columns.size());
  bool has_unchanged_toast = false;
  w.StartObject();
  for (size_t i = 0; i < n; ++i) {
    const Cell& cell = row[i];
    const Column& column = relation.columns[i];
    if (cell.state == CellState::kUnchangedToast) {
      has_unchanged_toast = true;
      continue;
    }
    WriteKey(w, column.name);
    if (cell.state == CellState::kNull) {
      w.Null();
    } else {
      WriteValue(st, column.type, column.type_oid, cell.text);
    }
  }
  if (has_unchanged_toast) {
    w.Key("__unchanged_toast__");
    w.StartArray();
    for (size_t i = 0; i < n; ++i) {
      if (row[i].state == CellState::kUnchangedToast) WriteString(w, relation.columns[i].name);
    }
    w.EndArray();
  }
  w.EndObject();
}

void WriteOptionalRow(RenderState& st, const Relation& relation, const std::optional<Row>& row) {
  if (row) {
    WriteRow(st, relation, *row);
  } else {
    st.writer.Null();
  }
}

}  // namespace

std::optional<bool> ParseBoolText(std::string_view text) {
  if (text == "t" || text == "true" || text == "1") return true;
  if (text == "f" || text == "false" || text == "0") return false;
  return std::nullopt;
}

void AppendChangeJson(const Change& change, std::string& out) {
  thread_local RenderState st;
  StringAppender stream(out);
  st.writer.Reset(stream);
  const Relation& relation = *change.relation;

  if (change.op == ChangeOp::kRead) {
    WriteOptionalRow(st, relation, change.after);
    return;
  }
  JsonWriter& w = st.writer;
  w.StartObject();
  w.Key("op");
  const char op = ChangeOpCode(change.op);
  w.String(&op, 1);
  w.Key("schema");
  WriteString(w, relation.schema);
  w.Key("table");
  WriteString(w, relation.name);
  w.Key("lsn");
  WriteString(w, Lsn(change.commit_position).ToString());
  w.Key("ts_ms");
  if (change.commit_time_us == 0) {
    w.Null();
  } else {
    w.Int64(change.commit_time_us / 1000);
  }
  w.Key("before");
  WriteOptionalRow(st, relation, change.before);
  w.Key("after");
  WriteOptionalRow(st, relation, change.after);
  w.EndObject();
}

}  // namespace faucet
