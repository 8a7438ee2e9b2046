#include "resource/entity_match.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/id_string.h"
#include "resource/metadata.h"

namespace strata {
namespace {

constexpr uint32_t kNone = EntityMatch::kNone;

// Key: an entity's identity less its occurrence: the `before` number of its parent
// (kNoParent for a root) and its name.
struct Key {
  uint32_t parent = kNoParent;
  absl::string_view name;

  friend bool operator==(const Key& a, const Key& b) { return a.parent == b.parent && a.name == b.name; }
  template <typename H>
  friend H AbslHashValue(H h, const Key& k) {
    return H::combine(std::move(h), k.parent, k.name);
  }
};

// A few multiplies over the parent, the length and the name's last 8 bytes: enough to
// spread the handful of keys a filter below holds, far cheaper than hashing the name.
uint64_t QuickHash(const Key& k) {
  uint64_t tail = 0;
  const size_t n = std::min<size_t>(k.name.size(), 8);
  if (n > 0) std::memcpy(&tail, k.name.data() + k.name.size() - n, n);
  uint64_t x = (uint64_t{k.parent} << 32 | k.name.size()) * 0x9E3779B97F4A7C15ull;
  x ^= tail * 0xC2B2AE3D27D4EB4Full;
  return x ^ (x >> 29);
}

// TaintedKeys: the keys whose occurrences can no longer be paired in order because
// one of them was passed over on one side. A 4096-bit filter in front of the set keeps
// the check to one load for the other keys.
class TaintedKeys {
 public:
  bool Contains(const Key& k) const {
    if (set_.empty()) return false;
    const uint64_t h = QuickHash(k) & 4095;
    if ((filter_[h >> 6] >> (h & 63) & 1) == 0) return false;
    return set_.contains(k);
  }
  void Add(const Key& k) {
    const uint64_t h = QuickHash(k) & 4095;
    filter_[h >> 6] |= uint64_t{1} << (h & 63);
    set_.insert(k);
  }

 private:
  uint64_t filter_[64] = {};
  absl::flat_hash_set<Key> set_;
};

}  // namespace

absl::StatusOr<std::vector<absl::string_view>> EntityNames(const EntityResourceView& view) {
  std::vector<absl::string_view> names(view.num_entities());
  for (const ComponentTypeView& section : view.component_types()) {
    if (section.type != IdString32(kEntityNamesSection)) continue;
    absl::StatusOr<std::vector<absl::string_view>> strings = ReadStringSection(section);
    if (!strings.ok()) return strings.status();
    std::vector<bool> named(view.num_entities(), false);
    for (size_t i = 0; i < strings->size(); ++i) {
      const uint32_t k = section.entity_index[i];  // < num_entities: validated
      if (named[k]) {
        return absl::DataLossError(absl::StrCat("entity names: entity ", k, " is named twice"));
      }
      named[k] = true;
      names[k] = (*strings)[i];
    }
  }
  return names;
}

EntityMatch MatchEntities(absl::Span<const uint32_t> before_parents,
                          absl::Span<const absl::string_view> before_names,
                          absl::Span<const uint32_t> after_parents,
                          absl::Span<const absl::string_view> after_names) {
  const uint32_t nb = static_cast<uint32_t>(before_parents.size());
  const uint32_t na = static_cast<uint32_t>(after_parents.size());
  EntityMatch m;
  if (na == nb && std::equal(before_parents.begin(), before_parents.end(), after_parents.begin()) &&
      std::equal(before_names.begin(), before_names.end(), after_names.begin())) {
    m.before_of_after.resize(na);
    std::iota(m.before_of_after.begin(), m.before_of_after.end(), 0u);
    m.after_of_before = m.before_of_after;
    m.kept = na;
    m.same_structure = true;
    return m;
  }
  m.before_of_after.assign(na, kNone);
  m.after_of_before.assign(nb, kNone);
  auto pair = [&](uint32_t a, uint32_t b) {
    m.before_of_after[a] = b;
    m.after_of_before[b] = a;
    ++m.kept;
  };
  // A key is known once the parent is paired (a root's always).
  auto after_key = [&](uint32_t a, Key* k) {
    const uint32_t p = after_parents[a];
    if (p == kNoParent) {
      *k = Key{kNoParent, after_names[a]};
      return true;
    }
    const uint32_t b = m.before_of_after[p];
    if (b == kNone) return false;
    *k = Key{b, after_names[a]};
    return true;
  };
  auto before_key = [&](uint32_t b, Key* k) {
    const uint32_t p = before_parents[b];
    if (p != kNoParent && m.after_of_before[p] == kNone) return false;
    *k = Key{p, before_names[b]};
    return true;
  };

  // Phase 1: both sides in blob order. Entities whose keys agree pair up; the k-th
  // occurrence of a key pairs with the k-th on the other side as long as no occurrence
  // of it was passed over on either side (then the key is tainted and the rest of its
  // occurrences wait for phase 2). Passed-over entities, and those whose parent is not
  // paired yet, wait in the pools, in blob order.
  std::vector<uint32_t> pool_after;
  std::vector<uint32_t> pool_before;
  TaintedKeys tainted;
  constexpr uint32_t kWindow = 64;
  uint32_t a = 0;
  uint32_t b = 0;
  Key ka;
  Key kb;
  while (a < na && b < nb) {
    if (!after_key(a, &ka) || tainted.Contains(ka)) {
      pool_after.push_back(a++);
      continue;
    }
    if (!before_key(b, &kb) || tainted.Contains(kb)) {
      pool_before.push_back(b++);
      continue;
    }
    if (ka == kb) {
      pair(a++, b++);
      continue;
    }
    // Which side moves on: the first of the next entities on either side that matches
    // the other side's current one says which was inserted or removed.
    bool inserted = false;
    bool removed = false;
    for (uint32_t d = 1; d <= kWindow && !inserted && !removed; ++d) {
      Key k;
      inserted = a + d < na && after_key(a + d, &k) && k == kb;
      removed = !inserted && b + d < nb && before_key(b + d, &k) && k == ka;
    }
    if (!removed) {
      tainted.Add(ka);
      pool_after.push_back(a++);
    }
    if (!inserted) {
      tainted.Add(kb);
      pool_before.push_back(b++);
    }
  }
  for (; a < na; ++a) pool_after.push_back(a);
  for (; b < nb; ++b) pool_before.push_back(b);

  // Phase 2: the pools by key, occurrences in blob order. An entity of `after` waits
  // until its parent is decided, which blob order guarantees (parent < child).
  if (pool_after.empty() || pool_before.empty()) return m;
  absl::flat_hash_map<Key, uint32_t> first;  // key -> its first waiting `before` entity
  first.reserve(pool_before.size());
  std::vector<uint32_t> next(pool_before.size(), kNone);  // positions in pool_before
  for (size_t x = pool_before.size(); x-- > 0;) {
    const uint32_t j = pool_before[x];
    auto [it, inserted] = first.try_emplace(Key{before_parents[j], before_names[j]}, static_cast<uint32_t>(x));
    if (!inserted) {
      next[x] = it->second;
      it->second = static_cast<uint32_t>(x);
    }
  }
  for (const uint32_t i : pool_after) {
    Key k;
    if (!after_key(i, &k)) continue;  // its parent was added: so is it
    auto it = first.find(k);
    if (it == first.end()) continue;
    const uint32_t x = it->second;
    pair(i, pool_before[x]);
    if (next[x] == kNone) {
      first.erase(it);
    } else {
      it->second = next[x];
    }
  }
  return m;
}

absl::StatusOr<EntityMatch> MatchEntities(const EntityResourceView& before,
                                          const EntityResourceView& after) {
  // The common edit changes values only: the same parents and the same names section
  // byte for byte (checked still, as the pairing would need the names).
  auto names_section = [](const EntityResourceView& view) -> std::optional<ComponentTypeView> {
    for (const ComponentTypeView& section : view.component_types()) {
      if (section.type == IdString32(kEntityNamesSection)) return section;
    }
    return std::nullopt;
  };
  const std::optional<ComponentTypeView> before_section = names_section(before);
  const std::optional<ComponentTypeView> after_section = names_section(after);
  const absl::Span<const uint32_t> before_parents = before.parent_index();
  const absl::Span<const uint32_t> after_parents = after.parent_index();
  auto same = [](auto x, auto y) { return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin()); };
  if (same(before_parents, after_parents) && before_section.has_value() == after_section.has_value() &&
      (!before_section.has_value() ||
       (same(before_section->entity_index, after_section->entity_index) &&
        same(before_section->data, after_section->data)))) {
    // Still a well-formed section: a reload must not accept what a spawn refuses.
    if (after_section.has_value()) {
      absl::StatusOr<std::vector<absl::string_view>> checked = ReadStringSection(*after_section);
      if (!checked.ok()) return checked.status();
    }
    EntityMatch m;
    m.before_of_after.resize(after.num_entities());
    std::iota(m.before_of_after.begin(), m.before_of_after.end(), 0u);
    m.after_of_before = m.before_of_after;
    m.kept = after.num_entities();
    m.same_structure = true;
    return m;
  }
  absl::StatusOr<std::vector<absl::string_view>> after_names = EntityNames(after);
  if (!after_names.ok()) return after_names.status();
  absl::StatusOr<std::vector<absl::string_view>> before_names = EntityNames(before);
  if (!before_names.ok()) return before_names.status();
  return MatchEntities(before.parent_index(), *before_names, after.parent_index(), *after_names);
}

}  // namespace strata
