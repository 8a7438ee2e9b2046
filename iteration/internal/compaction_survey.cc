#include "iteration/internal/compaction_survey.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/numeric/bits.h"
#include "iteration/internal/page_slots.h"

namespace strata::iteration_internal {
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

}  // namespace

void SurveyPages(const uint32_t* occupied, const std::vector<const uint32_t*>& masks,
                 size_t num_pages, Survey& out) {
  const size_t num_types = masks.size();
  std::vector<uint64_t> keys(num_types);
  for (size_t c = 0; c < num_types; ++c) keys[c] = SignatureKey(static_cast<ComponentId>(c));
  absl::flat_hash_map<uint64_t, uint32_t> index_of;
  // Few sets is the usual case: a linear search over the signatures seen (in cache)
  // before the hash map.
  constexpr size_t kLinearSignatures = 16;
  auto signature_index = [&](uint64_t signature, uint32_t slot) -> uint32_t {
    if (out.signatures.size() <= kLinearSignatures) {
      for (uint32_t k = 0; k < out.signatures.size(); ++k) {
        if (out.signatures[k] == signature) return k;
      }
    } else if (auto it = index_of.find(signature); it != index_of.end()) {
      return it->second;
    }
    const uint32_t k = static_cast<uint32_t>(out.signatures.size());
    index_of.emplace(signature, k);
    out.signatures.push_back(signature);
    out.counts.push_back(0);
    out.first_slot.push_back(slot);
    return k;
  };
  // Room for two groups per page (the common case) and a page's worth more; a page
  // of more sets grows it first, keeping two for each page still to come.
  size_t capacity = num_pages * 2 + kEntityPageSize;
  std::unique_ptr<Survey::Group[]> groups(new Survey::Group[capacity]);
  size_t num_groups = 0;
  auto add_group = [&](size_t page, uint32_t s, uint32_t bits) ABSL_ATTRIBUTE_ALWAYS_INLINE {
    const uint32_t count = PopCount(bits);
    out.counts[s] += count;
    groups[num_groups++] = {static_cast<uint32_t>(page), s, bits, count};
  };
  // The index of a signature, first from a one-entry cache per kind of group (the
  // pages of a store repeat the same few sets, so the cache almost always hits). Plain
  // locals, not a struct a lambda takes by reference: the compiler kept those in
  // memory, loaded and stored on every page.
  uint64_t split_key = 0;
  uint32_t split_index = ~uint32_t{0};
  uint64_t rest_key = 0;
  uint32_t rest_index = ~uint32_t{0};
  // Stores of up to 32 types classify a block of pages at a time with vectors (the
  // signature of a set is then its type bits, as SignatureKey gives the first 64 types
  // one bit each); others a page at a time below.
  static_assert(kMaxClassifiedTypes <= 64);
  const bool classify = num_types <= kMaxClassifiedTypes;
  PageClasses classes;
  for (size_t page = 0; page < num_pages; ++page) {
    const size_t i = page % PageClasses::kBlock;
    if (classify && i == 0) {
      ClassifyPages(occupied, masks.data(), num_types, page,
                    std::min(PageClasses::kBlock, num_pages - page), classes);
    }
    const uint32_t occupied_bits = occupied[page];
    if (occupied_bits == 0) continue;
    const uint32_t base = static_cast<uint32_t>(page * kEntityPageSize);
    // The common page has at most two sets: every type's mask is empty, full (all the
    // occupied slots) or one same partial mask `split`. Then the sets are the slots of
    // `split` and the rest, their signatures the full types' plus (for `split`) the
    // partial types', found with a few operations per type and no branch on the data.
    const PageClass page_class = classify ? PageClass{.split = classes.split[i],
                                                      .mismatch = classes.mismatch[i],
                                                      .full = classes.full[i],
                                                      .part = classes.part[i]}
                                          : ClassifyPage(occupied_bits, masks.data(), num_types,
                                                         page, [&](size_t c) { return keys[c]; });
    const uint32_t split = page_class.split;
    const uint32_t mismatch = page_class.mismatch;
    const uint64_t full_signature = page_class.full;
    const uint64_t split_signature = page_class.part;
    if (mismatch == 0) {
      if (split != 0) {
        const uint64_t signature = full_signature ^ split_signature;
        if (ABSL_PREDICT_FALSE(signature != split_key || split_index == ~uint32_t{0})) {
          split_key = signature;
          split_index =
              signature_index(signature, base + static_cast<uint32_t>(absl::countr_zero(split)));
        }
        add_group(page, split_index, split);
      }
      const uint32_t rest = occupied_bits & ~split;
      if (ABSL_PREDICT_FALSE(full_signature != rest_key || rest_index == ~uint32_t{0})) {
        rest_key = full_signature;
        rest_index =
            signature_index(full_signature, base + static_cast<uint32_t>(absl::countr_zero(rest)));
      }
      add_group(page, rest_index, rest);
      continue;
    }
    // Room for this page's sets (up to one per slot) and two for each page after it,
    // which the path above writes unchecked.
    const size_t needed = kEntityPageSize + 2 * (num_pages - page - 1);
    if (capacity - num_groups < needed) {
      capacity = std::max(capacity * 2, num_groups + needed);
      std::unique_ptr<Survey::Group[]> grown(new Survey::Group[capacity]);
      std::copy(groups.get(), groups.get() + num_groups, grown.get());
      groups = std::move(grown);
    }
    uint32_t remaining = occupied_bits;
    // The slots of the page with the set of its lowest unassigned slot: AND (or
    // AND-NOT) each type's mask word, a few words per set, not per slot.
    while (remaining != 0) {
      const uint32_t i = static_cast<uint32_t>(absl::countr_zero(remaining));
      uint32_t same = remaining;
      uint64_t signature = 0;
      // Without a branch per type: whether slot i has a type is random in a sparse
      // store, and mispredicted branches were most of the scan.
      for (size_t c = 0; c < num_types; ++c) {
        const uint32_t mask = masks[c][page];
        const uint32_t has = (mask >> i) & 1u;
        same &= mask ^ (has - 1);  // mask if slot i has c, else ~mask
        signature ^= keys[c] & (uint64_t{0} - has);
      }
      add_group(page, signature_index(signature, base + i), same);
      remaining &= ~same;
    }
  }
  out.group_storage = std::move(groups);
  out.groups = absl::MakeConstSpan(out.group_storage.get(), num_groups);
  const size_t num_signatures = out.signatures.size();
  out.order.resize(num_signatures);
  for (uint32_t s = 0; s < num_signatures; ++s) out.order[s] = s;
  std::sort(out.order.begin(), out.order.end(),
            [&](uint32_t a, uint32_t b) { return out.signatures[a] < out.signatures[b]; });
  out.start.resize(num_signatures);
  uint32_t next = 0;
  for (const uint32_t s : out.order) {
    out.start[s] = next;
    next += (out.counts[s] + kEntityPageSize - 1) & ~(kEntityPageSize - 1);
  }
  out.end = next;
  out.owner.resize(out.end >> kEntityPageShift);
  for (const uint32_t s : out.order) {
    const uint32_t first = out.start[s] >> kEntityPageShift;
    const uint32_t last = (out.start[s] + out.counts[s] + kEntityPageSize - 1) >> kEntityPageShift;
    for (uint32_t p = first; p < last; ++p) out.owner[p] = s;
  }
}

}  // namespace strata::iteration_internal
