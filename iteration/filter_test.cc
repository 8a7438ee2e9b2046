#include "iteration/filter.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "iteration/entity_pages.h"
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

TEST(Filter, DocumentationExample) {
  EntityManager manager;
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Position> pos,
                              pages.RegisterComponent<Position>("Position"));
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Velocity> vel,
                              pages.RegisterComponent<Velocity>("Velocity"));
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Frozen> frozen,
                              pages.RegisterComponent<Frozen>("Frozen"));
  ComponentBundle moving_bundle;
  moving_bundle.Set(pos, Position{0, 0, 0}).Set(vel, Velocity{1, 2, 3});
  std::vector<Entity> batch(100);
  manager.CreateBatch(absl::MakeSpan(batch));
  ASSERT_THAT(pages.CreateFromBundle(batch, moving_bundle), IsOk());
  ASSERT_THAT(pages.Add(batch[7], frozen, Frozen{}), IsOk());

  Filter moving;
  moving.Include(pos).Include(vel).Exclude(frozen);
  ASSERT_THAT(moving.Validate(pages), IsOk());
  ForEachMatch(
      pages, moving,
      [](Position& p, const Velocity& v) {
        p.x += v.x;
        p.y += v.y;
        p.z += v.z;
      },
      pos, vel);
  std::vector<Entity> seen;
  ForEachMatch(
      pages, moving, [&](Entity e, Position&, Velocity&) { seen.push_back(e); }, pos, vel);
  EXPECT_EQ(seen.size(), 99u);
  EXPECT_EQ(CountMatches(pages, moving), 99u);
  for (Entity e : batch) {
    EXPECT_EQ(pages.TryGet(e, pos)->z, e == batch[7] ? 0.0f : 3.0f) << e;
  }
  std::vector<Entity> expected = batch;
  expected.erase(expected.begin() + 7);
  EXPECT_EQ(seen, expected);  // handles with generations, in index order

  // Compaction moves the frozen entity out of the moving ones' pages: the walk's
  // order changes, its matches and values do not.
  EXPECT_GT(pages.Compact(/*budget=*/4096), 0u);
  pages.ReleaseEmptyPages();
  std::vector<Entity> after;
  ForEachMatch(
      pages, moving, [&](Entity e, Position&, Velocity&) { after.push_back(e); }, pos, vel);
  std::sort(after.begin(), after.end());
  EXPECT_EQ(after, expected);
  for (Entity e : batch) {
    EXPECT_EQ(pages.TryGet(e, pos)->z, e == batch[7] ? 0.0f : 3.0f) << e;
  }
}

// Optional components: every walk hands a pointer exactly where the entity has the
// component (the same one TryGet returns) and null elsewhere, including on pages where
// no entity has it (no data page) and for tags.
TEST(Filter, OptionalComponentsArePointersWherePresent) {
  MovingWorld world(32 * 40);
  EntityPages& pages = world.pages;
  const Component<Position> pos = world.pos;
  const Component<Velocity> vel = world.vel;
  const Component<Frozen> frozen = world.frozen;
  const std::vector<Entity>& entities = world.entities;
  testing::Random rng(77);
  for (size_t i = 0; i < entities.size(); ++i) {
    const Entity e = entities[i];
    ASSERT_THAT(pages.Add(e, pos, Position{static_cast<float>(i), 0, 0}), IsOk());
    // Pages 10-19 have no Velocity at all, page 20 all of it, the rest a random third.
    const size_t page = i / 32;
    bool velocity = rng.Bernoulli(1.0 / 3);
    if (page >= 10 && page < 20) velocity = false;
    if (page == 20) velocity = true;
    if (velocity) {
      ASSERT_THAT(pages.Add(e, vel, Velocity{static_cast<float>(i), 1, 1}), IsOk());
    }
    if (rng.Bernoulli(0.5)) {
      ASSERT_THAT(pages.Add(e, frozen, Frozen{}), IsOk());
    }
  }
  Filter all_positions;
  all_positions.Include(pos);
  auto check = [&](Entity e, Position& p, Velocity* v, Frozen* f) {
    EXPECT_EQ(v, pages.TryGet(e, vel)) << e;
    EXPECT_EQ(f != nullptr, pages.Has(e, frozen.id)) << e;
    if (v != nullptr) {
      EXPECT_EQ(v->x, p.x) << e;
    }
  };
  size_t visited = 0, with_velocity = 0;
  ForEachMatch(
      pages, all_positions,
      [&](Entity e, Position& p, Velocity* v, Frozen* f) {
        check(e, p, v, f);
        ++visited;
        with_velocity += v != nullptr;
      },
      pos, Optional(vel), Optional(frozen));
  EXPECT_EQ(visited, entities.size());
  size_t expected_with_velocity = 0;
  for (Entity e : entities) expected_with_velocity += pages.Has(e, vel.id);
  EXPECT_EQ(with_velocity, expected_with_velocity);
  EXPECT_GE(with_velocity, 32u);  // page 20 at least

  size_t scalar_visited = 0;
  ForEachMatchScalar(
      pages, all_positions,
      [&](Entity e, Position& p, Velocity* v, Frozen* f) {
        check(e, p, v, f);
        ++scalar_visited;
      },
      pos, Optional(vel), Optional(frozen));
  EXPECT_EQ(scalar_visited, entities.size());

  // Optional components without the entity argument, in a page range.
  size_t ranged = 0;
  ForEachMatchInPageRange(
      pages, all_positions, 10, 21,
      [&](Position&, Velocity* v) { ranged += v != nullptr; }, pos, Optional(vel));
  EXPECT_EQ(ranged, 32u);  // pages 10-19 have none, page 20 all
}

TEST(Filter, ValidateRejectsUnknownComponents) {
  EntityManager manager;
  EntityPages pages(manager);
  Filter filter;
  EXPECT_THAT(filter.Validate(pages), IsOk());
  filter.Include(0);
  EXPECT_THAT(filter.Validate(pages), StatusIs(absl::StatusCode::kInvalidArgument));
  STRATA_ASSERT_OK(pages.RegisterComponent("c", 4, 4).status());
  EXPECT_THAT(filter.Validate(pages), IsOk());
  filter.Exclude(3);
  EXPECT_THAT(filter.Validate(pages), StatusIs(absl::StatusCode::kInvalidArgument));
}

// Misuse that would have a walk read or write outside the elements it hands out:
// each aborts with a message, in every build mode, before the first page.
struct Wide {
  float v[8];
};

TEST(FilterDeathTest, WalksRejectAComponentOfAnotherSize) {
  MovingWorld world(kEntityPageSize);
  for (Entity e : world.entities) STRATA_ASSERT_OK(world.pages.Add(e, world.pos, Position{}));
  // A Component<T> whose id is another type's: Position's id, Wide's size.
  const Component<Wide> wrong{world.pos.id};
  Filter filter;
  filter.Include(world.pos);
  const char* kMessage = "is not registered in this store with its";
  EXPECT_DEATH(ForEachMatch(
                   world.pages, filter, [](Wide& w) { w.v[7] = 1; }, wrong),
               kMessage);
  EXPECT_DEATH(ForEachMatchScalar(
                   world.pages, filter, [](Wide&) {}, wrong),
               kMessage);
  EXPECT_DEATH(ForEachMatchInPageRange(
                   world.pages, filter, 0, 1, [](Wide&) {}, wrong),
               kMessage);
  EXPECT_DEATH(ForEachMatch(
                   world.pages, filter, [](Position&, Wide*) {}, world.pos, Optional(wrong)),
               kMessage);
  // A tag's id under a non-empty type, and an id no type has.
  const Component<Position> tag_as_position{world.frozen.id};
  EXPECT_DEATH(
      ForEachMatch(
          world.pages, filter, [](Position&, Position*) {}, world.pos, Optional(tag_as_position)),
      kMessage);
  const Component<Position> unregistered{99};
  EXPECT_DEATH(
      ForEachMatch(
          world.pages, filter, [](Position&, Position*) {}, world.pos, Optional(unregistered)),
      kMessage);
  // The right types walk.
  size_t visited = 0;
  ForEachMatch(
      world.pages, filter, [&](Position&, Frozen*) { ++visited; }, world.pos,
      Optional(world.frozen));
  EXPECT_EQ(visited, kEntityPageSize);
}

TEST(FilterDeathTest, WalksRejectARequiredComponentOutsideTheIncludes) {
  MovingWorld world(kEntityPageSize);
  for (Entity e : world.entities) STRATA_ASSERT_OK(world.pages.Add(e, world.pos, Position{}));
  Filter filter;
  filter.Include(world.pos);
  // Velocity by reference, but the filter does not require it: no entity has it.
  EXPECT_DEATH(
      ForEachMatch(
          world.pages, filter, [](Position&, Velocity& v) { v.x = 1; }, world.pos, world.vel),
      "not in the filter's include set");
  size_t with_velocity = 0;
  ForEachMatch(
      world.pages, filter, [&](Position&, Velocity* v) { with_velocity += v != nullptr; },
      world.pos, Optional(world.vel));
  EXPECT_EQ(with_velocity, 0u);
}

TEST(FilterDeathTest, WalksRejectAFilterWithAnUnregisteredId) {
  MovingWorld world(kEntityPageSize);
  for (Entity e : world.entities) STRATA_ASSERT_OK(world.pages.Add(e, world.pos, Position{}));
  Filter includes_unknown;
  includes_unknown.Include(world.pos).Include(ComponentId{3});
  Filter excludes_unknown;
  excludes_unknown.Include(world.pos).Exclude(ComponentId{1000});
  ASSERT_THAT(includes_unknown.Validate(world.pages), StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_THAT(excludes_unknown.Validate(world.pages), StatusIs(absl::StatusCode::kInvalidArgument));
  const char* kMessage = "a filter names a component id not registered";
  EXPECT_DEATH(ForEachMatch(
                   world.pages, includes_unknown, [](Position&) {}, world.pos),
               kMessage);
  EXPECT_DEATH(ForEachMatch(
                   world.pages, excludes_unknown, [](Position&) {}, world.pos),
               kMessage);
  EXPECT_DEATH(CountMatches(world.pages, includes_unknown), kMessage);
}

TEST(Filter, EmptyStoreHasNoMatches) {
  EntityManager manager;
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Position> pos,
                              pages.RegisterComponent<Position>("Position"));
  Filter filter;
  filter.Include(pos);
  int calls = 0;
  ForEachMatch(pages, filter, [&](Position&) { ++calls; }, pos);
  ForEachMatchScalar(pages, filter, [&](Position&) { ++calls; }, pos);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(CountMatches(pages, Filter()), 0u);
}

TEST(Filter, FullPagesTakeTheStraightLoopWithTheSameResult) {
  EntityManager manager;
  EntityPages pages(manager);
  STRATA_ASSERT_OK_AND_ASSIGN(Component<Position> pos,
                              pages.RegisterComponent<Position>("Position"));
  std::vector<Entity> batch(32 * 5 + 3);  // five full pages and a partial one
  manager.CreateBatch(absl::MakeSpan(batch));
  for (Entity e : batch) {
    ASSERT_THAT(pages.Add(e, pos, Position{static_cast<float>(e.index()), 0, 0}), IsOk());
  }
  ASSERT_EQ(pages.page_masks(pos.id)[0], ~uint32_t{0});
  Filter filter;
  filter.Include(pos);
  std::vector<Entity> seen;
  ForEachMatch(
      pages, filter,
      [&](Entity e, Position& p) {
        EXPECT_EQ(p.x, static_cast<float>(e.index()));
        seen.push_back(e);
      },
      pos);
  EXPECT_EQ(seen, batch);
}

// Every combination of include / exclude / ignore over kTypes components, on random
// pages with clustered and sparse regions, against a per-entity check through Has().
TEST(Filter, EveryIncludeExcludeCombinationMatchesNaiveCheck) {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  EntityManager manager;
  EntityPages pages(manager);
  constexpr int kTypes = 5;
  std::vector<Component<uint32_t>> types;
  for (int t = 0; t < kTypes; ++t) {
    STRATA_ASSERT_OK_AND_ASSIGN(Component<uint32_t> c,
                                pages.RegisterComponent<uint32_t>(absl::StrCat("t", t)));
    types.push_back(c);
  }
  std::vector<Entity> entities(32 * 150);
  manager.CreateBatch(absl::MakeSpan(entities));
  for (size_t i = 0; i < entities.size(); ++i) {
    // Regions of pages with different densities: empty, full, sparse, random.
    const size_t page = i / 32;
    const double p = page % 4 == 0 ? 0.0 : page % 4 == 1 ? 1.0 : page % 4 == 2 ? 0.05 : 0.5;
    for (int t = 0; t < kTypes; ++t) {
      if (rng.Bernoulli(p)) {
        ASSERT_THAT(pages.Add(entities[i], types[t], entities[i].index() * 10 + t), IsOk());
      }
    }
  }
  // Pages of destroyed entities must not show up either.
  for (size_t i = 0; i < entities.size(); i += 7) {
    ASSERT_THAT(manager.Destroy(entities[i]), IsOk());
  }

  int combinations = 0;
  for (int code = 0; code < 243; ++code) {  // 3^5
    Filter filter;
    int c = code;
    std::vector<int> include, exclude;
    for (int t = 0; t < kTypes; ++t, c /= 3) {
      if (c % 3 == 1) {
        filter.Include(types[t]);
        include.push_back(t);
      } else if (c % 3 == 2) {
        filter.Exclude(types[t]);
        exclude.push_back(t);
      }
    }
    std::vector<Entity> expected;
    for (Entity e : entities) {
      if (!pages.Contains(e)) continue;
      bool match = true;
      for (int t : include) match &= pages.Has(e, types[t].id);
      for (int t : exclude) match &= !pages.Has(e, types[t].id);
      if (match) expected.push_back(e);
    }
    std::vector<Entity> simd, scalar;
    if (include.empty()) {
      ForEachMatch(pages, filter, [&](Entity e) { simd.push_back(e); });
      ForEachMatchScalar(pages, filter, [&](Entity e) { scalar.push_back(e); });
    } else {
      // Hand the callback the first included component and check its value.
      const Component<uint32_t> first = types[include[0]];
      auto collect = [&](std::vector<Entity>* out) {
        return [out, first](Entity e, uint32_t& value) {
          EXPECT_EQ(value, e.index() * 10 + first.id);
          out->push_back(e);
        };
      };
      ForEachMatch(pages, filter, collect(&simd), first);
      ForEachMatchScalar(pages, filter, collect(&scalar), first);
    }
    ASSERT_EQ(simd, expected) << "filter code " << code;
    ASSERT_EQ(scalar, expected) << "filter code " << code;
    ASSERT_EQ(CountMatches(pages, filter), expected.size());
    ++combinations;
  }
  EXPECT_EQ(combinations, 243);
}

TEST(Filter, KernelMatchesScalarOnRawArrays) {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  constexpr size_t kPages = 1000;
  std::vector<std::vector<uint32_t>> masks(6, std::vector<uint32_t>(kPages));
  for (auto& row : masks) {
    for (uint32_t& m : row) m = rng.Next32() & rng.Next32();
  }
  const uint32_t* rows[6];
  for (int i = 0; i < 6; ++i) rows[i] = masks[i].data();
  std::vector<uint32_t> pages_a(kPages + kFilterOutputSlack), masks_a(pages_a.size());
  std::vector<uint32_t> pages_b(kPages + kFilterOutputSlack), masks_b(pages_b.size());
  for (int trial = 0; trial < 50; ++trial) {
    const size_t num_include = rng.UniformInt(1, 3);
    const MaskRows mask_rows{rows, num_include, rows + 3,
                             static_cast<size_t>(rng.UniformInt(0, 3))};
    const size_t begin = rng.UniformIndex(kPages);
    const size_t end = begin + rng.UniformIndex(kPages - begin + 1);
    const size_t n = FilterPages(mask_rows, begin, end, pages_a.data(), masks_a.data());
    const size_t m = FilterPagesScalar(mask_rows, begin, end, pages_b.data(), masks_b.data());
    ASSERT_EQ(n, m);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(pages_a[i], pages_b[i]);
      ASSERT_EQ(masks_a[i], masks_b[i]);
    }
  }
}

}  // namespace
}  // namespace strata
