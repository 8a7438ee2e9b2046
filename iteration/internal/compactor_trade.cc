// Compactor::SwapTradePairs: a compaction's trades, executed (see compactor.cc for the
// pass, docs/notes/iteration.md, "Compaction", for the design and the figures).
//
// A trade's batch of swaps runs fused: each swap whole (records, counts, slot table,
// then every type either entity has) before the next, with every line of the swap
// kTradeAhead ahead prefetched. The trade's two sets say which types each side
// has, so no mask is read; a copy's destination data pages are allocated before the
// loop, its source pages freed in the loop as they empty, and elements are addressed
// from the type's reservation when the batch's pages are all in it. A type's work on
// a pair is a function compiled for its kind (swap or copy, which way), element size
// and addressing, chosen once per batch.
//
// NOTE: as in compactor.cc, every helper or lambda that only prefetches is
// ABSL_ATTRIBUTE_ALWAYS_INLINE: GCC 12 deletes calls to a function it finds pure, and
// a prefetch-only function is. Check with `objdump -d` that the prefetcht
// instructions are there after changing one.
#include "iteration/internal/compactor.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "iteration/entity_pages.h"

namespace strata::iteration_internal {
namespace {

// What a trade does to one type in each of its pairs (x, y): x holds the trade's first
// set, y its second, so the type's presence on each side is known without a mask.
struct TradeColumn {
  uint32_t* masks;
  std::byte** data;
  // The data of slot s at base + s * size when every page of the batch is in the
  // type's reservation, else null (through data[page]).
  std::byte* base;
  uint32_t size;
  bool swap;    // both sides have the type: swap the elements, masks unchanged
  bool y_to_x;  // one side has it: y's element goes to x (else x's to y), bits flip
  ComponentId id;
  // What the pair (x, y) does to the column, compiled for its kind, size and
  // addressing (ExchangeFor): no test of any of them per pair. True when a copy took
  // the last element of the type off the source's page.
  bool (*exchange)(const TradeColumn& column, uint32_t x, uint32_t y);
};

// How many pairs ahead SwapTradePairs prefetches a pair's lines (the slot-table
// entries half as far: they need the records in). A fused pair takes a few ns once its
// lines are in, a miss a hundred or more, so 16 pairs cover a miss's latency.
constexpr size_t kTradeAhead = 16;

// Prefetches, for writing, the lines of an element of `size` bytes at `p` (at most the
// first kPrefetchBytes: the hardware prefetcher follows longer ones).
constexpr size_t kPrefetchBytes = 256;
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void PrefetchElement(const std::byte* p, size_t size) {
  // Into L2 (prefetcht1): A/B against prefetcht0, 61-65 against 67-68 TSC ticks per
  // pair of the fused loop (noisy: the two overlap at times).
  if (ABSL_PREDICT_TRUE(size <= 64)) {
    __builtin_prefetch(p, 1, 2);
    __builtin_prefetch(p + size - 1, 1, 2);  // an element straddling a line boundary
    return;
  }
  const size_t bytes = std::min(size, kPrefetchBytes);
  for (size_t offset = 0; offset < bytes; offset += 64) __builtin_prefetch(p + offset, 1, 2);
  __builtin_prefetch(p + bytes - 1, 1, 2);
}

enum class Kind { kSwap, kXToY, kYToX };

// The pair (x, y)'s work on one column of a trade, for each kind, element size (0: any,
// the column's) and addressing: a copy flips both slots' mask bits, a swap leaves them.
// Returns whether the source's page has no element of the type left (a copy's only).
template <Kind kKind, size_t kSize, bool kDirect>
bool ExchangePair(const TradeColumn& column, uint32_t x, uint32_t y) {
  const uint32_t from = kKind == Kind::kYToX ? y : x;
  const uint32_t to = kKind == Kind::kYToX ? x : y;
  bool emptied = false;
  if constexpr (kKind != Kind::kSwap) {
    uint32_t& from_mask = column.masks[from >> kEntityPageShift];
    from_mask ^= uint32_t{1} << (from & (kEntityPageSize - 1));
    emptied = from_mask == 0;
    column.masks[to >> kEntityPageShift] ^= uint32_t{1} << (to & (kEntityPageSize - 1));
  }
  if constexpr (kSize == 0 && kDirect) return emptied;  // a tag: no bytes
  const size_t size = kSize != 0 ? kSize : column.size;
  auto at = [&](uint32_t slot) ABSL_ATTRIBUTE_ALWAYS_INLINE -> std::byte* {
    if constexpr (kDirect) return column.base + size_t{slot} * size;
    return column.data[slot >> kEntityPageShift] + size_t{slot & (kEntityPageSize - 1)} * size;
  };
  std::byte* const pf = at(from);
  std::byte* const pt = at(to);
  if constexpr (kKind != Kind::kSwap) {
    std::memcpy(pt, pf, size);
  } else if constexpr (kSize != 0) {
    std::byte tmp[kSize];
    std::memcpy(tmp, pf, kSize);
    std::memcpy(pf, pt, kSize);
    std::memcpy(pt, tmp, kSize);
  } else {
    std::swap_ranges(pf, pf + size, pt);
  }
  return emptied;
}

// The ExchangePair for a column: tags use <kind, 0, true> (no bytes), fixed sizes up
// to 16 bytes with direct addressing get their own copies, others the any-size ones.
template <Kind kKind>
auto ExchangeOfKind(const TradeColumn& column) {
  if (column.size == 0) return &ExchangePair<kKind, 0, true>;
  if (column.base == nullptr) return &ExchangePair<kKind, 0, false>;
  switch (column.size) {
    case 4:
      return &ExchangePair<kKind, 4, true>;
    case 8:
      return &ExchangePair<kKind, 8, true>;
    case 12:
      return &ExchangePair<kKind, 12, true>;
    case 16:
      return &ExchangePair<kKind, 16, true>;
    default:
      // Any size, through the base: ExchangePair<kKind, 0, true> is the tag's, so the
      // data-page table it is (the base and the table give the same address).
      return &ExchangePair<kKind, 0, false>;
  }
}

bool (*ExchangeFor(const TradeColumn& column))(const TradeColumn&, uint32_t, uint32_t) {
  if (column.swap) return ExchangeOfKind<Kind::kSwap>(column);
  return column.y_to_x ? ExchangeOfKind<Kind::kYToX>(column) : ExchangeOfKind<Kind::kXToY>(column);
}

}  // namespace

void Compactor::SwapTradePairs(const Trade& trade, const uint32_t* xs, const uint32_t* ys,
                               size_t n) {
  if (n == 0) return;
  EntityPages& store = *store_;
  // The types either side has, those with data first (tags only flip mask bits), and
  // each side's component count (its set's size: the counts are written, not read).
  std::vector<TradeColumn> column_list;
  uint16_t count_x = 0;
  uint16_t count_y = 0;
  for (int with_data = 1; with_data >= 0; --with_data) {
    for (ComponentId c = 0; c < store.num_types_; ++c) {
      const bool has_x = trade_sets_[trade.a.set + c] == 0;
      const bool has_y = trade_sets_[trade.b.set + c] == 0;
      ComponentType& type = store.types_[c];
      if ((!has_x && !has_y) || (type.size != 0) != (with_data != 0)) continue;
      count_x += has_x;
      count_y += has_y;
      if (type.size == 0 && has_x && has_y) continue;  // a tag both have: nothing to do
      column_list.push_back({type.masks.data(), type.data.data(), nullptr, type.size,
                             has_x && has_y, !has_x, c, nullptr});
    }
  }
  // The destination pages of the copies exist before the loop, tags' too: a set bit
  // implies a data page inside the type's page range, which the walks read (the
  // pairs' pages ascend on each side, so a page is looked up once per run of its
  // pairs). Then an element is at a computed address when the batch's pages are all
  // in the type's reservation (both sides ascend: their last pages are the largest).
  const uint32_t last_page = std::max(xs[n - 1], ys[n - 1]) >> kEntityPageShift;
  for (TradeColumn& column : column_list) {
    if (!column.swap) {
      const uint32_t* to = column.y_to_x ? xs : ys;
      uint32_t page = kNoSlot;
      for (size_t k = 0; k < n; ++k) {
        if ((to[k] >> kEntityPageShift) == page) continue;
        page = to[k] >> kEntityPageShift;
        if (ABSL_PREDICT_FALSE(column.data[page] == nullptr)) {
          store.EnsureDataPage(store.types_[column.id], page);
        }
      }
    }
    const HotType& hot = store.hot_[column.id];
    if (last_page < hot.direct_pages) column.base = hot.base;
  }
  for (TradeColumn& column : column_list) column.exchange = ExchangeFor(column);
  // Locals, not members: the element copies store through std::byte pointers, which may
  // alias anything, so members would be reloaded after each. No table grows during a
  // trade (EnsureDataPage writes data-page entries only).
  const TradeColumn* const columns = column_list.data();
  const size_t num_columns = column_list.size();
  size_t num_data_columns = 0;
  while (num_data_columns < num_columns && columns[num_data_columns].size != 0) {
    ++num_data_columns;
  }
  EntityPage* const* const entity_pages = store.entity_pages_.data();
  uint16_t* const counts = store.count_.data();
  SlotEntry* const slot_of = store.slot_of_.data();
  // Prefetching a pair's lines costs about as many instructions as swapping them, so a
  // side whose slots are dense (consecutive pairs share lines, an ascending stream the
  // hardware prefetcher follows) is left to the hardware.
  const bool prefetch_x = xs[n - 1] - xs[0] >= 4 * n;
  const bool prefetch_y = ys[n - 1] - ys[0] >= 4 * n;
  // The lines of `slot` a pair reads: its record, its count, its elements (every data
  // page of the batch exists by now).
  auto prefetch_slot = [&](uint32_t slot) ABSL_ATTRIBUTE_ALWAYS_INLINE {
    const uint32_t page = slot >> kEntityPageShift;
    const uint32_t bit = slot & (kEntityPageSize - 1);
    __builtin_prefetch(&entity_pages[page]->entity[bit], 1);
    __builtin_prefetch(&counts[slot], 1);
    for (size_t i = 0; i < num_data_columns; ++i) {
      const TradeColumn& column = columns[i];
      PrefetchElement(column.base != nullptr ? column.base + size_t{slot} * column.size
                                             : column.data[page] + size_t{bit} * column.size,
                      column.size);
    }
  };
  // The slot-table entry of the entity in `slot` (its record must be in by then).
  auto prefetch_slot_table = [&](uint32_t slot) ABSL_ATTRIBUTE_ALWAYS_INLINE {
    const uint64_t entity =
        entity_pages[slot >> kEntityPageShift]->entity[slot & (kEntityPageSize - 1)];
    __builtin_prefetch(&slot_of[Entity::FromBits(entity).index()], 1);
  };
  constexpr size_t ahead = kTradeAhead;
  for (size_t k = 0; k < std::min(n, ahead); ++k) {
    if (prefetch_x) prefetch_slot(xs[k]);
    if (prefetch_y) prefetch_slot(ys[k]);
  }
  for (size_t k = 0; k < n; ++k) {
    if (k + ahead < n) {
      if (prefetch_x) prefetch_slot(xs[k + ahead]);
      if (prefetch_y) prefetch_slot(ys[k + ahead]);
    }
    if (k + ahead / 2 < n) {
      prefetch_slot_table(xs[k + ahead / 2]);
      prefetch_slot_table(ys[k + ahead / 2]);
    }
    const uint32_t x = xs[k];
    const uint32_t y = ys[k];
    const uint32_t x_page = x >> kEntityPageShift;
    const uint32_t y_page = y >> kEntityPageShift;
    const uint32_t x_bit = x & (kEntityPageSize - 1);
    const uint32_t y_bit = y & (kEntityPageSize - 1);
    // The records (as SwapRecords): both slots stay occupied.
    uint64_t& record_x = entity_pages[x_page]->entity[x_bit];
    uint64_t& record_y = entity_pages[y_page]->entity[y_bit];
    const uint64_t entity_x = record_x;
    const uint64_t entity_y = record_y;
    record_x = entity_y;
    record_y = entity_x;
    counts[x] = count_y;
    counts[y] = count_x;
    slot_of[Entity::FromBits(entity_y).index()].slot = x;
    slot_of[Entity::FromBits(entity_x).index()].slot = y;
    // Then every type the pair's entities have. Both slots stay occupied, so a page
    // can only lose its last element of a type a copy takes off it: its data page is
    // freed here, as ReleaseEmptyPages would (no dirty mark, no second pass over the
    // pages). No later pair of the batch reads it: the copy's sources ascend, and all
    // hold the type.
    for (size_t i = 0; i < num_columns; ++i) {
      const TradeColumn& column = columns[i];
      if (ABSL_PREDICT_FALSE(column.exchange(column, x, y))) {
        store.FreeDataPage(store.types_[column.id], column.y_to_x ? y_page : x_page);
      }
    }
  }
  store.SwapChangeTicks(xs, ys, n);
}

}  // namespace strata::iteration_internal
