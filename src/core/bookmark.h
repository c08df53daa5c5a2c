// Bookmark: a source's resume position as JSON, in the reference system's shapes so that either
// engine resumes the other's pipelines (postgres {"last_lsn":"X/Y"}, mysql {"file":..,"pos":..},
// generator {"last_id":N}). See docs/state-format.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace faucet {

using Json = nlohmann::json;

struct Bookmark {
  Json value;

  // Compact JSON text, as stored in tokens and logs.
  std::string ToString() const { return value.dump(); }
  friend bool operator==(const Bookmark& a, const Bookmark& b) { return a.value == b.value; }
};

}  // namespace faucet
