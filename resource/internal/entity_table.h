// The entity compiler's table of the level's entities (parent, position, name), built
// in pre-order as entities are met, and the resolver of entity references against it
// (by unique name, path of names, or number). Paths for messages are built from the
// table only when a message needs one, so deep nesting stays linear.
//
//   EntityTable table;                // filled by the compiler's LevelBuilder
//   std::string where = table.Path(k);  // `entities[3].children[1] ("wheel")`
//   ReferenceResolver resolver(table);
//   absl::StatusOr<uint32_t> target = resolver.Resolve("car/wheel");
#ifndef STRATA_RESOURCE_INTERNAL_ENTITY_TABLE_H_
#define STRATA_RESOURCE_INTERNAL_ENTITY_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/user_text.h"
#include "resource/format.h"

namespace strata::resource_internal {

// The level's entities as the compiler numbers them, for paths and references. Names
// live in one arena (the DOM that used to hold them is gone).
struct EntityTable {
  static constexpr uint32_t kNoName = 0xFFFFFFFFu;

  std::vector<uint32_t> parent;
  std::vector<uint32_t> position;     // index in the parent's children (or entities)
  std::vector<uint32_t> name_slot;    // kNoName: unnamed; else an index in name_begin
  std::vector<size_t> name_begin{0};  // name i is name_chars[name_begin[i], name_begin[i + 1])
  std::string name_chars;

  size_t size() const { return parent.size(); }
  bool HasName(uint32_t k) const { return name_slot[k] != kNoName; }
  absl::string_view Name(uint32_t k) const {
    const uint32_t slot = name_slot[k];
    return absl::string_view(name_chars).substr(name_begin[slot], name_begin[slot + 1] - name_begin[slot]);
  }
  void SetName(uint32_t k, absl::string_view text) {
    name_slot[k] = static_cast<uint32_t>(name_begin.size() - 1);
    name_chars.append(text.data(), text.size());
    name_begin.push_back(name_chars.size());
  }

  // Path: `entities[3].children[1] ("wheel")`. O(depth): built only for messages.
  std::string Path(uint32_t k) const {
    std::vector<uint32_t> chain;
    for (uint32_t e = k; e != kNoParent; e = parent[e]) chain.push_back(e);
    std::string path;
    for (size_t i = chain.size(); i-- > 0;) {
      absl::StrAppend(&path, i + 1 == chain.size() ? "entities[" : ".children[",
                      position[chain[i]], "]");
    }
    if (HasName(k)) absl::StrAppend(&path, " (\"", UserText(Name(k)), "\")");
    return path;
  }
  // ChildPath: the path of child `i` of `parent_entity` (or of root `i`), before it
  // has a number.
  std::string ChildPath(uint32_t parent_entity, size_t i) const {
    if (parent_entity == kNoParent) return absl::StrCat("entities[", i, "]");
    std::string path = Path(parent_entity);
    // Drop the parent's name: the child is what the message is about.
    if (HasName(parent_entity)) path.resize(path.rfind(" (\""));
    return absl::StrCat(path, ".children[", i, "]");
  }
};

inline constexpr uint32_t kAmbiguous = 0xFFFFFFFEu;

// Resolves entity references by unique name, or by a path of names from a root.
// Its indexes are built at the first Resolve that needs them: a level without
// references (most of a big level's entities are named only for the index) pays
// nothing for them.
class ReferenceResolver {
 public:
  explicit ReferenceResolver(const EntityTable& table) : table_(table) {}

  absl::StatusOr<uint32_t> Resolve(absl::string_view reference) {
    if (!by_name_built_) {
      by_name_built_ = true;
      by_name_.reserve(table_.name_begin.size() - 1);  // one slot per name set
      for (uint32_t k = 0; k < table_.size(); ++k) {
        if (!table_.HasName(k)) continue;
        auto [it, inserted] = by_name_.emplace(table_.Name(k), k);
        if (!inserted) it->second = kAmbiguous;
      }
    }
    auto it = by_name_.find(reference);
    if (it != by_name_.end() && it->second != kAmbiguous) return it->second;
    if (reference.find('/') != absl::string_view::npos) return ResolvePath(reference);
    uint32_t number = 0;
    if (reference.size() > 1 && reference[0] == '#' &&
        absl::SimpleAtoi(reference.substr(1), &number)) {
      if (number < table_.size()) return number;
      return absl::InvalidArgumentError(absl::StrCat("entity number ", UserText(reference),
                                                     " is past the level's ", table_.size(),
                                                     " entities"));
    }
    if (it != by_name_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "several entities are named \"", UserText(reference),
          "\"; refer to one by its path of names from a root (\"a/b/c\")"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("no entity of this level is named \"", UserText(reference), "\""));
  }

 private:
  absl::StatusOr<uint32_t> ResolvePath(absl::string_view path) {
    if (by_parent_.empty()) {
      for (uint32_t k = 0; k < table_.size(); ++k) {
        if (!table_.HasName(k)) continue;
        auto [it, inserted] = by_parent_.emplace(std::make_pair(table_.parent[k], table_.Name(k)), k);
        if (!inserted) it->second = kAmbiguous;
      }
    }
    uint32_t at = kNoParent;
    for (absl::string_view part : absl::StrSplit(path, '/')) {
      auto it = by_parent_.find(std::make_pair(at, part));
      if (it == by_parent_.end()) {
        return absl::InvalidArgumentError(absl::StrCat("path \"", UserText(path), "\": no entity \"",
                                                       UserText(part), "\" there"));
      }
      if (it->second == kAmbiguous) {
        return absl::InvalidArgumentError(absl::StrCat("path \"", UserText(path), "\": several \"",
                                                       UserText(part), "\" there"));
      }
      at = it->second;
    }
    return at;
  }

  const EntityTable& table_;
  bool by_name_built_ = false;
  absl::flat_hash_map<absl::string_view, uint32_t> by_name_;
  absl::flat_hash_map<std::pair<uint32_t, absl::string_view>, uint32_t> by_parent_;
};


}  // namespace strata::resource_internal

#endif  // STRATA_RESOURCE_INTERNAL_ENTITY_TABLE_H_
