// config::Block: one YAML/JSON mapping of a config file with its location, read through typed
// getters whose errors name the file, line, column and full key path, and say what was
// expected. Connectors parse their `config:` block with it; keys no getter read are reported
// as warnings ("unknown key") by the caller.
//
// Example message: "pipe.yaml:12:19: pipeline.source.config.batch_size: expected an integer
// between 1 and 1000000, got 'ten'".
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"

namespace faucet::config {

// The tag the document loader puts on scalars whose text came from ${env:}, ${secret:} or
// ${file:}: such text may be a credential, so messages name it without quoting it.
inline constexpr char kInterpolatedTag[] = "!faucet/interpolated";

// "file:line:col" with 1-based line and column, or just `file` when the mark is null.
std::string MarkText(const std::string& file, const YAML::Mark& mark);

class Block {
 public:
  // An empty mapping with no file, for holders that are filled in later.
  Block();
  // `file` is the config file's path as the user gave it; `path` the dotted key path of this
  // block ("pipeline.source.config"). A null or missing node reads as an empty mapping.
  Block(const YAML::Node& node, std::shared_ptr<const std::string> file, std::string path);

  // Copies share the node. Assignment rebinds this block to the other's node: yaml-cpp's own
  // Node assignment would instead write the other's value into the node this block shares
  // with its copies (and merge their memory), changing every config built from it.
  Block(const Block&) = default;
  Block(Block&&) = default;
  Block& operator=(const Block& other);
  Block& operator=(Block&& other) noexcept;

  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return node_; }
  // "file:line:col" of this block, or of `key` within it when present.
  std::string Where(const std::string& key = "") const;

  bool Has(const std::string& key) const;
  std::vector<std::string> Keys() const;

  Result<std::string> RequiredString(const std::string& key) const;
  Result<std::string> String(const std::string& key, const std::string& fallback) const;
  Result<std::optional<std::string>> OptionalString(const std::string& key) const;
  Result<int64_t> Int(const std::string& key, int64_t fallback,
                      int64_t min = std::numeric_limits<int64_t>::min(),
                      int64_t max = std::numeric_limits<int64_t>::max()) const;
  Result<std::optional<int64_t>> OptionalInt(
      const std::string& key, int64_t min = std::numeric_limits<int64_t>::min(),
      int64_t max = std::numeric_limits<int64_t>::max()) const;
  Result<double> Double(const std::string& key, double fallback, double min, double max) const;
  Result<bool> Bool(const std::string& key, bool fallback) const;
  // One of `allowed`; the error lists them.
  Result<std::string> Enum(const std::string& key, const std::string& fallback,
                           const std::vector<std::string>& allowed) const;
  // A sequence of strings; absent reads as empty.
  Result<std::vector<std::string>> StringList(const std::string& key) const;
  // A nested mapping; absent reads as an empty block.
  Result<Block> Child(const std::string& key) const;
  // A nested mapping, or nothing when the key is absent or null.
  Result<std::optional<Block>> OptionalChild(const std::string& key) const;
  // A sequence of mappings, each a block at path "key[i]"; absent reads as empty.
  Result<std::vector<Block>> BlockList(const std::string& key) const;

  // Marks `key` as read without reading it (for keys parsed from node() directly).
  void MarkRead(const std::string& key) const;
  // Keys present in the block that no getter read, in file order.
  std::vector<std::string> UnreadKeys() const;

  // kInvalidArgument "file:line:col: path.key: message", located at `key`'s value when present.
  Status Error(const std::string& key, const std::string& message) const;
  // Like Error, but located at the key itself: for errors about the key (unknown, unsupported),
  // whose value may start lines below it.
  Status KeyError(const std::string& key, const std::string& message) const;

 private:
  // The value at `key` as text, for "got ..." in messages.
  std::string Shown(const std::string& key) const;
  // "path.key", or the block's own path for an empty key.
  std::string KeyPath(const std::string& key) const;
  YAML::Node Get(const std::string& key) const;

  YAML::Node node_;
  std::shared_ptr<const std::string> file_;
  std::string path_;
  std::shared_ptr<std::set<std::string>> read_;
};

}  // namespace faucet::config
