#include "sinks/sql/target_table.h"

#include <algorithm>
#include <set>

namespace faucet::sql {
namespace {

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

}  // namespace

int TargetTable::Find(std::string_view name) const {
  int folded = -1;
  int folded_count = 0;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == name) return static_cast<int>(i);
    if (EqualsIgnoringCase(columns[i].name, name)) {
      folded = static_cast<int>(i);
      ++folded_count;
    }
  }
  return folded_count == 1 ? folded : -1;
}

Result<std::vector<int>> ResolveKey(const TargetTable& table, const std::vector<std::string>& key,
                                    bool need_unique) {
  std::vector<int> out;
  std::set<std::string> names;
  for (const std::string& k : key) {
    int i = table.Find(k);
    if (i < 0) {
      return InvalidArgument("table " + table.display_name + " has no column " + k +
                             " (named in key)");
    }
    if (std::find(out.begin(), out.end(), i) != out.end()) {
      return InvalidArgument("key names column " + k + " twice");
    }
    out.push_back(i);
    names.insert(table.columns[i].name);
  }
  if (!need_unique) return out;
  for (const std::vector<std::string>& unique : table.unique_keys) {
    if (std::set<std::string>(unique.begin(), unique.end()) == names) return out;
  }
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  return InvalidArgument("table " + table.display_name +
                         " has no primary key or unique index on exactly (" + list +
                         "): an upsert needs one to find existing rows");
}

}  // namespace faucet::sql
