// EntityPages: the release of emptied pages and their reuse, memory back to zero, and
// the hot paths' rejection of handles not in the store.
#include <cstddef>
#include <set>
#include <vector>

#include "absl/types/span.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "iteration/entity_pages.h"
#include "iteration/testing/test_components.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::MovingWorld;
using ::strata::testing::Position;
using ::strata::testing::StatusIs;
using ::strata::testing::Velocity;

// Emptied data pages go back to their type's pool and come back on the next adds:
// in the order they were dirtied, so a component removed from every entity and added
// back lands at the same addresses as before, and the pool does not grow.
TEST(EntityPages, EmptiedPagesComeBackAtTheSameAddresses) {
  for (const size_t n : {size_t{1}, size_t{kEntityPageSize}, size_t{10 * kEntityPageSize + 7}}) {
    SCOPED_TRACE(n);
    MovingWorld world(n);
    ComponentBundle bundle;
    bundle.Set(world.pos, Position{1, 1, 1});
    ASSERT_THAT(world.pages.CreateFromBundle(world.entities, bundle), IsOk());
    std::vector<const Velocity*> first;
    for (Entity e : world.entities) {
      ASSERT_THAT(world.pages.Add(e, world.vel, Velocity{1, 2, 3}), IsOk());
      first.push_back(world.pages.TryGet(e, world.vel));
    }
    const size_t pages = (n + kEntityPageSize - 1) / kEntityPageSize;
    const size_t reserved = world.pages.reserved_page_bytes();
    for (int round = 0; round < 3; ++round) {
      for (Entity e : world.entities) ASSERT_THAT(world.pages.Remove(e, world.vel), IsOk());
      // Only Velocity's pages empty: every entity keeps its Position.
      EXPECT_EQ(world.pages.ReleaseEmptyPages(), pages);
      EXPECT_EQ(world.pages.allocated_data_pages(), pages);
      for (Entity e : world.entities) EXPECT_EQ(world.pages.TryGet(e, world.vel), nullptr);
      for (size_t i = 0; i < n; ++i) {
        const Entity e = world.entities[i];
        ASSERT_THAT(world.pages.Add(e, world.vel, Velocity{float(round), 0, 0}), IsOk());
        ASSERT_EQ(world.pages.TryGet(e, world.vel), first[i]) << "round " << round << " " << i;
      }
      EXPECT_EQ(world.pages.allocated_data_pages(), 2 * pages);
      EXPECT_EQ(world.pages.reserved_page_bytes(), reserved);
      for (Entity e : world.entities) {
        ASSERT_EQ(world.pages.TryGet(e, world.vel)->x, float(round));
        ASSERT_EQ(world.pages.TryGet(e, world.pos)->x, 1.0f);
      }
    }
    // Everything deleted: every page released, and all memory with ReleaseUnusedMemory.
    EXPECT_EQ(world.pages.DeleteEntities(world.entities), n);
    EXPECT_EQ(world.pages.ReleaseEmptyPages(), 3 * pages);  // 2 data + 1 entity per page
    EXPECT_EQ(world.pages.allocated_data_pages(), 0u);
    EXPECT_EQ(world.pages.allocated_entity_pages(), 0u);
    EXPECT_EQ(world.pages.page_bytes(), 0u);
    EXPECT_EQ(world.pages.ReleaseUnusedMemory(), reserved);
    EXPECT_EQ(world.pages.reserved_page_bytes(), 0u);
  }
}

// Pages dirtied in another order, or only some of them, still come back from the
// pool (the same blocks, none new) and hold the right values.
TEST(EntityPages, EmptiedPagesAreReusedInAnyOrder) {
  MovingWorld world(8 * kEntityPageSize);
  ComponentBundle bundle;
  bundle.Set(world.pos, Position{1, 1, 1}).Set(world.vel, Velocity{0, 0, 0});
  ASSERT_THAT(world.pages.CreateFromBundle(world.entities, bundle), IsOk());
  std::set<const void*> blocks;
  for (size_t p = 0; p < 8; ++p) blocks.insert(world.pages.page_data(world.vel.id, p));
  const size_t reserved = world.pages.reserved_page_bytes();
  // Backwards, and only pages 1, 3, 5 and 7.
  for (size_t i = world.entities.size(); i-- > 0;) {
    if ((i / kEntityPageSize) % 2 == 1) {
      ASSERT_THAT(world.pages.Remove(world.entities[i], world.vel), IsOk());
    }
  }
  EXPECT_EQ(world.pages.ReleaseEmptyPages(), 4u);
  for (size_t p = 0; p < 8; ++p) {
    EXPECT_EQ(world.pages.page_data(world.vel.id, p) == nullptr, p % 2 == 1) << p;
  }
  for (size_t i = 0; i < world.entities.size(); ++i) {
    if ((i / kEntityPageSize) % 2 == 1) {
      ASSERT_THAT(world.pages.Add(world.entities[i], world.vel, Velocity{float(i), 0, 0}),
                  IsOk());
    }
  }
  std::set<const void*> after;
  for (size_t p = 0; p < 8; ++p) after.insert(world.pages.page_data(world.vel.id, p));
  EXPECT_EQ(after, blocks);
  EXPECT_EQ(world.pages.reserved_page_bytes(), reserved);
  for (size_t i = 0; i < world.entities.size(); ++i) {
    const float expected = (i / kEntityPageSize) % 2 == 1 ? float(i) : 0.0f;
    ASSERT_EQ(world.pages.TryGet(world.entities[i], world.vel)->x, expected) << i;
  }
}

// The hot paths skip the page check for entities in the store; a handle carrying the
// invalid generation must still be rejected everywhere, also at an index far past the
// page capacity (the generation table covers the manager's slots, the masks do not).
TEST(EntityPages, InvalidGenerationHandlesAreRejectedPastTheCapacity) {
  EntityManager manager;
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Position> pos,
                              pages.RegisterComponent<Position>("Position"));
  std::vector<Entity> batch(100000);
  manager.CreateBatch(absl::MakeSpan(batch));
  ASSERT_THAT(pages.Add(batch[0], pos, Position{1, 2, 3}), IsOk());
  ASSERT_LT(pages.page_capacity() * kEntityPageSize, batch.size());
  for (const uint32_t index : {batch[0].index(), batch[1].index(), batch.back().index()}) {
    const Entity bad(index, Entity::kInvalidGeneration);
    EXPECT_EQ(pages.TryGet(bad, pos), nullptr) << index;
    EXPECT_FALSE(pages.Has(bad, pos.id));
    EXPECT_FALSE(pages.Contains(bad));
    EXPECT_EQ(pages.SlotOf(bad), kNoSlot);
    EXPECT_THAT(pages.Remove(bad, pos), StatusIs(absl::StatusCode::kNotFound));
    EXPECT_FALSE(pages.Add(bad, pos, Position{}).ok());
    EXPECT_THAT(pages.Delete(bad), StatusIs(absl::StatusCode::kNotFound));
  }
  // A stale handle (older generation) of an index in the store is rejected too.
  const Entity stale(batch[0].index(), batch[0].generation() + 1);
  EXPECT_EQ(pages.TryGet(stale, pos), nullptr);
  EXPECT_THAT(pages.Remove(stale, pos), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(pages.TryGet(batch[0], pos)->y, 2.0f);
  EXPECT_EQ(pages.num_entities(), 1u);
}

}  // namespace
}  // namespace strata
