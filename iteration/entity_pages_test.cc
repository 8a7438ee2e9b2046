#include "iteration/entity_pages.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "iteration/testing/test_components.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;

using ::strata::testing::Frozen;
using ::strata::testing::MovingWorld;
using ::strata::testing::Position;
using ::strata::testing::Velocity;
struct alignas(64) Wide {
  uint64_t words[8];
};

// A manager that reuses slots quickly, so stale handles share indices with live ones.
EntityManager::Options FastReuse() {
  EntityManager::Options options;
  options.min_free_indices = 0;
  return options;
}

TEST(EntityPages, RegisterComponentValidates) {
  EntityManager manager;
  EntityPages pages(manager);
  EXPECT_THAT(pages.RegisterComponent("", 4, 4), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(pages.RegisterComponent("a", 4, 3), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(pages.RegisterComponent("a", 6, 4), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(pages.RegisterComponent("a", 4, 8192),
              StatusIs(absl::StatusCode::kInvalidArgument));
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentId a, pages.RegisterComponent("a", 4, 4));
  EXPECT_EQ(a, 0u);
  EXPECT_THAT(pages.RegisterComponent("a", 8, 8), StatusIs(absl::StatusCode::kAlreadyExists));
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentId found, pages.FindComponent("a"));
  EXPECT_EQ(found, a);
  EXPECT_THAT(pages.FindComponent("b"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(pages.component_size(a), 4u);
  EXPECT_EQ(pages.component_name(a), "a");
}

TEST(EntityPages, RegistersUpToTheMaximumThenRefuses) {
  EntityManager manager;
  EntityPages pages(manager);
  for (size_t i = 0; i < EntityPages::kMaxComponentTypes; ++i) {
    ASSERT_THAT(pages.RegisterComponent(absl::StrCat("c", i), 4, 4), IsOk());
  }
  EXPECT_THAT(pages.RegisterComponent("one_more", 4, 4),
              StatusIs(absl::StatusCode::kResourceExhausted));
  // The last type works like the first.
  const Entity e = manager.Create();
  const ComponentId last = EntityPages::kMaxComponentTypes - 1;
  const uint32_t value = 77;
  ASSERT_THAT(pages.Add(e, last, &value), IsOk());
  ASSERT_THAT(pages.Add(e, 0, nullptr), IsOk());
  EXPECT_EQ(*static_cast<const uint32_t*>(pages.TryGet(e, last)), 77u);
  EXPECT_EQ(*static_cast<const uint32_t*>(pages.TryGet(e, 0)), 0u);  // zero-filled
  ASSERT_THAT(pages.Delete(e), IsOk());
  EXPECT_FALSE(pages.Has(e, last));
}

TEST(EntityPages, EmptyStoreAnswersNothing) {
  EntityManager manager;
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Position> pos,
                              pages.RegisterComponent<Position>("Position"));
  const Entity e = manager.Create();
  EXPECT_FALSE(pages.Contains(e));
  EXPECT_EQ(pages.TryGet(e, pos), nullptr);
  EXPECT_EQ(pages.TryGet(Entity::Invalid(), pos), nullptr);
  EXPECT_THAT(pages.Remove(e, pos), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(pages.Delete(e), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(pages.ReleaseEmptyPages(), 0u);
  EXPECT_EQ(pages.page_bytes(), 0u);
}

TEST(EntityPages, AddGetRemoveOneEntity) {
  EntityManager manager;
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Position> pos,
                              pages.RegisterComponent<Position>("Position"));
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Velocity> vel,
                              pages.RegisterComponent<Velocity>("Velocity"));
  const Entity e = manager.Create();
  ASSERT_THAT(pages.Add(e, pos, Position{1, 2, 3}), IsOk());
  EXPECT_TRUE(pages.Contains(e));
  EXPECT_TRUE(pages.Has(e, pos.id));
  EXPECT_FALSE(pages.Has(e, vel.id));
  Position* p = pages.TryGet(e, pos);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->y, 2.0f);
  EXPECT_THAT(pages.Add(e, pos, Position{9, 9, 9}), StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(pages.TryGet(e, pos)->x, 1.0f);  // unchanged
  EXPECT_THAT(pages.Add(e, 99, nullptr), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(pages.allocated_entity_pages(), 1u);
  EXPECT_EQ(pages.allocated_data_pages(), 1u);
  ASSERT_THAT(pages.Remove(e, pos), IsOk());
  EXPECT_FALSE(pages.Contains(e));
  EXPECT_THAT(pages.Remove(e, pos), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(pages.num_dirty_pages(), 1u);
  EXPECT_EQ(pages.ReleaseEmptyPages(), 2u);  // data page + entity page
  EXPECT_EQ(pages.allocated_entity_pages(), 0u);
  EXPECT_EQ(pages.allocated_data_pages(), 0u);
  EXPECT_EQ(pages.page_bytes(), 0u);
  // The pools keep their slabs for the next pages until asked to let them go.
  const size_t reserved = pages.reserved_page_bytes();
  EXPECT_GT(reserved, 0u);
  EXPECT_EQ(pages.ReleaseUnusedMemory(), reserved);
  EXPECT_EQ(pages.reserved_page_bytes(), 0u);
  // And the store works as before afterwards.
  ASSERT_THAT(pages.Add(e, pos, Position{4, 5, 6}), IsOk());
  EXPECT_EQ(pages.TryGet(e, pos)->z, 6.0f);
  EXPECT_EQ(pages.ReleaseUnusedMemory(), 0u);  // both pages are in use
}

TEST(EntityPages, ReleasedPageIsReusedWithoutGrowingThePool) {
  MovingWorld world(10 * kEntityPageSize);
  ComponentBundle bundle;
  bundle.Set(world.pos, Position{1, 1, 1});
  ASSERT_THAT(world.pages.CreateFromBundle(world.entities, bundle), IsOk());
  const size_t reserved = world.pages.reserved_page_bytes();
  for (int round = 0; round < 5; ++round) {
    for (Entity e : world.entities) ASSERT_THAT(world.pages.Remove(e, world.pos), IsOk());
    EXPECT_EQ(world.pages.ReleaseEmptyPages(), 20u);  // 10 data + 10 entity pages
    for (Entity e : world.entities) {
      ASSERT_THAT(world.pages.Add(e, world.pos, Position{2, 2, 2}), IsOk());
    }
    EXPECT_EQ(world.pages.reserved_page_bytes(), reserved);
  }
  for (Entity e : world.entities) EXPECT_EQ(world.pages.TryGet(e, world.pos)->y, 2.0f);
}

TEST(EntityPages, StaleHandlesAreRejected) {
  EntityManager manager(FastReuse());
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Position> pos,
                              pages.RegisterComponent<Position>("Position"));
  const Entity old = manager.Create();
  ASSERT_THAT(pages.Add(old, pos, Position{1, 1, 1}), IsOk());
  ASSERT_THAT(manager.Destroy(old), IsOk());  // the listener deletes its components
  EXPECT_FALSE(pages.Contains(old));
  EXPECT_EQ(pages.TryGet(old, pos), nullptr);
  EXPECT_THAT(pages.Add(old, pos, Position{}), StatusIs(absl::StatusCode::kNotFound));
  const Entity reused = manager.Create();
  ASSERT_EQ(reused.index(), old.index());  // same slot, newer generation
  ASSERT_THAT(pages.Add(reused, pos, Position{5, 5, 5}), IsOk());
  EXPECT_EQ(pages.TryGet(old, pos), nullptr);
  EXPECT_THAT(pages.Remove(old, pos), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(pages.Delete(old), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(pages.TryGet(reused, pos)->x, 5.0f);
  // A handle this manager never issued, and one with a forged generation.
  EXPECT_THAT(pages.Add(Entity(1000, 0), pos, Position{}),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(pages.TryGet(Entity(reused.index(), reused.generation() + 1), pos), nullptr);
}

TEST(EntityPages, DestroyBatchDeletesThroughTheListener) {
  EntityManager manager;
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Position> pos,
                              pages.RegisterComponent<Position>("Position"));
  std::vector<Entity> batch(100);
  manager.CreateBatch(absl::MakeSpan(batch));
  for (size_t i = 0; i < batch.size(); i += 2) {
    ASSERT_THAT(pages.Add(batch[i], pos, Position{}), IsOk());
  }
  ASSERT_THAT(manager.DestroyBatch(batch), IsOk());
  for (Entity e : batch) EXPECT_FALSE(pages.Contains(e));
  pages.ReleaseEmptyPages();
  EXPECT_EQ(pages.page_bytes(), 0u);
  EXPECT_EQ(pages.DeleteEntities(batch), 0u);
}

TEST(EntityPages, ListenerIsRemovedWithTheStore) {
  EntityManager manager;
  const Entity e = manager.Create();
  {
    EntityPages pages(manager);
    STRATA_ASSERT_OK_AND_ASSIGN(ComponentId c, pages.RegisterComponent("c", 4, 4));
    ASSERT_THAT(pages.Add(e, c, nullptr), IsOk());
  }
  // Would call into the destroyed store if the listener were still registered.
  EXPECT_THAT(manager.Destroy(e), IsOk());
}

// Shutdown in the other order: the store outlives its manager. Under ASan a store that
// still read the freed manager fails here (Add's liveness check, the destructor).
TEST(EntityPages, ManagerMayBeDestroyedFirst) {
  auto manager = std::make_unique<EntityManager>();
  auto pages = std::make_unique<EntityPages>(*manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Position> pos,
                              pages->RegisterComponent<Position>("Position"));
  const Entity kept = manager->Create();
  const Entity other = manager->Create();
  ASSERT_THAT(pages->Add(kept, pos, Position{1, 2, 3}), IsOk());
  manager.reset();
  // What the store holds stays readable and removable; no entity of the dead manager
  // is alive, so nothing can be added.
  ASSERT_NE(pages->TryGet(kept, pos), nullptr);
  EXPECT_EQ(pages->TryGet(kept, pos)->y, 2.0f);
  EXPECT_THAT(pages->Add(other, pos, Position{}), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(pages->Remove(kept, pos), IsOk());
  EXPECT_FALSE(pages->Contains(kept));
  pages.reset();
}

TEST(EntityPages, CreateFromBundleWritesEveryValue) {
  EntityManager manager;
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Position> pos,
                              pages.RegisterComponent<Position>("Position"));
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Velocity> vel,
                              pages.RegisterComponent<Velocity>("Velocity"));
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Frozen> frozen,
                              pages.RegisterComponent<Frozen>("Frozen"));
  ComponentBundle bundle;
  bundle.Set(pos, Position{1, 2, 3}).Set(vel, Velocity{4, 5, 6}).Set(frozen, Frozen{});
  bundle.Set(pos, Position{7, 8, 9});  // replaces
  EXPECT_EQ(bundle.size(), 3u);
  std::vector<Entity> batch(1000);
  manager.CreateBatch(absl::MakeSpan(batch));
  ASSERT_THAT(pages.CreateFromBundle(batch, bundle), IsOk());
  for (Entity e : batch) {
    ASSERT_NE(pages.TryGet(e, pos), nullptr);
    EXPECT_EQ(pages.TryGet(e, pos)->z, 9.0f);
    EXPECT_EQ(pages.TryGet(e, vel)->x, 4.0f);
    EXPECT_TRUE(pages.Has(e, frozen.id));
  }
  // 1000 entities span 32 pages; tags take no data pages.
  EXPECT_EQ(pages.allocated_entity_pages(), 32u);
  EXPECT_EQ(pages.allocated_data_pages(), 64u);
  // Removing the components one by one leaves the entity out of the store.
  ASSERT_THAT(pages.Remove(batch[3], frozen), IsOk());
  ASSERT_THAT(pages.Remove(batch[3], pos), IsOk());
  EXPECT_TRUE(pages.Contains(batch[3]));
  ASSERT_THAT(pages.Remove(batch[3], vel), IsOk());
  EXPECT_FALSE(pages.Contains(batch[3]));
}

// A batch grows the per-page tables once, to the capacity single Adds of the same
// entities in the same order reach, in an empty store and in one that already has
// pages; every value lands where TryGet finds it.
TEST(EntityPages, CreateFromBundleGrowsAsSingleAdds) {
  for (const size_t before : {size_t{0}, size_t{100}}) {
    SCOPED_TRACE(before);
    MovingWorld batched(before + 5000);
    MovingWorld single(before + 5000);
    for (MovingWorld* world : {&batched, &single}) {
      for (size_t i = 0; i < before; ++i) {
        ASSERT_THAT(world->pages.Add(world->entities[i], world->pos, Position{}), IsOk());
      }
    }
    const absl::Span<const Entity> rest = absl::MakeConstSpan(batched.entities).subspan(before);
    ComponentBundle bundle;
    bundle.Set(batched.pos, Position{1, 2, 3}).Set(batched.vel, Velocity{4, 5, 6});
    ASSERT_THAT(batched.pages.CreateFromBundle(rest, bundle), IsOk());
    for (size_t i = before; i < single.entities.size(); ++i) {
      ASSERT_THAT(single.pages.Add(single.entities[i], single.pos, Position{1, 2, 3}), IsOk());
      ASSERT_THAT(single.pages.Add(single.entities[i], single.vel, Velocity{4, 5, 6}), IsOk());
    }
    EXPECT_EQ(batched.pages.page_capacity(), single.pages.page_capacity());
    EXPECT_EQ(batched.pages.num_entities(), single.pages.num_entities());
    for (const Entity e : rest) {
      ASSERT_NE(batched.pages.TryGet(e, batched.vel), nullptr) << e;
      ASSERT_EQ(batched.pages.TryGet(e, batched.vel)->z, 6.0f) << e;
      ASSERT_EQ(batched.pages.TryGet(e, batched.pos)->x, 1.0f) << e;
    }
  }
}

TEST(EntityPages, CreateFromBundleIsAllOrNothing) {
  EntityManager manager;
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Position> pos,
                              pages.RegisterComponent<Position>("Position"));
  ComponentBundle bundle;
  bundle.Set(pos, Position{1, 2, 3});
  std::vector<Entity> batch(70);
  manager.CreateBatch(absl::MakeSpan(batch));

  std::vector<Entity> with_duplicate = batch;
  with_duplicate.push_back(batch[5]);
  EXPECT_THAT(pages.CreateFromBundle(with_duplicate, bundle),
              StatusIs(absl::StatusCode::kAlreadyExists));
  std::vector<Entity> with_dead = batch;
  const Entity dead = manager.Create();
  ASSERT_THAT(manager.Destroy(dead), IsOk());
  with_dead.insert(with_dead.begin() + 40, dead);
  EXPECT_THAT(pages.CreateFromBundle(with_dead, bundle),
              StatusIs(absl::StatusCode::kNotFound));
  for (Entity e : batch) EXPECT_FALSE(pages.Contains(e));
  pages.ReleaseEmptyPages();
  EXPECT_EQ(pages.page_bytes(), 0u);

  ComponentBundle wrong_size;
  uint64_t eight_bytes = 0;
  wrong_size.SetRaw(pos.id, absl::MakeConstSpan(reinterpret_cast<const std::byte*>(&eight_bytes),
                                                sizeof(eight_bytes)));
  EXPECT_THAT(pages.CreateFromBundle(batch, wrong_size),
              StatusIs(absl::StatusCode::kInvalidArgument));
  ComponentBundle unknown;
  unknown.SetRaw(42, {});
  EXPECT_THAT(pages.CreateFromBundle(batch, unknown),
              StatusIs(absl::StatusCode::kInvalidArgument));

  ASSERT_THAT(pages.CreateFromBundle(batch, bundle), IsOk());
  EXPECT_THAT(pages.CreateFromBundle(absl::MakeConstSpan(batch).subspan(10, 1), bundle),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(pages.CreateFromBundle({}, bundle), IsOk());
}

// A failed batch undoes only its own entities: a neighbour in the same page keeps its
// components and values, and pages the batch allocated are freed by the dirty pass.
TEST(EntityPages, FailedCreateFromBundleLeavesNeighboursIntact) {
  MovingWorld world(100);
  EntityPages& pages = world.pages;
  const Component<Position> pos = world.pos;
  const Component<Velocity> vel = world.vel;
  const std::vector<Entity>& entities = world.entities;
  // entities[1] (page 0) already has a Position; the batch covers pages 0 to 3.
  ASSERT_THAT(pages.Add(entities[1], pos, Position{7, 7, 7}), IsOk());
  const size_t bytes_before = pages.page_bytes();
  ComponentBundle bundle;
  bundle.Set(pos, Position{1, 2, 3}).Set(vel, Velocity{4, 5, 6});
  std::vector<Entity> batch(entities.begin() + 2, entities.end());
  batch.push_back(entities[1]);  // the last one fails: it already has components
  EXPECT_THAT(pages.CreateFromBundle(batch, bundle),
              StatusIs(absl::StatusCode::kAlreadyExists));
  for (size_t i = 2; i < entities.size(); ++i) {
    EXPECT_FALSE(pages.Contains(entities[i])) << i;
  }
  ASSERT_NE(pages.TryGet(entities[1], pos), nullptr);
  EXPECT_EQ(pages.TryGet(entities[1], pos)->x, 7.0f);
  EXPECT_EQ(pages.TryGet(entities[1], vel), nullptr);
  pages.ReleaseEmptyPages();
  EXPECT_EQ(pages.page_bytes(), bytes_before);
  EXPECT_EQ(pages.allocated_data_pages(), 1u);
  // The same batch without the bad entity succeeds afterwards.
  batch.pop_back();
  ASSERT_THAT(pages.CreateFromBundle(batch, bundle), IsOk());
  EXPECT_EQ(pages.TryGet(entities[99], vel)->z, 6.0f);
}

// A handle from elsewhere with an index the manager never issued is rejected before
// anything is allocated for its page.
TEST(EntityPages, CreateFromBundleRejectsNeverIssuedHandleWithoutGrowing) {
  MovingWorld world(40);
  EntityPages& pages = world.pages;
  ComponentBundle bundle;
  bundle.Set(world.pos, Position{1, 2, 3});
  std::vector<Entity> batch = world.entities;
  batch.push_back(Entity(0x7FFFFFF0u, 0));
  EXPECT_THAT(pages.CreateFromBundle(batch, bundle),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_LE(pages.page_capacity(), EntityPages::kPageCapacityQuantum);
  for (size_t i = 0; i + 1 < batch.size(); ++i) EXPECT_FALSE(pages.Contains(batch[i]));
  pages.ReleaseEmptyPages();
  EXPECT_EQ(pages.page_bytes(), 0u);
}

TEST(EntityPages, DataPagesHonourAlignment) {
  EntityManager manager;
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Wide> wide, pages.RegisterComponent<Wide>("Wide"));
  std::vector<Entity> batch(40);
  manager.CreateBatch(absl::MakeSpan(batch));
  for (Entity e : batch) {
    Wide value{};
    value.words[7] = e.index();
    ASSERT_THAT(pages.Add(e, wide, value), IsOk());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(pages.TryGet(e, wide)) % 64, 0u);
  }
  for (Entity e : batch) EXPECT_EQ(pages.TryGet(e, wide)->words[7], e.index());
}

TEST(EntityPages, PointersStayPutWhenOtherEntitiesChange) {
  EntityManager manager;
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Position> pos,
                              pages.RegisterComponent<Position>("Position"));
  const Entity first = manager.Create();
  ASSERT_THAT(pages.Add(first, pos, Position{1, 1, 1}), IsOk());
  Position* p = pages.TryGet(first, pos);
  std::vector<Entity> many(5000);  // grows the page capacity several times
  manager.CreateBatch(absl::MakeSpan(many));
  for (Entity e : many) ASSERT_THAT(pages.Add(e, pos, Position{}), IsOk());
  for (size_t i = 0; i < many.size(); i += 3) ASSERT_THAT(manager.Destroy(many[i]), IsOk());
  pages.ReleaseEmptyPages();
  EXPECT_EQ(pages.TryGet(first, pos), p);
  EXPECT_EQ(p->x, 1.0f);
}

// Random add/remove/delete/destroy/create sequences against a reference model: a
// std::set of entities per component plus each entity's values.
TEST(EntityPages, RandomOperationsMatchReferenceModel) {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  EntityManager::Options options;
  options.min_free_indices = 8;
  EntityManager manager(options);
  EntityPages pages(manager);
  constexpr int kTypes = 6;
  std::vector<ComponentId> ids;
  for (int t = 0; t < kTypes; ++t) {
    // Sizes 0 (tag), 4, 8, 12, 16, 20.
    STRATA_ASSERT_OK_AND_ASSIGN(ComponentId id,
                                pages.RegisterComponent(absl::StrCat("t", t), 4 * t, 4));
    ids.push_back(id);
  }
  std::set<Entity> ref[kTypes];
  std::map<std::pair<Entity, int>, uint32_t> values;  // first word of each value
  std::vector<Entity> live;
  std::vector<Entity> dead;

  auto check_entity = [&](Entity e) {
    bool any = false;
    for (int t = 0; t < kTypes; ++t) {
      const bool has = ref[t].count(e) != 0;
      any |= has;
      ASSERT_EQ(pages.Has(e, ids[t]), has) << e << " type " << t;
      if (has && t > 0) {
        uint32_t word;
        std::memcpy(&word, pages.TryGet(e, ids[t]), 4);
        ASSERT_EQ(word, (values[{e, t}])) << e << " type " << t;
      }
    }
    ASSERT_EQ(pages.Contains(e), any) << e;
  };

  for (int step = 0; step < 6000; ++step) {
    const int op = static_cast<int>(rng.UniformInt(0, 9));
    if (op <= 1 || live.empty()) {
      live.push_back(manager.Create());
    } else if (op <= 4) {
      const Entity e = live[rng.UniformIndex(live.size())];
      const int t = static_cast<int>(rng.UniformIndex(kTypes));
      uint32_t value[5] = {rng.Next32(), 1, 2, 3, 4};
      const absl::Status s = pages.Add(e, ids[t], value);
      if (ref[t].count(e)) {
        ASSERT_THAT(s, StatusIs(absl::StatusCode::kAlreadyExists));
      } else {
        ASSERT_THAT(s, IsOk());
        ref[t].insert(e);
        values[{e, t}] = value[0];
      }
    } else if (op <= 6) {
      const Entity e = live[rng.UniformIndex(live.size())];
      const int t = static_cast<int>(rng.UniformIndex(kTypes));
      const absl::Status s = pages.Remove(e, ids[t]);
      ASSERT_EQ(s.ok(), ref[t].erase(e) == 1);
    } else if (op == 7) {
      const Entity e = live[rng.UniformIndex(live.size())];
      bool any = false;
      for (auto& set : ref) any |= set.erase(e) == 1;
      ASSERT_EQ(pages.Delete(e).ok(), any);
    } else if (op == 8) {
      const size_t i = rng.UniformIndex(live.size());
      const Entity e = live[i];
      live[i] = live.back();
      live.pop_back();
      ASSERT_THAT(manager.Destroy(e), IsOk());
      for (auto& set : ref) set.erase(e);
      dead.push_back(e);
    } else {
      pages.ReleaseEmptyPages();
    }
    if (step % 500 == 0) {
      for (Entity e : live) ASSERT_NO_FATAL_FAILURE(check_entity(e));
      for (Entity e : dead) ASSERT_FALSE(pages.Contains(e));
    }
  }
  for (Entity e : live) ASSERT_NO_FATAL_FAILURE(check_entity(e));
  for (Entity e : dead) {
    for (int t = 0; t < kTypes; ++t) ASSERT_FALSE(pages.Has(e, ids[t]));
  }
  // Every page is released once all entities are gone, and all memory with
  // ReleaseUnusedMemory.
  ASSERT_THAT(manager.DestroyBatch(live), IsOk());
  pages.ReleaseEmptyPages();
  EXPECT_EQ(pages.allocated_entity_pages(), 0u);
  EXPECT_EQ(pages.allocated_data_pages(), 0u);
  EXPECT_EQ(pages.page_bytes(), 0u);
  pages.ReleaseUnusedMemory();
  EXPECT_EQ(pages.reserved_page_bytes(), 0u);
  for (size_t p = 0; p < pages.page_capacity(); ++p) {
    ASSERT_EQ(pages.occupied_masks()[p], 0u);
    for (ComponentId id : ids) ASSERT_EQ(pages.page_masks(id)[p], 0u);
  }
}

TEST(EntityPages, LargestIndexPage) {
  // A slot far out grows the tables to cover it; nothing in between is allocated.
  EntityManager manager;
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentId c, pages.RegisterComponent("c", 4, 4));
  std::vector<Entity> batch(100000);
  manager.CreateBatch(absl::MakeSpan(batch));
  const Entity last = batch.back();
  ASSERT_THAT(pages.Add(last, c, nullptr), IsOk());
  EXPECT_GE(pages.page_capacity() * kEntityPageSize, size_t{last.index()} + 1);
  EXPECT_EQ(pages.page_capacity() % EntityPages::kPageCapacityQuantum, 0u);
  EXPECT_EQ(pages.allocated_entity_pages(), 1u);
  EXPECT_EQ(pages.allocated_data_pages(), 1u);
  EXPECT_TRUE(pages.Has(last, c));
  EXPECT_FALSE(pages.Has(batch.front(), c));
}

// A batch's runs in any order: a whole page given shuffled (filled in order), a page
// already holding an entity (filled element by element around it), a page reversed.
TEST(EntityPages, CreateFromBundleFillsShuffledAndPartialPages) {
  MovingWorld world(96);
  ASSERT_THAT(world.pages.Add(world.entities[33], world.pos, Position{-1, -1, -1}), IsOk());
  std::vector<Entity> batch(world.entities.begin(), world.entities.begin() + 32);
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  rng.Shuffle(absl::MakeSpan(batch));
  batch.insert(batch.end(), world.entities.begin() + 34, world.entities.begin() + 64);
  batch.insert(batch.end(), world.entities.rbegin(), world.entities.rbegin() + 32);
  ComponentBundle bundle;
  bundle.Set(world.pos, Position{7, 8, 9}).Set(world.vel, Velocity{4, 5, 6});
  ASSERT_THAT(world.pages.CreateFromBundle(batch, bundle), IsOk());
  for (Entity e : batch) {
    ASSERT_NE(world.pages.TryGet(e, world.pos), nullptr) << e;
    EXPECT_EQ(world.pages.TryGet(e, world.pos)->z, 9.0f) << e;
    EXPECT_EQ(world.pages.TryGet(e, world.vel)->y, 5.0f) << e;
  }
  EXPECT_EQ(world.pages.TryGet(world.entities[33], world.pos)->z, -1.0f);
  EXPECT_FALSE(world.pages.Has(world.entities[33], world.vel.id));
  EXPECT_FALSE(world.pages.Contains(world.entities[32]));
  EXPECT_EQ(world.pages.num_entities(), 95u);
  EXPECT_EQ(world.pages.page_masks(world.vel.id)[1], ~uint32_t{0} << 2);
}

}  // namespace
}  // namespace strata
