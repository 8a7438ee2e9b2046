// The inline definitions of EntityPages' hot paths (Add, Remove, TryGet, TryGetByIndex
// and their helpers), kept out of the class so that entity_pages.h reads as its API.
// Included at the end of entity_pages.h only; include that instead.
#ifndef STRATA_ITERATION_INTERNAL_ENTITY_PAGES_INL_H_
#define STRATA_ITERATION_INTERNAL_ENTITY_PAGES_INL_H_

namespace strata {

inline absl::Status EntityPages::Add(Entity e, ComponentId c, const void* value) {
  return AddWith<kUntypedSize>(
      e, c, [&](std::byte* dst, uint32_t size) { WriteValue(dst, value, size); });
}

template <typename T>
inline absl::Status EntityPages::Add(Entity e, Component<T> c, const T& value) {
  if constexpr (std::is_empty_v<T>) {
    // A tag has no bytes (sizeof of an empty type is 1, its registered size 0).
    return AddWith<0>(e, c.id, [](std::byte*, uint32_t) {});
  } else {
    return AddWith<sizeof(T)>(e, c.id, [&](std::byte* dst, uint32_t) {
      // A fixed-size typed store: the compiler turns it into a few moves.
      ::new (static_cast<void*>(dst)) T(value);
    });
  }
}

inline absl::Status EntityPages::Remove(Entity e, ComponentId c) {
  // Before the checks, so that a loop hoists them (see HotType).
  const HotType& hot = HotById(c);
  uint32_t* const masks = hot.masks;
  const size_t direct_pages = hot.direct_pages;
  // A walk, a listener or a tracked type sends the call out of line (InlineAddRemove).
  if (ABSL_PREDICT_TRUE(InlineAddRemove(e) && hot.id == c)) {
    // In the store, so its slot is below the capacity (no page check); a page below
    // direct_pages has its masks (see HotType).
    const uint32_t slot = SlotOfIndex(e.index());
    const uint32_t page = slot >> kEntityPageShift;
    const uint32_t flag = uint32_t{1} << (slot & (kEntityPageSize - 1));
    if (ABSL_PREDICT_TRUE(page < direct_pages)) {
      uint32_t& mask = masks[page];
      const uint32_t old_mask = mask;
      if (ABSL_PREDICT_TRUE((old_mask & flag) != 0)) {
        const uint32_t new_mask = old_mask & ~flag;
        mask = new_mask;
        layout_changed_ = true;
        // Only an emptied mask or slot gives ReleaseEmptyPages something to free:
        // the page goes on the dirty list, an emptied slot is freed (out of line).
        if (ABSL_PREDICT_FALSE(--count_[slot] == 0 || new_mask == 0)) {
          RemoveEmptied(e.index(), slot);
        }
        return absl::OkStatus();
      }
    }
  }
  absl::Status status = RemoveSlow(e.index(), e.generation(), c);
  if (ABSL_PREDICT_FALSE(listener_ != nullptr) && status.ok()) NotifyRemoved(c, e);
  return status;
}

template <uint32_t kSize>
inline const void* EntityPages::TryGetSized(Entity e, ComponentId c) const {
  // Read before the checks, so that a loop hoists them (see HotType).
  const HotType& hot = Hot(c);
  const uint32_t* const masks = hot.masks;
  std::byte* const base = hot.base;
  const size_t size = kSize == kUntypedSize ? hot.size : kSize;
  const size_t direct_pages = hot.direct_pages;
  if constexpr (kSize != kUntypedSize) {
    // An unregistered id reads an entry of size 0 and gets nullptr below (no data
    // page); a registered one must have T's size. The failure does not return, so a
    // loop keeps its registers.
    STRATA_CHECK(hot.size == kSize || c >= num_types_,
                 "EntityPages::TryGet: Component<T> of a type registered with another "
                 "size (made from another type's id, or another store's)");
  }
  const uint32_t index = e.index();
  if (ABSL_PREDICT_FALSE(index >= gen_size_)) return nullptr;
  // Never compacted: the slot is the index, so the element's address does not wait
  // for the generation read (two independent loads, as on flat arrays). Compacted:
  // the slot-table entry holds the generation beside the slot, one line for both.
  uint32_t slot = index;
  uint32_t generation;
  // Predicted false only to keep the never-compacted path the fall-through, as it was
  // before the entries held the generation (GCC laid the other out of line: two jumps).
  if (ABSL_PREDICT_FALSE(indirect_)) {
    const SlotEntry entry = slot_of_[index];
    slot = entry.slot;
    generation = entry.generation;
  } else {
    generation = gen_of_[index];
  }
  const uint32_t page = slot >> kEntityPageShift;
  if (generation != e.generation() || e.generation() == Entity::kInvalidGeneration) {
    return nullptr;
  }
  // In the store, so the slot is below the capacity (no page check). Past
  // direct_pages: a pool page, or `c` is not registered or has no data page yet.
  if (ABSL_PREDICT_FALSE(page >= direct_pages)) return TryGetPastRange(c, slot);
  if (((masks[page] >> (slot & (kEntityPageSize - 1))) & 1u) == 0) return nullptr;
  return base + size_t{slot} * size;
}

template <uint32_t kSize, typename Out>
inline void EntityPages::TryGetManySized(absl::Span<const Entity> entities, ComponentId c,
                                         Out out) const {
  // How many lookups ahead the lines are prefetched: a lookup takes a few ns once its
  // lines are in, a miss a hundred or more. A compacted store's element address needs
  // the slot-table entry (which holds the generation too): its entries are prefetched
  // twice as far ahead, so that the slot is in when the element is prefetched.
  constexpr size_t kAhead = 16;
  const Entity* const handles = entities.data();
  const size_t n = entities.size();
  // Locals: the stores through `out` may alias any member.
  const HotType& hot = Hot(c);
  const uint32_t* const masks = hot.masks;
  const std::byte* const base = hot.base;
  const size_t size = kSize == kUntypedSize ? hot.size : kSize;
  // No direct page (an unregistered id, no data page yet, a pool page): nothing to
  // prefetch but the entry; the lookup itself takes TryGet's slow branch.
  const size_t direct_pages = hot.direct_pages;
  const size_t page_capacity = page_capacity_;
  const uint32_t* const gen_of = gen_of_.data();
  const SlotEntry* const slot_of = slot_of_.data();
  const size_t index_size = gen_size_;
  const bool indirect = indirect_;
  auto prefetch_entry = [&](size_t k) ABSL_ATTRIBUTE_ALWAYS_INLINE {
    const uint32_t i = handles[k].index();
    if (i >= index_size) return;
    if (indirect) {
      __builtin_prefetch(&slot_of[i]);
    } else {
      __builtin_prefetch(&gen_of[i]);
    }
  };
  // The mask word and element of lookup k (stale or absent: prefetched for nothing).
  auto prefetch_element = [&](size_t k) ABSL_ATTRIBUTE_ALWAYS_INLINE {
    const uint32_t i = handles[k].index();
    if (i >= index_size) return;
    const uint32_t slot = indirect ? slot_of[i].slot : i;
    const uint32_t page = slot >> kEntityPageShift;
    if (page >= direct_pages || page >= page_capacity) return;
    __builtin_prefetch(&masks[page]);
    __builtin_prefetch(base + size_t{slot} * size);
  };
  const size_t entry_ahead = indirect ? 2 * kAhead : kAhead;
  for (size_t k = 0; k < std::min(n, entry_ahead); ++k) prefetch_entry(k);
  for (size_t k = 0; k < std::min(n, kAhead); ++k) prefetch_element(k);
  for (size_t k = 0; k < n; ++k) {
    if (k + entry_ahead < n) prefetch_entry(k + entry_ahead);
    if (k + kAhead < n) prefetch_element(k + kAhead);
    out(k, TryGetSized<kSize>(handles[k], c));
  }
}

inline void* EntityPages::TryGetByIndex(uint32_t entity_index, ComponentId c) const {
  if (ABSL_PREDICT_FALSE(entity_index >= gen_size_)) return nullptr;
  // Not in the store: before a compaction its own slot, whose bits are clear; after
  // one its slot-table entry's slot is stale, and its generation says so.
  uint32_t slot = entity_index;
  if (indirect_) {
    const SlotEntry entry = slot_of_[entity_index];
    if (entry.generation == Entity::kInvalidGeneration) return nullptr;
    slot = entry.slot;
  }
  const uint32_t page = slot >> kEntityPageShift;
  if (page >= page_capacity_) return nullptr;
  const HotType& hot = Hot(c);
  if (ABSL_PREDICT_FALSE(page >= hot.direct_pages)) {
    return const_cast<void*>(TryGetPastRange(c, slot));
  }
  if (((hot.masks[page] >> (slot & (kEntityPageSize - 1))) & 1u) == 0) return nullptr;
  return hot.base + size_t{slot} * hot.size;
}

template <uint32_t kValueSize, typename Writer>
inline absl::Status EntityPages::AddWith(Entity e, ComponentId c, Writer write) {
  // Before the checks, so that a loop hoists them (see HotType).
  const HotType& hot = HotById(c);
  uint32_t* const masks = hot.masks;
  std::byte* const base = hot.base;
  const size_t size = kValueSize == kUntypedSize ? hot.size : kValueSize;
  const size_t direct_pages = hot.direct_pages;
  // A walk, a listener or a tracked type sends the call out of line (InlineAddRemove).
  if (ABSL_PREDICT_TRUE(InlineAddRemove(e) && hot.id == c &&
                        (kValueSize == kUntypedSize || hot.size == kValueSize))) {
    // In the store, so its slot is below the capacity (no page check); a page below
    // direct_pages means `c` is registered (see HotType) and the element's address
    // needs no load.
    const uint32_t slot = SlotOfIndex(e.index());
    const uint32_t page = slot >> kEntityPageShift;
    const uint32_t flag = uint32_t{1} << (slot & (kEntityPageSize - 1));
    if (ABSL_PREDICT_TRUE(page < direct_pages)) {
      uint32_t& mask = masks[page];
      const uint32_t old_mask = mask;
      if (ABSL_PREDICT_TRUE((old_mask & flag) == 0)) {
        // A page with a bit set has its data page; one with none may not (a data page
        // is released once its mask empties): allocated here, at the address direct
        // addressing gives it, so the loop needs no reload.
        if (ABSL_PREDICT_FALSE(old_mask == 0)) EnsureDirectDataPage(c, page);
        ++count_[slot];
        mask = old_mask | flag;
        layout_changed_ = true;
        write(base + size_t{slot} * size, static_cast<uint32_t>(size));
        return absl::OkStatus();
      }
    }
  }
  // The slow path claims the element and the inline writer fills it, so the value's
  // address does not escape into a call (a loop then keeps a constant value in
  // registers instead of reloading it after every store of component bytes).
  absl::StatusOr<std::byte*> dst = AddSlow(e.index(), e.generation(), c, kValueSize);
  if (ABSL_PREDICT_FALSE(!dst.ok())) return std::move(dst).status();
  // AddSlow succeeds only for a registered type (GCC 12 at -O2 saw kNoComponent here).
  ABSL_ASSUME(c < kMaxComponentTypes);
  write(*dst, types_[c].size);
  // The entity comes back from AddSlow's note, so the loop keeps nothing live across
  // the call.
  if (ABSL_PREDICT_FALSE(tracked_[c] != nullptr || listener_ != nullptr)) {
    NotifyAdded(c, slow_added_);
  }
  return absl::OkStatus();
}

template <typename T>
inline absl::Status EntityPages::Add(absl::Span<const Entity> entities, Component<T> c,
                                     const T& value) {
  if constexpr (std::is_empty_v<T>) {
    return AddBatchWith<0>(entities, c.id, [](std::byte*, uint32_t) {});
  } else if constexpr (sizeof(T) <= 64) {
    // A copy in the writer: a store of a T may alias `value`, a copy it cannot, so the
    // loop keeps the value in registers instead of reloading it after every store.
    return AddBatchWith<sizeof(T)>(entities, c.id, [local = value](std::byte* dst, uint32_t) {
      ::new (static_cast<void*>(dst)) T(local);
    });
  } else {
    return AddBatchWith<sizeof(T)>(entities, c.id, [&value](std::byte* dst, uint32_t) {
      ::new (static_cast<void*>(dst)) T(value);
    });
  }
}

template <uint32_t kValueSize, typename Writer>
inline absl::Status EntityPages::AddBatchWith(absl::Span<const Entity> entities,
                                              ComponentId c, Writer write, size_t* done) {
  CheckNotWalking("Add");
  const Entity* const entity = entities.data();
  const size_t n = entities.size();
  // An unregistered id reads the extra entry (null); AddSlow reports it.
  iteration_internal::ChangeTicks* const ticks =
      tracked_[c < kMaxComponentTypes ? c : kMaxComponentTypes];
  const uint32_t tick = tick_;
  size_t i = 0;
  while (i < n) {
    // The tables in locals: no store in the loop can change a local, so they stay in
    // registers (the per-entity Add reloads them on every call, see AddWith). The slow
    // path may change any of them (growth, a type's first data page), so after it the
    // loop starts again from here.
    const HotType& hot = HotById(c);
    uint32_t* const masks = hot.masks;
    std::byte* const base = hot.base;
    const size_t size = kValueSize == kUntypedSize ? hot.size : kValueSize;
    // An id or size that does not match sends every entity to AddSlow, which reports it
    // after the alive check, as the per-entity Add does.
    const size_t direct_pages =
        hot.id == c && (kValueSize == kUntypedSize || hot.size == kValueSize)
            ? hot.direct_pages
            : 0;
    const IndexTables tables = index_tables();
    uint16_t* const count = count_.data();
    const size_t start = i;
    // The mask of page `run_page` as the loop changed it, kept in a register while
    // consecutive entities fall into the same page and stored when the run ends: a
    // store and a load of the same word per entity would chain every entity behind
    // the previous one's store.
    uint32_t run_page = kNoSlot;
    uint32_t run_mask = 0;
    for (; i < n; ++i) {
      // AddWith's fast path, the same conditions (see there).
      const uint32_t index = entity[i].index();
      const uint32_t generation = entity[i].generation();
      if (ABSL_PREDICT_FALSE(!tables.InStore(index, generation))) break;
      const uint32_t slot = tables.Slot(index);
      const uint32_t page = slot >> kEntityPageShift;
      const uint32_t flag = uint32_t{1} << (slot & (kEntityPageSize - 1));
      if (page != run_page) {
        if (ABSL_PREDICT_FALSE(page >= direct_pages)) break;
        if (run_page != kNoSlot) masks[run_page] = run_mask;
        run_page = page;
        run_mask = masks[page];
      }
      if (ABSL_PREDICT_FALSE((run_mask & flag) != 0)) break;
      // The first element of a page with no bit set: its data page (see AddWith).
      if (ABSL_PREDICT_FALSE(run_mask == 0)) EnsureDirectDataPage(c, page);
      ++count[slot];
      run_mask |= flag;
      write(base + size_t{slot} * size, static_cast<uint32_t>(size));
      if (ABSL_PREDICT_FALSE(ticks != nullptr)) ticks->MarkAdded(slot, tick);
    }
    if (run_page != kNoSlot) masks[run_page] = run_mask;
    // Once per run rather than per entity: a bool store may alias anything.
    if (i != start) layout_changed_ = true;
    if (i == n) break;
    // The slow path, for as long as entities need it (an entity's first component
    // here: a spawn's whole batch): the locals above are set up again only when the
    // fast path can take the next one (set up per entity, they cost a spawn 30
    // instructions an entity).
    do {
      absl::StatusOr<std::byte*> dst =
          AddSlow(entity[i].index(), entity[i].generation(), c, kValueSize);
      if (ABSL_PREDICT_FALSE(!dst.ok())) {
        if (done != nullptr) *done = i;
        if (listener_ != nullptr && i > 0) listener_->OnAdded(c, entities.first(i));
        return BatchError(dst.status(), i);
      }
      write(*dst, types_[c].size);
      if (ABSL_PREDICT_FALSE(ticks != nullptr)) MarkAddedEntities(entities.subspan(i, 1), c);
      ++i;
    } while (i < n && !index_tables().InStore(entity[i].index(), entity[i].generation()));
  }
  if (done != nullptr) *done = n;
  if (listener_ != nullptr && n > 0) listener_->OnAdded(c, entities);
  return absl::OkStatus();
}

template <typename T>
inline absl::Status EntityPages::AddEach(absl::Span<const Entity> entities, Component<T> c,
                                         absl::Span<const T> values, size_t* done) {
  if (values.size() != entities.size()) {
    if (done != nullptr) *done = 0;
    return ValueCountError(entities.size(), values.size());
  }
  if constexpr (std::is_empty_v<T>) {
    return AddBatchWith<0>(entities, c.id, [](std::byte*, uint32_t) {}, done);
  } else {
    return AddBatchWith<sizeof(T)>(
        entities, c.id,
        [next = values.data()](std::byte* dst, uint32_t) mutable {
          ::new (static_cast<void*>(dst)) T(*next++);
        },
        done);
  }
}

inline const void* EntityPages::TryGetPastRange(ComponentId c, uint32_t slot) const {
  if (c >= num_types_) return nullptr;
  const ComponentType& type = types_[c];
  const uint32_t page = slot >> kEntityPageShift;
  const uint32_t bit = slot & (kEntityPageSize - 1);
  if (((type.masks[page] >> bit) & 1u) == 0) return nullptr;
  return type.data[page] + size_t{bit} * type.size;
}

}  // namespace strata

#endif  // STRATA_ITERATION_INTERNAL_ENTITY_PAGES_INL_H_
