// The Compactor's planners (see iteration/internal/compactor.h and compactor.cc, which
// runs the passes). The design and the figures are in docs/notes/iteration.md.
//
// 1. Group every occupied slot by its component set (its "signature"), a page at a
// time: the slots of a page with the same set are found with a few mask ANDs per set,
// not per slot. 2. Give each signature a range of whole pages, in signature order:
// [start, start + count) plus padding to the page boundary. 3. An entity of a
// signature already inside its range stays; the others are outsiders. Outsiders that
// can trade places (one of set s in r's range with one of r in s's range) are left to
// the trades, which find them again from the masks as they go (PlanTrades,
// TakeOfSet); the other outsiders are planned one move each, into the free or foreign
// slots of their range (holes). Stores with more sets than the dense tables take plan
// every move (PlanCompaction), after the trades. Steps 1 and 2, the survey, are in
// iteration/internal/compaction_survey.h.
#include "iteration/internal/compactor.h"

#include <algorithm>
#include <cassert>
#include <vector>

#include "absl/numeric/bits.h"
#include "absl/types/span.h"
#include "iteration/entity_pages.h"
#include "iteration/internal/compaction_survey.h"
#include "iteration/internal/page_slots.h"

namespace strata::iteration_internal {

static_assert(kPageSlots == kEntityPageSize);

std::vector<const uint32_t*> Compactor::TypeMasks() const {
  const EntityPages& store = *store_;
  std::vector<const uint32_t*> masks(store.types_.size());
  for (size_t c = 0; c < store.types_.size(); ++c) masks[c] = store.types_[c].masks.data();
  return masks;
}

void Compactor::ResetTrades() {
  trades_.clear();
  trade_cursor_ = 0;
  trade_sets_.clear();
  parked_stage_ = 0;
  moves_pending_ = false;
}

bool Compactor::ResetPlan() {
  EntityPages& store = *store_;
  plan_.clear();
  plan_cursor_ = 0;
  store.layout_changed_ = false;
  return store.num_entities_ != 0;
}

bool Compactor::PlanTrades() {
  const EntityPages& store = *store_;
  ResetTrades();
  if (!ResetPlan()) return false;
  Survey survey;
  SurveyPages(store.occupied_.data(), TypeMasks(), store.page_capacity_, survey);
  plan_end_ = survey.end;
  // Outsiders per (set, range they stand in), counted; only their numbers are kept:
  // the trades find the slots again from the masks as they go.
  const size_t n = survey.signatures.size();
  const bool dense = n <= PairBuckets::kMaxDense;
  std::vector<uint32_t> pairs(dense ? n * n : 0);
  // The groups are in page order and the ranges cover pages [0, end / 32) in `order`:
  // one walk over the groups, range by range, with no per-page lookup of the owner. A
  // page wholly inside range r adds each group of another set to (set, r); only the
  // page holding the range's end (its padding) looks at bits.
  size_t total = 0;
  const absl::Span<const Survey::Group> groups = survey.groups;
  size_t k = 0;
  uint32_t scratch = 0;  // the many-sets store's (set, range) counter: unused
  auto count_of = [&](uint32_t s, uint32_t r) -> uint32_t& {
    return dense ? pairs[size_t{s} * n + r] : scratch;
  };
  std::vector<uint32_t> away_of(n, 0);         // per set: its outsiders
  std::vector<size_t> range_groups_end(n, 0);  // per range: past its last page's groups
  for (const uint32_t r : survey.order) {
    const uint32_t range_end = survey.start[r] + survey.counts[r];
    const uint32_t full_end_page = range_end >> kEntityPageShift;
    for (; k < groups.size() && groups[k].page < full_end_page; ++k) {
      const Survey::Group& g = groups[k];
      const uint32_t away = g.signature == r ? 0 : g.count;
      total += away;
      away_of[g.signature] += away;
      count_of(g.signature, r) += away;
    }
    const uint32_t in_range = (uint32_t{1} << (range_end & (kEntityPageSize - 1))) - 1;
    if (in_range != 0) {  // the range's last page is partly padding
      for (; k < groups.size() && groups[k].page == full_end_page; ++k) {
        const Survey::Group& g = groups[k];
        const uint32_t bits = g.signature == r ? g.bits & ~in_range : g.bits;
        total += PopCount(bits);
        away_of[g.signature] += PopCount(bits);
        count_of(g.signature, r) += PopCount(bits & in_range);
      }
    }
    range_groups_end[r] = k;
  }
  const size_t past_ranges = k;
  for (; k < groups.size(); ++k) {  // past the ranges
    total += groups[k].count;
    away_of[groups[k].signature] += groups[k].count;
  }
  if (total == 0) return false;
  if (!dense) {
    moves_pending_ = true;  // many sets: the full plan of the moves does it all
    return true;
  }
  // Each set of a trade as one word per type, from a slot holding it: 0 if the set
  // has the type, all ones if not, so that mask ^ word has the set's slots set.
  std::vector<uint32_t> set_offset(n, ~uint32_t{0});
  auto set_of = [&](uint32_t s) {
    if (set_offset[s] == ~uint32_t{0}) {
      set_offset[s] = static_cast<uint32_t>(trade_sets_.size());
      const uint32_t slot = survey.first_slot[s];
      for (size_t c = 0; c < store.types_.size(); ++c) {
        const uint32_t mask = store.types_[c].masks[slot >> kEntityPageShift];
        trade_sets_.push_back(((mask >> (slot & (kEntityPageSize - 1))) & 1u) - 1);
      }
    }
    return set_offset[s];
  };
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const uint32_t s = survey.order[i];
      const uint32_t r = survey.order[j];
      if (pairs[size_t{s} * n + r] == 0 || pairs[size_t{r} * n + s] == 0) continue;
      const uint32_t s_start = survey.start[s];
      const uint32_t r_start = survey.start[r];
      trades_.push_back(
          {{r_start, r_start + survey.counts[r], set_of(s), kNoSlot, 0},
           {s_start, s_start + survey.counts[s], set_of(r), kNoSlot, 0}});
    }
  }
  // The moves left after the trades, planned now from the same survey: the trades
  // of (s, r) take the first min(s in r's range, r in s's range) of both in slot
  // order, so the outsiders left are the last ones of each (set, range) bucket, those
  // on padding and those past the ranges. A range's holes (its slots that no entity of
  // its set holds or gets by a trade) are as many as its set's outsiders left, all
  // used. Both are found by walking each range's pages backwards from its end, only
  // until its untraded outsiders and its holes are all found: after a first
  // compaction's trades they are near the ends, so the walk is a few pages per range,
  // not a second pass over the store.
  auto traded = [&](uint32_t s, uint32_t r) {
    return s == r ? 0 : std::min(pairs[size_t{s} * n + r], pairs[size_t{r} * n + s]);
  };
  std::vector<std::vector<uint32_t>> outsiders(n);
  std::vector<std::vector<uint32_t>> holes(n);
  auto append = [](std::vector<uint32_t>& out, uint32_t base, uint32_t bits) {
    for (; bits != 0; bits &= bits - 1) {
      out.push_back(base + static_cast<uint32_t>(absl::countr_zero(bits)));
    }
  };
  std::vector<uint32_t> untraded_left(n);  // per set: its outsiders in this range to find
  size_t range_groups_begin = 0;
  for (const uint32_t r : survey.order) {
    size_t outsiders_left = 0;
    size_t traded_out = 0;  // r's outsiders that trade
    for (uint32_t s = 0; s < n; ++s) {
      untraded_left[s] = pairs[size_t{s} * n + r] - traded(s, r);
      outsiders_left += untraded_left[s];
      traded_out += traded(r, s);
    }
    size_t holes_left = away_of[r] - traded_out;
    const uint32_t range_end = survey.start[r] + survey.counts[r];
    const uint32_t full_end_page = range_end >> kEntityPageShift;
    const uint32_t last_in_range = (uint32_t{1} << (range_end & (kEntityPageSize - 1))) - 1;
    const uint32_t first_page = survey.start[r] >> kEntityPageShift;
    size_t g = range_groups_end[r];
    // The last page first: it holds the padding, whose entities are outsiders too.
    uint32_t page = last_in_range != 0 ? full_end_page : full_end_page - 1;
    for (;;) {
      const uint32_t in_range = page == full_end_page ? last_in_range : ~uint32_t{0};
      const uint32_t base = page * kEntityPageSize;
      uint32_t taken = 0;  // slots of the range that are, or will be, home
      for (; g > range_groups_begin && groups[g - 1].page == page; --g) {
        const Survey::Group& group = groups[g - 1];
        std::vector<uint32_t>& out = outsiders[group.signature];
        append(out, base, group.bits & ~in_range);  // on padding: in no range
        uint32_t in = group.bits & in_range;
        if (group.signature == r) {
          taken |= in;
          continue;
        }
        // The highest ones left of the bucket do not trade; the rest do (an entity of
        // r comes in).
        for (uint32_t& left = untraded_left[group.signature]; left != 0 && in != 0; --left) {
          const uint32_t top = uint32_t{1} << (31 - absl::countl_zero(in));
          out.push_back(base + static_cast<uint32_t>(31 - absl::countl_zero(in)));
          in &= ~top;
          --outsiders_left;
        }
        taken |= in;
      }
      const uint32_t page_holes = in_range & ~taken;
      assert(PopCount(page_holes) <= holes_left);
      holes_left -= PopCount(page_holes);
      append(holes[r], base, page_holes);
      if ((outsiders_left == 0 && holes_left == 0) || page == first_page) break;
      --page;
    }
    assert(outsiders_left == 0 && holes_left == 0);
    range_groups_begin = range_groups_end[r];
  }
  for (size_t k = past_ranges; k < groups.size(); ++k) {
    const Survey::Group& group = groups[k];
    append(outsiders[group.signature], group.page * kEntityPageSize, group.bits);
  }
  for (const uint32_t s : survey.order) {
    assert(outsiders[s].size() == holes[s].size());
    const size_t moves = std::min(outsiders[s].size(), holes[s].size());
    for (size_t k = 0; k < moves; ++k) {
      const uint32_t from = outsiders[s][k];
      const Entity e = store.entity_at(from >> kEntityPageShift, from & (kEntityPageSize - 1));
      plan_.push_back({e.index(), e.generation(), holes[s][k]});
    }
  }
  return true;
}

size_t Compactor::TakeOfSet(TradeCursor& cursor, const uint32_t* const* masks,
                            uint32_t* out, size_t max) {
  const EntityPages& store = *store_;
  const size_t num_types = store.types_.size();
  const uint32_t* const flips = trade_sets_.data() + cursor.set;
  // Pages [.., end_page) hold the range's slots (the last one partly, maybe).
  const uint32_t last_page = cursor.end >> kEntityPageShift;
  const uint32_t end_bits = cursor.end & (kEntityPageSize - 1);
  const uint32_t end_page = static_cast<uint32_t>(
      std::min<size_t>(last_page + (end_bits != 0 ? 1 : 0), store.page_capacity_));
  const PageMatchRows rows{.occupied = store.occupied_.data(),
                           .masks = masks,
                           .flips = flips,
                           .num_types = num_types,
                           .last_page = last_page,
                           .last_bits = (uint32_t{1} << end_bits) - 1};
  uint32_t page = cursor.page;
  uint32_t bits = cursor.bits;
  if (page == kNoSlot) {  // nothing cached: start at cursor.next
    page = cursor.next >> kEntityPageShift;
    if (cursor.next >= cursor.end || page >= end_page) {
      cursor.next = cursor.end;
      return 0;
    }
    bits = PageMatches(rows, page) & (~uint32_t{0} << (cursor.next & (kEntityPageSize - 1)));
  }
  size_t n = 0;
  for (;;) {
    if (bits != 0) {
      // The page's matches at once (out has room for a page past max); those past
      // max stay cached for the next call.
      const uint32_t base = page * kEntityPageSize;
      const size_t count = AppendPageSlots(bits, base, out + n);
      if (n + count > max) {
        const uint32_t last_taken = out[max - 1] - base;
        cursor.page = page;
        cursor.bits = bits & ((~uint32_t{0} << last_taken) << 1);  // last_taken may be 31
        cursor.next = out[max - 1] + 1;
        return max;
      }
      n += count;
    }
    // The pages that fit whole, in one dispatched call (a vector compress per 8 or 16
    // slots where the CPU has one), then the next page as above.
    page = TakeWholePages(rows, page + 1, end_page, out, n, max);
    if (page >= end_page || n == max) {
      cursor.page = kNoSlot;
      cursor.bits = 0;
      cursor.next = page >= end_page ? cursor.end : page * kEntityPageSize;
      return n;
    }
    bits = PageMatches(rows, page);
  }
}

bool Compactor::PlanCompaction() {
  const EntityPages& store = *store_;
  if (!ResetPlan()) return false;
  Survey survey;
  SurveyPages(store.occupied_.data(), TypeMasks(), store.page_capacity_, survey);
  plan_end_ = survey.end;
  const size_t num_signatures = survey.signatures.size();
  const std::vector<uint32_t>& order = survey.order;
  const absl::Span<const Survey::Group> groups = survey.groups;

  // 3. Holes per signature and outsiders per (signature, range they stand in), in
  // slot order: first their numbers (popcounts over the groups), so that every
  // bucket is allocated once, then the slots.
  const uint32_t no_range = static_cast<uint32_t>(num_signatures);  // padding or past
  auto for_each_page = [&](auto&& fn) { ForEachRangePage(survey, store.page_capacity_, fn); };
  auto away = [&](const Survey::Group& g, uint32_t s_owner, uint32_t in_range) {
    return Away(survey, g, s_owner, in_range);
  };
  PairBuckets by_range(num_signatures);
  std::vector<std::vector<uint32_t>> holes(num_signatures);
  if (num_signatures <= PairBuckets::kMaxDense) {
    std::vector<uint32_t> bucket_size(num_signatures * (num_signatures + 1));
    std::vector<uint32_t> hole_count(num_signatures);
    for_each_page([&](uint32_t, uint32_t s_owner, uint32_t in_range, size_t g0, size_t g1) {
      uint32_t home = 0;
      for (size_t k = g0; k < g1; ++k) {
        const Survey::Group& g = groups[k];
        const uint32_t bits = away(g, s_owner, in_range);
        home |= g.bits & ~bits;
        const size_t row = size_t{g.signature} * (num_signatures + 1);
        bucket_size[row + s_owner] += PopCount(bits & in_range);
        bucket_size[row + no_range] += PopCount(bits & ~in_range);
      }
      hole_count[s_owner] += PopCount(in_range & ~home);
    });
    for (uint32_t s = 0; s < num_signatures; ++s) {
      holes[s].reserve(hole_count[s]);
      for (uint32_t r = 0; r <= num_signatures; ++r) {
        const uint32_t size = bucket_size[size_t{s} * (num_signatures + 1) + r];
        if (size != 0) by_range.At(s, r).reserve(size);
      }
    }
  }
  size_t total = 0;
  for_each_page([&](uint32_t page, uint32_t s_owner, uint32_t in_range, size_t g0,
                    size_t g1) {
    const uint32_t base = page * kEntityPageSize;
    uint32_t home = 0;
    for (size_t k = g0; k < g1; ++k) {
      const Survey::Group& g = groups[k];
      const uint32_t bits = away(g, s_owner, in_range);
      home |= g.bits & ~bits;
      total += PopCount(bits);
      if (const uint32_t in = bits & in_range; in != 0) {
        std::vector<uint32_t>& bucket = by_range.At(g.signature, s_owner);
        for (uint32_t b = in; b != 0; b &= b - 1) {
          bucket.push_back(base + static_cast<uint32_t>(absl::countr_zero(b)));
        }
      }
      if (const uint32_t out = bits & ~in_range; out != 0) {
        std::vector<uint32_t>& bucket = by_range.At(g.signature, no_range);
        for (uint32_t b = out; b != 0; b &= b - 1) {
          bucket.push_back(base + static_cast<uint32_t>(absl::countr_zero(b)));
        }
      }
    }
    for (uint32_t gaps = in_range & ~home; gaps != 0; gaps &= gaps - 1) {
      holes[s_owner].push_back(base + static_cast<uint32_t>(absl::countr_zero(gaps)));
    }
  });

  // 4. The plan. First swaps: an entity of set s in set r's range and one of set r in
  // s's range trade places (one swap places both). Then every other outsider of a set
  // goes to the next of its range's holes not taken by a swap, in slot order per
  // bucket (range by range, then the ones in no range).
  const size_t scan_pages = std::max<size_t>(store.page_capacity_, survey.owner.size());
  const size_t slot_words = (scan_pages * kEntityPageSize + 63) / 64;
  std::vector<uint64_t> planned(slot_words, 0);  // slots already a source or target
  auto mark = [&](uint32_t slot) { planned[slot >> 6] |= uint64_t{1} << (slot & 63); };
  auto is_marked = [&](uint32_t slot) {
    return ((planned[slot >> 6] >> (slot & 63)) & 1u) != 0;
  };
  auto push = [&](uint32_t from, uint32_t to) {
    const Entity e = store.entity_at(from >> kEntityPageShift, from & (kEntityPageSize - 1));
    plan_.push_back({e.index(), e.generation(), to});
  };
  plan_.reserve(total);
  for (const uint32_t s : order) {
    for (const uint32_t r : order) {
      if (r <= s) continue;
      const std::vector<uint32_t>* a = by_range.Find(s, r);
      const std::vector<uint32_t>* b = by_range.Find(r, s);
      if (a == nullptr || b == nullptr) continue;
      const size_t pairs = std::min(a->size(), b->size());
      for (size_t k = 0; k < pairs; ++k) {
        const uint32_t x = (*a)[k];
        const uint32_t y = (*b)[k];
        push(x, y);
        push(y, x);
        mark(x);
        mark(y);
      }
    }
  }
  for (const uint32_t s : order) {
    size_t next_hole = 0;
    auto place = [&](const std::vector<uint32_t>* outsiders) {
      if (outsiders == nullptr) return;
      for (const uint32_t slot : *outsiders) {
        if (is_marked(slot)) continue;  // swapped above
        while (next_hole < holes[s].size() && is_marked(holes[s][next_hole])) ++next_hole;
        assert(next_hole < holes[s].size());
        push(slot, holes[s][next_hole++]);
      }
    };
    for (const uint32_t r : order) place(by_range.Find(s, r));
    place(by_range.Find(s, no_range));
  }
  return !plan_.empty();
}

}  // namespace strata::iteration_internal
