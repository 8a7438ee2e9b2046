// EntityPages: the hot paths (Add, Remove, TryGet) and the out-of-line paths they hand
// every other case to: the first component of a page, an emptied page or entity,
// growth, mismatched or unregistered types, stale and invalid handles, before and
// after a compaction.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gtest/gtest.h"
#include "iteration/entity_pages.h"
#include "iteration/testing/test_components.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::Frozen;
using ::strata::testing::IsOk;
using ::strata::testing::MovingWorld;
using ::strata::testing::Position;
using ::strata::testing::StatusIs;
using ::strata::testing::Velocity;

// A type of another size under a Component<T>: the typed Add must not write T's bytes
// into an element of the registered size.
struct Wide {
  float v[8];
};

TEST(EntityPagesHot, TypedAddRejectsAComponentRegisteredWithAnotherSize) {
  MovingWorld world(2 * kEntityPageSize);
  for (size_t i = 0; i < kEntityPageSize; ++i) {
    ASSERT_THAT(world.pages.Add(world.entities[i], world.pos, Position{1, 1, 1}), IsOk());
  }
  const Component<Wide> wrong{world.pos.id};
  // Entity 5 in the store without Position, on a page whose Position data exists: but
  // for the size, the inline path would take it.
  const Entity e = world.entities[5];
  ASSERT_THAT(world.pages.Add(e, world.vel, Velocity{}), IsOk());
  ASSERT_THAT(world.pages.Remove(e, world.pos), IsOk());
  EXPECT_THAT(world.pages.Add(e, wrong, Wide{}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_FALSE(world.pages.Has(e, world.pos.id));
  // Also when it has the component, and for an entity new to the store.
  EXPECT_THAT(world.pages.Add(world.entities[6], wrong, Wide{}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  const Entity fresh = world.entities[kEntityPageSize + 1];
  EXPECT_THAT(world.pages.Add(fresh, wrong, Wide{}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_FALSE(world.pages.Contains(fresh));
  // The neighbours' values are untouched.
  EXPECT_EQ(world.pages.TryGet(world.entities[4], world.pos)->x, 1.0f);
  EXPECT_EQ(world.pages.TryGet(world.entities[6], world.pos)->x, 1.0f);
  EXPECT_EQ(world.pages.TryGet(world.entities[7], world.pos)->x, 1.0f);
}

TEST(EntityPagesHotDeathTest, TypedTryGetRejectsAComponentRegisteredWithAnotherSize) {
  MovingWorld world(kEntityPageSize);
  const Entity e = world.entities[3];
  ASSERT_THAT(world.pages.Add(e, world.pos, Position{1, 2, 3}), IsOk());
  const Component<Wide> wrong{world.pos.id};
  const char* kMessage = "registered with another size";
  EXPECT_DEATH((void)world.pages.TryGet(e, wrong), kMessage);
  // Whether or not the entity has it: the check is on the type, not the entity.
  EXPECT_DEATH((void)world.pages.TryGet(world.entities[4], wrong), kMessage);
  const Component<Position> tag_as_position{world.frozen.id};
  EXPECT_DEATH((void)world.pages.TryGet(e, tag_as_position), kMessage);
  // An id no type has is not a size mismatch: nullptr, as the untyped TryGet.
  EXPECT_EQ(world.pages.TryGet(e, Component<Wide>{7}), nullptr);
  EXPECT_EQ(world.pages.TryGet(e, Component<Wide>{EntityPages::kMaxComponentTypes + 5}), nullptr);
  EXPECT_EQ(world.pages.TryGet(e, Component<Frozen>{9}), nullptr);
  // The right types read.
  ASSERT_NE(world.pages.TryGet(e, world.pos), nullptr);
  EXPECT_EQ(world.pages.TryGet(e, world.pos)->z, 3.0f);
  EXPECT_EQ(world.pages.TryGet(e, world.frozen), nullptr);
}

TEST(EntityPagesHotDeathTest, AccessorsRejectAnUnregisteredId) {
  MovingWorld world(kEntityPageSize);
  const ComponentId unknown = 3;  // Position, Velocity and Frozen are 0, 1 and 2
  const char* kMessage = "component id not registered in this store";
  EXPECT_DEATH((void)world.pages.component_size(unknown), kMessage);
  EXPECT_DEATH((void)world.pages.component_name(unknown), kMessage);
  EXPECT_DEATH((void)world.pages.page_masks(unknown), kMessage);
  EXPECT_DEATH((void)world.pages.data_page_range(unknown), kMessage);
  EXPECT_EQ(world.pages.component_size(world.vel.id), sizeof(Velocity));
  EXPECT_EQ(world.pages.component_name(world.frozen.id), "Frozen");
}

// A handle carrying the invalid generation must not pass for an index that is not in
// the store (whose generation-table entry holds that value), in a page where other
// entities have the component, before and after a compaction.
TEST(EntityPagesHot, InvalidGenerationHandleIsRejected) {
  MovingWorld world(2 * kEntityPageSize);
  for (size_t i = 0; i < world.entities.size(); ++i) {
    if (i == 7 || i == kEntityPageSize + 9) continue;  // never in the store
    ASSERT_THAT(world.pages.Add(world.entities[i], world.pos, Position{float(i), 0, 0}),
                IsOk());
    if (i % 2 == 0) {
      ASSERT_THAT(world.pages.Add(world.entities[i], world.vel, Velocity{}), IsOk());
    }
  }
  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    for (const uint32_t index : {7u, kEntityPageSize + 9}) {
      const Entity forged(index, Entity::kInvalidGeneration);
      EXPECT_EQ(world.pages.TryGet(forged, world.pos), nullptr);
      EXPECT_EQ(world.pages.TryGet(forged, world.vel), nullptr);
      EXPECT_FALSE(world.pages.Contains(forged));
      EXPECT_THAT(world.pages.Remove(forged, world.pos),
                  StatusIs(absl::StatusCode::kNotFound));
      EXPECT_THAT(world.pages.Add(forged, world.vel, Velocity{}),
                  StatusIs(absl::StatusCode::kNotFound));
      // The real handle of the same index is alive but has no components here.
      EXPECT_EQ(world.pages.TryGet(world.entities[index], world.pos), nullptr);
    }
    // An index in the store with the invalid generation is not that entity either.
    const Entity forged_live(world.entities[8].index(), Entity::kInvalidGeneration);
    EXPECT_EQ(world.pages.TryGet(forged_live, world.pos), nullptr);
    EXPECT_THAT(world.pages.Remove(forged_live, world.pos),
                StatusIs(absl::StatusCode::kNotFound));
    EXPECT_EQ(world.pages.TryGet(world.entities[8], world.pos)->x, 8.0f);
  };
  check("identity layout");
  ASSERT_GT(world.pages.Compact(), 0u);
  ASSERT_TRUE(world.pages.compacted());
  check("compacted");
}

// The first component of a page (no data page: the out-of-line path allocates it),
// then the rest of the page inline; after the release, the same again.
TEST(EntityPagesHot, FirstComponentOfAPageAllocatesItsDataPage) {
  MovingWorld world(kEntityPageSize);
  for (Entity e : world.entities) {
    ASSERT_THAT(world.pages.Add(e, world.pos, Position{}), IsOk());
  }
  const size_t pages_before = world.pages.allocated_data_pages();
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    for (size_t i = 0; i < world.entities.size(); ++i) {
      ASSERT_THAT(world.pages.Add(world.entities[i], world.vel, Velocity{float(i), 2, 3}),
                  IsOk());
      if (i == 0) {
        EXPECT_EQ(world.pages.allocated_data_pages(), pages_before + 1);
      }
    }
    for (size_t i = 0; i < world.entities.size(); ++i) {
      const Velocity* v = world.pages.TryGet(world.entities[i], world.vel);
      ASSERT_NE(v, nullptr);
      EXPECT_EQ(v->x, float(i));
      EXPECT_THAT(world.pages.Add(world.entities[i], world.vel, Velocity{}),
                  StatusIs(absl::StatusCode::kAlreadyExists));
    }
    for (Entity e : world.entities) ASSERT_THAT(world.pages.Remove(e, world.vel), IsOk());
    for (Entity e : world.entities) {
      EXPECT_EQ(world.pages.TryGet(e, world.vel), nullptr);
      EXPECT_THAT(world.pages.Remove(e, world.vel), StatusIs(absl::StatusCode::kNotFound));
      EXPECT_TRUE(world.pages.Contains(e));  // Position stays
    }
    // The emptied mask put the page on the dirty list: its Velocity page goes.
    EXPECT_EQ(world.pages.num_dirty_pages(), 1u);
    EXPECT_EQ(world.pages.ReleaseEmptyPages(), 1u);
    EXPECT_EQ(world.pages.allocated_data_pages(), pages_before);
  }
}

// Removing an entity's last component takes it out of the store (its slot is freed)
// and a later Add takes it back in, inline paths and out-of-line ones alike.
TEST(EntityPagesHot, LastComponentRemovedLeavesTheStore) {
  MovingWorld world(kEntityPageSize);
  for (Entity e : world.entities) {
    ASSERT_THAT(world.pages.Add(e, world.pos, Position{1, 2, 3}), IsOk());
  }
  const Entity e = world.entities[10];
  ASSERT_THAT(world.pages.Add(e, world.vel, Velocity{4, 5, 6}), IsOk());
  ASSERT_THAT(world.pages.Remove(e, world.pos), IsOk());  // one component left
  EXPECT_TRUE(world.pages.Contains(e));
  EXPECT_EQ(world.pages.num_entities(), kEntityPageSize);
  ASSERT_THAT(world.pages.Remove(e, world.vel), IsOk());  // the last one
  EXPECT_FALSE(world.pages.Contains(e));
  EXPECT_EQ(world.pages.num_entities(), kEntityPageSize - 1);
  EXPECT_EQ(world.pages.SlotOf(e), kNoSlot);
  EXPECT_THAT(world.pages.Remove(e, world.vel), StatusIs(absl::StatusCode::kNotFound));
  // Velocity's page lost its only bit, so the pass frees it; Position's stays.
  EXPECT_EQ(world.pages.ReleaseEmptyPages(), 1u);
  ASSERT_THAT(world.pages.Add(e, world.pos, Position{7, 8, 9}), IsOk());
  EXPECT_TRUE(world.pages.Contains(e));
  EXPECT_EQ(world.pages.TryGet(e, world.pos)->z, 9.0f);
  EXPECT_EQ(world.pages.TryGet(e, world.vel), nullptr);
  EXPECT_EQ(world.pages.TryGet(world.entities[11], world.pos)->z, 3.0f);
}

// A slot past the page capacity grows every table; the inline paths then run on the
// new tables and every earlier value is still there.
TEST(EntityPagesHot, GrowthKeepsValuesAndTheInlinePathsUseTheNewTables) {
  const size_t n = (EntityPages::kPageCapacityQuantum * 3 + 1) * kEntityPageSize;
  MovingWorld world(n);
  ASSERT_THAT(world.pages.Add(world.entities[1], world.pos, Position{1, 0, 0}), IsOk());
  const size_t capacity = world.pages.page_capacity();
  const uint64_t epoch = world.pages.epoch();
  const Entity far = world.entities[n - 2];
  ASSERT_GE(far.index() / kEntityPageSize, capacity);
  ASSERT_THAT(world.pages.Add(far, world.pos, Position{2, 0, 0}), IsOk());
  EXPECT_GT(world.pages.page_capacity(), capacity);
  EXPECT_NE(world.pages.epoch(), epoch);
  // The far page's neighbours take the inline path on the grown tables.
  const Entity neighbour = world.entities[n - 1];
  ASSERT_THAT(world.pages.Add(neighbour, world.pos, Position{3, 0, 0}), IsOk());
  ASSERT_THAT(world.pages.Add(world.entities[2], world.pos, Position{4, 0, 0}), IsOk());
  EXPECT_EQ(world.pages.TryGet(world.entities[1], world.pos)->x, 1.0f);
  EXPECT_EQ(world.pages.TryGet(far, world.pos)->x, 2.0f);
  EXPECT_EQ(world.pages.TryGet(neighbour, world.pos)->x, 3.0f);
  EXPECT_EQ(world.pages.TryGet(world.entities[2], world.pos)->x, 4.0f);
  ASSERT_THAT(world.pages.Remove(far, world.pos), IsOk());
  EXPECT_EQ(world.pages.TryGet(far, world.pos), nullptr);
  EXPECT_EQ(world.pages.TryGet(neighbour, world.pos)->x, 3.0f);
}

// A registered type with no data page yet (its range is not reserved): every page is
// past its direct pages, and the out-of-line paths answer.
TEST(EntityPagesHot, TypeWithoutDataPagesAnswersThroughTheSlowPaths) {
  MovingWorld world(4);
  const Entity e = world.entities[2];
  ASSERT_THAT(world.pages.Add(e, world.pos, Position{1, 2, 3}), IsOk());
  EXPECT_EQ(world.pages.TryGet(e, world.vel), nullptr);
  EXPECT_EQ(world.pages.TryGetByIndex(e.index(), world.vel.id), nullptr);
  EXPECT_FALSE(world.pages.Has(e, world.vel.id));
  EXPECT_THAT(world.pages.Remove(e, world.vel), StatusIs(absl::StatusCode::kNotFound));
  ASSERT_THAT(world.pages.Add(e, world.vel, Velocity{4, 5, 6}), IsOk());
  EXPECT_EQ(world.pages.TryGet(e, world.vel)->y, 5.0f);
}

// Handles of a destroyed entity are rejected by every hot path, also once its index
// is reused by a new entity in the store, and after a compaction moved it.
TEST(EntityPagesHot, StaleHandlesAreRejectedAfterReuseAndCompaction) {
  EntityManager::Options options;
  options.min_free_indices = 0;  // reuse a destroyed index at once
  struct World {
    explicit World(const EntityManager::Options& options) : manager(options) {}
    EntityManager manager;
    EntityPages pages{manager};
    Component<Position> pos = pages.RegisterComponent<Position>("Position").value();
    Component<Velocity> vel = pages.RegisterComponent<Velocity>("Velocity").value();
    std::vector<Entity> entities = std::vector<Entity>(3 * kEntityPageSize);
  } world(options);
  world.manager.CreateBatch(absl::MakeSpan(world.entities));
  for (size_t i = 0; i < world.entities.size(); ++i) {
    ASSERT_THAT(world.pages.Add(world.entities[i], world.pos, Position{float(i), 0, 0}),
                IsOk());
    if (i % 3 == 0) {
      ASSERT_THAT(world.pages.Add(world.entities[i], world.vel, Velocity{}), IsOk());
    }
  }
  const Entity old = world.entities[40];
  ASSERT_THAT(world.manager.Destroy(old), IsOk());
  const Entity reborn = world.manager.Create();
  ASSERT_EQ(reborn.index(), old.index());
  ASSERT_THAT(world.pages.Add(reborn, world.pos, Position{-1, 0, 0}), IsOk());
  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    EXPECT_EQ(world.pages.TryGet(old, world.pos), nullptr);
    EXPECT_THAT(world.pages.Add(old, world.vel, Velocity{}),
                StatusIs(absl::StatusCode::kNotFound));
    EXPECT_THAT(world.pages.Remove(old, world.pos), StatusIs(absl::StatusCode::kNotFound));
    EXPECT_EQ(world.pages.TryGet(reborn, world.pos)->x, -1.0f);
    // Never issued: an index past the manager's.
    const Entity never(static_cast<uint32_t>(world.entities.size() + 100), 0);
    EXPECT_EQ(world.pages.TryGet(never, world.pos), nullptr);
    EXPECT_THAT(world.pages.Add(never, world.pos, Position{}),
                StatusIs(absl::StatusCode::kNotFound));
    EXPECT_THAT(world.pages.Remove(never, world.pos), StatusIs(absl::StatusCode::kNotFound));
    for (size_t i = 0; i < world.entities.size(); ++i) {
      if (i == 40) continue;
      const Position* p = world.pages.TryGet(world.entities[i], world.pos);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(p->x, float(i));
      EXPECT_EQ(world.pages.TryGet(world.entities[i], world.vel) != nullptr, i % 3 == 0);
    }
  };
  check("identity layout");
  ASSERT_GT(world.pages.Compact(), 0u);
  check("compacted");
  // The inline paths through the slot table: add and remove on moved entities (40 is
  // the destroyed one).
  for (size_t i = 1; i < world.entities.size(); i += 3) {
    if (i == 40) continue;
    ASSERT_THAT(world.pages.Add(world.entities[i], world.vel, Velocity{float(i), 0, 0}),
                IsOk());
  }
  for (size_t i = 1; i < world.entities.size(); i += 3) {
    if (i == 40) continue;
    EXPECT_EQ(world.pages.TryGet(world.entities[i], world.vel)->x, float(i));
    ASSERT_THAT(world.pages.Remove(world.entities[i], world.vel), IsOk());
    EXPECT_EQ(world.pages.TryGet(world.entities[i], world.vel), nullptr);
  }
  check("compacted, after adds and removes");
}

// A tag takes the inline paths with no data (every page is direct for it).
TEST(EntityPagesHot, TagsTakeTheInlinePaths) {
  MovingWorld world(kEntityPageSize);
  for (Entity e : world.entities) {
    ASSERT_THAT(world.pages.Add(e, world.pos, Position{}), IsOk());
  }
  for (size_t i = 0; i < world.entities.size(); i += 2) {
    ASSERT_THAT(world.pages.Add(world.entities[i], world.frozen, testing::Frozen{}), IsOk());
  }
  for (size_t i = 0; i < world.entities.size(); ++i) {
    EXPECT_EQ(world.pages.Has(world.entities[i], world.frozen.id), i % 2 == 0);
  }
  EXPECT_THAT(world.pages.Add(world.entities[0], world.frozen, testing::Frozen{}),
              StatusIs(absl::StatusCode::kAlreadyExists));
  for (size_t i = 0; i < world.entities.size(); i += 2) {
    ASSERT_THAT(world.pages.Remove(world.entities[i], world.frozen), IsOk());
  }
  EXPECT_THAT(world.pages.Remove(world.entities[0], world.frozen),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_FALSE(world.pages.Has(world.entities[0], world.frozen.id));
  EXPECT_EQ(world.pages.allocated_data_pages(), 1u);  // Position's only
}

}  // namespace
}  // namespace strata
