#include "component/page_component.h"

#include <memory>

#include "entity/entity_manager.h"
#include "gtest/gtest.h"
#include "iteration/entity_pages.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

struct Sprite {
  float size = 1;
};

TEST(PageComponentManager, GetChecksTheInstanceHasTheComponent) {
  EntityManager entities;
  EntityPages pages(entities);
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<PageComponentManager<Sprite>> sprites,
                              PageComponentManager<Sprite>::Register(pages, "sprite"));
  const Entity a = entities.Create();
  const Entity b = entities.Create();
  STRATA_ASSERT_OK_AND_ASSIGN(Instance ia, sprites->Create(a, sprites->instance_id()));
  sprites->Get(ia).size = 2;
  EXPECT_EQ(sprites->Get(sprites->Lookup(a, sprites->instance_id())).size, 2.0f);
  // The invalid Instance (a Lookup that found nothing), an entity without a sprite,
  // and an instance whose entity lost its sprite.
  EXPECT_DEATH(sprites->Get(Instance{}), "PageComponentManager: the instance has no component");
  EXPECT_DEATH(sprites->Get(sprites->Lookup(b, sprites->instance_id())),
               "PageComponentManager: the instance has no component");
  EXPECT_DEATH(sprites->Get(Instance{b.index()}),
               "PageComponentManager: the instance has no component");
  ASSERT_TRUE(sprites->Destroy(a, sprites->instance_id()));
  EXPECT_DEATH(sprites->Get(ia), "PageComponentManager: the instance has no component");
}

// An Instance names its entity's generation: once the entity is destroyed and another
// takes its index (and a sprite), the old Instance reaches neither (in -c opt too).
TEST(PageComponentManager, GetRefusesAnInstanceOfAnEntityWhoseIndexWasReused) {
  EntityManager::Options reuse_at_once;
  reuse_at_once.min_free_indices = 0;
  EntityManager entities(reuse_at_once);
  EntityPages pages(entities);
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<PageComponentManager<Sprite>> sprites,
                              PageComponentManager<Sprite>::Register(pages, "sprite"));
  const Entity old_entity = entities.Create();
  STRATA_ASSERT_OK_AND_ASSIGN(Instance old_instance,
                              sprites->CreateWith(old_entity, sprites->instance_id(), Sprite{2}));
  ASSERT_TRUE(entities.Destroy(old_entity).ok());
  const Entity reused = entities.Create();
  ASSERT_EQ(reused.index(), old_entity.index());
  STRATA_ASSERT_OK_AND_ASSIGN(Instance fresh,
                              sprites->CreateWith(reused, sprites->instance_id(), Sprite{5}));
  EXPECT_NE(fresh, old_instance);
  EXPECT_EQ(sprites->Get(fresh).size, 5.0f);
  EXPECT_DEATH(sprites->Get(old_instance), "PageComponentManager: the instance has no component");
  EXPECT_FALSE(sprites->Lookup(old_entity, sprites->instance_id()).is_valid());
}

}  // namespace
}  // namespace strata
