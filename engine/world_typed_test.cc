// World's typed access (Pages<T>(), Each) and the entity index in step with page and
// named components added and removed at run time, by any path.
#include <memory>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "base/check.h"
#include "component/declare.h"
#include "component/registry.h"
#include "engine/world.h"
#include "entity/entity.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "index/property_system.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

struct Health {
  float hp = 100;
  float max = 100;
};
struct Speed {
  float value = 1;
};
struct Frozen {};
struct Poisoned {};
// Declared twice below (two type names, one struct): typed access must refuse it.
struct Twin {
  float a = 0;
};
struct Undeclared {
  float a = 0;
};
struct Effect {
  float strength = 0;
};

const ComponentRegistry& Registry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry;
    auto add = [r](absl::StatusOr<ComponentType> type) { STRATA_CHECK(r->Add(std::move(type)).ok(), "add"); };
    add(ComponentDeclaration<Health>("health").Field("hp", &Health::hp).Min(0).Field("max", &Health::max).Build());
    add(ComponentDeclaration<Speed>("speed").Field("value", &Speed::value).Build());
    add(ComponentDeclaration<Frozen>("frozen").Build());
    add(ComponentDeclaration<Poisoned>("poisoned").Build());
    add(ComponentDeclaration<Twin>("twin_a").Field("a", &Twin::a).Build());
    add(ComponentDeclaration<Twin>("twin_b").Field("a", &Twin::a).Build());
    add(ComponentDeclaration<Effect>("effect", ComponentStorage::kNamed)
            .Field("strength", &Effect::strength)
            .Build());
    return r;
  }();
  return *registry;
}

std::unique_ptr<World> MakeWorld() {
  absl::StatusOr<std::unique_ptr<World>> world = World::Create(Registry());
  EXPECT_THAT(world.status(), IsOk());
  return world.ok() ? *std::move(world) : nullptr;
}

float Hp(World& world, Entity e) {
  absl::StatusOr<PropertyValue> v = world.properties().Get(e, "health", "hp");
  return v.ok() && std::holds_alternative<float>(*v) ? std::get<float>(*v) : -1;
}

TEST(WorldIndex, ARunTimeComponentIsSeenByNameAndGoneWhenRemoved) {
  std::unique_ptr<World> world = MakeWorld();
  ASSERT_NE(world, nullptr);
  PageComponentManager<Health>& health = world->Pages<Health>();
  const Entity e = world->entities().Create();
  STRATA_ASSERT_OK_AND_ASSIGN(Instance i, health.CreateWith(e, health.instance_id(), Health{40, 50}));
  EXPECT_EQ(Hp(*world, e), 40);
  ASSERT_THAT(world->properties().Set(e, "health", "hp", PropertyValue(25.0f)), IsOk());
  EXPECT_EQ(health.Get(i).hp, 25);
  // A declared range checks authored levels, not run-time values: a set by name stores
  // what a system may write (and a spawned blob may hold).
  ASSERT_THAT(world->properties().Set(e, "health", "hp", PropertyValue(-1.0f)), IsOk());
  EXPECT_EQ(health.Get(i).hp, -1);
  EXPECT_THAT(world->properties().Set(e, "health", "hp", PropertyValue(int32_t{3})),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(world->ComponentCount(e), 2u);  // the store's and the index's
  ASSERT_TRUE(health.Destroy(e, health.instance_id()));
  EXPECT_THAT(world->properties().Get(e, "health", "hp").status(),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_FALSE(world->index().Contains(e));
  EXPECT_EQ(world->ComponentCount(e), 0u);
  // Reuse after removal: the name comes back with the component.
  ASSERT_THAT(health.Create(e, health.instance_id()).status(), IsOk());
  EXPECT_EQ(Hp(*world, e), 100);
}

TEST(WorldIndex, EveryPageStorePathKeepsTheIndexInStep) {
  std::unique_ptr<World> world = MakeWorld();
  ASSERT_NE(world, nullptr);
  EntityPages& pages = world->pages();
  const Component<Health> health = world->Pages<Health>().component();
  const Component<Speed> speed = world->Pages<Speed>().component();
  std::vector<Entity> batch(64);
  world->entities().CreateBatch(absl::MakeSpan(batch));
  // A single Add on the store itself, not through the manager.
  ASSERT_THAT(pages.Add(batch[0], health, Health{7, 10}), IsOk());
  EXPECT_EQ(Hp(*world, batch[0]), 7);
  // CreateFromBundle: one batch per component.
  ComponentBundle both;
  both.Set(health, Health{3, 10}).Set(speed, Speed{2});
  ASSERT_THAT(pages.CreateFromBundle(absl::MakeConstSpan(batch).subspan(1, 40), both), IsOk());
  for (size_t k = 1; k <= 40; ++k) {
    ASSERT_EQ(Hp(*world, batch[k]), 3) << k;
    ASSERT_NE(world->index().FindComponentManager(batch[k], IdString32("speed")), nullptr);
  }
  // A span Add that fails part way: the entities before the failure are indexed.
  std::vector<Entity> partial = {batch[41], batch[42], batch[1], batch[43]};
  EXPECT_THAT(pages.Add(partial, health, Health{9, 10}),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("entity 2 of the batch")));
  EXPECT_EQ(Hp(*world, batch[41]), 9);
  EXPECT_EQ(Hp(*world, batch[42]), 9);
  EXPECT_FALSE(world->index().Contains(batch[43]));
  // A span Remove, also failing part way: only the removed leave the index.
  std::vector<Entity> removed = {batch[1], batch[2], batch[50], batch[3]};
  EXPECT_THAT(pages.Remove(removed, health), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(world->properties().Get(batch[1], "health", "hp").status(),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(world->properties().Get(batch[2], "health", "hp").status(),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(Hp(*world, batch[3]), 3);
  EXPECT_NE(world->index().FindComponentManager(batch[1], IdString32("speed")), nullptr);
  // A compaction moves entities, never index entries.
  world->pages().Compact();
  EXPECT_EQ(Hp(*world, batch[3]), 3);
  EXPECT_EQ(Hp(*world, batch[41]), 9);
  // Destroying entities leaves nothing behind, in the index or the stores.
  ASSERT_THAT(world->DestroyBatch(batch), IsOk());
  for (Entity e : batch) ASSERT_EQ(world->ComponentCount(e), 0u);
  EXPECT_EQ(world->index().num_entities(), 0u);
}

TEST(WorldIndex, ANameTakenByAnotherManagerStaysWithIt) {
  std::unique_ptr<World> world = MakeWorld();
  ASSERT_NE(world, nullptr);
  const Entity e = world->entities().Create();
  // A named instance called "health" first; then the page component "health".
  NamedComponentManager<Effect>& effects = world->Named<Effect>();
  ASSERT_THAT(effects.Create(e, IdString32("health")).status(), IsOk());
  PageComponentManager<Health>& health = world->Pages<Health>();
  ASSERT_THAT(health.Create(e, health.instance_id()).status(), IsOk());
  EXPECT_EQ(world->index().FindComponentManager(e, IdString32("health")), &effects);
  // Removing the page component leaves the other manager's entry alone.
  ASSERT_TRUE(health.Destroy(e, health.instance_id()));
  EXPECT_EQ(world->index().FindComponentManager(e, IdString32("health")), &effects);
  // The other way round: a manager's Create of a taken name is refused, nothing made.
  ASSERT_THAT(health.Create(e, health.instance_id()).status(), IsOk());
  ASSERT_TRUE(effects.Destroy(e, IdString32("health")));
  EXPECT_EQ(world->index().FindComponentManager(e, IdString32("health")), nullptr);
  // (The page component lost the name when it was taken; it comes back on its next Add.)
  ASSERT_THAT(effects.Create(e, IdString32("Glow")).status(), IsOk());
  const Entity f = world->entities().Create();
  ASSERT_THAT(health.Create(f, health.instance_id()).status(), IsOk());
  EXPECT_THAT(effects.Create(f, IdString32("health")).status(),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(effects.CountOf(f), 0u);
  EXPECT_EQ(world->index().FindComponentManager(f, IdString32("health")), &health);
}

TEST(WorldIndex, ANamedComponentMadeAtRunTimeIsSeenByNameAndGoneWhenDestroyed) {
  std::unique_ptr<World> world = MakeWorld();
  ASSERT_NE(world, nullptr);
  NamedComponentManager<Effect>& effects = world->Named<Effect>();
  const Entity e = world->entities().Create();
  STRATA_ASSERT_OK_AND_ASSIGN(Instance fog, effects.CreateWith(e, IdString32("Fog"), Effect{0.5f}));
  ASSERT_THAT(effects.Create(e, IdString32("Vignette")).status(), IsOk());
  // Both by name, each its own instance.
  ASSERT_THAT(world->properties().Set(e, "Vignette", "strength", PropertyValue(2.0f)), IsOk());
  fog = effects.Lookup(e, IdString32("Fog"));
  EXPECT_EQ(effects.Get(fog).strength, 0.5f);
  EXPECT_EQ(effects.Get(effects.Lookup(e, IdString32("Vignette"))).strength, 2.0f);
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue v, world->properties().Get(e, "Fog", "strength"));
  EXPECT_EQ(std::get<float>(v), 0.5f);
  // Destroyed: the name is gone, the other stays.
  ASSERT_TRUE(effects.Destroy(e, IdString32("Fog")));
  EXPECT_THAT(world->properties().Get(e, "Fog", "strength").status(),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(world->index().FindComponentManager(e, IdString32("Vignette")), &effects);
  // Reuse after destroy, then the entity's destruction takes the rest.
  ASSERT_THAT(effects.Create(e, IdString32("Fog")).status(), IsOk());
  ASSERT_THAT(world->properties().Set(e, "Fog", "strength", PropertyValue(1.0f)), IsOk());
  ASSERT_THAT(world->DestroyBatch(absl::MakeConstSpan(&e, 1)), IsOk());
  EXPECT_EQ(effects.size(), 0u);
  EXPECT_FALSE(world->index().Contains(e));
}

TEST(WorldTyped, EachTakesItsComponentsFromTheCallback) {
  std::unique_ptr<World> world = MakeWorld();
  ASSERT_NE(world, nullptr);
  std::vector<Entity> batch(100);
  world->entities().CreateBatch(absl::MakeSpan(batch));
  PageComponentManager<Health>& health = world->Pages<Health>();
  PageComponentManager<Speed>& speed = world->Pages<Speed>();
  for (size_t k = 0; k < batch.size(); ++k) {
    ASSERT_THAT(health.CreateWith(batch[k], health.instance_id(), Health{100, 100}).status(), IsOk());
    if (k % 2 == 0) {
      ASSERT_THAT(speed.CreateWith(batch[k], speed.instance_id(), Speed{3}).status(), IsOk());
    }
  }
  ASSERT_THAT(world->pages().Add(batch[0], world->Pages<Frozen>().component(), Frozen{}), IsOk());
  // Both included: the 50 even entities.
  int both = 0;
  world->Each([&](Health& h, const Speed& s) {
    h.hp -= s.value;
    ++both;
  });
  EXPECT_EQ(both, 50);
  EXPECT_EQ(health.Get(health.Lookup(batch[2], health.instance_id())).hp, 97);
  EXPECT_EQ(health.Get(health.Lookup(batch[1], health.instance_id())).hp, 100);
  // An entity first, an exclusion, an optional component.
  int with_speed = 0, without_speed = 0;
  world->Each(Without<Frozen>(), [&](Entity e, const Health&, const Speed* s) {
    EXPECT_NE(e, batch[0]);
    (s != nullptr ? with_speed : without_speed) += 1;
  });
  EXPECT_EQ(with_speed, 49);
  EXPECT_EQ(without_speed, 50);
  // A tag required without being handed over.
  int frozen = 0;
  world->Each(With<Frozen>(), [&](Entity e, Health&) {
    EXPECT_EQ(e, batch[0]);
    ++frozen;
  });
  EXPECT_EQ(frozen, 1);
  int frozen_slow = 0;
  world->Each(With<Frozen, Speed>(), Without<Poisoned>(), [&](const Health&) { ++frozen_slow; });
  EXPECT_EQ(frozen_slow, 1);
  // None: nothing is visited.
  std::unique_ptr<World> empty = MakeWorld();
  int visited = 0;
  empty->Each([&](Health&) { ++visited; });
  EXPECT_EQ(visited, 0);
}

TEST(WorldTyped, TryFormsFindOnlyTheOneDeclarationOfAStruct) {
  std::unique_ptr<World> world = MakeWorld();
  ASSERT_NE(world, nullptr);
  EXPECT_NE(world->TryPages<Health>(), nullptr);
  EXPECT_EQ(world->TryPages<Health>(), &world->Pages<Health>());
  EXPECT_EQ(world->TryPages<Twin>(), nullptr);        // declared twice
  EXPECT_EQ(world->TryPages<Undeclared>(), nullptr);  // never declared
  EXPECT_EQ(world->TryPages<Effect>(), nullptr);      // stored by name
  EXPECT_NE(world->TryNamed<Effect>(), nullptr);
  EXPECT_EQ(world->TryNamed<Health>(), nullptr);
  // The forms by name still reach each twin.
  EXPECT_THAT(world->Pages<Twin>("twin_a").status(), IsOk());
  EXPECT_THAT(world->Pages<Twin>("twin_b").status(), IsOk());
}

TEST(WorldTypedDeathTest, MisusedTypedAccessAbortsWithAMessage) {
  std::unique_ptr<World> world = MakeWorld();
  ASSERT_NE(world, nullptr);
  EXPECT_DEATH(world->Pages<Twin>(), "several component types declare this struct \\(twin_a, twin_b\\)");
  EXPECT_DEATH(world->Pages<Undeclared>(), "no component type of this world declares this struct");
  EXPECT_DEATH(world->Pages<Effect>(), "\"effect\" is not stored that way");
  EXPECT_DEATH(world->Each([](Undeclared&) {}), "no component type of this world declares");
}

TEST(WorldTyped, ADefaultComponentIdNamesNoType) {
  std::unique_ptr<World> world = MakeWorld();
  ASSERT_NE(world, nullptr);
  const Entity e = world->entities().Create();
  const Component<Health> none;
  EXPECT_FALSE(none.is_valid());
  EXPECT_TRUE(world->Pages<Health>().component().is_valid());
  EXPECT_THAT(world->pages().Add(e, none, Health{}), StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_THAT(world->Pages<Health>().Create(e, IdString32("health")).status(), IsOk());
  EXPECT_EQ(world->pages().TryGet(e, none), nullptr);
}

}  // namespace
}  // namespace strata
