#include "entity/generation_table.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/check.h"

namespace strata {

absl::Status GenerationTable::Options::Validate(absl::string_view owner) const {
  if (max_generation > kMaxGeneration) {
    return absl::InvalidArgumentError(absl::StrCat(
        owner, ": Options::max_generation ", max_generation,
        " is above the largest generation a handle can hold (", kMaxGeneration, ")"));
  }
  if (max_slots > kMaxSlots) {
    return absl::InvalidArgumentError(absl::StrCat(owner, ": capacity ", max_slots,
                                                   " is above the largest, ", kMaxSlots));
  }
  return absl::OkStatus();
}

GenerationTable::GenerationTable(const Options& options) : options_(options) {
  static_assert(kMaxGeneration < kFreeBit, "issued generations never have the free bit");
  STRATA_CHECK(options_.max_generation <= kMaxGeneration,
               "GenerationTable: Options::max_generation above 2^31 - 1 (use the owner's "
               "Make to get a Status instead)");
  STRATA_CHECK(options_.max_slots <= kMaxSlots,
               "GenerationTable: capacity above 2^32 - 2 (use the owner's Make to get a "
               "Status instead)");
}

void GenerationTable::Reserve(size_t slots) {
  slots = std::min<size_t>(slots, options_.max_slots);
  words_.reserve(slots);
  if (ring_capacity_ < slots) GrowRing(slots);
}

void GenerationTable::GrowRing(size_t min_capacity) {
  size_t capacity = ring_capacity_ == 0 ? 16 : ring_capacity_;
  while (capacity < min_capacity) capacity *= 2;
  std::unique_ptr<uint32_t[]> ring(new uint32_t[capacity]);  // no zero fill
  const size_t mask = ring_capacity_ - 1;
  for (size_t i = 0; i < free_count_; ++i) ring[i] = ring_[(head_ + i) & mask];
  ring_ = std::move(ring);
  ring_capacity_ = capacity;
  head_ = 0;
}

}  // namespace strata
