// EntityPages' batch Add and Remove against a loop of the per-entity calls: random
// batches (stale, destroyed, forged and never-added handles, duplicates, wrong ids
// and sizes mixed in) on one store and the equivalent loop on a second store over
// the same manager, with every value, mask, slot, query result, counter and memory
// figure compared after every step, across Compact(budget) passes; and the edges:
// empty spans, error positions, page transitions, the pool pages past a type's range.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gtest/gtest.h"
#include "iteration/entity_pages.h"
#include "iteration/filter.h"
#include "iteration/internal/page_range.h"
#include "iteration/testing/test_components.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::MovingWorld;
using ::strata::testing::Position;
using ::strata::testing::StatusIs;
using ::strata::testing::Velocity;

struct W3 {
  uint32_t v[3];
};
struct alignas(64) W16 {
  uint32_t v[16];
};
struct Tag {};

// Everything observable of two stores over the same manager must be equal: counters,
// memory, masks, ranges, every handle's slot and values, the entity of every slot,
// and what the walks visit in which order.
void ExpectSameStores(const EntityPages& a, const EntityPages& b,
                      const std::vector<Entity>& handles) {
  ASSERT_EQ(a.num_component_types(), b.num_component_types());
  ASSERT_EQ(a.page_capacity(), b.page_capacity());
  ASSERT_EQ(a.num_entities(), b.num_entities());
  ASSERT_EQ(a.compacted(), b.compacted());
  ASSERT_EQ(a.compaction_in_progress(), b.compaction_in_progress());
  ASSERT_EQ(a.epoch(), b.epoch());
  ASSERT_EQ(a.num_dirty_pages(), b.num_dirty_pages());
  ASSERT_EQ(a.allocated_data_pages(), b.allocated_data_pages());
  ASSERT_EQ(a.allocated_entity_pages(), b.allocated_entity_pages());
  ASSERT_EQ(a.page_bytes(), b.page_bytes());
  ASSERT_EQ(a.reserved_page_bytes(), b.reserved_page_bytes());
  ASSERT_EQ(a.MemoryUsage(), b.MemoryUsage());
  const size_t pages = a.page_capacity();
  for (size_t p = 0; p < pages; ++p) {
    ASSERT_EQ(a.occupied_masks()[p], b.occupied_masks()[p]) << "page " << p;
  }
  for (ComponentId c = 0; c < a.num_component_types(); ++c) {
    ASSERT_EQ(a.data_page_range(c), b.data_page_range(c)) << "type " << c;
    for (size_t p = 0; p < pages; ++p) {
      ASSERT_EQ(a.page_masks(c)[p], b.page_masks(c)[p]) << "type " << c << " page " << p;
      ASSERT_EQ(a.page_data(c, p) == nullptr, b.page_data(c, p) == nullptr)
          << "type " << c << " page " << p;
    }
  }
  for (Entity e : handles) {
    ASSERT_EQ(a.SlotOf(e), b.SlotOf(e)) << e;
    ASSERT_EQ(a.Contains(e), b.Contains(e)) << e;
    for (ComponentId c = 0; c < a.num_component_types(); ++c) {
      const void* va = a.TryGet(e, c);
      const void* vb = b.TryGet(e, c);
      ASSERT_EQ(va == nullptr, vb == nullptr) << e << " type " << c;
      ASSERT_EQ(a.TryGetByIndex(e.index(), c) == nullptr,
                b.TryGetByIndex(e.index(), c) == nullptr)
          << e << " type " << c;
      if (va != nullptr) {
        ASSERT_EQ(std::memcmp(va, vb, a.component_size(c)), 0) << e << " type " << c;
      }
    }
  }
  for (size_t p = 0; p < pages; ++p) {
    for (uint32_t bits = a.occupied_masks()[p]; bits != 0; bits &= bits - 1) {
      const uint32_t i = static_cast<uint32_t>(__builtin_ctz(bits));
      ASSERT_EQ(a.entity_at(p, i), b.entity_at(p, i)) << "page " << p << " slot " << i;
    }
  }
  // Walks: the same entities in the same order (the slots are the same).
  std::vector<Filter> filters(5);
  filters[0].Include(ComponentId{1});
  filters[1].Include(ComponentId{1}).Include(ComponentId{2}).Exclude(ComponentId{0});
  filters[2].Exclude(ComponentId{1});
  filters[3].Include(ComponentId{0});
  filters[4].Include(ComponentId{2}).Exclude(ComponentId{1});
  for (const Filter& filter : filters) {
    std::vector<Entity> va, vb;
    ForEachMatch(a, filter, [&](Entity e) { va.push_back(e); });
    ForEachMatch(b, filter, [&](Entity e) { vb.push_back(e); });
    ASSERT_EQ(va, vb);
  }
}

// The loop a batch call must behave as: the per-entity call for each entity in order,
// stopping at the first error; returns it (OK if none) and where it stopped.
template <typename Call>
std::pair<absl::Status, size_t> Loop(absl::Span<const Entity> entities, Call call) {
  for (size_t k = 0; k < entities.size(); ++k) {
    absl::Status status = call(entities[k]);
    if (!status.ok()) return {status, k};
  }
  return {absl::OkStatus(), entities.size()};
}

void ExpectSameOutcome(const absl::Status& batch,
                       const std::pair<absl::Status, size_t>& loop) {
  if (loop.first.ok()) {
    ASSERT_THAT(batch, IsOk());
    return;
  }
  ASSERT_EQ(batch.code(), loop.first.code()) << batch;
  ASSERT_EQ(std::string(batch.message()),
            absl::StrCat("entity ", loop.second, " of the batch: ", loop.first.message()));
}

class BatchRandomTest : public ::testing::TestWithParam<size_t> {};

TEST_P(BatchRandomTest, MatchesALoopOfPerEntityCalls) {
  const size_t budget = GetParam();
  ::strata::testing::Random rng(::strata::testing::TestSeed() + budget % 1000);
  SCOPED_TRACE(rng.DescribeSeed());
  EntityManager::Options options;
  options.min_free_indices = 4;  // indices come back soon: stale handles share them
  EntityManager manager(options);
  EntityPages batch_store(manager);  // changed by the batch calls
  EntityPages loop_store(manager);   // changed by the per-entity loops
  Component<Tag> tag;
  Component<W3> w3;
  Component<W16> w16;
  for (EntityPages* pages : {&batch_store, &loop_store}) {
    tag = pages->RegisterComponent<Tag>("tag").value();
    w3 = pages->RegisterComponent<W3>("w3").value();
    w16 = pages->RegisterComponent<W16>("w16").value();
  }
  const ComponentId ids[3] = {tag.id, w3.id, w16.id};
  std::vector<Entity> live;
  std::vector<Entity> dead;
  for (int k = 0; k < 40; ++k) live.push_back(manager.Create());

  // A span for a batch on type `c`: mostly entities the loop store says qualify
  // (`want_present`: having `c`, for Remove), in index order or not, with every kind
  // of bad handle now and then.
  auto make_span = [&](ComponentId c, bool want_present) {
    std::vector<Entity> candidates;
    for (Entity e : live) {
      if (loop_store.Has(e, c) == want_present) candidates.push_back(e);
    }
    std::vector<Entity> span;
    const size_t len = rng.UniformInt(0, 48);
    for (size_t k = 0; k < len; ++k) {
      const int kind = static_cast<int>(rng.UniformInt(0, 99));
      if (kind == 0 && !dead.empty()) {
        span.push_back(dead[rng.UniformIndex(dead.size())]);  // destroyed (maybe reused)
      } else if (kind == 1) {
        span.push_back(Entity(live[rng.UniformIndex(live.size())].index(),
                              Entity::kInvalidGeneration));
      } else if (kind == 2) {
        span.push_back(Entity(static_cast<uint32_t>(manager.slots_used() + 5), 0));
      } else if (kind <= 4 && !span.empty()) {
        span.push_back(span[rng.UniformIndex(span.size())]);  // a duplicate
      } else if (kind <= 9 || candidates.empty()) {
        span.push_back(live[rng.UniformIndex(live.size())]);  // any live one
      } else {
        span.push_back(candidates[rng.UniformIndex(candidates.size())]);
      }
    }
    if (rng.Bernoulli(0.5)) {
      std::sort(span.begin(), span.end(),
                [](Entity x, Entity y) { return x.index() < y.index(); });
    }
    return span;
  };

  for (int step = 0; step < 600; ++step) {
    SCOPED_TRACE(absl::StrCat("step ", step));
    const int op = static_cast<int>(rng.UniformInt(0, 19));
    if (op <= 1) {
      for (int k = static_cast<int>(rng.UniformInt(1, 40)); k > 0; --k) {
        live.push_back(manager.Create());
      }
    } else if (op == 2 && live.size() > 8) {
      // Destroyed: both stores' listeners delete it.
      const size_t k = rng.UniformIndex(live.size());
      ASSERT_THAT(manager.Destroy(live[k]), IsOk());
      dead.push_back(live[k]);
      live.erase(live.begin() + static_cast<ptrdiff_t>(k));
    } else if (op == 3 && !live.empty()) {
      const Entity e = live[rng.UniformIndex(live.size())];
      const absl::Status a = batch_store.Delete(e);
      ASSERT_EQ(a.code(), loop_store.Delete(e).code());
    } else if (op <= 10) {
      const int t = static_cast<int>(rng.UniformInt(0, 2));
      const std::vector<Entity> span = make_span(ids[t], /*want_present=*/false);
      W3 v3;
      W16 v16;
      for (uint32_t& x : v3.v) x = rng.Next32();
      for (uint32_t& x : v16.v) x = rng.Next32();
      const int form = static_cast<int>(rng.UniformInt(0, 19));
      absl::Status batch;
      std::pair<absl::Status, size_t> loop;
      if (form == 0) {
        // An id nobody registered (the loop fails on the first live entity).
        batch = batch_store.Add(span, ComponentId{200}, &v16);
        loop = Loop(span, [&](Entity e) { return loop_store.Add(e, ComponentId{200}, &v16); });
      } else if (form == 1) {
        // A Component<T> of the wrong size.
        const Component<W3> wrong{w16.id};
        batch = batch_store.Add(span, wrong, v3);
        loop = Loop(span, [&](Entity e) { return loop_store.Add(e, wrong, v3); });
      } else if (form <= 6) {
        // Untyped, a value or zeros.
        const void* value = t == 1 ? static_cast<const void*>(&v3) : &v16;
        if (t == 0 || form == 6) value = nullptr;
        batch = batch_store.Add(span, ids[t], value);
        loop = Loop(span, [&](Entity e) { return loop_store.Add(e, ids[t], value); });
      } else if (t == 0) {
        batch = batch_store.Add(span, tag, Tag{});
        loop = Loop(span, [&](Entity e) { return loop_store.Add(e, tag, Tag{}); });
      } else if (t == 1) {
        batch = batch_store.Add(span, w3, v3);
        loop = Loop(span, [&](Entity e) { return loop_store.Add(e, w3, v3); });
      } else {
        batch = batch_store.Add(span, w16, v16);
        loop = Loop(span, [&](Entity e) { return loop_store.Add(e, w16, v16); });
      }
      ASSERT_NO_FATAL_FAILURE(ExpectSameOutcome(batch, loop));
    } else if (op <= 15) {
      const int t = static_cast<int>(rng.UniformInt(0, 2));
      const std::vector<Entity> span = make_span(ids[t], /*want_present=*/true);
      absl::Status batch;
      std::pair<absl::Status, size_t> loop;
      if (rng.Bernoulli(0.05)) {
        batch = batch_store.Remove(span, ComponentId{200});
        loop = Loop(span, [&](Entity e) { return loop_store.Remove(e, ComponentId{200}); });
      } else if (t == 1 && rng.Bernoulli(0.5)) {
        batch = batch_store.Remove(span, w3);
        loop = Loop(span, [&](Entity e) { return loop_store.Remove(e, w3); });
      } else {
        batch = batch_store.Remove(span, ids[t]);
        loop = Loop(span, [&](Entity e) { return loop_store.Remove(e, ids[t]); });
      }
      ASSERT_NO_FATAL_FAILURE(ExpectSameOutcome(batch, loop));
    } else if (op <= 17) {
      ASSERT_EQ(batch_store.Compact(budget), loop_store.Compact(budget));
    } else if (op == 18) {
      ASSERT_EQ(batch_store.ReleaseEmptyPages(), loop_store.ReleaseEmptyPages());
    } else {
      ASSERT_EQ(batch_store.ReleaseEmptyPages(), loop_store.ReleaseEmptyPages());
      ASSERT_EQ(batch_store.ReleaseUnusedMemory(), loop_store.ReleaseUnusedMemory());
    }
    std::vector<Entity> handles = live;
    handles.insert(handles.end(), dead.begin(), dead.end());
    ASSERT_NO_FATAL_FAILURE(ExpectSameStores(batch_store, loop_store, handles));
  }
  // Everything destroyed: both stores empty, their memory back to zero.
  ASSERT_THAT(manager.DestroyBatch(live), IsOk());
  EXPECT_EQ(batch_store.num_entities(), 0u);
  ASSERT_EQ(batch_store.ReleaseEmptyPages(), loop_store.ReleaseEmptyPages());
  ASSERT_EQ(batch_store.ReleaseUnusedMemory(), loop_store.ReleaseUnusedMemory());
  EXPECT_EQ(batch_store.page_bytes(), 0u);
  EXPECT_EQ(batch_store.reserved_page_bytes(), 0u);
  EXPECT_FALSE(batch_store.compacted());
  ASSERT_NO_FATAL_FAILURE(ExpectSameStores(batch_store, loop_store, dead));
}

// Budgets as in the compaction tests: 0 (never compacts), 1, 7, unbounded.
INSTANTIATE_TEST_SUITE_P(Budgets, BatchRandomTest,
                         ::testing::Values(size_t{0}, size_t{1}, size_t{7},
                                           EntityPages::kUnbounded));

TEST(EntityPagesBatch, EmptySpanIsOkAndChangesNothing) {
  MovingWorld world(4);
  const size_t memory = world.pages.MemoryUsage();
  const absl::Span<const Entity> none;
  EXPECT_THAT(world.pages.Add(none, world.vel, Velocity{1, 2, 3}), IsOk());
  EXPECT_THAT(world.pages.Add(none, world.vel.id, nullptr), IsOk());
  EXPECT_THAT(world.pages.Remove(none, world.vel), IsOk());
  // As a loop over nothing: an unregistered id is not looked at.
  EXPECT_THAT(world.pages.Add(none, ComponentId{77}, nullptr), IsOk());
  EXPECT_THAT(world.pages.Remove(none, ComponentId{77}), IsOk());
  EXPECT_EQ(world.pages.num_entities(), 0u);
  EXPECT_EQ(world.pages.MemoryUsage(), memory);
  EXPECT_EQ(world.pages.Compact(), 0u);  // nothing changed, nothing to plan
}

// The first failure stops the batch: the entities before it keep the change, it and
// those after it are untouched, and the message names its position.
TEST(EntityPagesBatch, FirstFailureStopsTheBatchWithItsPosition) {
  MovingWorld world(3 * kEntityPageSize);
  std::vector<Entity> span(world.entities.begin(), world.entities.begin() + 40);
  const Entity stale = world.entities[20];
  ASSERT_THAT(world.manager.Destroy(stale), IsOk());
  const absl::Status added = world.pages.Add(span, world.pos, Position{1, 2, 3});
  EXPECT_THAT(added, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(std::string(added.message()).rfind("entity 20 of the batch: ", 0), 0u) << added;
  for (size_t k = 0; k < span.size(); ++k) {
    EXPECT_EQ(world.pages.Has(span[k], world.pos.id), k < 20) << k;
  }
  EXPECT_EQ(world.pages.num_entities(), 20u);
  // Remove: a stale handle in the middle, then an entity without the component.
  span.erase(span.begin() + 20);  // the destroyed one
  const absl::Status removed = world.pages.Remove(span, world.pos);
  EXPECT_THAT(removed, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(std::string(removed.message()).rfind("entity 20 of the batch: ", 0), 0u)
      << removed;
  for (size_t k = 0; k < 20; ++k) EXPECT_FALSE(world.pages.Contains(span[k])) << k;
  EXPECT_EQ(world.pages.num_entities(), 0u);
  // The emptied page went on the dirty list once, and goes.
  EXPECT_EQ(world.pages.num_dirty_pages(), 1u);
  EXPECT_EQ(world.pages.ReleaseEmptyPages(), 2u);  // Position's data page, the entity page
  EXPECT_EQ(world.pages.page_bytes(), 0u);
}

TEST(EntityPagesBatch, AnEntityListedTwiceFailsTheSecondTime) {
  MovingWorld world(kEntityPageSize);
  const std::vector<Entity> span = {world.entities[3], world.entities[4], world.entities[3],
                                    world.entities[5]};
  const absl::Status added = world.pages.Add(span, world.vel, Velocity{4, 5, 6});
  EXPECT_THAT(added, StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(std::string(added.message()).rfind("entity 2 of the batch: ", 0), 0u) << added;
  EXPECT_EQ(world.pages.TryGet(world.entities[3], world.vel)->z, 6.0f);
  EXPECT_EQ(world.pages.TryGet(world.entities[4], world.vel)->x, 4.0f);
  EXPECT_FALSE(world.pages.Contains(world.entities[5]));
  const absl::Status removed = world.pages.Remove(span, world.vel);
  EXPECT_THAT(removed, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(std::string(removed.message()).rfind("entity 2 of the batch: ", 0), 0u)
      << removed;
  EXPECT_FALSE(world.pages.Contains(world.entities[3]));
  EXPECT_FALSE(world.pages.Contains(world.entities[4]));
}

// The id and size checks, as the per-entity calls order them: an entity that is not
// alive is NotFound first; an alive one with a bad id or size is InvalidArgument.
TEST(EntityPagesBatch, BadIdsAndSizesFailAtTheFirstEntity) {
  MovingWorld world(kEntityPageSize);
  const Entity dead = world.entities[0];
  ASSERT_THAT(world.manager.Destroy(dead), IsOk());
  const std::vector<Entity> alive = {world.entities[1], world.entities[2]};
  EXPECT_THAT(world.pages.Add(alive, ComponentId{9}, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(world.pages.Add(std::vector<Entity>{dead}, ComponentId{9}, nullptr),
              StatusIs(absl::StatusCode::kNotFound));
  const Component<W16> wrong{world.vel.id};
  EXPECT_THAT(world.pages.Add(alive, wrong, W16{}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(world.pages.Remove(alive, ComponentId{9}),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(world.pages.num_entities(), 0u);
  // With the page's data present (the inline path would take it but for the check).
  ASSERT_THAT(world.pages.Add(std::vector<Entity>{world.entities[3]}, world.vel, Velocity{}),
              IsOk());
  EXPECT_THAT(world.pages.Add(alive, wrong, W16{}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_FALSE(world.pages.Contains(alive[0]));
}

// Pages past a type's reserved range come from its pool; the batch calls take the
// out-of-line path there and behave as the loop.
TEST(EntityPagesBatch, PoolPagesPastTheRangeBehaveAsTheLoop) {
  constexpr size_t kSize = size_t{1} << 20;  // 1 MiB elements, 32 MiB pages
  constexpr size_t kDirectPages =
      iteration_internal::PageRange::kMaxReservationBytes / (kSize * kEntityPageSize);
  EntityManager manager;
  EntityPages batch_store(manager);
  EntityPages loop_store(manager);
  ComponentId big = 0;
  for (EntityPages* pages : {&batch_store, &loop_store}) {
    big = pages->RegisterComponent("Big", kSize, 8).value();
    ASSERT_THAT(pages->RegisterComponent<Tag>("tag").status(), IsOk());
    ASSERT_THAT(pages->RegisterComponent<W3>("w3").status(), IsOk());
  }
  std::vector<Entity> entities((kDirectPages + 2) * kEntityPageSize);
  manager.CreateBatch(absl::MakeSpan(entities));
  const size_t far = (kDirectPages + 1) * kEntityPageSize;
  // Two in the range, three on one pool page, one duplicate at the end.
  const std::vector<Entity> span = {entities[3],       entities[4],       entities[far + 1],
                                    entities[far + 2], entities[far + 9], entities[far + 2]};
  std::vector<std::byte> value(kSize, std::byte{0x5A});
  value[kSize - 1] = std::byte{0x33};
  const absl::Status batch = batch_store.Add(span, big, value.data());
  const auto loop = Loop(span, [&](Entity e) { return loop_store.Add(e, big, value.data()); });
  ASSERT_NO_FATAL_FAILURE(ExpectSameOutcome(batch, loop));
  EXPECT_EQ(loop.second, 5u);
  const auto* far_bytes = static_cast<const std::byte*>(batch_store.TryGet(span[3], big));
  ASSERT_NE(far_bytes, nullptr);
  EXPECT_EQ(far_bytes[kSize - 1], std::byte{0x33});
  EXPECT_EQ(batch_store.allocated_data_pages(), 2u);
  const std::vector<Entity> handles(span.begin(), span.end());
  ASSERT_NO_FATAL_FAILURE(ExpectSameStores(batch_store, loop_store, handles));
  // Removed again (the pool page's mask empties, the entity leaves the store).
  const std::vector<Entity> to_remove(span.begin(), span.begin() + 5);
  ASSERT_THAT(batch_store.Remove(to_remove, big), IsOk());
  for (Entity e : to_remove) ASSERT_THAT(loop_store.Remove(e, big), IsOk());
  ASSERT_NO_FATAL_FAILURE(ExpectSameStores(batch_store, loop_store, handles));
  EXPECT_EQ(batch_store.ReleaseEmptyPages(), 4u);  // 2 data pages, 2 entity pages
  EXPECT_EQ(loop_store.ReleaseEmptyPages(), 4u);
  batch_store.ReleaseUnusedMemory();
  EXPECT_EQ(batch_store.reserved_page_bytes(), 0u);
}

// A batch over whole pages after a release: the first entity of each page takes the
// out-of-line path (its data page is allocated again), the rest of the page inline;
// removing every entity's last component takes them out of the store.
TEST(EntityPagesBatch, WholePagesAcrossReleasesAndTheLastComponent) {
  MovingWorld world(3 * kEntityPageSize + 5);
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    ASSERT_THAT(world.pages.Add(world.entities, world.pos, Position{1, 2, float(round)}),
                IsOk());
    ASSERT_THAT(world.pages.Add(world.entities, world.vel.id, nullptr), IsOk());
    EXPECT_EQ(world.pages.num_entities(), world.entities.size());
    EXPECT_EQ(world.pages.allocated_data_pages(), 8u);
    for (Entity e : world.entities) {
      EXPECT_EQ(world.pages.TryGet(e, world.pos)->z, float(round));
      EXPECT_EQ(world.pages.TryGet(e, world.vel)->x, 0.0f);
    }
    ASSERT_THAT(world.pages.Remove(world.entities, world.vel), IsOk());
    EXPECT_EQ(world.pages.num_dirty_pages(), 4u);
    EXPECT_EQ(world.pages.num_entities(), world.entities.size());
    ASSERT_THAT(world.pages.Remove(world.entities, world.pos), IsOk());
    EXPECT_EQ(world.pages.num_entities(), 0u);
    EXPECT_EQ(world.pages.ReleaseEmptyPages(), 12u);  // 8 data pages, 4 entity pages
    EXPECT_EQ(world.pages.page_bytes(), 0u);
  }
}

// A component removed from every entity of its pages and released comes back through
// the fast paths of both forms: its data pages are allocated again where they were, and
// the entities keep their other components.
TEST(EntityPagesBatch, ComponentAddedBackAfterItsPagesWereReleased) {
  MovingWorld world(3 * kEntityPageSize + 5);  // 4 pages, the last one partly full
  ASSERT_THAT(world.pages.Add(world.entities, world.pos, Position{1, 2, 3}), IsOk());
  ASSERT_EQ(world.pages.allocated_data_pages(), 4u);
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE(round);
    const bool batch = round % 2 == 0;
    const Velocity v{float(round), 0, 0};
    if (batch) {
      ASSERT_THAT(world.pages.Add(world.entities, world.vel, v), IsOk());
    } else {
      for (Entity e : world.entities) ASSERT_THAT(world.pages.Add(e, world.vel, v), IsOk());
    }
    EXPECT_EQ(world.pages.allocated_data_pages(), 8u);
    for (Entity e : world.entities) {
      ASSERT_NE(world.pages.TryGet(e, world.vel), nullptr);
      EXPECT_EQ(world.pages.TryGet(e, world.vel)->x, float(round));
    }
    // Consecutive slots of one page hold consecutive elements.
    EXPECT_EQ(world.pages.TryGet(world.entities[1], world.vel),
              world.pages.TryGet(world.entities[0], world.vel) + 1);
    if (batch) {
      ASSERT_THAT(world.pages.Remove(world.entities, world.vel), IsOk());
    } else {
      for (Entity e : world.entities) ASSERT_THAT(world.pages.Remove(e, world.vel), IsOk());
    }
    EXPECT_EQ(world.pages.num_dirty_pages(), 4u);
    EXPECT_EQ(world.pages.ReleaseEmptyPages(), 4u);  // Velocity's data pages only
    EXPECT_EQ(world.pages.allocated_data_pages(), 4u);
    EXPECT_EQ(world.pages.num_entities(), world.entities.size());
    for (Entity e : world.entities) {
      EXPECT_EQ(world.pages.TryGet(e, world.vel), nullptr);
      EXPECT_EQ(world.pages.TryGet(e, world.pos)->z, 3.0f);
    }
  }
}

// Whether every occupied page holds one component set (what a finished compaction
// leaves).
bool PagesAreHomogeneous(const EntityPages& pages) {
  for (size_t p = 0; p < pages.page_capacity(); ++p) {
    const uint32_t occupied = pages.occupied_masks()[p];
    for (ComponentId c = 0; c < pages.num_component_types(); ++c) {
      const uint32_t mask = pages.page_masks(c)[p];
      if (mask != 0 && mask != occupied) return false;
    }
  }
  return true;
}

// Batch changes that take only the inline paths, made while a compaction pass is under
// way, mark the store changed as the per-entity calls do: the pass that follows places
// the changed entities.
TEST(EntityPagesBatch, InlineChangesDuringACompactionPassAreReplanned) {
  for (const bool remove : {false, true}) {
    SCOPED_TRACE(remove ? "Remove" : "Add");
    MovingWorld world(4 * kEntityPageSize);
    ASSERT_THAT(world.pages.Add(world.entities, world.pos, Position{}), IsOk());
    std::vector<Entity> even, one_mod_four;
    for (size_t i = 0; i < world.entities.size(); ++i) {
      if (i % 2 == 0) even.push_back(world.entities[i]);
      if (i % 4 == 1) one_mod_four.push_back(world.entities[i]);
    }
    ASSERT_THAT(world.pages.Add(even, world.vel, Velocity{}), IsOk());
    ASSERT_EQ(world.pages.Compact(1), 1u);  // planned; the pass goes on
    ASSERT_TRUE(world.pages.compaction_in_progress());
    ASSERT_FALSE(PagesAreHomogeneous(world.pages));
    // Entities whose pages keep other Velocity bits: inline (but for an entity the
    // pass parked alone past the ranges).
    if (remove) {
      std::vector<Entity> zero_mod_four;
      for (size_t i = 0; i < world.entities.size(); i += 4) {
        zero_mod_four.push_back(world.entities[i]);
      }
      ASSERT_THAT(world.pages.Remove(zero_mod_four, world.vel), IsOk());
    } else {
      ASSERT_THAT(world.pages.Add(one_mod_four, world.vel, Velocity{}), IsOk());
    }
    for (int pass = 0; pass < 4 && world.pages.Compact() != 0; ++pass) {
    }
    EXPECT_EQ(world.pages.Compact(), 0u);
    EXPECT_TRUE(PagesAreHomogeneous(world.pages));
  }
}

}  // namespace
}  // namespace strata
