#include "component/named_component.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/id_string.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::testing::ElementsAre;

struct Effect {
  float density = 0;
};

TEST(NamedComponentManager, AccessorsCheckTheInstance) {
  EntityManager entities;
  NamedComponentManager<Effect> effects(entities, "effect");
  const Entity env = entities.Create();
  STRATA_ASSERT_OK_AND_ASSIGN(Instance fog, effects.Create(env, IdString32("Fog")));
  effects.Get(fog).density = 0.5f;
  EXPECT_EQ(effects.entity(fog), env);
  EXPECT_EQ(effects.id(fog), IdString32("Fog"));
  // The last valid index, then one past it and the invalid Instance.
  EXPECT_EQ(effects.Get(Instance{0}).density, 0.5f);
  EXPECT_DEATH(effects.Get(Instance{}), "NamedComponentManager: instance out of range");
  EXPECT_DEATH(effects.Get(Instance{1}), "NamedComponentManager: instance out of range");
  const NamedComponentManager<Effect>& read_only = effects;
  EXPECT_DEATH(read_only.Get(Instance{1}), "NamedComponentManager: instance out of range");
  EXPECT_DEATH(effects.entity(Instance{}), "NamedComponentManager: instance out of range");
  EXPECT_DEATH(effects.id(Instance{7}), "NamedComponentManager: instance out of range");
  // A Lookup that found nothing is the invalid Instance.
  EXPECT_DEATH(effects.Get(effects.Lookup(env, IdString32("Vignette"))),
               "NamedComponentManager: instance out of range");
}

TEST(NamedComponentManager, DestroyingWhileIteratingInstancesOfRemovesThemAll) {
  EntityManager entities;
  NamedComponentManager<Effect> effects(entities, "effect");
  const Entity env = entities.Create();
  const Entity other = entities.Create();
  for (const char* name : {"Fog", "Vignette", "Bloom", "Grain"}) {
    ASSERT_TRUE(effects.Create(env, IdString32(name)).ok());
  }
  ASSERT_TRUE(effects.Create(other, IdString32("Fog")).ok());
  EXPECT_THAT(effects.InstancesOf(env), ElementsAre(IdString32("Fog"), IdString32("Vignette"),
                                                    IdString32("Bloom"), IdString32("Grain")));
  // The natural loop: InstancesOf is a copy, so Destroy does not disturb it.
  for (InstanceId id : effects.InstancesOf(env)) EXPECT_TRUE(effects.Destroy(env, id));
  EXPECT_TRUE(effects.InstancesOf(env).empty());
  EXPECT_EQ(effects.CountOf(env), 0u);
  EXPECT_EQ(effects.size(), 1u);
  EXPECT_EQ(effects.CountOf(other), 1u);
  // Creating while iterating does not disturb it either.
  ASSERT_TRUE(effects.Create(env, IdString32("A")).ok());
  size_t seen = 0;
  for (InstanceId id : effects.InstancesOf(env)) {
    ++seen;
    ASSERT_TRUE(effects.Create(env, IdString32(absl::StrCat(id.value(), "+"))).ok());
  }
  EXPECT_EQ(seen, 1u);
  EXPECT_EQ(effects.CountOf(env), 2u);
}

}  // namespace
}  // namespace strata
