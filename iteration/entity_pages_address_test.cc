// EntityPages: data pages at computed addresses (one reserved range per type), the
// pool fallback past the range, and the id table the hot paths read before checking
// the id.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "iteration/entity_pages.h"
#include "iteration/filter.h"
#include "iteration/internal/page_range.h"
#include "iteration/testing/test_components.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::MovingWorld;
using ::strata::testing::Position;
using ::strata::testing::StatusIs;
using ::strata::testing::Velocity;

// Page p's data follows page p-1's: an element's address is base + slot * size, as in
// a flat array, whatever order the pages were allocated in.
TEST(EntityPagesAddress, DataPagesFollowEachOtherInSlotOrder) {
  for (const size_t n : {size_t{1}, size_t{kEntityPageSize}, size_t{50 * kEntityPageSize + 3}}) {
    SCOPED_TRACE(n);
    MovingWorld world(n);
    // Backwards, so the pages are allocated from the last to the first.
    for (size_t i = n; i-- > 0;) {
      ASSERT_THAT(world.pages.Add(world.entities[i], world.pos, Position{float(i), 0, 0}),
                  IsOk());
    }
    const Position* first = world.pages.TryGet(world.entities[0], world.pos);
    ASSERT_NE(first, nullptr);
    for (size_t i = 0; i < n; ++i) {
      const Position* p = world.pages.TryGet(world.entities[i], world.pos);
      ASSERT_EQ(p, first + i) << i;
      EXPECT_EQ(p->x, float(i));
      const size_t page = i / kEntityPageSize;
      EXPECT_EQ(reinterpret_cast<const std::byte*>(p),
                world.pages.page_data(world.pos.id, page) +
                    (i % kEntityPageSize) * sizeof(Position));
    }
  }
}

// Stale handles and reuse after destroy: the index's new entity gets the same element
// (its slot is the index), the old handle gets nothing, and a released page comes
// back zero-filled through Add(nullptr).
TEST(EntityPagesAddress, ReuseAfterDestroyKeepsTheAddressAndRejectsTheOldHandle) {
  EntityManager::Options options;
  options.min_free_indices = 0;  // reuse a freed index at once
  EntityManager manager(options);
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Velocity> vel,
                              pages.RegisterComponent<Velocity>("Velocity"));
  std::vector<Entity> entities(3 * kEntityPageSize);
  manager.CreateBatch(absl::MakeSpan(entities));
  for (Entity e : entities) ASSERT_THAT(pages.Add(e, vel, Velocity{7, 7, 7}), IsOk());
  const Entity old = entities[40];
  const Velocity* before = pages.TryGet(old, vel);
  ASSERT_NE(before, nullptr);
  ASSERT_THAT(manager.Destroy(old), IsOk());
  EXPECT_EQ(pages.TryGet(old, vel), nullptr);
  std::vector<Entity> fresh(1);
  manager.CreateBatch(absl::MakeSpan(fresh));
  ASSERT_EQ(fresh[0].index(), old.index());
  ASSERT_NE(fresh[0].generation(), old.generation());
  ASSERT_THAT(pages.Add(fresh[0], vel.id, nullptr), IsOk());
  EXPECT_EQ(pages.TryGet(fresh[0], vel), before);
  EXPECT_EQ(pages.TryGet(fresh[0], vel)->x, 0.0f);
  EXPECT_EQ(pages.TryGet(old, vel), nullptr);
  EXPECT_THAT(pages.Remove(old, vel), StatusIs(absl::StatusCode::kNotFound));
  // Everything gone and released: the memory of the range goes back too.
  for (Entity e : entities) {
    if (e != old) {
      ASSERT_THAT(pages.Delete(e), IsOk());
    }
  }
  ASSERT_THAT(pages.Delete(fresh[0]), IsOk());
  pages.ReleaseEmptyPages();
  EXPECT_EQ(pages.allocated_data_pages(), 0u);
  EXPECT_GT(pages.reserved_page_bytes(), 0u);
  pages.ReleaseUnusedMemory();
  EXPECT_EQ(pages.reserved_page_bytes(), 0u);
  // And the same slot takes the component again at the same address, zero-filled.
  ASSERT_THAT(pages.Add(entities[0], vel.id, nullptr), IsOk());
  EXPECT_EQ(pages.TryGet(entities[0], vel)->z, 0.0f);
}

// A component so large that its reservation covers only the first pages: pages past
// it come from the pool, through the page table, with the same behaviour.
TEST(EntityPagesAddress, PagesPastTheReservationComeFromThePool) {
  constexpr size_t kSize = size_t{1} << 20;  // 1 MiB elements, 32 MiB pages
  constexpr size_t kDirectPages =
      iteration_internal::PageRange::kMaxReservationBytes / (kSize * kEntityPageSize);
  EntityManager manager;
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentId big, pages.RegisterComponent("Big", kSize, 8));
  std::vector<Entity> batch((kDirectPages + 2) * kEntityPageSize);
  manager.CreateBatch(absl::MakeSpan(batch));
  const Entity near = batch[3];
  const Entity far = batch[(kDirectPages + 1) * kEntityPageSize + 5];  // a pool page
  std::vector<std::byte> value(kSize, std::byte{0x11});
  ASSERT_THAT(pages.Add(near, big, value.data()), IsOk());
  value[kSize - 1] = std::byte{0x22};
  ASSERT_THAT(pages.Add(far, big, value.data()), IsOk());
  ASSERT_THAT(pages.Add(far, big, value.data()),
              StatusIs(absl::StatusCode::kAlreadyExists));
  const auto* near_bytes = static_cast<const std::byte*>(pages.TryGet(near, big));
  const auto* far_bytes = static_cast<const std::byte*>(pages.TryGet(far, big));
  ASSERT_NE(near_bytes, nullptr);
  ASSERT_NE(far_bytes, nullptr);
  EXPECT_EQ(near_bytes[kSize - 1], std::byte{0x11});
  EXPECT_EQ(far_bytes[0], std::byte{0x11});
  EXPECT_EQ(far_bytes[kSize - 1], std::byte{0x22});
  EXPECT_EQ(pages.TryGetByIndex(far.index(), big), far_bytes);
  const size_t far_page = far.index() / kEntityPageSize;
  EXPECT_EQ(far_bytes, pages.page_data(big, far_page) + (far.index() % kEntityPageSize) * kSize);
  EXPECT_EQ(pages.allocated_data_pages(), 2u);
  // A walk sees both.
  size_t visited = 0;
  Filter filter;
  filter.Include(big);
  ForEachMatch(pages, filter, [&](Entity) { ++visited; });
  EXPECT_EQ(visited, 2u);
  // Removal, release, and the memory of both kinds back to zero.
  ASSERT_THAT(pages.Remove(far, big), IsOk());
  EXPECT_EQ(pages.TryGet(far, big), nullptr);
  ASSERT_THAT(pages.Remove(near, big), IsOk());
  EXPECT_EQ(pages.ReleaseEmptyPages(), 4u);  // 2 data + 2 entity pages
  pages.ReleaseUnusedMemory();
  EXPECT_EQ(pages.reserved_page_bytes(), 0u);
}

// The hot paths read a per-id table before checking the id, at the id modulo
// kMaxComponentTypes: an id past the registered ones, also one that aliases a
// registered id in that table, must still be rejected.
TEST(EntityPagesAddress, UnregisteredIdsAreRejectedAlsoWhenTheyAliasARegisteredOne) {
  MovingWorld world(kEntityPageSize);
  for (Entity e : world.entities) {
    ASSERT_THAT(world.pages.Add(e, world.pos, Position{1, 2, 3}), IsOk());
  }
  const Entity e = world.entities[5];
  for (const ComponentId bad :
       {ComponentId{3}, ComponentId{255}, ComponentId(world.pos.id + EntityPages::kMaxComponentTypes),
        ComponentId(world.vel.id + EntityPages::kMaxComponentTypes), ComponentId{0xFFFFFFFFu}}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(world.pages.TryGet(e, bad), nullptr);
    EXPECT_EQ(world.pages.TryGetByIndex(e.index(), bad), nullptr);
    EXPECT_FALSE(world.pages.Has(e, bad));
    EXPECT_THAT(world.pages.Add(e, bad, nullptr), StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(world.pages.Remove(e, bad), StatusIs(absl::StatusCode::kNotFound));
  }
  EXPECT_EQ(world.pages.TryGet(e, world.pos)->z, 3.0f);
}

// Many types, one entity each at scattered indices: each type's pages sit in its own
// range and every value reads back.
TEST(EntityPagesAddress, ManyTypesKeepTheirOwnRanges) {
  EntityManager manager;
  EntityPages pages(manager);
  std::vector<ComponentId> types;
  for (int t = 0; t < 40; ++t) {
    STRATA_ASSERT_OK_AND_ASSIGN(ComponentId c,
                                pages.RegisterComponent("T" + std::to_string(t), 8, 8));
    types.push_back(c);
  }
  std::vector<Entity> batch(5000);
  manager.CreateBatch(absl::MakeSpan(batch));
  for (size_t t = 0; t < types.size(); ++t) {
    for (size_t i = t; i < batch.size(); i += 97) {
      const uint64_t v = t * 1000003u + i;
      ASSERT_THAT(pages.Add(batch[i], types[t], &v), IsOk());
    }
  }
  for (size_t t = 0; t < types.size(); ++t) {
    for (size_t i = 0; i < batch.size(); ++i) {
      const void* p = pages.TryGet(batch[i], types[t]);
      if ((i - t) % 97 != 0 || i < t) {
        ASSERT_EQ(p, nullptr) << t << " " << i;
        continue;
      }
      uint64_t v;
      std::memcpy(&v, p, 8);
      ASSERT_EQ(v, t * 1000003u + i);
    }
  }
}

}  // namespace
}  // namespace strata
