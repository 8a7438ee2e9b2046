// EntityMatch: which entities of two versions of one level are the same entity, by the
// identity the level gives them, never by position (what a live reload diffs by).
//
// An entity's identity is its path of names from its root: (its parent's identity, its
// "name", and its occurrence among the earlier siblings of that parent with the same
// name). A named entity keeps its identity however many entities are inserted, removed
// or reordered around it; unnamed siblings (and siblings sharing a name) are told apart
// by their order among themselves only, so inserting an unnamed entity before others
// shifts their identities: name the entities you edit. An entity moved to another
// parent, or renamed, is a different entity (one removed, one added).
//
//   absl::StatusOr<EntityMatch> match = MatchEntities(before_view, after_view);
//   for (uint32_t k = 0; k < after_view.num_entities(); ++k) {
//     if (match->before_of_after[k] == EntityMatch::kNone) { /* k was added */ }
//   }
//
// Cost: when both blobs have the same parents and names (an edit that changed values
// only) a comparison of those arrays at memory speed. Otherwise one pass in blob order
// that pairs entities while both sides agree and looks a few entities ahead where they
// do not, so an insertion or removal costs a few comparisons; what it cannot pair so
// (a reordered or large changed block) is paired through a hash table: O(changed part).
#ifndef STRATA_RESOURCE_ENTITY_MATCH_H_
#define STRATA_RESOURCE_ENTITY_MATCH_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "resource/format.h"

namespace strata {

struct EntityMatch {
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  // before_of_after[k]: the number in `before` of entity k of `after`, or kNone (added).
  std::vector<uint32_t> before_of_after;
  // after_of_before[j]: the number in `after` of entity j of `before`, or kNone (removed).
  std::vector<uint32_t> after_of_before;
  uint32_t kept = 0;
  // same_structure: both have the same parents and names: entity k is entity k.
  bool same_structure = false;
};

// EntityNames: the name of each entity of a validated view ("" for an unnamed one),
// views into the blob. DataLoss for a malformed strata.entity_names section or an
// entity named twice.
absl::StatusOr<std::vector<absl::string_view>> EntityNames(const EntityResourceView& view);

// MatchEntities: the identity match of `before`'s entities with `after`'s (see above).
// DataLoss for a malformed names section in either.
absl::StatusOr<EntityMatch> MatchEntities(const EntityResourceView& before,
                                          const EntityResourceView& after);

// MatchEntities (arrays): the same over parent arrays (parent < child, kNoParent for
// roots, as a validated view guarantees) and names, one per entity.
EntityMatch MatchEntities(absl::Span<const uint32_t> before_parents,
                          absl::Span<const absl::string_view> before_names,
                          absl::Span<const uint32_t> after_parents,
                          absl::Span<const absl::string_view> after_names);

}  // namespace strata

#endif  // STRATA_RESOURCE_ENTITY_MATCH_H_
