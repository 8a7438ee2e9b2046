// Compaction tests of the moves themselves: passes larger than one batch of moves,
// budgets that stop inside a batch, whole pages of one set trading places, entities
// destroyed and reissued between the calls of a pass, tags beside data, and types past
// the first 64.
#include <cstdint>
#include <set>
#include <vector>

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

using ::strata::testing::Frozen;
using ::strata::testing::IsOk;
using ::strata::testing::MovingWorld;
using ::strata::testing::Position;
using ::strata::testing::Velocity;

// Every entity of `world` gets Position{index, 1, 2}; `with_velocity(e)` ones also
// Velocity{index, 3, 4}, `frozen(e)` ones the Frozen tag.
template <typename V, typename F>
void Fill(MovingWorld& world, V with_velocity, F frozen) {
  for (Entity e : world.entities) {
    const float f = static_cast<float>(e.index());
    ASSERT_THAT(world.pages.Add(e, world.pos, Position{f, 1, 2}), IsOk());
    if (with_velocity(e)) {
      ASSERT_THAT(world.pages.Add(e, world.vel, Velocity{f, 3, 4}), IsOk());
    }
    if (frozen(e)) {
      ASSERT_THAT(world.pages.Add(e, world.frozen, Frozen{}), IsOk());
    }
  }
}

// Checks every value of the entities Fill gave components (skipping `gone`), and that
// each entity's slot is distinct and its pointers agree with TryGetByIndex.
template <typename V, typename F>
void ExpectValues(MovingWorld& world, V with_velocity, F frozen,
                  const std::set<Entity>& gone = {}) {
  std::set<uint32_t> slots;
  for (Entity e : world.entities) {
    if (gone.count(e) != 0) continue;
    const float f = static_cast<float>(e.index());
    const Position* p = world.pages.TryGet(e, world.pos);
    ASSERT_NE(p, nullptr) << e;
    ASSERT_EQ(p->x, f) << e;
    ASSERT_EQ(p->z, 2.0f) << e;
    ASSERT_EQ(world.pages.TryGetByIndex(e.index(), world.pos.id), p) << e;
    const Velocity* v = world.pages.TryGet(e, world.vel);
    ASSERT_EQ(v != nullptr, with_velocity(e)) << e;
    if (v != nullptr) {
      ASSERT_EQ(v->x, f) << e;
      ASSERT_EQ(v->z, 4.0f) << e;
    }
    ASSERT_EQ(world.pages.Has(e, world.frozen.id), frozen(e)) << e;
    ASSERT_TRUE(slots.insert(world.pages.SlotOf(e)).second) << e;
  }
}

// Every occupied page holds one component set, its slots from 0 without a gap but
// for the set's last page.
void ExpectPagesHoldOneSet(const EntityPages& pages) {
  for (size_t p = 0; p < pages.page_capacity(); ++p) {
    const uint32_t occupied = pages.occupied_masks()[p];
    if (occupied == 0) continue;
    ASSERT_EQ(occupied & (occupied + 1), 0u) << "page " << p << " has a gap";
    for (ComponentId c = 0; c < pages.num_component_types(); ++c) {
      const uint32_t mask = pages.page_masks(c)[p];
      ASSERT_TRUE(mask == 0 || mask == occupied) << "page " << p << " mixes sets";
    }
  }
}

// A random tenth with Velocity (the benchmark's Sparse10) over 200 pages: thousands of
// swaps, several batches of moves, budgets that end inside a batch and inside a swap.
TEST(EntityPagesCompactMoves, BudgetsStoppingInsideBatchesReachTheUnboundedLayout) {
  constexpr size_t kEntities = 32 * 200 + 13;
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  std::set<uint32_t> fast;
  for (uint32_t i = 0; i < kEntities; ++i) {
    if (rng.Bernoulli(0.1)) fast.insert(i);
  }
  auto with_velocity = [&](Entity e) { return fast.count(e.index()) != 0; };
  auto frozen = [](Entity e) { return e.index() % 97 == 0; };
  MovingWorld reference(kEntities);
  ASSERT_NO_FATAL_FAILURE(Fill(reference, with_velocity, frozen));
  const size_t total = reference.pages.Compact();
  ASSERT_GT(total, 1000u);  // more than one batch of moves
  ASSERT_NO_FATAL_FAILURE(ExpectPagesHoldOneSet(reference.pages));
  ASSERT_NO_FATAL_FAILURE(ExpectValues(reference, with_velocity, frozen));
  for (const size_t budget : {size_t{1}, size_t{3}, size_t{511}, size_t{700}}) {
    SCOPED_TRACE(absl::StrCat("budget ", budget));
    MovingWorld world(kEntities);
    ASSERT_NO_FATAL_FAILURE(Fill(world, with_velocity, frozen));
    size_t moved = 0;
    for (size_t moves = world.pages.Compact(budget); moves != 0;
         moves = world.pages.Compact(budget)) {
      ASSERT_LE(moves, budget);
      moved += moves;
      if (budget > 100 || moved % 501 < budget) {
        ASSERT_NO_FATAL_FAILURE(ExpectValues(world, with_velocity, frozen));
      }
    }
    EXPECT_GE(moved, total);  // a one-move budget may park an entity on the way
    ASSERT_NO_FATAL_FAILURE(ExpectPagesHoldOneSet(world.pages));
    ASSERT_NO_FATAL_FAILURE(ExpectValues(world, with_velocity, frozen));
    for (size_t i = 0; i < kEntities; ++i) {
      ASSERT_EQ(world.pages.SlotOf(world.entities[i]),
                reference.pages.SlotOf(reference.entities[i]));
    }
  }
}

// Whole full pages in the wrong order ({Position, Velocity} before {Position}) trade
// places: every move is a swap of two elements at the same bit of two full pages,
// including the first and last bit of a page.
TEST(EntityPagesCompactMoves, FullPagesTradePlaces) {
  MovingWorld world(32 * 4);
  auto with_velocity = [](Entity e) { return e.index() < 64; };
  auto frozen = [](Entity) { return false; };
  ASSERT_NO_FATAL_FAILURE(Fill(world, with_velocity, frozen));
  EXPECT_EQ(world.pages.Compact(), 128u);  // 64 swaps
  ASSERT_NO_FATAL_FAILURE(ExpectPagesHoldOneSet(world.pages));
  ASSERT_NO_FATAL_FAILURE(ExpectValues(world, with_velocity, frozen));
  for (uint32_t p = 0; p < 4; ++p) EXPECT_EQ(world.pages.occupied_masks()[p], ~0u);
  EXPECT_EQ(world.pages.page_masks(world.vel.id)[0], 0u);
  EXPECT_EQ(world.pages.page_masks(world.vel.id)[2], ~0u);
  EXPECT_EQ(world.pages.page_data(world.vel.id, 0), nullptr);  // released by Compact
  EXPECT_EQ(world.pages.SlotOf(world.entities[0]), 64u);
  EXPECT_EQ(world.pages.SlotOf(world.entities[31]), 95u);
  EXPECT_EQ(world.pages.SlotOf(world.entities[64]), 0u);
  // Full pages of one set: already compact.
  EXPECT_EQ(world.pages.Compact(), 0u);
  Filter moving;
  moving.Include(world.pos).Include(world.vel);
  EXPECT_EQ(CountMatches(world.pages, moving), 64u);
}

// Entities destroyed between the calls of a pass are skipped, their indices reissued
// to new entities that take free slots; the pass finishes and a new one groups them.
TEST(EntityPagesCompactMoves, ReuseAfterDestroyInsideAPass) {
  // More destroys than the manager's 1024 free indices held back: new entities
  // reuse destroyed indices, whose own slots other entities may now hold.
  MovingWorld world(32 * 200);
  auto with_velocity = [](Entity e) { return e.index() % 7 == 0; };
  auto frozen = [](Entity e) { return e.index() % 11 == 0; };
  ASSERT_NO_FATAL_FAILURE(Fill(world, with_velocity, frozen));
  ASSERT_EQ(world.pages.Compact(300), 300u);
  ASSERT_TRUE(world.pages.compaction_in_progress());
  std::set<Entity> gone;
  std::vector<Entity> reborn;
  for (size_t i = 0; i < world.entities.size(); i += 4) {
    ASSERT_THAT(world.manager.Destroy(world.entities[i]), IsOk());
    gone.insert(world.entities[i]);
  }
  EXPECT_FALSE(world.pages.Contains(*gone.begin()));
  bool reused = false;
  for (size_t i = 0; i < 600; ++i) {
    const Entity e = world.manager.Create();
    reused |= e.index() < world.entities.size();
    ASSERT_THAT(world.pages.Add(e, world.vel, Velocity{-1, -2, -3}), IsOk());
    reborn.push_back(e);
  }
  ASSERT_TRUE(reused);
  ASSERT_NO_FATAL_FAILURE(ExpectValues(world, with_velocity, frozen, gone));
  for (size_t calls = 0; world.pages.Compact(257) != 0; ++calls) ASSERT_LT(calls, 1000u);
  ASSERT_NO_FATAL_FAILURE(ExpectPagesHoldOneSet(world.pages));
  ASSERT_NO_FATAL_FAILURE(ExpectValues(world, with_velocity, frozen, gone));
  for (Entity e : reborn) {
    ASSERT_EQ(world.pages.TryGet(e, world.pos), nullptr) << e;
    ASSERT_EQ(world.pages.TryGet(e, world.vel)->z, -3.0f) << e;
  }
  for (Entity e : gone) ASSERT_EQ(world.pages.TryGet(e, world.pos), nullptr) << e;
  // Everything destroyed: the store empties and returns to the identity layout.
  for (Entity e : world.entities) {
    if (gone.count(e) == 0) {
      ASSERT_THAT(world.manager.Destroy(e), IsOk());
    }
  }
  for (Entity e : reborn) ASSERT_THAT(world.manager.Destroy(e), IsOk());
  EXPECT_EQ(world.pages.Compact(), 0u);
  world.pages.ReleaseEmptyPages();
  EXPECT_EQ(world.pages.num_entities(), 0u);
  EXPECT_EQ(world.pages.page_bytes(), 0u);
  EXPECT_FALSE(world.pages.compacted());
}

// More component sets than the planner's dense tables take (64): 8 types, each entity
// a random subset of them, values checked against what was written.
TEST(EntityPagesCompactMoves, ManyComponentSets) {
  struct Word { uint32_t v; };
  EntityManager manager;
  EntityPages pages(manager);
  constexpr int kTypes = 8;
  Component<Word> types[kTypes];
  for (int t = 0; t < kTypes; ++t) {
    types[t] = pages.RegisterComponent<Word>(absl::StrCat("w", t)).value();
  }
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  std::vector<Entity> entities(32 * 100);
  manager.CreateBatch(absl::MakeSpan(entities));
  std::vector<uint32_t> sets(entities.size());
  std::set<uint32_t> distinct;
  for (size_t i = 0; i < entities.size(); ++i) {
    sets[i] = 1 + static_cast<uint32_t>(rng.UniformIndex(255));  // never empty
    distinct.insert(sets[i]);
    for (int t = 0; t < kTypes; ++t) {
      if ((sets[i] >> t) & 1u) {
        ASSERT_THAT(pages.Add(entities[i], types[t], Word{static_cast<uint32_t>(i * 8 + t)}),
                    IsOk());
      }
    }
  }
  ASSERT_GT(distinct.size(), 64u);
  for (size_t calls = 0; pages.Compact(100) != 0; ++calls) ASSERT_LT(calls, 10000u);
  ASSERT_NO_FATAL_FAILURE(ExpectPagesHoldOneSet(pages));
  for (size_t i = 0; i < entities.size(); ++i) {
    for (int t = 0; t < kTypes; ++t) {
      const Word* w = pages.TryGet(entities[i], types[t]);
      ASSERT_EQ(w != nullptr, ((sets[i] >> t) & 1u) != 0) << i;
      if (w != nullptr) {
        ASSERT_EQ(w->v, i * 8 + t) << i;
      }
    }
  }
}

// More than 64 types: types past the first 64 enter a set's signature as a hash, also
// in the survey's path for pages of at most two sets. The first half of the store has
// two sets per page (types 0 and 65), the second half up to four (0, 65, 69), so both
// paths of the survey see hashed types; budgets stop inside the pass.
TEST(EntityPagesCompactMoves, TypesPastTheFirst64GroupBySet) {
  struct Word {
    uint32_t v;
  };
  EntityManager manager;
  EntityPages pages(manager);
  constexpr int kTypes = 70;
  std::vector<Component<Word>> types;
  for (int t = 0; t < kTypes; ++t) {
    types.push_back(pages.RegisterComponent<Word>(absl::StrCat("w", t)).value());
  }
  const int used[] = {0, 65, 69};
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  std::vector<Entity> entities(32 * 80);
  manager.CreateBatch(absl::MakeSpan(entities));
  std::vector<uint32_t> sets(entities.size());  // bit k: used[k]
  for (size_t i = 0; i < entities.size(); ++i) {
    sets[i] = 1u | (rng.Bernoulli(0.3) ? 2u : 0u);
    if (i >= entities.size() / 2 && rng.Bernoulli(0.2)) sets[i] |= 4u;
    for (int k = 0; k < 3; ++k) {
      if ((sets[i] >> k) & 1u) {
        ASSERT_THAT(pages.Add(entities[i], types[used[k]], Word{static_cast<uint32_t>(i * 3 + k)}),
                    IsOk());
      }
    }
  }
  for (size_t calls = 0; pages.Compact(7) != 0; ++calls) ASSERT_LT(calls, 100000u);
  ASSERT_TRUE(pages.compacted());
  ASSERT_NO_FATAL_FAILURE(ExpectPagesHoldOneSet(pages));
  for (size_t i = 0; i < entities.size(); ++i) {
    for (int k = 0; k < 3; ++k) {
      const Word* w = pages.TryGet(entities[i], types[used[k]]);
      ASSERT_EQ(w != nullptr, ((sets[i] >> k) & 1u) != 0) << i;
      if (w != nullptr) {
        ASSERT_EQ(w->v, i * 3 + k) << i;
      }
    }
  }
  // Each set fills whole pages but its last: as many pages as its entities need.
  size_t needed = 0;
  for (uint32_t set = 1; set < 8; set += 2) {
    size_t count = 0;
    for (const uint32_t s : sets) count += s == set ? 1 : 0;
    needed += (count + kEntityPageSize - 1) / kEntityPageSize;
  }
  size_t occupied_pages = 0;
  for (size_t p = 0; p < pages.page_capacity(); ++p) {
    occupied_pages += pages.occupied_masks()[p] != 0 ? 1 : 0;
  }
  EXPECT_EQ(occupied_pages, needed);
}

// Stores with nothing to move, and a single entity alone or with only a tag.
TEST(EntityPagesCompactMoves, EmptyOneAndTagOnlyStores) {
  MovingWorld world(40);
  EXPECT_EQ(world.pages.Compact(), 0u);
  EXPECT_EQ(world.pages.Compact(1), 0u);
  ASSERT_THAT(world.pages.Add(world.entities[39], world.frozen, Frozen{}), IsOk());
  EXPECT_EQ(world.pages.Compact(1), 1u);  // slot 39 (page 1) to slot 0
  EXPECT_EQ(world.pages.SlotOf(world.entities[39]), 0u);
  EXPECT_TRUE(world.pages.Has(world.entities[39], world.frozen.id));
  EXPECT_EQ(world.pages.occupied_masks()[1], 0u);
  EXPECT_EQ(world.pages.page_masks(world.frozen.id)[0], 1u);
  EXPECT_EQ(world.pages.Compact(), 0u);
}

// The first pass writes the slot table and the entity records a page at a time as
// it reaches them; a call stopped by its budget (inside a batch, inside a page) leaves
// every page written: handles, walks handing out entities, Delete and Add between the
// calls see the right entities.
TEST(EntityPagesCompactMoves, FirstCallStoppedEarlyLeavesEveryPageReadable) {
  for (const size_t budget : {size_t{1}, size_t{5}, size_t{101}}) {
    SCOPED_TRACE(absl::StrCat("budget ", budget));
    MovingWorld world(32 * 60 + 9);
    auto with_velocity = [](Entity e) { return e.index() % 10 == 3; };
    auto frozen = [](Entity e) { return e.index() % 13 == 0; };
    ASSERT_NO_FATAL_FAILURE(Fill(world, with_velocity, frozen));
    ASSERT_EQ(world.pages.Compact(budget), budget);
    ASSERT_TRUE(world.pages.compacted());
    ASSERT_TRUE(world.pages.compaction_in_progress());
    ASSERT_NO_FATAL_FAILURE(ExpectValues(world, with_velocity, frozen));
    // Every entity handed out by a walk is the one whose values it holds.
    Filter all;
    all.Include(world.pos);
    size_t visited = 0;
    ForEachMatch(world.pages, all, [&](Entity e, Position& p) {
      ++visited;
      EXPECT_EQ(p.x, static_cast<float>(e.index())) << e;
      EXPECT_EQ(world.pages.TryGet(e, world.pos), &p) << e;
    }, world.pos);
    EXPECT_EQ(visited, world.entities.size());
    // Delete reads the records of the deleted entity's slot, Add writes new ones.
    std::set<Entity> gone;
    for (size_t i = 0; i < world.entities.size(); i += 7) {
      ASSERT_THAT(world.pages.Delete(world.entities[i]), IsOk());
      gone.insert(world.entities[i]);
    }
    for (Entity e : gone) EXPECT_FALSE(world.pages.Contains(e)) << e;
    ASSERT_NO_FATAL_FAILURE(ExpectValues(world, with_velocity, frozen, gone));
    for (size_t calls = 0; world.pages.Compact(budget) != 0; ++calls) {
      ASSERT_LT(calls, 100000u);
    }
    ASSERT_NO_FATAL_FAILURE(ExpectPagesHoldOneSet(world.pages));
    ASSERT_NO_FATAL_FAILURE(ExpectValues(world, with_velocity, frozen, gone));
  }
}

// A store compacted before, whose entities then changed sets, compacts again (its
// trades now run on the slot table); budgeted calls reach the unbounded layout.
TEST(EntityPagesCompactMoves, CompactedStoreCompactsAgainAfterChanges) {
  constexpr size_t kEntities = 32 * 120 + 21;
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  std::set<uint32_t> fast;
  std::set<uint32_t> fast_later;
  for (uint32_t i = 0; i < kEntities; ++i) {
    if (rng.Bernoulli(0.2)) fast.insert(i);
    if (rng.Bernoulli(0.3)) fast_later.insert(i);
  }
  auto frozen = [](Entity e) { return e.index() % 17 == 0; };
  auto prepare = [&](MovingWorld& world) {
    ASSERT_NO_FATAL_FAILURE(Fill(world, [&](Entity e) { return fast.count(e.index()) != 0; },
                                 frozen));
    ASSERT_GT(world.pages.Compact(), 0u);
    ASSERT_NO_FATAL_FAILURE(ExpectPagesHoldOneSet(world.pages));
    // Velocity now goes to a different random set of entities.
    for (Entity e : world.entities) {
      const bool had = fast.count(e.index()) != 0;
      const bool has = fast_later.count(e.index()) != 0;
      const float f = static_cast<float>(e.index());
      if (had && !has) {
        ASSERT_THAT(world.pages.Remove(e, world.vel), IsOk());
      }
      if (!had && has) {
        ASSERT_THAT(world.pages.Add(e, world.vel, Velocity{f, 3, 4}), IsOk());
      }
    }
  };
  auto with_velocity = [&](Entity e) { return fast_later.count(e.index()) != 0; };
  MovingWorld reference(kEntities);
  ASSERT_NO_FATAL_FAILURE(prepare(reference));
  ASSERT_GT(reference.pages.Compact(), 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectPagesHoldOneSet(reference.pages));
  ASSERT_NO_FATAL_FAILURE(ExpectValues(reference, with_velocity, frozen));
  for (const size_t budget : {size_t{1}, size_t{2}, size_t{513}}) {
    SCOPED_TRACE(absl::StrCat("budget ", budget));
    MovingWorld world(kEntities);
    ASSERT_NO_FATAL_FAILURE(prepare(world));
    for (size_t moves = world.pages.Compact(budget); moves != 0;
         moves = world.pages.Compact(budget)) {
      ASSERT_LE(moves, budget);
    }
    ASSERT_NO_FATAL_FAILURE(ExpectPagesHoldOneSet(world.pages));
    ASSERT_NO_FATAL_FAILURE(ExpectValues(world, with_velocity, frozen));
    for (size_t i = 0; i < kEntities; ++i) {
      ASSERT_EQ(world.pages.SlotOf(world.entities[i]),
                reference.pages.SlotOf(reference.entities[i]));
    }
  }
}

// With one move per call every trade is cut in two (the second entity parked past
// the ranges, then both placed); entities destroyed while one is parked, the parked
// one included, are skipped and the pass still ends compact.
TEST(EntityPagesCompactMoves, TradesCutByTheBudgetSurviveDestroys) {
  for (size_t victim = 0; victim < 6; ++victim) {
    SCOPED_TRACE(absl::StrCat("victim ", victim));
    MovingWorld world(32 * 4);
    auto with_velocity = [](Entity e) { return e.index() < 64; };
    auto frozen = [](Entity) { return false; };
    ASSERT_NO_FATAL_FAILURE(Fill(world, with_velocity, frozen));
    std::set<Entity> gone;
    size_t calls = 0;
    while (world.pages.Compact(1) != 0) {
      ++calls;
      ASSERT_LT(calls, 10000u);
      // The first trade pairs slot 0 (Velocity) with slot 64: after the first call
      // one of them is parked, after the second one is placed.
      if (calls <= 3 && calls == victim % 3 + 1) {
        const Entity e = world.entities[victim < 3 ? 0 : 64];
        ASSERT_THAT(world.manager.Destroy(e), IsOk());
        gone.insert(e);
      }
      ASSERT_NO_FATAL_FAILURE(ExpectValues(world, with_velocity, frozen, gone));
    }
    ASSERT_NO_FATAL_FAILURE(ExpectPagesHoldOneSet(world.pages));
    ASSERT_NO_FATAL_FAILURE(ExpectValues(world, with_velocity, frozen, gone));
    EXPECT_FALSE(world.pages.compaction_in_progress());
  }
}

// A trade moves each type its way: a type both sides have swaps, a type one side has
// goes to the other (either direction), a tag only flips mask bits. Here with a
// 1000-byte component (past a chunk's share, so its pages have slabs of their own, and
// not a size with a fixed-size copy) and a tag, under budgets that cut every batch.
TEST(EntityPagesCompactMoves, TradesCarryLargeComponentsAndTags) {
  struct Large {
    uint32_t v[250];
  };
  constexpr uint32_t kEntities = 32 * 20 + 7;
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  std::vector<uint8_t> sets(kEntities);  // bit 0: Large, bit 1: the tag
  for (uint8_t& set : sets) set = static_cast<uint8_t>(rng.UniformInt(0, 3));
  for (const size_t budget : {size_t{1}, size_t{7}, EntityPages::kUnbounded}) {
    SCOPED_TRACE(absl::StrCat("budget ", budget));
    EntityManager manager;
    EntityPages pages(manager);
    const Component<Frozen> tag = pages.RegisterComponent<Frozen>("tag").value();
    const Component<Large> large = pages.RegisterComponent<Large>("large").value();
    const Component<uint32_t> small = pages.RegisterComponent<uint32_t>("small").value();
    std::vector<Entity> entities(kEntities);
    manager.CreateBatch(absl::MakeSpan(entities));
    auto large_value = [](uint32_t index) {
      Large value;
      for (uint32_t k = 0; k < 250; ++k) value.v[k] = index * 1000 + k;
      return value;
    };
    for (uint32_t i = 0; i < kEntities; ++i) {
      ASSERT_THAT(pages.Add(entities[i], small, i), IsOk());
      if (sets[i] & 1) {
        ASSERT_THAT(pages.Add(entities[i], large, large_value(i)), IsOk());
      }
      if (sets[i] & 2) {
        ASSERT_THAT(pages.Add(entities[i], tag, Frozen{}), IsOk());
      }
    }
    auto expect_all = [&] {
      for (uint32_t i = 0; i < kEntities; ++i) {
        const Entity e = entities[i];
        ASSERT_EQ(*pages.TryGet(e, small), i) << e;
        ASSERT_EQ(pages.Has(e, tag.id), (sets[i] & 2) != 0) << e;
        const Large* value = pages.TryGet(e, large);
        ASSERT_EQ(value != nullptr, (sets[i] & 1) != 0) << e;
        if (value == nullptr) continue;
        for (uint32_t k = 0; k < 250; ++k) ASSERT_EQ(value->v[k], i * 1000 + k) << e;
      }
    };
    size_t calls = 0;
    while (pages.Compact(budget) != 0) {
      ASSERT_LT(++calls, 10000u);
      if (budget != 1 || calls % 50 == 0) {
        ASSERT_NO_FATAL_FAILURE(expect_all());
      }
    }
    ASSERT_GT(calls, 0u);
    ASSERT_NO_FATAL_FAILURE(expect_all());
    ASSERT_NO_FATAL_FAILURE(ExpectPagesHoldOneSet(pages));
  }
}

// A trade whose destination is past the large component's reservation: the element
// goes to a pool page the trade allocates (the side that gains the component had no
// data page there). Slots 5, 40 and 100 hold the only entities with the component;
// the {small} set's range ends at slot 4320 (page 135), so they trade with the
// entities at slots 4320-4322, in a page the reservation (128 pages) does not cover.
TEST(EntityPagesCompactMoves, TradesReachPagesPastTheReservation) {
  constexpr size_t kSize = size_t{1} << 20;  // 1 MiB elements, 32 MiB pages
  constexpr size_t kDirectPages =
      iteration_internal::PageRange::kMaxReservationBytes / (kSize * kEntityPageSize);
  static_assert(kDirectPages == 128, "the slots below assume a 128-page reservation");
  EntityManager manager;
  EntityPages pages(manager);
  // Registered first: {big, small}'s signature sorts after {small}'s.
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentId big, pages.RegisterComponent("Big", kSize, 8));
  const Component<uint32_t> small = pages.RegisterComponent<uint32_t>("small").value();
  std::vector<Entity> entities(4323);
  manager.CreateBatch(absl::MakeSpan(entities));
  for (uint32_t i = 0; i < entities.size(); ++i) {
    ASSERT_THAT(pages.Add(entities[i], small, i), IsOk());
  }
  std::vector<std::byte> value(kSize);
  for (const uint32_t i : {5u, 40u, 100u}) {
    for (size_t b = 0; b < kSize; b += 4096) value[b] = static_cast<std::byte>(i + b / 4096);
    value[kSize - 1] = static_cast<std::byte>(i);
    ASSERT_THAT(pages.Add(entities[i], big, value.data()), IsOk());
  }
  EXPECT_EQ(pages.Compact(), 6u);  // three swaps
  for (const uint32_t i : {5u, 40u, 100u}) {
    const uint32_t slot = pages.SlotOf(entities[i]);
    EXPECT_GE(slot / kEntityPageSize, kDirectPages) << i;
    const auto* bytes = static_cast<const std::byte*>(pages.TryGet(entities[i], big));
    ASSERT_NE(bytes, nullptr) << i;
    EXPECT_EQ(bytes, pages.page_data(big, slot / kEntityPageSize) +
                         size_t{slot % kEntityPageSize} * kSize);
    for (size_t b = 0; b < kSize; b += 4096) {
      ASSERT_EQ(bytes[b], static_cast<std::byte>(i + b / 4096)) << i << " byte " << b;
    }
    EXPECT_EQ(bytes[kSize - 1], static_cast<std::byte>(i)) << i;
  }
  for (uint32_t i = 0; i < entities.size(); ++i) {
    ASSERT_EQ(*pages.TryGet(entities[i], small), i);
  }
  ASSERT_NO_FATAL_FAILURE(ExpectPagesHoldOneSet(pages));
  // The pages the component left were released: only the pool page holds it.
  for (const uint32_t page : {0u, 1u, 3u}) EXPECT_EQ(pages.page_data(big, page), nullptr);
}

// A type registered while a pass has trades left (its trade sets have a word per type
// registered before), then added to some entities: the compaction goes on to a compact
// store with every value (under ASan, a read past the trade sets would show).
TEST(EntityPagesCompactMoves, TypeRegisteredInsideAPass) {
  EntityManager manager;
  EntityPages pages(manager);
  const Component<uint32_t> a = pages.RegisterComponent<uint32_t>("a").value();
  const Component<uint64_t> b = pages.RegisterComponent<uint64_t>("b").value();
  std::vector<Entity> entities(32 * 8);
  manager.CreateBatch(absl::MakeSpan(entities));
  for (uint32_t i = 0; i < entities.size(); ++i) {
    ASSERT_THAT(pages.Add(entities[i], a, i), IsOk());
    if (i % 3 == 0) {
      ASSERT_THAT(pages.Add(entities[i], b, uint64_t{i}), IsOk());
    }
  }
  ASSERT_EQ(pages.Compact(1), 1u);
  ASSERT_TRUE(pages.compaction_in_progress());
  const Component<uint16_t> late = pages.RegisterComponent<uint16_t>("late").value();
  for (uint32_t i = 0; i < entities.size(); i += 5) {
    ASSERT_THAT(pages.Add(entities[i], late, static_cast<uint16_t>(i)), IsOk());
  }
  size_t calls = 0;
  while (pages.Compact(3) != 0) {
    ASSERT_LT(++calls, 10000u);
  }
  for (uint32_t i = 0; i < entities.size(); ++i) {
    ASSERT_EQ(*pages.TryGet(entities[i], a), i);
    ASSERT_EQ(pages.Has(entities[i], b.id), i % 3 == 0);
    ASSERT_EQ(pages.Has(entities[i], late.id), i % 5 == 0);
    if (i % 5 == 0) {
      ASSERT_EQ(*pages.TryGet(entities[i], late), i);
    }
  }
  ASSERT_NO_FATAL_FAILURE(ExpectPagesHoldOneSet(pages));
}

}  // namespace
}  // namespace strata
