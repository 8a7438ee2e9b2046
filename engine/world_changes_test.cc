// A World's transforms in page queries: with TrackTransformChanges on, the transform
// store's creations, destructions and world-matrix changes reach the HasTransform tag
// at each sync point (UpdateTransforms, the end of a Spawn), so "whose transform
// changed since tick t" is one Filter.
#include <memory>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "base/matrix.h"
#include "component/declare.h"
#include "component/registry.h"
#include "engine/world.h"
#include "entity/entity.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "iteration/entity_pages.h"
#include "iteration/filter.h"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "testing/status_matchers.h"
#include "transform/transform_component.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

struct Health {
  float hp = 100;
};

const ComponentRegistry& Registry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry;
    STRATA_CHECK(r->Add(ComponentDeclaration<Health>("health").Field("hp", &Health::hp).Build()).ok(),
                 "health");
    return r;
  }();
  return *registry;
}

class WorldTransformChanges : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    World::Options options;
    options.deferred_transforms = GetParam();
    STRATA_ASSERT_OK_AND_ASSIGN(world_, World::Create(Registry(), options));
  }
  // The entities with health whose transform changed (or appeared) after `since`.
  std::set<Entity> HealthWithTransformChangedSince(uint32_t since) {
    Filter f;
    f.Include(world_->Pages<Health>().component()).Changed(world_->has_transform(), since);
    std::set<Entity> out;
    ForEachMatch(world_->pages(), f, [&](Entity e, const Health&) { out.insert(e); },
                 world_->Pages<Health>().component());
    return out;
  }
  // A new entity with health, and a transform unless `transform` is false.
  Entity Make(bool transform = true) {
    const Entity e = world_->entities().Create();
    STRATA_CHECK(world_->Pages<Health>().Create(e, IdString32("health")).ok(), "health");
    if (transform) STRATA_CHECK(world_->transforms().Create(e, Matrix4x4::Identity()).ok(), "t");
    return e;
  }
  uint32_t NextFrame() {
    const uint32_t last = world_->pages().tick();
    world_->pages().AdvanceTick();
    return last;
  }
  std::unique_ptr<World> world_;
};

INSTANTIATE_TEST_SUITE_P(Modes, WorldTransformChanges, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Deferred" : "Immediate"; });

TEST_P(WorldTransformChanges, MovesReachTheTagAtEachSyncPoint) {
  TransformComponent& transforms = world_->transforms();
  const Entity root = Make(), child = Make(), lone = Make(), bare = Make(/*transform=*/false);
  ASSERT_THAT(transforms.Link(transforms.Lookup(child), transforms.Lookup(root)), IsOk());
  // Before tracking, no entity carries the tag.
  EXPECT_THAT(HealthWithTransformChangedSince(EntityPages::kNeverRan), IsEmpty());
  ASSERT_THAT(world_->TrackTransformChanges(), IsOk());
  ASSERT_THAT(world_->TrackTransformChanges(), IsOk());  // idempotent
  EXPECT_THAT(HealthWithTransformChangedSince(EntityPages::kNeverRan),
              UnorderedElementsAre(root, child, lone));
  EXPECT_FALSE(world_->pages().Has(bare, world_->has_transform().id));

  uint32_t since = NextFrame();
  world_->UpdateTransforms();
  EXPECT_THAT(HealthWithTransformChangedSince(since), IsEmpty());
  // The root moves: its subtree's worlds change, the lone one's does not.
  ASSERT_TRUE(transforms.SetLocal(transforms.Lookup(root), Matrix4x4::Translation(1, 0, 0)));
  EXPECT_THAT(HealthWithTransformChangedSince(since), IsEmpty());  // not synced yet
  world_->UpdateTransforms();
  EXPECT_THAT(HealthWithTransformChangedSince(since), UnorderedElementsAre(root, child));
  // A system that ran last before both frames sees the same; one that ran after, nothing.
  since = NextFrame();
  world_->UpdateTransforms();
  EXPECT_THAT(HealthWithTransformChangedSince(since), IsEmpty());

  // The parent's destroy, keeping its children, orphans the child (its world becomes
  // its local): a change.
  since = NextFrame();
  ASSERT_THAT(world_->DestroyKeepingChildren(root), IsOk());
  world_->UpdateTransforms();
  EXPECT_THAT(HealthWithTransformChangedSince(since), UnorderedElementsAre(child));
  // A transform destroyed alone takes the tag with it; a new one brings it.
  since = NextFrame();
  ASSERT_TRUE(transforms.DestroyEntity(lone));
  ASSERT_THAT(transforms.Create(bare, Matrix4x4::Identity()).status(), IsOk());
  world_->UpdateTransforms();
  EXPECT_FALSE(world_->pages().Has(lone, world_->has_transform().id));
  EXPECT_THAT(HealthWithTransformChangedSince(since), UnorderedElementsAre(bare));
  // Created and destroyed between two syncs: nothing stays behind.
  const Entity brief = Make();
  ASSERT_THAT(world_->Destroy(brief), IsOk());
  world_->UpdateTransforms();
  EXPECT_FALSE(world_->pages().Has(brief, world_->has_transform().id));
  Filter tagged;
  tagged.Include(world_->has_transform());
  EXPECT_EQ(CountMatches(world_->pages(), tagged), 2u);  // child, bare
}

TEST_P(WorldTransformChanges, ASpawnedLevelIsMirroredAtTheEndOfTheSpawn) {
  ASSERT_THAT(world_->TrackTransformChanges(), IsOk());
  const uint32_t since = NextFrame();
  EntityCompiler compiler;
  ASSERT_THAT(Registry().RegisterCompilers(compiler), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(
      EntityCompiler::Result compiled,
      compiler.Compile(R"({"entities": [
        {"name": "a", "components": [{"type": "health"}, {"type": "transform"}]},
        {"name": "b", "components": [{"type": "health"}]}]})",
                       {}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(compiled.blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> level, world_->Spawn(view));
  ASSERT_EQ(level.size(), 2u);
  EXPECT_THAT(HealthWithTransformChangedSince(since), UnorderedElementsAre(level[0]));
  // The mirror is no component of the game's: a save does not write it.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world_->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView saved_view, EntityResourceView::Create(saved));
  for (const ComponentTypeView& section : saved_view.component_types()) {
    EXPECT_NE(section.type, IdString32("has_transform"));
  }
}

}  // namespace
}  // namespace strata
