// EntityPages::Compact: the planning and the moves of a compaction (see
// iteration/entity_pages.h). The design and the figures are in docs/notes/iteration.md.
//
// A pass: 1. group every occupied slot by its component set (its "signature"), a page
// at a time: the slots of a page with the same set are found with a few mask ANDs
// per set, not per slot. 2. Give each signature a range of whole pages, in signature
// order: [start, start + count) plus padding to the page boundary. 3. An entity of a
// signature already inside its range stays; the others (outsiders) are paired with
// the free or foreign slots of their range (holes), after pairing first the
// outsiders that can trade places (one of set s in r's range with one of r in s's
// range). 4. Execute, in batches: into a free hole, a move; into a hole held by
// another entity, a swap (for the traded pairs it places both); the slot records of
// a batch first, then each component type's masks and data.
#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/numeric/bits.h"
#include "iteration/entity_pages.h"

namespace strata {
namespace {

// A type's contribution to a signature. The first 64 types get one bit each, so the
// signature is the exact set for stores of up to 64 types; later types mix in a
// hash, where a collision would only merge two sets' ranges (the layout gets worse,
// queries stay correct: they read the masks, not the signatures).
uint64_t SignatureKey(ComponentId c) {
  if (c < 64) return uint64_t{1} << c;
  uint64_t z = uint64_t{c} * 0x9E3779B97F4A7C15ull;  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) | 1;
}

// Set bits of a page mask. Without -mpopcnt (no global -march: it fights Highway's
// dispatch) absl::popcount is a libgcc call, which showed in the planner's profile.
inline uint32_t PopCount(uint32_t x) {
  x = x - ((x >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  return (((x + (x >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
}

// kAnySize: SwapColumn's size parameter for a size known only at run time.
constexpr size_t kAnySize = ~size_t{0};

// Swaps the elements of one component type between slots pairs[2k] and pairs[2k+1]
// for k < n, in order, with their mask bits: both present, a swap; one present, a
// copy to the other side (whose data page `ensure(page)` allocates if missing); none,
// nothing. Sizes known at compile time (kSize, 0 for tags) copy with a few moves.
template <size_t kSize, typename Ensure>
void SwapColumn(uint32_t* masks, std::byte** data, size_t runtime_size,
                const uint32_t* pairs, size_t n, Ensure&& ensure) {
  const size_t size = kSize == kAnySize ? runtime_size : kSize;
  // The element lines of the pair kAhead ahead (their data-page pointers are in L2):
  // a pair takes a few ns once its lines are in, a miss a hundred or more.
  constexpr size_t kAhead = 24;
  for (size_t k = 0; k < n; ++k) {
    if (size != 0 && k + kAhead < n) {
      for (int side = 0; side < 2; ++side) {
        const uint32_t slot = pairs[2 * (k + kAhead) + side];
        if (const std::byte* page = data[slot >> kEntityPageShift]) {
          __builtin_prefetch(page + size_t{slot & (kEntityPageSize - 1)} * size, 1);
        }
      }
    }
    const uint32_t a = pairs[2 * k];
    const uint32_t b = pairs[2 * k + 1];
    const uint32_t a_page = a >> kEntityPageShift;
    const uint32_t b_page = b >> kEntityPageShift;
    const uint32_t a_flag = uint32_t{1} << (a & (kEntityPageSize - 1));
    const uint32_t b_flag = uint32_t{1} << (b & (kEntityPageSize - 1));
    const bool in_a = (masks[a_page] & a_flag) != 0;
    const bool in_b = (masks[b_page] & b_flag) != 0;
    if (!in_a && !in_b) continue;
    std::byte* data_a = data[a_page];
    std::byte* data_b = data[b_page];
    if (ABSL_PREDICT_FALSE(data_a == nullptr)) data_a = ensure(a_page);
    if (ABSL_PREDICT_FALSE(data_b == nullptr)) data_b = ensure(b_page);
    if (in_a != in_b) {
      masks[a_page] ^= a_flag;  // the same word twice if both slots share a page
      masks[b_page] ^= b_flag;
    }
    if (size == 0) continue;
    std::byte* pa = data_a + size_t{a & (kEntityPageSize - 1)} * size;
    std::byte* pb = data_b + size_t{b & (kEntityPageSize - 1)} * size;
    if constexpr (kSize != kAnySize && kSize != 0) {
      std::byte tmp[kSize];
      if (in_a && in_b) {
        std::memcpy(tmp, pa, kSize);
        std::memcpy(pa, pb, kSize);
        std::memcpy(pb, tmp, kSize);
      } else if (in_a) {
        std::memcpy(pb, pa, kSize);
      } else {
        std::memcpy(pa, pb, kSize);
      }
    } else {
      if (in_a && in_b) {
        std::swap_ranges(pa, pa + size, pb);
      } else if (in_a) {
        std::memcpy(pb, pa, size);
      } else {
        std::memcpy(pa, pb, size);
      }
    }
  }
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

}  // namespace

bool EntityPages::PlanCompaction() {
  plan_.clear();
  plan_cursor_ = 0;
  layout_changed_ = false;
  if (num_entities_ == 0) return false;

  std::vector<uint64_t> keys(types_.size());
  for (size_t c = 0; c < types_.size(); ++c) keys[c] = SignatureKey(static_cast<ComponentId>(c));
  // Calls fn(signature, bits) for each group of slots of `page` with the same set.
  auto for_each_group = [&](size_t page, auto&& fn) {
    uint32_t remaining = occupied_[page];
    while (remaining != 0) {
      const uint32_t i = static_cast<uint32_t>(absl::countr_zero(remaining));
      uint32_t same = remaining;
      uint64_t signature = 0;
      for (size_t c = 0; c < types_.size(); ++c) {
        const uint32_t mask = types_[c].masks[page];
        if ((mask >> i) & 1u) {
          same &= mask;
          signature ^= keys[c];
        } else {
          same &= ~mask;
        }
      }
      fn(signature, same);
      remaining &= ~same;
    }
  };

  // 1. Signatures and their sizes.
  absl::flat_hash_map<uint64_t, uint32_t> index_of;
  std::vector<uint64_t> signatures;
  std::vector<uint32_t> counts;
  // Looks a signature up: few sets is the usual case, so a linear search over the
  // signatures seen (in cache) before the hash map.
  constexpr size_t kLinearSignatures = 16;
  auto find_signature = [&](uint64_t signature) -> uint32_t {
    if (signatures.size() <= kLinearSignatures) {
      for (uint32_t k = 0; k < signatures.size(); ++k) {
        if (signatures[k] == signature) return k;
      }
      return ~uint32_t{0};
    }
    auto it = index_of.find(signature);
    return it == index_of.end() ? ~uint32_t{0} : it->second;
  };
  auto signature_index = [&](uint64_t signature) {
    uint32_t k = find_signature(signature);
    if (k == ~uint32_t{0}) {
      k = static_cast<uint32_t>(signatures.size());
      index_of.emplace(signature, k);
      signatures.push_back(signature);
      counts.push_back(0);
    }
    return k;
  };
  // The groups found, kept for step 3 (one scan of the masks instead of two).
  struct Group {
    uint32_t page;
    uint32_t signature;  // index into signatures
    uint32_t bits;
  };
  std::vector<Group> groups;
  groups.reserve(page_capacity_ * 2);
  for (size_t page = 0; page < page_capacity_; ++page) {
    if (occupied_[page] == 0) continue;
    for_each_group(page, [&](uint64_t signature, uint32_t bits) {
      const uint32_t s = signature_index(signature);
      counts[s] += PopCount(bits);
      groups.push_back({static_cast<uint32_t>(page), s, bits});
    });
  }

  // 2. Ranges of whole pages, in signature order.
  const size_t num_signatures = signatures.size();
  std::vector<uint32_t> order(num_signatures);
  for (uint32_t s = 0; s < num_signatures; ++s) order[s] = s;
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return signatures[a] < signatures[b]; });
  std::vector<uint32_t> start(num_signatures);
  // Per page of the target ranges: the signature owning it.
  uint32_t next = 0;
  for (const uint32_t s : order) {
    start[s] = next;
    next += (counts[s] + kEntityPageSize - 1) & ~(kEntityPageSize - 1);
  }
  plan_end_ = next;
  std::vector<uint32_t> owner(plan_end_ >> kEntityPageShift);
  for (const uint32_t s : order) {
    const uint32_t first = start[s] >> kEntityPageShift;
    const uint32_t last = (start[s] + counts[s] + kEntityPageSize - 1) >> kEntityPageShift;
    for (uint32_t p = first; p < last; ++p) owner[p] = s;
  }

  // 3. Holes per signature and outsiders per (signature, range they stand in), in
  // slot order: first their numbers (popcounts over the groups), so that every
  // bucket is allocated once, then the slots.
  const uint32_t no_range = static_cast<uint32_t>(num_signatures);  // padding or past
  const size_t scan_pages = std::max<size_t>(page_capacity_, owner.size());
  // Calls fn(page, owner, in_range, group range) for each page: in_range are the
  // page's slots inside its owner's [start, start + count), the groups those of the
  // page (an empty range for a page without entities).
  auto for_each_page = [&](auto&& fn) {
    size_t next_group = 0;
    for (size_t page = 0; page < scan_pages; ++page) {
      uint32_t in_range = 0;
      uint32_t s_owner = 0;
      if (page < owner.size()) {
        s_owner = owner[page];
        const uint32_t end = start[s_owner] + counts[s_owner];
        const uint32_t base = static_cast<uint32_t>(page * kEntityPageSize);
        in_range = end - base >= kEntityPageSize ? ~uint32_t{0}
                                                 : (uint32_t{1} << (end - base)) - 1;
      }
      const size_t first_group = next_group;
      while (next_group < groups.size() && groups[next_group].page == page) ++next_group;
      fn(static_cast<uint32_t>(page), s_owner, in_range, first_group, next_group);
    }
  };
  // The slots of group g that are not home: all of them but those of the page owner's
  // set inside its range.
  auto away = [&](const Group& g, uint32_t s_owner, uint32_t in_range, size_t page) {
    return page < owner.size() && g.signature == s_owner ? g.bits & ~in_range : g.bits;
  };
  PairBuckets by_range(num_signatures);
  std::vector<std::vector<uint32_t>> holes(num_signatures);
  if (num_signatures <= PairBuckets::kMaxDense) {
    std::vector<uint32_t> bucket_size(num_signatures * (num_signatures + 1));
    std::vector<uint32_t> hole_count(num_signatures);
    for_each_page([&](uint32_t page, uint32_t s_owner, uint32_t in_range, size_t g0,
                      size_t g1) {
      uint32_t home = 0;
      for (size_t k = g0; k < g1; ++k) {
        const Group& g = groups[k];
        const uint32_t bits = away(g, s_owner, in_range, page);
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
      const Group& g = groups[k];
      const uint32_t bits = away(g, s_owner, in_range, page);
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
  const size_t slot_words = (scan_pages * kEntityPageSize + 63) / 64;
  std::vector<uint64_t> planned(slot_words, 0);  // slots already a source or target
  auto mark = [&](uint32_t slot) { planned[slot >> 6] |= uint64_t{1} << (slot & 63); };
  auto is_marked = [&](uint32_t slot) {
    return ((planned[slot >> 6] >> (slot & 63)) & 1u) != 0;
  };
  auto push = [&](uint32_t from, uint32_t to) {
    const Entity e = entity_at(from >> kEntityPageShift, from & (kEntityPageSize - 1));
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

void EntityPages::MoveRecords(uint32_t from, uint32_t to) {
  const uint32_t from_page = from >> kEntityPageShift;
  const uint32_t from_bit = from & (kEntityPageSize - 1);
  const uint32_t to_page = to >> kEntityPageShift;
  const uint32_t to_bit = to & (kEntityPageSize - 1);
  EntityPage* dst = EnsureEntityPage(to_page);  // may grow the tables: first
  EntityPage* src = entity_pages_[from_page];
  const uint32_t index = src->index[from_bit];
  dst->index[to_bit] = index;
  dst->generation[to_bit] = src->generation[from_bit];
  count_[to] = count_[from];
  count_[from] = 0;
  occupied_[to_page] |= uint32_t{1} << to_bit;
  occupied_[from_page] &= ~(uint32_t{1} << from_bit);
  slot_of_[index] = to;
  if (!dirty_[from_page]) MarkDirty(from_page);
  PushFreeSlot(from);
}

void EntityPages::SwapRecords(uint32_t a, uint32_t b) {
  const uint32_t a_page = a >> kEntityPageShift;
  const uint32_t a_bit = a & (kEntityPageSize - 1);
  const uint32_t b_page = b >> kEntityPageShift;
  const uint32_t b_bit = b & (kEntityPageSize - 1);
  EntityPage* ea = entity_pages_[a_page];
  EntityPage* eb = entity_pages_[b_page];
  const uint32_t index_a = ea->index[a_bit];
  const uint32_t index_b = eb->index[b_bit];
  ea->index[a_bit] = index_b;
  eb->index[b_bit] = index_a;
  std::swap(ea->generation[a_bit], eb->generation[b_bit]);
  std::swap(count_[a], count_[b]);
  slot_of_[index_b] = a;
  slot_of_[index_a] = b;
  // Either page may lose its last entity with some component.
  if (!dirty_[a_page]) MarkDirty(a_page);
  if (!dirty_[b_page]) MarkDirty(b_page);
}

void EntityPages::SwapComponentData(ComponentId c, const uint32_t* pairs, size_t n) {
  ComponentType& type = types_[c];
  // Nothing to do for a type without data pages in this batch's pages: its masks
  // there are zero (a set bit implies a data page).
  if (type.first_page == type.end_page) return;
  uint32_t* const masks = type.masks.data();
  std::byte** const data = type.data.data();  // EnsureDataPage writes entries, never grows
  auto ensure = [&](uint32_t page) { return EnsureDataPage(type, page); };
  switch (type.size) {
    case 0: return SwapColumn<0>(masks, data, 0, pairs, n, ensure);
    case 4: return SwapColumn<4>(masks, data, 4, pairs, n, ensure);
    case 8: return SwapColumn<8>(masks, data, 8, pairs, n, ensure);
    case 12: return SwapColumn<12>(masks, data, 12, pairs, n, ensure);
    case 16: return SwapColumn<16>(masks, data, 16, pairs, n, ensure);
    default: return SwapColumn<kAnySize>(masks, data, type.size, pairs, n, ensure);
  }
}

size_t EntityPages::Compact(size_t budget) {
  if (budget == 0) return 0;
  if (plan_cursor_ >= plan_.size()) {
    if (!layout_changed_) return 0;  // compact since the last pass: nothing to plan
    if (!PlanCompaction()) return 0;
    MakeIndirect();  // the moves need the slot table from here on
  }
  // The moves run in batches of kBatch slot pairs, in two phases. First the pairs are
  // decided and the slot records moved (entity pages, counts, occupancy, slot table),
  // in plan order, which is what later moves of the batch read. Then, one component
  // type at a time, its masks and data are swapped pair by pair in the same order
  // (a move is a swap with an empty slot). Every phase walks one kind of memory in
  // ascending slot order (the plan's order), which the prefetchers follow, instead of
  // a dozen lines of different arrays per move.
  constexpr size_t kBatch = 512;
  // The moves' slots are scattered over a store larger than the caches, and each
  // move's records are a chain of dependent loads (slot, page pointer, records):
  // prefetch the slot of the move kAhead * 2 ahead and the records of the move kAhead
  // ahead, so several moves' misses overlap.
  constexpr size_t kAhead = 16;
  auto prefetch_records = [&](uint32_t slot) {
    const uint32_t page = slot >> kEntityPageShift;
    if (page >= page_capacity_) return;
    const uint32_t bit = slot & (kEntityPageSize - 1);
    if (const EntityPage* entity_page = entity_pages_[page]) {
      __builtin_prefetch(&entity_page->index[bit], 1);
      __builtin_prefetch(&entity_page->generation[bit], 1);
    }
    __builtin_prefetch(&count_[slot], 1);
  };
  uint32_t pairs[2 * kBatch];
  size_t num_pairs = 0;
  auto flush = [&] {
    for (ComponentId c = 0; c < num_types_; ++c) SwapComponentData(c, pairs, num_pairs);
    num_pairs = 0;
  };
  size_t moves = 0;
  while (plan_cursor_ < plan_.size() && moves < budget) {
    if (plan_cursor_ + 2 * kAhead < plan_.size()) {
      __builtin_prefetch(&slot_of_[plan_[plan_cursor_ + 2 * kAhead].index]);
    }
    if (plan_cursor_ + kAhead < plan_.size()) {
      const PlannedMove& ahead = plan_[plan_cursor_ + kAhead];
      const uint32_t from = slot_of_[ahead.index];
      if (from != kNoSlot) prefetch_records(from);
      prefetch_records(ahead.target);
    }
    const PlannedMove& move = plan_[plan_cursor_];
    const uint32_t slot = slot_of_[move.index];
    // Deleted or reissued since the plan, or already placed by an earlier swap.
    if (gen_of_[move.index] != move.generation || slot == kNoSlot || slot == move.target) {
      ++plan_cursor_;
      continue;
    }
    const uint32_t target_page = move.target >> kEntityPageShift;
    const bool taken =
        target_page < page_capacity_ &&
        ((occupied_[target_page] >> (move.target & (kEntityPageSize - 1))) & 1u) != 0;
    if (!taken) {
      MoveRecords(slot, move.target);
      pairs[2 * num_pairs] = slot;
      pairs[2 * num_pairs + 1] = move.target;
      ++moves;
      ++plan_cursor_;
    } else if (budget - moves >= 2) {
      SwapRecords(slot, move.target);
      pairs[2 * num_pairs] = slot;
      pairs[2 * num_pairs + 1] = move.target;
      moves += 2;
      ++plan_cursor_;
    } else {
      // One move left: move the target's occupant out of the way, past the target
      // ranges; this entity takes its target on the next call.
      const uint32_t free_slot = FindFreeSlotFrom(plan_end_);
      MoveRecords(move.target, free_slot);
      pairs[2 * num_pairs] = move.target;
      pairs[2 * num_pairs + 1] = free_slot;
      ++moves;
    }
    if (++num_pairs == kBatch) flush();
  }
  if (num_pairs != 0) flush();
  if (plan_cursor_ >= plan_.size()) {
    plan_ = std::vector<PlannedMove>();
    plan_cursor_ = 0;
  }
  if (moves != 0) {
    ++epoch_;
    ReleaseEmptyPages();
  }
  return moves;
}

}  // namespace strata
