// Highway kernels of the compaction planners: the slots of a run of pages whose
// entities hold one component set, for the cursors (Compactor::TakeOfSet), and the
// classes of a block of pages, for the survey (compaction_survey.cc). Internal to
// //iteration:entity_pages.
//
//   PageMatchRows rows{occupied, masks, flips, num_types, last_page, last_bits};
//   size_t n = 0;
//   page = TakeWholePages(rows, page, end_page, out, n, max);
//
//   PageClasses classes;  // stores of up to kMaxClassifiedTypes types
//   ClassifyPages(occupied, masks, num_types, first_page, count, classes);
//
// A page's matches are occupied[page] & AND over c of (masks[c][page] ^ flips[c])
// (and last_bits on last_page): flips[c] is 0 for a type of the set, all ones for one
// it lacks, so the matches are the slots holding exactly the set.
#ifndef STRATA_ITERATION_INTERNAL_PAGE_SLOTS_H_
#define STRATA_ITERATION_INTERNAL_PAGE_SLOTS_H_

#include <cstddef>
#include <cstdint>

namespace strata::iteration_internal {

// Slots per page (kEntityPageSize, which compactor_plan.cc checks it equals).
inline constexpr uint32_t kPageSlots = 32;

struct PageMatchRows {
  const uint32_t* occupied;
  const uint32_t* const* masks;  // num_types arrays of one word per page
  const uint32_t* flips;         // num_types words
  size_t num_types;
  uint32_t last_page;  // the page whose matches are cut by last_bits
  uint32_t last_bits;
};

// The positions of each byte's set bits, lowest first, padded with zeros.
struct ByteSlots {
  uint32_t slot[256][8];
  uint8_t count[256];
};
constexpr ByteSlots MakeByteSlots() {
  ByteSlots table{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint8_t n = 0;
    for (uint32_t bit = 0; bit < 8; ++bit) {
      if ((byte >> bit) & 1u) table.slot[byte][n++] = bit;
    }
    table.count[byte] = n;
  }
  return table;
}
inline constexpr ByteSlots kByteSlots = MakeByteSlots();

// Writes the slots base + i of the set bits i of `bits`, ascending, to out[0..) and
// returns their number; writes out[0, 32) whatever the count. A byte at a time from
// kByteSlots (the compiler makes each two vector adds and stores): the same few
// instructions for a page of three matches as of thirty.
inline size_t AppendPageSlots(uint32_t bits, uint32_t base, uint32_t* out) {
  size_t n = 0;
  for (uint32_t byte_index = 0; byte_index < 4; ++byte_index) {
    const uint32_t byte = (bits >> (8 * byte_index)) & 0xFFu;
    const uint32_t byte_base = base + 8 * byte_index;
    for (size_t k = 0; k < 8; ++k) out[n + k] = byte_base + kByteSlots.slot[byte][k];
    n += kByteSlots.count[byte];
  }
  return n;
}

// The matches of one page.
inline uint32_t PageMatches(const PageMatchRows& rows, uint32_t page) {
  uint32_t match = rows.occupied[page];
  for (size_t c = 0; c < rows.num_types; ++c) match &= rows.masks[c][page] ^ rows.flips[c];
  if (page == rows.last_page) match &= rows.last_bits;
  return match;
}

// Appends to out[n..] the slots (page * 32 + bit, ascending) of every match of pages
// page, page + 1, ... while page < end_page and a whole page fits (n + 32 <= max).
// Returns the first page not taken. May write up to out[n + 31] past the slots taken
// (out must have max entries). Highway-dispatched: a vector compress per 8 or 16
// slots where the CPU has one (AVX2, AVX-512), AppendPageSlots otherwise.
uint32_t TakeWholePages(const PageMatchRows& rows, uint32_t page, uint32_t end_page, uint32_t* out,
                        size_t& n, size_t max);

// The same, one slot at a time: the reference the dispatched one is tested against.
uint32_t TakeWholePagesScalar(const PageMatchRows& rows, uint32_t page, uint32_t end_page,
                              uint32_t* out, size_t& n, size_t max);

// The compaction survey's view of a block of pages, for stores of at most 32 types
// (type c is bit c). With m_c = masks[c][page] & occupied[page]: `full` has the types
// with m_c == occupied (and nonzero), `part` those with 0 != m_c != occupied, `split`
// is the first partial m_c (0 if none) and `mismatch` is nonzero when two partial m_c
// differ. A page without mismatch holds at most two sets: full, on the slots not in
// split, and full | part on split's.
struct PageClasses {
  static constexpr size_t kBlock = 256;
  uint32_t split[kBlock];
  uint32_t full[kBlock];
  uint32_t part[kBlock];
  uint32_t mismatch[kBlock];
};
inline constexpr size_t kMaxClassifiedTypes = 32;

// One page's classification as PageClasses defines it, for any number of types: type
// c adds key_of(c) to `full` or `part` (XOR, so distinct one-bit keys give the type
// bits). The scalar form of ClassifyPages, and the survey's for stores of more types
// (whose keys then mix in hashes).
struct PageClass {
  uint32_t split = 0;
  uint32_t mismatch = 0;
  uint64_t full = 0;
  uint64_t part = 0;
};
template <typename KeyOf>
inline PageClass ClassifyPage(uint32_t occupied_bits, const uint32_t* const* masks,
                              size_t num_types, size_t page, KeyOf key_of) {
  PageClass out;
  // No branch on the data: whether a page holds a type is random in a sparse store.
  for (size_t c = 0; c < num_types; ++c) {
    const uint32_t mask = masks[c][page] & occupied_bits;
    const uint32_t is_full = mask == occupied_bits && mask != 0 ? 1u : 0u;
    const uint32_t is_part = (mask != 0 ? 1u : 0u) & (is_full ^ 1u);
    out.split |= out.split == 0 ? mask & (0u - is_part) : 0u;
    out.mismatch |= is_part & (mask != out.split ? 1u : 0u);
    out.full ^= key_of(c) & (uint64_t{0} - is_full);
    out.part ^= key_of(c) & (uint64_t{0} - is_part);
  }
  return out;
}
// Classifies pages [begin, begin + count), count <= PageClasses::kBlock, into out[0,
// count). Highway-dispatched (the types' masks of 8 or 16 pages at a time).
void ClassifyPages(const uint32_t* occupied, const uint32_t* const* masks, size_t num_types,
                   size_t begin, size_t count, PageClasses& out);
// The same, a page at a time: the reference.
void ClassifyPagesScalar(const uint32_t* occupied, const uint32_t* const* masks, size_t num_types,
                         size_t begin, size_t count, PageClasses& out);

}  // namespace strata::iteration_internal

#endif  // STRATA_ITERATION_INTERNAL_PAGE_SLOTS_H_
