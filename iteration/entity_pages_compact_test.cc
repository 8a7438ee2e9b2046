// Compaction tests: EntityPages::Compact against a reference model (a std::map per
// component) through random sequences of every mutation, and the layout it reaches.
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <tuple>
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
#include "iteration/testing/test_components.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::Frozen;
using ::strata::testing::IsOk;
using ::strata::testing::MovingWorld;
using ::strata::testing::Position;
using ::strata::testing::StatusIs;
using ::strata::testing::Velocity;

// Checks the layout a finished compaction promises: every page holds one component
// set; each set's pages are contiguous, full but for its last (filled from slot 0),
// in ascending signature order (the set as bits: fewer than 64 types here), with no
// empty page between the first occupied page and the last.
void ExpectCompactLayout(const EntityPages& pages) {
  const size_t types = pages.num_component_types();
  ASSERT_LT(types, 64u);
  bool have_previous = false;
  uint64_t previous = 0;
  bool previous_full = true;
  size_t previous_page = 0;
  std::set<uint64_t> seen;
  for (size_t p = 0; p < pages.page_capacity(); ++p) {
    const uint32_t occupied = pages.occupied_masks()[p];
    if (occupied == 0) continue;
    uint64_t signature = 0;
    for (uint32_t i = 0; i < kEntityPageSize; ++i) {
      if (((occupied >> i) & 1u) == 0) continue;
      uint64_t s = 0;
      for (ComponentId c = 0; c < types; ++c) {
        if ((pages.page_masks(c)[p] >> i) & 1u) s |= uint64_t{1} << c;
      }
      if (i == static_cast<uint32_t>(__builtin_ctz(occupied))) signature = s;
      ASSERT_EQ(s, signature) << "page " << p << " mixes component sets";
    }
    ASSERT_EQ(occupied & (occupied + 1), 0u) << "page " << p << " has a gap";
    if (have_previous) {
      ASSERT_EQ(p, previous_page + 1) << "empty page inside the compacted range";
      if (signature == previous) {
        ASSERT_TRUE(previous_full) << "a partial page inside set " << signature;
      } else {
        ASSERT_GT(signature, previous) << "sets out of order at page " << p;
        ASSERT_TRUE(seen.insert(signature).second) << "set " << signature << " split";
      }
    } else {
      seen.insert(signature);
    }
    have_previous = true;
    previous = signature;
    previous_full = occupied == ~uint32_t{0};
    previous_page = p;
  }
}

// Runs Compact() until it reports nothing left to do.
void CompactFully(EntityPages& pages) {
  for (int pass = 0; pass < 4 && pages.Compact() != 0; ++pass) {
  }
  ASSERT_EQ(pages.Compact(), 0u);
}

struct W1 { uint32_t v[1]; };
struct W2 { uint32_t v[2]; };
struct W3 { uint32_t v[3]; };
struct alignas(64) W16 { uint32_t v[16]; };
struct Tag {};

// The budget of every Compact, and whether the store calls ReserveForCompaction
// first (while empty: the store then grows past it).
class CompactRandomTest : public ::testing::TestWithParam<std::tuple<size_t, bool>> {};

// Random create / batch create / add / remove / delete / destroy / Compact(budget) /
// release steps, with everything checked against the reference after every step.
TEST_P(CompactRandomTest, MatchesReferenceAfterEveryStep) {
  const size_t budget = std::get<0>(GetParam());
  const bool reserve = std::get<1>(GetParam());
  ::strata::testing::Random rng(::strata::testing::TestSeed() + budget % 1000);
  SCOPED_TRACE(rng.DescribeSeed());
  EntityManager::Options options;
  options.min_free_indices = 4;  // indices come back soon: stale handles share them
  EntityManager manager(options);
  EntityPages pages(manager);
  if (reserve) {
    ASSERT_THAT(pages.ReserveForCompaction(), IsOk());
  }
  const Component<Tag> tag = pages.RegisterComponent<Tag>("tag").value();
  const Component<W1> w1 = pages.RegisterComponent<W1>("w1").value();
  const Component<W2> w2 = pages.RegisterComponent<W2>("w2").value();
  const Component<W3> w3 = pages.RegisterComponent<W3>("w3").value();
  const Component<W16> w16 = pages.RegisterComponent<W16>("w16").value();
  constexpr int kTypes = 5;
  const ComponentId ids[kTypes] = {tag.id, w1.id, w2.id, w3.id, w16.id};
  const uint32_t words[kTypes] = {0, 1, 2, 3, 16};
  std::map<Entity, uint32_t> ref[kTypes];  // entity -> first word (the rest derive)
  std::vector<Entity> live;
  std::vector<Entity> dead;

  auto make_value = [&](int t, uint32_t first, uint32_t* out) {
    for (uint32_t k = 0; k < words[t]; ++k) out[k] = first + 7 * k;
  };
  auto expect_value = [&](Entity e, int t, const void* data) {
    if (words[t] == 0) return;
    uint32_t got[16];
    std::memcpy(got, data, 4 * words[t]);
    for (uint32_t k = 0; k < words[t]; ++k) {
      ASSERT_EQ(got[k], ref[t][e] + 7 * k) << e << " type " << t << " word " << k;
    }
  };
  // After a Compact or a ReleaseEmptyPages: a type has a data page exactly where it
  // has an element (none emptied and kept, none missing).
  auto check_released = [&] {
    for (int t = 0; t < kTypes; ++t) {
      const uint32_t* masks = pages.page_masks(ids[t]);
      for (size_t page = 0; page < pages.page_capacity(); ++page) {
        ASSERT_EQ(pages.page_data(ids[t], page) != nullptr, masks[page] != 0)
            << "type " << t << " page " << page;
      }
    }
  };
  auto check = [&](int step) {
    SCOPED_TRACE(absl::StrCat("step ", step));
    size_t in_store = 0;
    std::set<uint32_t> slots;
    for (Entity e : live) {
      bool any = false;
      for (int t = 0; t < kTypes; ++t) {
        const bool has = ref[t].count(e) != 0;
        any |= has;
        const void* data = pages.TryGet(e, ids[t]);
        ASSERT_EQ(data != nullptr, has) << e << " type " << t;
        ASSERT_EQ(pages.TryGetByIndex(e.index(), ids[t]), data) << e;
        if (has) {
          ASSERT_NO_FATAL_FAILURE(expect_value(e, t, data));
        }
      }
      ASSERT_EQ(pages.Contains(e), any) << e;
      const uint32_t slot = pages.SlotOf(e);
      ASSERT_EQ(slot != kNoSlot, any) << e;
      if (!any) continue;
      ++in_store;
      ASSERT_TRUE(slots.insert(slot).second) << "two entities in slot " << slot;
      ASSERT_EQ(pages.entity_at(slot / kEntityPageSize, slot % kEntityPageSize), e);
    }
    ASSERT_EQ(pages.num_entities(), in_store);
    // TryGetMany: TryGet's answer for every handle at once, stale and invalid ones
    // included, untyped and typed.
    std::vector<Entity> handles(live.begin(), live.end());
    handles.insert(handles.end(), dead.begin(), dead.end());
    handles.push_back(Entity());                   // the invalid handle
    handles.push_back(Entity(uint32_t{1} << 30, 1));  // an index past every table
    for (int t = 0; t < kTypes; ++t) {
      std::vector<const void*> many(handles.size(), &handles);  // all overwritten
      pages.TryGetMany(handles, ids[t], absl::MakeSpan(many));
      for (size_t i = 0; i < handles.size(); ++i) {
        ASSERT_EQ(many[i], pages.TryGet(handles[i], ids[t])) << handles[i] << " type " << t;
      }
    }
    std::vector<const W3*> w3s(handles.size());
    std::as_const(pages).TryGetMany(handles, w3, absl::MakeSpan(w3s));
    std::vector<W16*> w16s(handles.size());
    pages.TryGetMany(handles, w16, absl::MakeSpan(w16s));
    for (size_t i = 0; i < handles.size(); ++i) {
      ASSERT_EQ(w3s[i], pages.TryGet(handles[i], w3)) << handles[i];
      ASSERT_EQ(w16s[i], pages.TryGet(handles[i], w16)) << handles[i];
    }
    // Every page where a type has an element has its data page, inside the type's
    // range of data pages (the walks skip pages outside it); tags included.
    for (int t = 0; t < kTypes; ++t) {
      const uint32_t* masks = pages.page_masks(ids[t]);
      const auto [first, end] = pages.data_page_range(ids[t]);
      for (size_t page = 0; page < pages.page_capacity(); ++page) {
        if (masks[page] == 0) continue;
        ASSERT_NE(pages.page_data(ids[t], page), nullptr) << "type " << t << " page " << page;
        ASSERT_GE(page, first) << "type " << t;
        ASSERT_LT(page, end) << "type " << t;
      }
    }
    std::set<uint32_t> live_indices;
    for (Entity e : live) live_indices.insert(e.index());
    for (Entity e : dead) {
      ASSERT_FALSE(pages.Contains(e)) << e;
      ASSERT_EQ(pages.SlotOf(e), kNoSlot) << e;
      for (int t = 0; t < kTypes; ++t) {
        ASSERT_EQ(pages.TryGet(e, ids[t]), nullptr) << e;
        // An index nobody holds now: whatever slot it had may hold another entity.
        if (live_indices.count(e.index()) == 0) {
          ASSERT_EQ(pages.TryGetByIndex(e.index(), ids[t]), nullptr) << e;
        }
        ASSERT_THAT(pages.Remove(e, ids[t]), StatusIs(absl::StatusCode::kNotFound));
      }
      ASSERT_THAT(pages.Delete(e), StatusIs(absl::StatusCode::kNotFound));
    }
    // Queries: the set of matches, each once, with its values, from both walks.
    struct Query {
      std::vector<int> include, exclude;
    };
    const Query queries[] = {{{1}, {}}, {{1, 2}, {0}}, {{3}, {4}}, {{}, {1}},
                             {{4, 1}, {}}};
    for (const Query& q : queries) {
      Filter filter;
      for (int t : q.include) filter.Include(ids[t]);
      for (int t : q.exclude) filter.Exclude(ids[t]);
      std::set<Entity> expected;
      for (Entity e : live) {
        bool match = pages.Contains(e);
        for (int t : q.include) match &= ref[t].count(e) != 0;
        for (int t : q.exclude) match &= ref[t].count(e) == 0;
        if (match) expected.insert(e);
      }
      std::multiset<Entity> simd, scalar;
      ForEachMatch(pages, filter, [&](Entity e) { simd.insert(e); });
      ForEachMatchScalar(pages, filter, [&](Entity e) { scalar.insert(e); });
      ASSERT_EQ(std::set<Entity>(simd.begin(), simd.end()), expected);
      ASSERT_EQ(simd.size(), expected.size()) << "an entity visited twice";
      ASSERT_EQ(scalar, simd);
      ASSERT_EQ(CountMatches(pages, filter), expected.size());
    }
    // The typed walk hands out each entity's own data.
    Filter with_w1;
    with_w1.Include(w1);
    ForEachMatch(
        pages, with_w1,
        [&](Entity e, W1& v, W3* v3, Tag* t) {
          ASSERT_EQ(v.v[0], ref[1][e]) << e;
          ASSERT_EQ(v3 != nullptr, ref[3].count(e) != 0) << e;
          if (v3 != nullptr) {
            ASSERT_EQ(v3->v[2], ref[3][e] + 14) << e;
          }
          ASSERT_EQ(t != nullptr, ref[0].count(e) != 0) << e;
        },
        w1, Optional(w3), Optional(tag));
  };
  auto forget = [&](Entity e) {
    for (auto& map : ref) map.erase(e);
  };
  auto add_ref = [&](Entity e, int t, uint32_t first) { ref[t][e] = first; };

  for (int step = 0; step < 1000; ++step) {
    int op = static_cast<int>(rng.UniformInt(0, 19));
    if (live.size() > 200 && op <= 2) op = 10;  // keep the world small: destroy instead
    if (op <= 1 || live.size() < 4) {
      live.push_back(manager.Create());
    } else if (op == 2) {
      // A batch with a random bundle; sometimes poisoned by a present entity or a
      // duplicate, which must change nothing.
      std::vector<Entity> batch(rng.UniformInt(1, 24));
      manager.CreateBatch(absl::MakeSpan(batch));
      ComponentBundle bundle;
      uint32_t first[kTypes];
      bool in_bundle[kTypes] = {};
      for (int t = 0; t < kTypes; ++t) {
        if (!rng.Bernoulli(0.5) && !(t == kTypes - 1 && bundle.empty())) continue;
        in_bundle[t] = true;
        first[t] = rng.Next32();
        uint32_t value[16];
        make_value(t, first[t], value);
        bundle.SetRaw(ids[t], absl::MakeConstSpan(reinterpret_cast<const std::byte*>(value),
                                                     4 * words[t]));
      }
      std::vector<Entity> submitted = batch;
      const int poison = static_cast<int>(rng.UniformInt(0, 5));
      Entity present;
      for (Entity e : live) {
        if (pages.Contains(e)) present = e;
      }
      if (poison == 0 && present.is_valid()) {
        submitted.insert(submitted.begin() + rng.UniformIndex(submitted.size() + 1), present);
      } else if (poison == 1) {
        submitted.push_back(batch[rng.UniformIndex(batch.size())]);
      }
      const absl::Status status = pages.CreateFromBundle(submitted, bundle);
      if (submitted.size() != batch.size()) {
        ASSERT_THAT(status, StatusIs(absl::StatusCode::kAlreadyExists));
      } else {
        ASSERT_THAT(status, IsOk());
        for (Entity e : batch) {
          for (int t = 0; t < kTypes; ++t) {
            if (in_bundle[t]) add_ref(e, t, first[t]);
          }
        }
      }
      live.insert(live.end(), batch.begin(), batch.end());
    } else if (op <= 6) {
      const Entity e = live[rng.UniformIndex(live.size())];
      const int t = static_cast<int>(rng.UniformIndex(kTypes));
      uint32_t value[16];
      const uint32_t first = rng.Next32();
      make_value(t, first, value);
      const absl::Status s = pages.Add(e, ids[t], value);
      if (ref[t].count(e)) {
        ASSERT_THAT(s, StatusIs(absl::StatusCode::kAlreadyExists));
      } else {
        ASSERT_THAT(s, IsOk());
        add_ref(e, t, first);
      }
    } else if (op <= 8) {
      const Entity e = live[rng.UniformIndex(live.size())];
      const int t = static_cast<int>(rng.UniformIndex(kTypes));
      ASSERT_EQ(pages.Remove(e, ids[t]).ok(), ref[t].erase(e) == 1);
    } else if (op == 9) {
      const Entity e = live[rng.UniformIndex(live.size())];
      bool any = false;
      for (auto& map : ref) any |= map.count(e) != 0;
      ASSERT_EQ(pages.Delete(e).ok(), any);
      forget(e);
    } else if (op <= 11) {
      const size_t i = rng.UniformIndex(live.size());
      const Entity e = live[i];
      live[i] = live.back();
      live.pop_back();
      ASSERT_THAT(manager.Destroy(e), IsOk());
      forget(e);
      dead.push_back(e);
    } else if (op <= 17) {
      const size_t moves = pages.Compact(budget);
      ASSERT_LE(moves, budget);
      if (budget == 0) {
        ASSERT_EQ(moves, 0u);
      }
      if (moves != 0) {
        ASSERT_NO_FATAL_FAILURE(check_released());
      }
    } else {
      pages.ReleaseEmptyPages();
      ASSERT_NO_FATAL_FAILURE(check_released());
    }
    if (dead.size() > 100) dead.erase(dead.begin(), dead.begin() + 50);
    ASSERT_NO_FATAL_FAILURE(check(step));
  }

  // A finished compaction with nothing changing meanwhile reaches the promised layout.
  ASSERT_NO_FATAL_FAILURE(CompactFully(pages));
  ASSERT_NO_FATAL_FAILURE(check(-1));
  ASSERT_NO_FATAL_FAILURE(ExpectCompactLayout(pages));

  // Everything deleted: every page and every byte of the pools comes back.
  ASSERT_THAT(manager.DestroyBatch(live), IsOk());
  for (Entity e : live) forget(e);
  dead.insert(dead.end(), live.begin(), live.end());
  live.clear();
  ASSERT_NO_FATAL_FAILURE(check(-2));
  EXPECT_EQ(pages.num_entities(), 0u);
  pages.ReleaseEmptyPages();
  EXPECT_EQ(pages.allocated_entity_pages(), 0u);
  EXPECT_EQ(pages.allocated_data_pages(), 0u);
  EXPECT_EQ(pages.page_bytes(), 0u);
  const size_t pool_bytes = pages.reserved_page_bytes();
  const size_t memory = pages.MemoryUsage();
  const size_t released = pages.ReleaseUnusedMemory();
  EXPECT_EQ(pages.reserved_page_bytes(), 0u);
  if (reserve) {
    EXPECT_GT(released, pool_bytes);  // the reserved slot table too
  } else {
    EXPECT_EQ(released, pool_bytes);
  }
  EXPECT_EQ(pages.MemoryUsage(), memory - released);
  EXPECT_FALSE(pages.compaction_reserved());
  EXPECT_EQ(pages.Compact(), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Budgets, CompactRandomTest,
    ::testing::Combine(::testing::Values(size_t{0}, size_t{1}, size_t{7},
                                         EntityPages::kUnbounded),
                       ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<size_t, bool>>& info) {
      const size_t budget = std::get<0>(info.param);
      return absl::StrCat(budget == EntityPages::kUnbounded ? std::string("Unbounded")
                                                            : absl::StrCat("Budget", budget),
                          std::get<1>(info.param) ? "Reserved" : "");
    });

// MovingWorld with n entities: all Position{i, 0, 0}, every third Velocity{i, 1, 2},
// every fifth Frozen: four component sets interleaved over every page.
void FillInterleaved(MovingWorld& world) {
  for (Entity e : world.entities) {
    const float f = static_cast<float>(e.index());
    ASSERT_THAT(world.pages.Add(e, world.pos, Position{f, 0, 0}), IsOk());
    if (e.index() % 3 == 0) {
      ASSERT_THAT(world.pages.Add(e, world.vel, Velocity{f, 1, 2}), IsOk());
    }
    if (e.index() % 5 == 0) {
      ASSERT_THAT(world.pages.Add(e, world.frozen, Frozen{}), IsOk());
    }
  }
}

void ExpectInterleavedValues(MovingWorld& world) {
  for (Entity e : world.entities) {
    const float f = static_cast<float>(e.index());
    const Position* p = world.pages.TryGet(e, world.pos);
    ASSERT_NE(p, nullptr) << e;
    ASSERT_EQ(p->x, f) << e;
    const Velocity* v = world.pages.TryGet(e, world.vel);
    ASSERT_EQ(v != nullptr, e.index() % 3 == 0) << e;
    if (v != nullptr) {
      ASSERT_EQ(v->x, f) << e;
    }
    ASSERT_EQ(world.pages.Has(e, world.frozen.id), e.index() % 5 == 0) << e;
  }
}

TEST(EntityPagesCompact, GroupsEqualSetsIntoWholePages) {
  MovingWorld world(32 * 50 + 5);
  ASSERT_NO_FATAL_FAILURE(FillInterleaved(world));
  const size_t pages_before = world.pages.allocated_data_pages();
  const uint64_t epoch = world.pages.epoch();
  const size_t moves = world.pages.Compact();
  EXPECT_GT(moves, world.entities.size() / 2);
  EXPECT_NE(world.pages.epoch(), epoch);
  EXPECT_FALSE(world.pages.compaction_in_progress());
  ASSERT_NO_FATAL_FAILURE(ExpectCompactLayout(world.pages));
  ASSERT_NO_FATAL_FAILURE(ExpectInterleavedValues(world));
  // Velocity and Frozen no longer have an element in every page.
  EXPECT_LT(world.pages.allocated_data_pages(), pages_before);
  EXPECT_EQ(world.pages.num_dirty_pages(), 0u);  // released by Compact
  // Already compact: nothing to plan, nothing to move, nothing invalidated.
  const uint64_t after = world.pages.epoch();
  EXPECT_EQ(world.pages.Compact(), 0u);
  EXPECT_EQ(world.pages.epoch(), after);
  // A full page of one set is visited with the straight loop: every match once.
  Filter moving;
  moving.Include(world.pos).Include(world.vel).Exclude(world.frozen);
  size_t count = 0;
  ForEachMatch(world.pages, moving, [&](Entity e, Position& p, Velocity& v) {
    ++count;
    EXPECT_EQ(p.x, v.x) << e;
  }, world.pos, world.vel);
  size_t expected = 0;
  for (Entity e : world.entities) expected += e.index() % 3 == 0 && e.index() % 5 != 0;
  EXPECT_EQ(count, expected);
}

// Pages of many sets each, then many pages of one set: the survey's group list must
// grow for the pages of one set that follow the crowded ones (it overflowed its buffer
// once, when a tag on some entities made the demo's pages crowded).
TEST(EntityPagesCompact, CrowdedPagesFollowedByPlainOnesFitTheSurvey) {
  MovingWorld world(32 * 1070);
  for (size_t i = 0; i < world.entities.size(); ++i) {
    ASSERT_THAT(world.pages.Add(world.entities[i], world.pos, Position{static_cast<float>(i), 0, 0}),
                IsOk());
  }
  std::vector<ComponentId> tags;
  for (int t = 0; t < 5; ++t) {
    STRATA_ASSERT_OK_AND_ASSIGN(ComponentId tag,
                                world.pages.RegisterComponent(absl::StrCat("tag", t), 0, 1));
    tags.push_back(tag);
  }
  // The survey starts with room for two groups a page; crowded pages of 31 groups
  // each use up the room of about 2/31 of the pages without growing it, and the
  // plain pages after them need one group each.
  const size_t crowded_pages = 2 * world.pages.page_capacity() / 31;
  ASSERT_LT(crowded_pages, world.entities.size() / 32);
  for (size_t i = 0; i < 32 * crowded_pages; ++i) {
    // Slot i % 32 (entities hold the slots of their index until a move): its own set
    // of the five tags, 31 sets a page.
    const uint32_t set = static_cast<uint32_t>(i % 31) + 1;
    for (int t = 0; t < 5; ++t) {
      if ((set >> t) & 1u) {
        ASSERT_THAT(world.pages.Add(world.entities[i], tags[t], nullptr), IsOk());
      }
    }
  }
  CompactFully(world.pages);
  ASSERT_NO_FATAL_FAILURE(ExpectCompactLayout(world.pages));
  for (size_t i = 0; i < world.entities.size(); ++i) {
    const Position* p = world.pages.TryGet(world.entities[i], world.pos);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(p->x, static_cast<float>(i));
  }
}

TEST(EntityPagesCompact, BudgetedPassesReachTheUnboundedLayout) {
  MovingWorld reference(32 * 40 + 17);
  ASSERT_NO_FATAL_FAILURE(FillInterleaved(reference));
  ASSERT_GT(reference.pages.Compact(), 0u);
  for (const size_t budget : {size_t{1}, size_t{2}, size_t{5}}) {
    SCOPED_TRACE(absl::StrCat("budget ", budget));
    MovingWorld world(32 * 40 + 17);
    ASSERT_NO_FATAL_FAILURE(FillInterleaved(world));
    EXPECT_EQ(world.pages.Compact(0), 0u);
    EXPECT_FALSE(world.pages.compaction_in_progress());
    size_t calls = 0;
    for (size_t moves = world.pages.Compact(budget); moves != 0;
         moves = world.pages.Compact(budget)) {
      ASSERT_LE(moves, budget);
      ++calls;
      ASSERT_LT(calls, 100000u);
      if (calls % 97 == 0) {
        ASSERT_NO_FATAL_FAILURE(ExpectInterleavedValues(world));
      }
    }
    EXPECT_GT(calls, 1u);
    ASSERT_NO_FATAL_FAILURE(ExpectCompactLayout(world.pages));
    ASSERT_NO_FATAL_FAILURE(ExpectInterleavedValues(world));
    for (size_t i = 0; i < world.entities.size(); ++i) {
      ASSERT_EQ(world.pages.SlotOf(world.entities[i]),
                reference.pages.SlotOf(reference.entities[i]));
    }
  }
}

TEST(EntityPagesCompact, NewEntitiesFindFreeSlotsWhenTheirOwnIsTaken) {
  EntityManager::Options options;
  options.min_free_indices = 0;  // a destroyed index is reissued at once
  EntityManager manager(options);
  EntityPages pages(manager);
  const Component<Position> pos = pages.RegisterComponent<Position>("Position").value();
  const Component<Velocity> vel = pages.RegisterComponent<Velocity>("Velocity").value();
  std::vector<Entity> entities(32 * 8);
  manager.CreateBatch(absl::MakeSpan(entities));
  for (Entity e : entities) {
    const float f = static_cast<float>(e.index());
    ASSERT_THAT(pages.Add(e, pos, Position{f, 0, 0}), IsOk());
    if (e.index() % 2 == 0) {
      ASSERT_THAT(pages.Add(e, vel, Velocity{f, 0, 0}), IsOk());
    }
  }
  ASSERT_GT(pages.Compact(), 0u);
  // Destroy half, reissue their indices: each new entity's own slot may hold another.
  std::vector<Entity> reborn;
  for (size_t i = 0; i < entities.size(); i += 2) {
    ASSERT_THAT(manager.Destroy(entities[i]), IsOk());
    const Entity e = manager.Create();
    ASSERT_EQ(e.index(), entities[i].index());
    ASSERT_THAT(pages.Add(e, vel, Velocity{-1, 0, 0}), IsOk());
    reborn.push_back(e);
    entities[i] = e;
  }
  std::set<uint32_t> slots;
  for (Entity e : entities) ASSERT_TRUE(slots.insert(pages.SlotOf(e)).second) << e;
  for (size_t i = 1; i < entities.size(); i += 2) {
    ASSERT_EQ(pages.TryGet(entities[i], pos)->x, static_cast<float>(entities[i].index()));
    ASSERT_FALSE(pages.Has(entities[i], vel.id));
  }
  for (Entity e : reborn) {
    ASSERT_EQ(pages.TryGet(e, pos), nullptr);
    ASSERT_EQ(pages.TryGet(e, vel)->x, -1.0f);
  }
  CompactFully(pages);
  ASSERT_NO_FATAL_FAILURE(ExpectCompactLayout(pages));
  for (Entity e : reborn) ASSERT_EQ(pages.TryGet(e, vel)->x, -1.0f);
}

TEST(EntityPagesCompact, EmptyAndSingleEntityStores) {
  MovingWorld world(3);
  EXPECT_EQ(world.pages.Compact(), 0u);
  ASSERT_THAT(world.pages.Add(world.entities[2], world.pos, Position{5, 6, 7}), IsOk());
  // One entity at slot 2 moves to slot 0: its page is filled from the start.
  EXPECT_EQ(world.pages.Compact(), 1u);
  EXPECT_EQ(world.pages.SlotOf(world.entities[2]), 0u);
  EXPECT_EQ(world.pages.TryGetByIndex(world.entities[2].index(), world.pos.id),
            world.pages.TryGet(world.entities[2], world.pos));
  EXPECT_EQ(world.pages.TryGet(world.entities[2], world.pos)->z, 7.0f);
  EXPECT_EQ(world.pages.Compact(), 0u);
  // Entity 0's own slot is taken: it gets another, and its handle works.
  ASSERT_THAT(world.pages.Add(world.entities[0], world.vel, Velocity{1, 1, 1}), IsOk());
  EXPECT_NE(world.pages.SlotOf(world.entities[0]), 0u);
  EXPECT_EQ(world.pages.TryGet(world.entities[0], world.vel)->y, 1.0f);
  ASSERT_THAT(world.pages.Delete(world.entities[2]), IsOk());
  ASSERT_THAT(world.pages.Delete(world.entities[0]), IsOk());
  EXPECT_EQ(world.pages.Compact(), 0u);  // nobody left to move
  world.pages.ReleaseEmptyPages();
  EXPECT_EQ(world.pages.page_bytes(), 0u);
}

// A store is in the identity layout (slot == index, no slot table) until a Compact
// moves something, and back in it once it empties.
TEST(EntityPagesCompact, IdentitySlotsUntilTheFirstMoveAndAfterEmptying) {
  MovingWorld world(32 * 3);
  ASSERT_NO_FATAL_FAILURE(FillInterleaved(world));
  EXPECT_FALSE(world.pages.compacted());
  for (Entity e : world.entities) ASSERT_EQ(world.pages.SlotOf(e), e.index());
  EXPECT_EQ(world.pages.Compact(0), 0u);  // a zero budget plans nothing, moves nothing
  EXPECT_FALSE(world.pages.compacted());
  ASSERT_GT(world.pages.Compact(), 0u);
  EXPECT_TRUE(world.pages.compacted());
  ASSERT_NO_FATAL_FAILURE(ExpectInterleavedValues(world));
  // A handle with the invalid generation never passes for an entity not in the store.
  ASSERT_THAT(world.pages.Delete(world.entities[1]), IsOk());
  const Entity invalid_generation(world.entities[1].index(), Entity::kInvalidGeneration);
  EXPECT_EQ(world.pages.SlotOf(invalid_generation), kNoSlot);
  EXPECT_EQ(world.pages.TryGet(invalid_generation, world.pos), nullptr);
  EXPECT_FALSE(world.pages.Add(invalid_generation, world.pos, Position{}).ok());
  EXPECT_THAT(world.pages.Remove(invalid_generation, world.pos),
              StatusIs(absl::StatusCode::kNotFound));
  world.pages.DeleteEntities(world.entities);
  world.pages.ReleaseEmptyPages();
  EXPECT_FALSE(world.pages.compacted());
  EXPECT_EQ(world.pages.page_bytes(), 0u);
  // Reused after emptying: identity again, every value readable.
  ASSERT_NO_FATAL_FAILURE(FillInterleaved(world));
  for (Entity e : world.entities) ASSERT_EQ(world.pages.SlotOf(e), e.index());
  ASSERT_NO_FATAL_FAILURE(ExpectInterleavedValues(world));
}

// TryGetMany on a store larger than its prefetch distance, never compacted and
// compacted, in a random order with stale handles mixed in: TryGet's answers, the
// typed forms' elements with their values.
TEST(EntityPagesCompact, TryGetManyAnswersAsTryGet) {
  MovingWorld world(32 * 40 + 7);
  ASSERT_NO_FATAL_FAILURE(FillInterleaved(world));
  std::vector<Entity> handles = world.entities;
  for (size_t i = 0; i < world.entities.size(); i += 7) {
    ASSERT_THAT(world.manager.Destroy(world.entities[i]), IsOk());  // stale from now on
  }
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  rng.Shuffle(absl::MakeSpan(handles));
  for (const bool compact : {false, true}) {
    SCOPED_TRACE(compact ? "compacted" : "never compacted");
    if (compact) {
      ASSERT_GT(world.pages.Compact(), 0u);
    }
    ASSERT_EQ(world.pages.compacted(), compact);
    std::vector<const Position*> positions(handles.size());
    std::vector<Velocity*> velocities(handles.size());
    std::vector<const void*> frozen(handles.size());
    std::as_const(world.pages).TryGetMany(handles, world.pos, absl::MakeSpan(positions));
    world.pages.TryGetMany(handles, world.vel, absl::MakeSpan(velocities));
    world.pages.TryGetMany(handles, world.frozen.id, absl::MakeSpan(frozen));
    size_t found = 0;
    for (size_t i = 0; i < handles.size(); ++i) {
      const Entity e = handles[i];
      ASSERT_EQ(positions[i], world.pages.TryGet(e, world.pos)) << e;
      ASSERT_EQ(velocities[i], world.pages.TryGet(e, world.vel)) << e;
      ASSERT_EQ(frozen[i], world.pages.TryGet(e, world.frozen.id)) << e;
      if (positions[i] == nullptr) continue;
      ++found;
      ASSERT_EQ(positions[i]->x, static_cast<float>(e.index())) << e;
      ASSERT_EQ(velocities[i] != nullptr, e.index() % 3 == 0) << e;
    }
    EXPECT_EQ(found, world.pages.num_entities());
    // An empty span, and a span shorter than the prefetch distance.
    world.pages.TryGetMany({}, world.pos, absl::Span<const Position*>());
    std::vector<const Position*> few(3);
    std::as_const(world.pages).TryGetMany(absl::MakeConstSpan(handles).first(3), world.pos,
                                          absl::MakeSpan(few));
    for (size_t i = 0; i < 3; ++i) ASSERT_EQ(few[i], world.pages.TryGet(handles[i], world.pos));
  }
}

TEST(EntityPagesCompactDeathTest, TryGetManyChecksItsSpans) {
  MovingWorld world(64);
  ASSERT_NO_FATAL_FAILURE(FillInterleaved(world));
  std::vector<const Position*> short_out(world.entities.size() - 1);
  EXPECT_DEATH(std::as_const(world.pages)
                   .TryGetMany(world.entities, world.pos, absl::MakeSpan(short_out)),
               "differ in size");
  // A Component<T> of another type's id: aborts as TryGet does.
  const Component<uint32_t> wrong{world.pos.id};
  std::vector<const uint32_t*> out(world.entities.size());
  EXPECT_DEATH(std::as_const(world.pages).TryGetMany(world.entities, wrong, absl::MakeSpan(out)),
               "registered with another size");
}

// The walks filter only the pages where every include has data: after a compaction
// a rare component's range is short, and it shrinks when boundary pages are freed.
TEST(EntityPagesCompact, DataPageRangesBoundTheWalk) {
  MovingWorld world(32 * 64);
  for (Entity e : world.entities) {
    ASSERT_THAT(world.pages.Add(e, world.pos, Position{1, 0, 0}), IsOk());
  }
  EXPECT_EQ(world.pages.data_page_range(world.vel.id), (std::pair<uint32_t, uint32_t>{0, 0}));
  for (size_t i = 0; i < world.entities.size(); i += 16) {
    ASSERT_THAT(world.pages.Add(world.entities[i], world.vel, Velocity{2, 0, 0}), IsOk());
  }
  EXPECT_EQ(world.pages.data_page_range(world.vel.id), (std::pair<uint32_t, uint32_t>{0, 64}));
  ASSERT_GT(world.pages.Compact(), 0u);
  // 128 entities with Velocity: 4 whole pages at the end of the Position pages.
  const auto [first, end] = world.pages.data_page_range(world.vel.id);
  EXPECT_EQ(end - first, 4u);
  Filter moving;
  moving.Include(world.pos).Include(world.vel);
  size_t visited = 0;
  ForEachMatch(world.pages, moving, [&](Position& p, Velocity& v) {
    ++visited;
    EXPECT_EQ(p.x + v.x, 3.0f);
  }, world.pos, world.vel);
  EXPECT_EQ(visited, 128u);
  EXPECT_EQ(CountMatches(world.pages, moving), 128u);
  size_t scalar = 0;
  ForEachMatchScalar(world.pages, moving, [&](Position&, Velocity&) { ++scalar; },
                     world.pos, world.vel);
  EXPECT_EQ(scalar, 128u);
  // Removing Velocity from everyone empties the range.
  for (size_t i = 0; i < world.entities.size(); i += 16) {
    ASSERT_THAT(world.pages.Remove(world.entities[i], world.vel), IsOk());
  }
  world.pages.ReleaseEmptyPages();
  EXPECT_EQ(world.pages.data_page_range(world.vel.id), (std::pair<uint32_t, uint32_t>{0, 0}));
  EXPECT_EQ(CountMatches(world.pages, moving), 0u);
}

// A walk reads mask arrays and pages a Compact or a capacity growth moves: either
// aborts at the call with a message, in every build mode.
TEST(EntityPagesCompactDeathTest, CompactOrGrowthInsideAWalkAborts) {
  MovingWorld world(32 * 4);
  ASSERT_NO_FATAL_FAILURE(FillInterleaved(world));
  Filter all;
  all.Include(world.pos);
  const char* kMessage = "inside a walk of the store";
  EXPECT_DEATH(ForEachMatch(
                   world.pages, all, [&](Position&) { world.pages.Compact(); }, world.pos),
               kMessage);
  EXPECT_DEATH(ForEachMatchScalar(
                   world.pages, all, [&](Position&) { world.pages.Compact(); }, world.pos),
               kMessage);
  // An entity whose slot is past the page capacity grows every mask array.
  bool grown = false;
  auto grow = [&](Position&) {
    if (std::exchange(grown, true)) return;
    std::vector<Entity> more(world.pages.page_capacity() * kEntityPageSize);
    world.manager.CreateBatch(absl::MakeSpan(more));
    (void)world.pages.Add(more.back(), world.pos, Position{});
  };
  // (The Add itself aborts now: no structural change inside a walk.)
  EXPECT_DEATH(ForEachMatch(world.pages, all, grow, world.pos),
               "EntityPages::Add inside a walk of the store");
  // Changing only the components handed out is allowed.
  size_t visited = 0;
  ForEachMatch(
      world.pages, all,
      [&](Position& p) {
        p.x += 1;
        ++visited;
      },
      world.pos);
  EXPECT_EQ(visited, world.entities.size());
}

}  // namespace
}  // namespace strata
