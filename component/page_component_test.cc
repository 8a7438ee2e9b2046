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

}  // namespace
}  // namespace strata
