// Transforms that change a table's columns derive a new Relation from each one they see. The
// derived relation is built once per source relation (a schema change brings a new source
// relation, hence a new derived one) and shared by every change.
#pragma once

#include <functional>
#include <map>

#include "core/change.h"

namespace faucet {

class DerivedRelations {
 public:
  using Derive = std::function<Relation(const Relation&)>;
  explicit DerivedRelations(Derive derive) : derive_(std::move(derive)) {}

  const RelationPtr& For(const RelationPtr& source) {
    auto it = cache_.find(source);
    if (it == cache_.end()) {
      // Relations that only this cache still holds (replaced by a schema change, their
      // changes written) can never be asked for again.
      std::erase_if(cache_, [](const auto& entry) { return entry.first.use_count() == 1; });
      it = cache_.emplace(source, std::make_shared<Relation>(derive_(*source))).first;
    }
    return it->second;
  }

 private:
  Derive derive_;
  // Keyed by the shared pointer, which keeps the source relation alive: an address can then
  // never be reused by a different relation while it is a key here.
  std::map<RelationPtr, RelationPtr> cache_;
};

}  // namespace faucet
