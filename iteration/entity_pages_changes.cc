// EntityPages' change detection (see TrackChanges in iteration/entity_pages.h and
// internal/change_ticks.h).
#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "entity/entity.h"
#include "iteration/entity_pages.h"

namespace strata {

absl::Status EntityPages::TrackChanges(ComponentId c) {
  CheckNotWalking("TrackChanges");
  if (c >= types_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("TrackChanges: unregistered component id ", c));
  }
  ComponentType& type = types_[c];
  if (type.ticks != nullptr) return absl::OkStatus();
  type.ticks = std::make_unique<iteration_internal::ChangeTicks>();
  type.ticks->Grow(page_capacity_);
  // What is there counts as added and written now.
  for (size_t page = 0; page < page_capacity_; ++page) {
    uint32_t mask = type.masks[page];
    while (mask != 0) {
      const uint32_t bit = static_cast<uint32_t>(absl::countr_zero(mask));
      type.ticks->MarkAdded(static_cast<uint32_t>(page * kEntityPageSize + bit), tick_);
      mask &= mask - 1;
    }
  }
  tracked_[c] = type.ticks.get();
  UpdateInlineLimit();
  return absl::OkStatus();
}

void EntityPages::AdvanceTick(uint32_t steps) {
  CheckNotWalking("AdvanceTick");
  const uint32_t before = tick_;
  tick_ += steps;
  if (tick_ == kNeverRan) ++tick_;
  // Each time the clock passes a multiple of kMaxTickAge (or jumps that far), ticks
  // older than kMaxTickAge are clamped, so no difference reaches 2^31.
  if ((before / kMaxTickAge) != (tick_ / kMaxTickAge) || steps >= kMaxTickAge) {
    for (size_t c = 0; c < num_types_; ++c) {
      if (tracked_[c] != nullptr) tracked_[c]->Clamp(tick_);
    }
  }
}

uint32_t EntityPages::ChangedMask(ComponentId c, size_t page, uint32_t since) const {
  if (c >= num_types_ || page >= page_capacity_) return 0;
  const uint32_t present = types_[c].masks[page];
  if (since == kNeverRan) return present;
  if (tracked_[c] == nullptr) return 0;
  return tracked_[c]->ChangedMask(page, present, ClampedSince(since));
}

uint32_t EntityPages::AddedMask(ComponentId c, size_t page, uint32_t since) const {
  if (c >= num_types_ || page >= page_capacity_) return 0;
  const uint32_t present = types_[c].masks[page];
  if (since == kNeverRan) return present;
  if (tracked_[c] == nullptr) return 0;
  return tracked_[c]->AddedMask(page, present, ClampedSince(since));
}

bool EntityPages::Changed(Entity e, ComponentId c, uint32_t since) const {
  const uint32_t slot = SlotOf(e);
  if (slot == kNoSlot) return false;
  return (ChangedMask(c, slot >> kEntityPageShift, since) >> (slot & (kEntityPageSize - 1))) & 1u;
}

bool EntityPages::Added(Entity e, ComponentId c, uint32_t since) const {
  const uint32_t slot = SlotOf(e);
  if (slot == kNoSlot) return false;
  return (AddedMask(c, slot >> kEntityPageShift, since) >> (slot & (kEntityPageSize - 1))) & 1u;
}

void EntityPages::MarkChanged(Entity e, ComponentId c) {
  if (c >= num_types_ || tracked_[c] == nullptr) return;
  const uint32_t slot = SlotOf(e);
  if (slot == kNoSlot) return;
  const uint32_t page = slot >> kEntityPageShift;
  const uint32_t flag = uint32_t{1} << (slot & (kEntityPageSize - 1));
  if ((types_[c].masks[page] & flag) == 0) return;
  tracked_[c]->MarkWritten(page, flag, tick_);
}

void EntityPages::UpdateInlineLimit() {
  bool any_tracked = false;
  for (size_t c = 0; c < num_types_; ++c) any_tracked = any_tracked || tracked_[c] != nullptr;
  const int64_t limit = listener_ != nullptr || any_tracked ? 0 : static_cast<int64_t>(gen_size_);
  // Keeps the open walks' share (a caller may not change the store during a walk, so
  // no WalkScope opens or closes in between).
  __atomic_store_n(&inline_limit_, limit - kWalkUnit * __atomic_load_n(&walks_, __ATOMIC_RELAXED),
                   __ATOMIC_RELAXED);
}

void EntityPages::MarkAddedEntities(absl::Span<const Entity> entities, ComponentId c) {
  iteration_internal::ChangeTicks* ticks = tracked_[c];
  if (ticks == nullptr) return;
  for (Entity e : entities) {
    const uint32_t slot = SlotOf(e);
    if (slot != kNoSlot) ticks->MarkAdded(slot, tick_);
  }
}

void EntityPages::SwapChangeTicks(const uint32_t* pairs, size_t n) {
  for (size_t c = 0; c < num_types_; ++c) {
    iteration_internal::ChangeTicks* ticks = tracked_[c];
    if (ticks == nullptr) continue;
    for (size_t k = 0; k < n; ++k) ticks->Swap(pairs[2 * k], pairs[2 * k + 1]);
  }
}

void EntityPages::SwapChangeTicks(const uint32_t* xs, const uint32_t* ys, size_t n) {
  for (size_t c = 0; c < num_types_; ++c) {
    iteration_internal::ChangeTicks* ticks = tracked_[c];
    if (ticks == nullptr) continue;
    for (size_t k = 0; k < n; ++k) ticks->Swap(xs[k], ys[k]);
  }
}

}  // namespace strata
