#include "sources/kafka/message_decoder.h"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/json_render.h"
#include "core/lsn.h"
#include "core/text.h"

namespace faucet::kafka {
namespace {

// --- JSON -------------------------------------------------------------------------------

// Deeper values are refused: RapidJSON's reader and Json::AppendCompact recurse once per
// level, and must not overflow the stack.
constexpr uint32_t kMaxDepth = 1000;

// The index of no node: a missing member.
constexpr uint32_t kAbsent = std::numeric_limits<uint32_t>::max();

struct Node {
  enum class Kind : uint8_t { kNull, kFalse, kTrue, kNumber, kString, kObject, kArray };
  Kind kind = Kind::kNull;
  std::string_view text;  // a number's digits; a string's or a key's text, unescaped
  uint32_t end = 0;       // the index just past this value's nodes
};

constexpr Node kMissing{};

// A JSON text parsed once, in place, into its values' nodes in document order: an object's node
// is followed by each member's key node and value nodes, an array's by its elements' nodes.
// Numbers keep their text (kParseNumbersAsStringsFlag), so that no precision is lost. The
// buffers are reused: once grown to the largest message, parsing allocates nothing.
class Json {
 public:
  class Children;

  // Parses `text`; kInvalidArgument when it is not exactly one JSON value.
  Status Parse(std::string_view text);

  // The node at `index`; a null node for kAbsent, so that a missing member reads as null.
  const Node& operator[](uint32_t index) const {
    return index == kAbsent ? kMissing : nodes_[index];
  }

  // The value of member `name` of the object at `object` (the first, when repeated), or
  // kAbsent when there is none or `object` is not an object.
  uint32_t Find(uint32_t object, std::string_view name) const;

  // An object's members, as the indices of their key nodes (the value's node is next), and an
  // array's elements: none when the node is not an object, or an array.
  Children Members(uint32_t object) const;
  Children Elements(uint32_t array) const;

  // Appends the value at `index` as compact JSON: byte for byte what RapidJSON's Writer writes
  // for it (the Writer itself is not used: its first push, as the reader's, does arithmetic on
  // a null pointer).
  void AppendCompact(uint32_t index, std::string& out) const;

 private:
  class Handler;

  std::string buffer_;  // the text, unescaped in place by the parser
  std::vector<Node> nodes_;
  std::vector<uint32_t> open_;  // while parsing: the containers not yet closed
};

class Json::Children {
 public:
  class Iterator {
   public:
    Iterator(const Json& json, uint32_t index, bool members)
        : json_(&json), index_(index), members_(members) {}
    uint32_t operator*() const { return index_; }
    Iterator& operator++() {
      // A member is a key node and its value's nodes.
      index_ = json_->nodes_[members_ ? index_ + 1 : index_].end;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return index_ != other.index_; }

   private:
    const Json* json_;
    uint32_t index_;
    bool members_;
  };

  Children(const Json& json, uint32_t container, Node::Kind kind)
      : json_(json), members_(kind == Node::Kind::kObject) {
    if (json[container].kind == kind) {
      first_ = container + 1;
      end_ = json[container].end;
    }
  }
  Iterator begin() const { return {json_, first_, members_}; }
  Iterator end() const { return {json_, end_, members_}; }

 private:
  const Json& json_;
  bool members_;
  uint32_t first_ = 0;
  uint32_t end_ = 0;
};

// Records RapidJSON's parse events as nodes.
class Json::Handler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Handler> {
 public:
  explicit Handler(Json& json) : json_(json) {}

  bool Null() { return Add(Node::Kind::kNull, {}); }
  bool Bool(bool value) { return Add(value ? Node::Kind::kTrue : Node::Kind::kFalse, {}); }
  bool RawNumber(const char* text, rapidjson::SizeType size, bool /*copy*/) {
    return Add(Node::Kind::kNumber, {text, size});
  }
  bool String(const char* text, rapidjson::SizeType size, bool /*copy*/) {
    return Add(Node::Kind::kString, {text, size});
  }
  bool Key(const char* text, rapidjson::SizeType size, bool copy) {
    return String(text, size, copy);
  }
  bool StartObject() { return Open(Node::Kind::kObject); }
  bool EndObject(rapidjson::SizeType /*members*/) { return Close(); }
  bool StartArray() { return Open(Node::Kind::kArray); }
  bool EndArray(rapidjson::SizeType /*elements*/) { return Close(); }

 private:
  bool Add(Node::Kind kind, std::string_view text) {
    const auto index = static_cast<uint32_t>(json_.nodes_.size());
    json_.nodes_.push_back({kind, text, index + 1});
    return true;
  }
  bool Open(Node::Kind kind) {
    if (json_.open_.size() == kMaxDepth) return false;  // stops with kParseErrorTermination
    json_.open_.push_back(static_cast<uint32_t>(json_.nodes_.size()));
    return Add(kind, {});
  }
  bool Close() {
    json_.nodes_[json_.open_.back()].end = static_cast<uint32_t>(json_.nodes_.size());
    json_.open_.pop_back();
    return true;
  }

  Json& json_;
};

Status NotJson(rapidjson::ParseErrorCode code, size_t offset) {
  return InvalidArgument("not JSON at byte " + std::to_string(offset) + ": " +
                         rapidjson::GetParseError_En(code));
}

Status Json::Parse(std::string_view text) {
  // In place: strings are unescaped where they are and numbers left there, so that nothing is
  // copied but the text. The recursive reader (kMaxDepth bounds its depth) then pushes nothing
  // on its own stack: no allocation, and none of the arithmetic on a null pointer of its
  // stack's first push, which the asan preset's UBSan stops on.
  constexpr unsigned kFlags = rapidjson::kParseInsituFlag | rapidjson::kParseValidateEncodingFlag |
                              rapidjson::kParseNumbersAsStringsFlag;
  buffer_.assign(text);
  nodes_.clear();
  open_.clear();
  rapidjson::InsituStringStream stream(buffer_.data());
  Handler handler(*this);
  rapidjson::Reader reader;
  const rapidjson::ParseResult result = reader.Parse<kFlags>(stream, handler);
  if (result.Code() == rapidjson::kParseErrorTermination) {
    return InvalidArgument("JSON nested deeper than " + std::to_string(kMaxDepth) +
                           " levels at byte " + std::to_string(result.Offset()));
  }
  if (result.IsError()) return NotJson(result.Code(), result.Offset());
  // The reader stops at a NUL byte, which JSON allows nowhere outside strings.
  if (stream.Tell() != text.size()) {
    return NotJson(rapidjson::kParseErrorDocumentRootNotSingular, stream.Tell());
  }
  return Status::Ok();
}

Json::Children Json::Members(uint32_t object) const { return {*this, object, Node::Kind::kObject}; }

Json::Children Json::Elements(uint32_t array) const { return {*this, array, Node::Kind::kArray}; }

uint32_t Json::Find(uint32_t object, std::string_view name) const {
  for (const uint32_t key : Members(object)) {
    if (nodes_[key].text == name) return key + 1;
  }
  return kAbsent;
}

void Json::AppendCompact(uint32_t index, std::string& out) const {
  const Node& node = (*this)[index];
  switch (node.kind) {
    case Node::Kind::kNull:
      out += "null";
      return;
    case Node::Kind::kFalse:
      out += "false";
      return;
    case Node::Kind::kTrue:
      out += "true";
      return;
    case Node::Kind::kNumber:
      out += node.text;
      return;
    case Node::Kind::kString:
      AppendJsonString(node.text, out);
      return;
    case Node::Kind::kObject:
      out += '{';
      for (const uint32_t key : Members(index)) {
        if (key != index + 1) out += ',';
        AppendJsonString(nodes_[key].text, out);
        out += ':';
        AppendCompact(key + 1, out);
      }
      out += '}';
      return;
    case Node::Kind::kArray:
      out += '[';
      for (const uint32_t element : Elements(index)) {
        if (element != index + 1) out += ',';
        AppendCompact(element, out);
      }
      out += ']';
      return;
  }
}

// --- Values -----------------------------------------------------------------------------

// The whole of `text` as an integer of type Int.
template <class Int>
bool ParseInteger(std::string_view text, Int& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

// The type of a value without a schema: the type whose values AppendChangeJson writes that way.
ValueType InferredType(Node::Kind kind) {
  switch (kind) {
    case Node::Kind::kFalse:
    case Node::Kind::kTrue:
      return ValueType::kBool;
    case Node::Kind::kNumber:
      return ValueType::kNumeric;
    case Node::Kind::kObject:
    case Node::Kind::kArray:
      return ValueType::kJson;
    default:
      return ValueType::kText;
  }
}

int Base64Digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// The bytes of padded base64 (RFC 4648, as Java's encoder writes it), into `out`; false when
// `text` is not base64.
bool DecodeBase64(std::string_view text, std::string& out) {
  out.clear();
  if (text.size() % 4 != 0) return false;
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  const size_t digits = text.size() - padding;
  uint32_t group = 0;
  for (size_t i = 0; i < digits; ++i) {
    const int digit = Base64Digit(text[i]);
    if (digit < 0) return false;
    group = group << 6 | static_cast<uint32_t>(digit);
    if (i % 4 == 3) {
      out += static_cast<char>(group >> 16);
      out += static_cast<char>(group >> 8);
      out += static_cast<char>(group);
      group = 0;
    }
  }
  // The last group's 3 or 2 digits hold 2 bytes or 1.
  if (padding == 1) {
    group <<= 6;
    out += static_cast<char>(group >> 16);
    out += static_cast<char>(group >> 8);
  } else if (padding == 2) {
    group <<= 12;
    out += static_cast<char>(group >> 16);
  }
  return true;
}

// Decimal conversion is quadratic in the value's size; Postgres numeric's largest display
// scale bounds the scale.
constexpr size_t kMaxDecimalBytes = 8192;
constexpr int32_t kMaxScale = 16383;

// Appends `unscaled` (a big-endian two's complement integer, as Kafka Connect's Decimal holds
// it) times 10^-scale as decimal text: "-12.50" for bytes fb1e and scale 2.
void AppendDecimal(std::string_view unscaled, int32_t scale, std::string& out) {
  const bool negative = !unscaled.empty() && (static_cast<unsigned char>(unscaled[0]) & 0x80);
  std::string magnitude(unscaled);
  if (negative) {  // two's complement: invert, add one
    for (char& c : magnitude) c = static_cast<char>(~c);
    for (auto it = magnitude.rbegin(); it != magnitude.rend(); ++it) {
      *it = static_cast<char>(static_cast<unsigned char>(*it) + 1);
      if (*it != 0) break;
    }
  }
  constexpr uint32_t kLimb = 1000000000;
  std::vector<uint32_t> limbs = {0};  // base 10^9, least significant first
  for (const char c : magnitude) {
    uint64_t carry = static_cast<unsigned char>(c);
    for (uint32_t& limb : limbs) {
      const uint64_t v = uint64_t{limb} * 256 + carry;
      limb = static_cast<uint32_t>(v % kLimb);
      carry = v / kLimb;
    }
    if (carry != 0) limbs.push_back(static_cast<uint32_t>(carry));
  }
  std::string digits = std::to_string(limbs.back());
  for (size_t i = limbs.size() - 1; i-- > 0;) {
    char limb[16];
    const int n = std::snprintf(limb, sizeof limb, "%09u", limbs[i]);
    digits.append(limb, static_cast<size_t>(n));
  }
  if (scale > 0) {
    const auto point = static_cast<size_t>(scale);
    if (digits.size() <= point) digits.insert(0, point + 1 - digits.size(), '0');
    digits.insert(digits.size() - point, 1, '.');
  } else if (scale < 0 && digits != "0") {
    digits.append(static_cast<size_t>(-scale), '0');
  }
  if (negative) out += '-';
  out += digits;
}

// A Decimal's scale: an integer, or its text (Kafka Connect's schema parameters are strings).
bool ParseScale(const Node& node, int32_t& scale) {
  return (node.kind == Node::Kind::kNumber || node.kind == Node::Kind::kString) &&
         ParseInteger(node.text, scale) && scale >= -kMaxScale && scale <= kMaxScale;
}

constexpr int64_t kPow10[] = {1,      10,      100,      1000,      10000,
                              100000, 1000000, 10000000, 100000000, 1000000000};

// Appends the date `days` after 1970-01-01 (proleptic Gregorian) as Postgres writes it,
// YYYY-MM-DD; returns whether it is BC, its year then written as Postgres does (year 0 is
// 1 BC) and " BC" left for the caller to append after any time of day.
bool AppendDate(int64_t days, std::string& out) {
  // Howard Hinnant's civil_from_days (howardhinnant.github.io/date_algorithms.html).
  days += 719468;  // from 0000-03-01
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto day_of_era = static_cast<uint32_t>(days - era * 146097);
  const uint32_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const uint32_t day_of_year =
      day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const uint32_t month_from_march = (5 * day_of_year + 2) / 153;
  const uint32_t day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
  const uint32_t month = month_from_march < 10 ? month_from_march + 3 : month_from_march - 9;
  const int64_t year = era * 400 + year_of_era + (month <= 2 ? 1 : 0);
  const bool bc = year <= 0;
  char text[48];
  const int n = std::snprintf(text, sizeof text, "%04lld-%02u-%02u",
                              static_cast<long long>(bc ? 1 - year : year), month, day);
  out.append(text, static_cast<size_t>(n));
  return bc;
}

// Appends `units` (of 10^-digits s) as HH:MM:SS[.fff], the fraction without trailing zeros
// as Postgres writes it. Hours go past 23: a MySQL TIME is a duration.
void AppendClock(uint64_t units, int digits, std::string& out) {
  const auto unit = static_cast<uint64_t>(kPow10[digits]);
  const uint64_t seconds = units / unit;
  char text[48];
  int n = std::snprintf(
      text, sizeof text, "%02llu:%02u:%02u", static_cast<unsigned long long>(seconds / 3600),
      static_cast<unsigned>(seconds / 60 % 60), static_cast<unsigned>(seconds % 60));
  out.append(text, static_cast<size_t>(n));
  uint64_t fraction = units % unit;
  if (fraction == 0) return;
  while (fraction % 10 == 0) {
    fraction /= 10;
    --digits;
  }
  n = std::snprintf(text, sizeof text, ".%0*llu", digits,
                    static_cast<unsigned long long>(fraction));
  out.append(text, static_cast<size_t>(n));
}

// Appends `value` units (of 10^-digits s) since the epoch as YYYY-MM-DD HH:MM:SS[.fff].
void AppendTimestamp(int64_t value, int digits, std::string& out) {
  const int64_t per_day = kPow10[digits] * 86400;
  int64_t days = value / per_day;
  int64_t rest = value % per_day;
  if (rest < 0) {
    rest += per_day;
    --days;
  }
  const bool bc = AppendDate(days, out);
  out += ' ';
  AppendClock(static_cast<uint64_t>(rest), digits, out);
  if (bc) out += " BC";
}

// Appends `value` units (of 10^-digits s) since midnight as [-]HH:MM:SS[.fff].
void AppendTime(int64_t value, int digits, std::string& out) {
  if (value < 0) out += '-';
  AppendClock(value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value), digits,
              out);
}

// The member of a row (AppendChangeJson's) listing the columns whose values were not sent.
constexpr std::string_view kUnchangedToast = "__unchanged_toast__";

// --- Debezium ---------------------------------------------------------------------------

// What Debezium (unavailable.value.placeholder) writes for a value the source did not send,
// and for a bytes column its base64.
constexpr std::string_view kUnavailable = "__debezium_unavailable_value";
constexpr std::string_view kUnavailableBase64 = "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==";

// How a value of a Kafka Connect schema type becomes a cell.
enum class Conversion : uint8_t {
  kText,                  // a string, kept
  kInteger,               // a number, kept
  kFloat,                 // a number, or a string ("NaN", "Infinity"), kept
  kBoolean,               // true/false: "t"/"f"
  kBytes,                 // base64: Postgres hex text
  kDecimal,               // base64 of the unscaled value: decimal text
  kVariableScaleDecimal,  // {"scale":s,"value":<base64 of the unscaled value>}: decimal text
  kDate,                  // days since 1970-01-01
  kTimestamp,             // units since the epoch
  kTime,                  // units since midnight
};

struct ConnectType {
  std::string_view name;
  Conversion conversion;
  ValueType type;
  int digits;  // kTimestamp, kTime: the unit, 10^-digits s
};

// By the schema's "name" (a logical type), then by its "type".
constexpr ConnectType kLogicalTypes[] = {
    {"org.apache.kafka.connect.data.Decimal", Conversion::kDecimal, ValueType::kNumeric, 0},
    {"io.debezium.data.VariableScaleDecimal", Conversion::kVariableScaleDecimal,
     ValueType::kNumeric, 0},
    {"io.debezium.time.Date", Conversion::kDate, ValueType::kDate, 0},
    {"org.apache.kafka.connect.data.Date", Conversion::kDate, ValueType::kDate, 0},
    {"io.debezium.time.Timestamp", Conversion::kTimestamp, ValueType::kTimestamp, 3},
    {"org.apache.kafka.connect.data.Timestamp", Conversion::kTimestamp, ValueType::kTimestamp, 3},
    {"io.debezium.time.MicroTimestamp", Conversion::kTimestamp, ValueType::kTimestamp, 6},
    {"io.debezium.time.NanoTimestamp", Conversion::kTimestamp, ValueType::kTimestamp, 9},
    {"io.debezium.time.Time", Conversion::kTime, ValueType::kTime, 3},
    {"org.apache.kafka.connect.data.Time", Conversion::kTime, ValueType::kTime, 3},
    {"io.debezium.time.MicroTime", Conversion::kTime, ValueType::kTime, 6},
    {"io.debezium.time.NanoTime", Conversion::kTime, ValueType::kTime, 9},
    {"io.debezium.data.Json", Conversion::kText, ValueType::kJson, 0},
    {"io.debezium.data.Uuid", Conversion::kText, ValueType::kUuid, 0},
    {"io.debezium.time.ZonedTimestamp", Conversion::kText, ValueType::kTimestampTz, 0},
    {"io.debezium.time.ZonedTime", Conversion::kText, ValueType::kTime, 0},
};
constexpr ConnectType kSchemaTypes[] = {
    {"int8", Conversion::kInteger, ValueType::kInt, 0},
    {"int16", Conversion::kInteger, ValueType::kInt, 0},
    {"int32", Conversion::kInteger, ValueType::kInt, 0},
    {"int64", Conversion::kInteger, ValueType::kInt, 0},
    {"float", Conversion::kFloat, ValueType::kFloat, 0},
    {"float32", Conversion::kFloat, ValueType::kFloat, 0},
    {"float64", Conversion::kFloat, ValueType::kFloat, 0},
    {"double", Conversion::kFloat, ValueType::kFloat, 0},
    {"boolean", Conversion::kBoolean, ValueType::kBool, 0},
    {"string", Conversion::kText, ValueType::kText, 0},
    {"bytes", Conversion::kBytes, ValueType::kBytes, 0},
};

template <size_t N>
const ConnectType* FindType(const ConnectType (&types)[N], const Node& name) {
  if (name.kind != Node::Kind::kString) return nullptr;
  for (const ConnectType& type : types) {
    if (type.name == name.text) return &type;
  }
  return nullptr;
}

// A field of the envelope's row struct whose type is known: a column as Debezium's schema
// describes it.
struct Field {
  std::string_view name;
  const ConnectType* type = nullptr;
  int32_t scale = 0;  // of a Decimal
};

// Debezium's JsonConverter with schemas.enable=true writes {"schema":..,"payload":..}; without,
// the payload alone.
struct Payload {
  uint32_t payload = 0;       // the root, when alone
  uint32_t schema = kAbsent;  // none without schemas
};
Payload PayloadOf(const Json& json) {
  int members = 0;
  for ([[maybe_unused]] const uint32_t key : json.Members(0)) ++members;
  const uint32_t schema = json.Find(0, "schema");
  const uint32_t payload = json.Find(0, "payload");
  if (members != 2 || schema == kAbsent || payload == kAbsent) return {};
  return {payload, schema};
}

// --- Relations --------------------------------------------------------------------------

// The index of the entry of `entries` named `name`, looked for at `hint` first (where it is
// when the order is the usual one), or -1.
template <class T>
int FindByName(const std::vector<T>& entries, std::string_view name, size_t hint) {
  if (hint < entries.size() && entries[hint].name == name) return static_cast<int>(hint);
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// One RelationPtr per shape: a sink checks a relation against its destination once per
// pointer, not per message.
class RelationCache {
 public:
  const RelationPtr& Intern(const Relation& shape) {
    if (last_ != nullptr && *last_ == shape) return last_;
    const size_t hash = Hash(shape);
    const auto [first, end] = relations_.equal_range(hash);
    for (auto it = first; it != end; ++it) {
      if (*it->second == shape) return last_ = it->second;
    }
    if (relations_.size() >= kMaxRelations) {
      // Relations only this cache holds have no change in flight; a shape that comes back is
      // built again.
      std::erase_if(relations_, [](const auto& entry) { return entry.second.use_count() == 1; });
    }
    last_ = relations_.emplace(hash, std::make_shared<const Relation>(shape))->second;
    return last_;
  }

 private:
  static constexpr size_t kMaxRelations = 256;

  static size_t Hash(const Relation& relation) {
    const std::hash<std::string_view> hash;
    size_t h = hash(relation.schema) * 31 + hash(relation.name);
    for (const Column& c : relation.columns) {
      h = (h * 31 + hash(c.name)) * 31 + (static_cast<size_t>(c.type) << 1 | (c.key ? 1 : 0));
    }
    return h;
  }

  std::unordered_multimap<size_t, RelationPtr> relations_;  // by Hash
  RelationPtr last_;
};

}  // namespace

// --- The decoder ------------------------------------------------------------------------

class MessageDecoder::Impl {
 public:
  explicit Impl(ValueFormat format) : format_(format) {}

  Result<std::optional<Change>> Decode(std::string_view topic, std::optional<std::string_view> key,
                                       std::optional<std::string_view> value);

 private:
  // What an envelope says of its change, the rows aside.
  struct Envelope {
    ChangeOp op = ChangeOp::kRead;
    std::string_view schema;
    std::string_view table;
    int64_t commit_time_us = 0;
    uint64_t commit_position = 0;
  };
  // A column of the message being decoded.
  struct MessageColumn {
    std::string_view name;
    ValueType type = ValueType::kText;
    bool typed = false;  // `type` is set, by the schema or by a non-null value
    bool key = false;
    const Field* field = nullptr;  // its Debezium schema field; null without one
  };
  // A row (before or after) of the message being decoded.
  struct Image {
    uint32_t object = kAbsent;              // kAbsent: no row
    std::vector<uint32_t> columns;          // per member (but __unchanged_toast__): its column
    std::vector<uint32_t> unchanged_toast;  // the columns __unchanged_toast__ lists
  };

  Status ReadJsonEnvelope(Envelope& envelope);
  Status ReadDebeziumEnvelope(Envelope& envelope);
  Result<ChangeOp> OpOf(uint32_t op) const;
  // Member `name` of `object`: its text, `otherwise` when it is missing or null.
  Result<std::string_view> StringMember(uint32_t object, std::string_view name,
                                        std::string_view otherwise) const;
  // Member ts_ms (milliseconds since the epoch, or null) of `object`, in microseconds.
  Result<int64_t> CommitTimeUs(uint32_t object) const;
  // Members before and after of `envelope` into before_ and after_.
  Status ReadImages(uint32_t envelope);
  Result<uint32_t> ImageOf(uint32_t envelope, std::string_view name) const;
  // The fields of the row struct in Debezium's envelope `schema` into fields_.
  Status ReadFields(uint32_t schema);

  // Adds the columns of `image` to columns_, recording which each of its members is.
  Status AddColumns(Image& image);
  uint32_t ColumnIndex(std::string_view name, size_t hint);
  void MarkKeyColumns(std::optional<std::string_view> key);
  const RelationPtr& RelationOf(const Envelope& envelope);

  Result<Row> RowOf(const Image& image);
  Status SetCell(const MessageColumn& column, uint32_t index, Cell& cell);
  Status Convert(const Field& field, uint32_t index, Cell& cell);
  // `cell` of the non-null value at `index`, read without a schema.
  void SetInferred(uint32_t index, Cell& cell) const;

  const ValueFormat format_;
  Json value_;
  Json key_;
  std::vector<Field> fields_;
  std::vector<MessageColumn> columns_;
  Image before_;
  Image after_;
  Relation shape_;  // the shape of the message being decoded, looked up in relations_
  RelationCache relations_;
  std::string bytes_;  // a decoded base64 value
};

Result<std::optional<Change>> MessageDecoder::Impl::Decode(std::string_view topic,
                                                           std::optional<std::string_view> key,
                                                           std::optional<std::string_view> value) {
  if (!value) return std::optional<Change>();
  if (Status parsed = value_.Parse(*value); !parsed.ok()) return parsed.WithContext("value");
  if (value_[0].kind != Node::Kind::kObject) return InvalidArgument("value is not a JSON object");
  Envelope envelope;
  envelope.table = topic;
  before_.object = kAbsent;
  after_.object = kAbsent;
  fields_.clear();
  RETURN_IF_ERROR(format_ == ValueFormat::kJson ? ReadJsonEnvelope(envelope)
                                                : ReadDebeziumEnvelope(envelope));
  columns_.clear();
  RETURN_IF_ERROR(AddColumns(after_));
  RETURN_IF_ERROR(AddColumns(before_));
  MarkKeyColumns(key);

  Change change;
  change.op = envelope.op;
  change.relation = RelationOf(envelope);
  change.commit_time_us = envelope.commit_time_us;
  change.commit_position = envelope.commit_position;
  if (before_.object != kAbsent) {
    ASSIGN_OR_RETURN(change.before, RowOf(before_));
  }
  if (after_.object != kAbsent) {
    ASSIGN_OR_RETURN(change.after, RowOf(after_));
  }
  return std::optional<Change>(std::move(change));
}

Status MessageDecoder::Impl::ReadJsonEnvelope(Envelope& envelope) {
  const uint32_t op = value_.Find(0, "op");
  if (op == kAbsent ||
      (value_.Find(0, "before") == kAbsent && value_.Find(0, "after") == kAbsent)) {
    after_.object = 0;  // a flat row
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(envelope.op, OpOf(op));
  ASSIGN_OR_RETURN(envelope.schema, StringMember(0, "schema", ""));
  ASSIGN_OR_RETURN(envelope.table, StringMember(0, "table", envelope.table));
  ASSIGN_OR_RETURN(envelope.commit_time_us, CommitTimeUs(0));
  const Node& lsn = value_[value_.Find(0, "lsn")];
  if (lsn.kind == Node::Kind::kString) {
    if (const Result<Lsn> position = Lsn::Parse(lsn.text); position.ok()) {
      envelope.commit_position = position->value();
    }
  }
  return ReadImages(0);
}

Status MessageDecoder::Impl::ReadDebeziumEnvelope(Envelope& envelope) {
  const Payload payload = PayloadOf(value_);
  if (value_[payload.payload].kind != Node::Kind::kObject) {
    return InvalidArgument("payload is not a JSON object");
  }
  ASSIGN_OR_RETURN(envelope.op, OpOf(value_.Find(payload.payload, "op")));
  const uint32_t source = value_.Find(payload.payload, "source");
  switch (value_[source].kind) {
    case Node::Kind::kNull:
      break;
    case Node::Kind::kObject: {
      ASSIGN_OR_RETURN(const std::string_view db, StringMember(source, "db", ""));
      ASSIGN_OR_RETURN(envelope.schema, StringMember(source, "schema", db));
      ASSIGN_OR_RETURN(envelope.table, StringMember(source, "table", envelope.table));
      ASSIGN_OR_RETURN(envelope.commit_time_us, CommitTimeUs(source));
      const Node& lsn = value_[value_.Find(source, "lsn")];
      if (lsn.kind != Node::Kind::kNull &&
          (lsn.kind != Node::Kind::kNumber || !ParseInteger(lsn.text, envelope.commit_position))) {
        return InvalidArgument("source.lsn is not a position");
      }
      break;
    }
    default:
      return InvalidArgument("source is not a JSON object");
  }
  RETURN_IF_ERROR(ReadImages(payload.payload));
  return ReadFields(payload.schema);
}

Result<ChangeOp> MessageDecoder::Impl::OpOf(uint32_t op) const {
  if (value_[op].kind == Node::Kind::kNull) return InvalidArgument("no op");
  // Debezium's codes, and the reference system's words.
  if (value_[op].kind == Node::Kind::kString) {
    if (std::optional<ChangeOp> change_op = ParseChangeOp(value_[op].text)) return *change_op;
  }
  std::string text;
  value_.AppendCompact(op, text);
  return InvalidArgument("unknown op " + text);
}

Result<std::string_view> MessageDecoder::Impl::StringMember(uint32_t object, std::string_view name,
                                                            std::string_view otherwise) const {
  const Node& member = value_[value_.Find(object, name)];
  if (member.kind == Node::Kind::kNull) return otherwise;
  if (member.kind != Node::Kind::kString) {
    return InvalidArgument(std::string(name) + " is not a string");
  }
  return member.text;
}

Result<int64_t> MessageDecoder::Impl::CommitTimeUs(uint32_t object) const {
  constexpr int64_t kMaxMs = std::numeric_limits<int64_t>::max() / 1000;
  const Node& ts_ms = value_[value_.Find(object, "ts_ms")];
  if (ts_ms.kind == Node::Kind::kNull) return int64_t{0};
  int64_t ms = 0;
  if (ts_ms.kind != Node::Kind::kNumber || !ParseInteger(ts_ms.text, ms) || ms > kMaxMs ||
      ms < -kMaxMs) {
    return InvalidArgument("ts_ms is not a time in milliseconds");
  }
  return ms * 1000;
}

Status MessageDecoder::Impl::ReadImages(uint32_t envelope) {
  ASSIGN_OR_RETURN(before_.object, ImageOf(envelope, "before"));
  ASSIGN_OR_RETURN(after_.object, ImageOf(envelope, "after"));
  return Status::Ok();
}

Result<uint32_t> MessageDecoder::Impl::ImageOf(uint32_t envelope, std::string_view name) const {
  const uint32_t row = value_.Find(envelope, name);
  switch (value_[row].kind) {
    case Node::Kind::kNull:
      return kAbsent;
    case Node::Kind::kObject:
      return row;
    default:
      return InvalidArgument(std::string(name) + " is not a JSON object");
  }
}

Status MessageDecoder::Impl::ReadFields(uint32_t schema) {
  // The envelope struct's fields: before, after, source, op, ts_ms. Both row fields have the
  // same struct (the table's Value schema).
  uint32_t row = kAbsent;
  for (const uint32_t field : value_.Elements(value_.Find(schema, "fields"))) {
    const Node& name = value_[value_.Find(field, "field")];
    if (name.text == "after" || (name.text == "before" && row == kAbsent)) row = field;
  }
  for (const uint32_t column : value_.Elements(value_.Find(row, "fields"))) {
    const Node& name = value_[value_.Find(column, "field")];
    if (name.kind != Node::Kind::kString) continue;
    Field field{.name = name.text,
                .type = FindType(kLogicalTypes, value_[value_.Find(column, "name")])};
    if (field.type == nullptr) {
      field.type = FindType(kSchemaTypes, value_[value_.Find(column, "type")]);
    }
    if (field.type == nullptr) continue;  // read as without a schema
    if (field.type->conversion == Conversion::kDecimal &&
        !ParseScale(value_[value_.Find(value_.Find(column, "parameters"), "scale")], field.scale)) {
      return InvalidArgument("column \"" + std::string(field.name) +
                             "\": a Decimal without a valid scale parameter");
    }
    fields_.push_back(field);
  }
  return Status::Ok();
}

Status MessageDecoder::Impl::AddColumns(Image& image) {
  image.columns.clear();
  image.unchanged_toast.clear();
  uint32_t unchanged_toast = kAbsent;
  size_t next = 0;  // the column the next member is, in the usual order
  for (const uint32_t key : value_.Members(image.object)) {
    if (value_[key].text == kUnchangedToast) {
      unchanged_toast = key + 1;
      continue;
    }
    const uint32_t column = ColumnIndex(value_[key].text, next);
    next = column + 1;
    image.columns.push_back(column);
    MessageColumn& c = columns_[column];
    const Node::Kind kind = value_[key + 1].kind;
    if (!c.typed && kind != Node::Kind::kNull) {
      c.type = InferredType(kind);
      c.typed = true;
    }
  }
  if (unchanged_toast == kAbsent) return Status::Ok();
  const auto not_names = [] {
    return InvalidArgument("__unchanged_toast__ is not an array of column names");
  };
  if (value_[unchanged_toast].kind != Node::Kind::kArray) return not_names();
  for (const uint32_t name : value_.Elements(unchanged_toast)) {
    if (value_[name].kind != Node::Kind::kString) return not_names();
    image.unchanged_toast.push_back(ColumnIndex(value_[name].text, next));
  }
  return Status::Ok();
}

uint32_t MessageDecoder::Impl::ColumnIndex(std::string_view name, size_t hint) {
  if (const int found = FindByName(columns_, name, hint); found >= 0) {
    return static_cast<uint32_t>(found);
  }
  MessageColumn& column = columns_.emplace_back();
  column.name = name;
  if (const int field = FindByName(fields_, name, columns_.size() - 1); field >= 0) {
    column.field = &fields_[static_cast<size_t>(field)];
    column.type = column.field->type->type;
    column.typed = true;
  }
  return static_cast<uint32_t>(columns_.size() - 1);
}

void MessageDecoder::Impl::MarkKeyColumns(std::optional<std::string_view> key) {
  // Only an object names columns: a key_path key is the text of a column, and not parsed.
  if (!key) return;
  const size_t start = key->find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos || (*key)[start] != '{' || !key_.Parse(*key).ok()) return;
  const uint32_t object = format_ == ValueFormat::kDebeziumJson ? PayloadOf(key_).payload : 0;
  size_t next = 0;
  for (const uint32_t name : key_.Members(object)) {
    const int column = FindByName(columns_, key_[name].text, next);
    if (column < 0) continue;
    columns_[static_cast<size_t>(column)].key = true;
    next = static_cast<size_t>(column) + 1;
  }
}

const RelationPtr& MessageDecoder::Impl::RelationOf(const Envelope& envelope) {
  shape_.schema.assign(envelope.schema);
  shape_.name.assign(envelope.table);
  shape_.columns.resize(columns_.size());
  for (size_t i = 0; i < columns_.size(); ++i) {
    Column& column = shape_.columns[i];
    column.name.assign(columns_[i].name);
    column.type = columns_[i].type;
    column.key = columns_[i].key;
    column.type_inferred = columns_[i].field == nullptr;
  }
  return relations_.Intern(shape_);
}

Result<Row> MessageDecoder::Impl::RowOf(const Image& image) {
  Row row(columns_.size());
  auto column = image.columns.begin();
  for (const uint32_t key : value_.Members(image.object)) {
    if (value_[key].text == kUnchangedToast) continue;
    const uint32_t c = *column++;
    RETURN_IF_ERROR(SetCell(columns_[c], key + 1, row[c]));
  }
  for (const uint32_t c : image.unchanged_toast) row[c] = Cell::UnchangedToast();
  return row;
}

Status MessageDecoder::Impl::SetCell(const MessageColumn& column, uint32_t index, Cell& cell) {
  const Node& value = value_[index];
  if (value.kind == Node::Kind::kNull) return Status::Ok();
  const Field* field = column.field;
  if (format_ == ValueFormat::kDebeziumJson && value.kind == Node::Kind::kString &&
      (value.text == kUnavailable ||
       (value.text == kUnavailableBase64 &&
        (field == nullptr || field->type->conversion == Conversion::kBytes)))) {
    cell = Cell::UnchangedToast();
    return Status::Ok();
  }
  if (field == nullptr) {
    SetInferred(index, cell);
    return Status::Ok();
  }
  return Convert(*field, index, cell);
}

Status MessageDecoder::Impl::Convert(const Field& field, uint32_t index, Cell& cell) {
  const Node& value = value_[index];
  const Node::Kind kind = value.kind;
  cell.state = CellState::kValue;
  switch (field.type->conversion) {
    case Conversion::kText:
      if (kind != Node::Kind::kString) break;
      cell.text.assign(value.text);
      return Status::Ok();
    case Conversion::kInteger:
      if (kind != Node::Kind::kNumber) break;
      cell.text.assign(value.text);
      return Status::Ok();
    case Conversion::kFloat:
      if (kind != Node::Kind::kNumber && kind != Node::Kind::kString) break;
      cell.text.assign(value.text);
      return Status::Ok();
    case Conversion::kBoolean:
      if (kind != Node::Kind::kTrue && kind != Node::Kind::kFalse) break;
      cell.text.assign(kind == Node::Kind::kTrue ? "t" : "f");
      return Status::Ok();
    case Conversion::kBytes:
      if (kind != Node::Kind::kString || !DecodeBase64(value.text, bytes_)) break;
      cell.text.assign("\\x");
      AppendHex(bytes_, cell.text);
      return Status::Ok();
    case Conversion::kDecimal:
      if (kind != Node::Kind::kString || !DecodeBase64(value.text, bytes_) ||
          bytes_.size() > kMaxDecimalBytes) {
        break;
      }
      AppendDecimal(bytes_, field.scale, cell.text);
      return Status::Ok();
    case Conversion::kVariableScaleDecimal: {
      int32_t scale = 0;
      const Node& unscaled = value_[value_.Find(index, "value")];
      if (!ParseScale(value_[value_.Find(index, "scale")], scale) ||
          unscaled.kind != Node::Kind::kString || !DecodeBase64(unscaled.text, bytes_) ||
          bytes_.size() > kMaxDecimalBytes) {
        break;
      }
      AppendDecimal(bytes_, scale, cell.text);
      return Status::Ok();
    }
    case Conversion::kDate: {
      int32_t days = 0;
      if (kind != Node::Kind::kNumber || !ParseInteger(value.text, days)) break;
      if (AppendDate(days, cell.text)) cell.text += " BC";
      return Status::Ok();
    }
    case Conversion::kTimestamp:
    case Conversion::kTime: {
      int64_t units = 0;
      if (kind != Node::Kind::kNumber || !ParseInteger(value.text, units)) break;
      if (field.type->conversion == Conversion::kTimestamp) {
        AppendTimestamp(units, field.type->digits, cell.text);
      } else {
        AppendTime(units, field.type->digits, cell.text);
      }
      return Status::Ok();
    }
  }
  return InvalidArgument("column \"" + std::string(field.name) + "\": value is not a valid " +
                         std::string(field.type->name));
}

void MessageDecoder::Impl::SetInferred(uint32_t index, Cell& cell) const {
  const Node& value = value_[index];
  cell.state = CellState::kValue;
  if (value.kind == Node::Kind::kTrue || value.kind == Node::Kind::kFalse) {
    cell.text.assign(value.kind == Node::Kind::kTrue ? "t" : "f");
  } else if (value.kind == Node::Kind::kObject || value.kind == Node::Kind::kArray) {
    value_.AppendCompact(index, cell.text);
  } else {
    cell.text.assign(value.text);
  }
}

MessageDecoder::MessageDecoder(ValueFormat format) : impl_(std::make_unique<Impl>(format)) {}
MessageDecoder::~MessageDecoder() = default;
MessageDecoder::MessageDecoder(MessageDecoder&&) noexcept = default;
MessageDecoder& MessageDecoder::operator=(MessageDecoder&&) noexcept = default;

Result<std::optional<Change>> MessageDecoder::Decode(std::string_view topic,
                                                     std::optional<std::string_view> key,
                                                     std::optional<std::string_view> value) {
  return impl_->Decode(topic, key, value);
}

}  // namespace faucet::kafka
