// The Compactor's survey of a store (its planners, iteration/internal/compactor_plan.cc):
// the component sets ("signatures") of its occupied slots, grouped a page at a time,
// and the range of whole pages each set gets. A helper of the Compactor
// (iteration/internal/compactor.h) that reads only the masks it is given, compiled in
// the same target, //iteration:entity_pages.
#ifndef STRATA_ITERATION_INTERNAL_COMPACTION_SURVEY_H_
#define STRATA_ITERATION_INTERNAL_COMPACTION_SURVEY_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "iteration/components.h"

namespace strata::iteration_internal {

// Set bits of a page mask. Without -mpopcnt (no global -march: it fights Highway's
// dispatch) absl::popcount is a libgcc call, which showed in the planner's profile.
inline uint32_t PopCount(uint32_t x) {
  x = x - ((x >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  return (((x + (x >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
}

// Buckets of slots per (signature, range) pair, range n (the number of signatures)
// standing for "no set's range": a dense table for stores with few component sets
// (the usual case), a hash map beyond.
class PairBuckets {
 public:
  static constexpr size_t kMaxDense = 64;
  explicit PairBuckets(size_t num_signatures)
      : n_(num_signatures), dense_(n_ <= kMaxDense ? n_ * (n_ + 1) : 0) {}
  std::vector<uint32_t>& At(uint32_t s, uint32_t r) {
    if (n_ <= kMaxDense) return dense_[size_t{s} * (n_ + 1) + r];
    return sparse_[uint64_t{s} << 32 | r];
  }
  const std::vector<uint32_t>* Find(uint32_t s, uint32_t r) const {
    if (n_ <= kMaxDense) {
      const std::vector<uint32_t>& v = dense_[size_t{s} * (n_ + 1) + r];
      return v.empty() ? nullptr : &v;
    }
    auto it = sparse_.find(uint64_t{s} << 32 | r);
    return it == sparse_.end() ? nullptr : &it->second;
  }

 private:
  size_t n_;
  std::vector<std::vector<uint32_t>> dense_;
  absl::flat_hash_map<uint64_t, std::vector<uint32_t>> sparse_;
};

// The component sets of a store and their target ranges: step 1 and 2 of a pass,
// shared by the trades and the plan of the moves left.
struct Survey {
  struct Group {
    uint32_t page;
    uint32_t signature;  // index into signatures
    uint32_t bits;
    uint32_t count;  // PopCount(bits): most pages lie wholly inside a range, where the
                     // planners need no other count
  };
  std::vector<uint64_t> signatures;
  std::vector<uint32_t> counts;      // per signature: entities
  std::vector<uint32_t> first_slot;  // per signature: a slot holding it
  // In page order. Written through a pointer into storage that is not zeroed first:
  // a vector's push_back (a capacity check and a call per group) was a third of the
  // survey.
  std::unique_ptr<Group[]> group_storage;
  absl::Span<const Group> groups;
  std::vector<uint32_t> order;  // signature indices, sorted by signature
  std::vector<uint32_t> start;  // per signature: its range's first slot
  std::vector<uint32_t> owner;  // per page of the ranges: the signature owning it
  uint32_t end = 0;             // past the last range
};

// Groups the occupied slots of `num_pages` pages by component set (masks[c] the
// masks of type c) and gives each set a range of whole pages in signature order.
// A set's signature is its type bits (exact for the first 64 types; later types mix
// in a hash, where a collision can only merge two sets' ranges, never change a
// query). O(pages * sets per page * types).
void SurveyPages(const uint32_t* occupied, const std::vector<const uint32_t*>& masks,
                 size_t num_pages, Survey& out);

// Calls fn(page, owner, in_range, first group, end group) for each page of the
// store or of the ranges: in_range are the page's slots inside its owner's
// [start, start + count) (none past the ranges), the groups those of the page.
template <typename Fn>
void ForEachRangePage(const Survey& survey, size_t num_pages, Fn&& fn) {
  const size_t scan_pages = std::max<size_t>(num_pages, survey.owner.size());
  size_t next_group = 0;
  for (size_t page = 0; page < scan_pages; ++page) {
    uint32_t in_range = 0;
    uint32_t s_owner = 0;
    if (page < survey.owner.size()) {
      s_owner = survey.owner[page];
      const uint32_t end = survey.start[s_owner] + survey.counts[s_owner];
      const uint32_t base = static_cast<uint32_t>(page * kEntityPageSize);
      in_range = end - base >= kEntityPageSize ? ~uint32_t{0} : (uint32_t{1} << (end - base)) - 1;
    }
    const size_t first_group = next_group;
    while (next_group < survey.groups.size() && survey.groups[next_group].page == page) {
      ++next_group;
    }
    fn(static_cast<uint32_t>(page), s_owner, in_range, first_group, next_group);
  }
}

// The slots of group g that are not home: all of them but those of the page owner's
// set inside its range.
inline uint32_t Away(const Survey& survey, const Survey::Group& g, uint32_t s_owner,
                     uint32_t in_range) {
  return g.page < survey.owner.size() && g.signature == s_owner ? g.bits & ~in_range : g.bits;
}

}  // namespace strata::iteration_internal

#endif  // STRATA_ITERATION_INTERNAL_COMPACTION_SURVEY_H_
