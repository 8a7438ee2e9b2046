#include "component/named_component.h"

#include <vector>

#include "entity/entity_manager.h"
#include "gtest/gtest.h"
#include "index/id_string.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

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

}  // namespace
}  // namespace strata
