#include "config/block.h"

#include <cerrno>
#include <cstdlib>

namespace faucet::config {

std::string MarkText(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null()) return file;
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

namespace {

bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return false;
  *out = v;
  return true;
}

// The node as text for "got ..." in messages.
std::string Describe(const YAML::Node& n) {
  if (n.IsScalar()) {
    if (n.Tag() == kInterpolatedTag) {
      return "a value from ${env:}, ${secret:} or ${file:} (not shown)";
    }
    return "'" + n.Scalar() + "'";
  }
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "nothing";
}

}  // namespace

Block::Block()
    : Block(YAML::Node(YAML::NodeType::Map), std::make_shared<const std::string>(), "") {}

Block::Block(const YAML::Node& node, std::shared_ptr<const std::string> file, std::string path)
    : node_(node),
      file_(std::move(file)),
      path_(std::move(path)),
      read_(std::make_shared<std::set<std::string>>()) {}

Block& Block::operator=(const Block& other) {
  node_.reset(other.node_);
  file_ = other.file_;
  path_ = other.path_;
  read_ = other.read_;
  return *this;
}

Block& Block::operator=(Block&& other) noexcept {
  node_.reset(other.node_);
  file_ = std::move(other.file_);
  path_ = std::move(other.path_);
  read_ = std::move(other.read_);
  return *this;
}

YAML::Node Block::Get(const std::string& key) const {
  if (!node_.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  read_->insert(key);
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.Scalar() == key) return it->second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string Block::Where(const std::string& key) const {
  if (!key.empty() && node_.IsMap()) {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      if (it->first.Scalar() == key) return MarkText(*file_, it->second.Mark());
    }
  }
  return MarkText(*file_, node_.Mark());
}

bool Block::Has(const std::string& key) const {
  if (!node_.IsMap()) return false;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.Scalar() == key) return true;
  }
  return false;
}

std::vector<std::string> Block::Keys() const {
  std::vector<std::string> keys;
  if (!node_.IsMap()) return keys;
  for (auto it = node_.begin(); it != node_.end(); ++it) keys.push_back(it->first.Scalar());
  return keys;
}

std::string Block::KeyPath(const std::string& key) const {
  if (key.empty()) return path_;
  return path_.empty() ? key : path_ + "." + key;
}

Status Block::Error(const std::string& key, const std::string& message) const {
  return InvalidArgument(Where(key) + ": " + KeyPath(key) + ": " + message);
}

Status Block::KeyError(const std::string& key, const std::string& message) const {
  YAML::Mark mark = node_.Mark();
  if (node_.IsMap()) {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      if (it->first.Scalar() == key) {
        mark = it->first.Mark();
        break;
      }
    }
  }
  return InvalidArgument(MarkText(*file_, mark) + ": " + KeyPath(key) + ": " + message);
}

std::string Block::Shown(const std::string& key) const { return Describe(Get(key)); }

Result<std::optional<std::string>> Block::OptionalString(const std::string& key) const {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return std::optional<std::string>();
  if (!n.IsScalar()) return Error(key, "expected a string, got " + Shown(key));
  return std::optional<std::string>(n.Scalar());
}

Result<std::string> Block::RequiredString(const std::string& key) const {
  ASSIGN_OR_RETURN(std::optional<std::string> v, OptionalString(key));
  if (!v) return Error(key, "is required (expected a string)");
  if (v->find_first_not_of(" \t") == std::string::npos) {
    return Error(key, "must not be empty");
  }
  return *v;
}

Result<std::string> Block::String(const std::string& key, const std::string& fallback) const {
  ASSIGN_OR_RETURN(std::optional<std::string> v, OptionalString(key));
  return v ? *v : fallback;
}

Result<std::optional<int64_t>> Block::OptionalInt(const std::string& key, int64_t min,
                                                  int64_t max) const {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return std::optional<int64_t>();
  auto range = [&] {
    std::string r = "expected an integer";
    if (min != std::numeric_limits<int64_t>::min() && max != std::numeric_limits<int64_t>::max()) {
      r += " between " + std::to_string(min) + " and " + std::to_string(max);
    } else if (min != std::numeric_limits<int64_t>::min()) {
      r += " >= " + std::to_string(min);
    }
    return r;
  };
  int64_t v = 0;
  if (!n.IsScalar() || !ParseInt(n.Scalar(), &v) || v < min || v > max) {
    return Error(key, range() + ", got " + Shown(key));
  }
  return std::optional<int64_t>(v);
}

Result<int64_t> Block::Int(const std::string& key, int64_t fallback, int64_t min,
                           int64_t max) const {
  ASSIGN_OR_RETURN(std::optional<int64_t> v, OptionalInt(key, min, max));
  return v ? *v : fallback;
}

Result<double> Block::Double(const std::string& key, double fallback, double min,
                             double max) const {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return fallback;
  std::string expected =
      "expected a number between " + std::to_string(min) + " and " + std::to_string(max);
  if (!n.IsScalar()) return Error(key, expected + ", got " + Shown(key));
  char* end = nullptr;
  const std::string& s = n.Scalar();
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || v < min || v > max) {
    return Error(key, expected + ", got " + Shown(key));
  }
  return v;
}

Result<bool> Block::Bool(const std::string& key, bool fallback) const {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return fallback;
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "true") return true;
    if (s == "false") return false;
  }
  return Error(key, "expected true or false, got " + Shown(key));
}

Result<std::string> Block::Enum(const std::string& key, const std::string& fallback,
                                const std::vector<std::string>& allowed) const {
  ASSIGN_OR_RETURN(std::string v, String(key, fallback));
  for (const std::string& a : allowed) {
    if (v == a) return v;
  }
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
  return Error(key, "expected one of " + list + ", got " + Shown(key));
}

Result<std::vector<std::string>> Block::StringList(const std::string& key) const {
  YAML::Node n = Get(key);
  std::vector<std::string> out;
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsSequence()) return Error(key, "expected a list of strings, got " + Shown(key));
  for (const YAML::Node& item : n) {
    if (!item.IsScalar()) return Error(key, "expected a list of strings");
    out.push_back(item.Scalar());
  }
  return out;
}

Result<Block> Block::Child(const std::string& key) const {
  ASSIGN_OR_RETURN(std::optional<Block> child, OptionalChild(key));
  if (child) return *std::move(child);
  return Block(YAML::Node(YAML::NodeType::Map), file_, KeyPath(key));
}

Result<std::optional<Block>> Block::OptionalChild(const std::string& key) const {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return std::optional<Block>();
  if (!n.IsMap()) return Error(key, "expected a mapping, got " + Shown(key));
  return std::optional<Block>(Block(n, file_, KeyPath(key)));
}

Result<std::vector<Block>> Block::BlockList(const std::string& key) const {
  YAML::Node n = Get(key);
  std::vector<Block> out;
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsSequence()) return Error(key, "expected a list of mappings, got " + Shown(key));
  for (std::size_t i = 0; i < n.size(); ++i) {
    Block item(n[i], file_, KeyPath(key) + "[" + std::to_string(i) + "]");
    if (!item.node_.IsMap()) {
      return item.Error("", "expected a mapping, got " + Describe(item.node_));
    }
    out.push_back(std::move(item));
  }
  return out;
}

void Block::MarkRead(const std::string& key) const { read_->insert(key); }

std::vector<std::string> Block::UnreadKeys() const {
  std::vector<std::string> unread;
  for (const std::string& k : Keys()) {
    if (!read_->count(k)) unread.push_back(k);
  }
  return unread;
}

}  // namespace faucet::config
