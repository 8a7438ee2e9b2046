// A World's observers and command buffers: every path that adds, removes or sets a
// page component reaches the observers at a flush point, and the entity index (so
// properties by name) the same way.
#include <memory>
#include <utility>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "component/declare.h"
#include "component/registry.h"
#include "engine/world.h"
#include "entity/entity.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "index/property_system.h"
#include "iteration/command_buffer.h"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::testing::ElementsAre;

struct Health {
  float hp = 100;
};
struct Poisoned {};

const ComponentRegistry& Registry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry;
    STRATA_CHECK(r->Add(ComponentDeclaration<Health>("health").Field("hp", &Health::hp).Build()).ok(),
                 "health");
    STRATA_CHECK(r->Add(ComponentDeclaration<Poisoned>("poisoned").Build()).ok(), "poisoned");
    return r;
  }();
  return *registry;
}

class WorldEvents : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<World>> world = World::Create(Registry());
    ASSERT_THAT(world.status(), IsOk());
    world_ = *std::move(world);
  }
  std::vector<std::string> log_;
  std::unique_ptr<World> world_;
};

TEST_F(WorldEvents, SpawnCommandsPropertiesAndDestroysReachObserversAndTheIndex) {
  auto added = world_->OnAdd<Health>([&](absl::Span<const Entity> e, CommandBuffer&) {
    log_.push_back("add " + std::to_string(e.size()));
  });
  auto removed = world_->OnRemove<Health>(
      [&](absl::Span<const Entity> e, absl::Span<const Health> v, CommandBuffer&) {
        log_.push_back("remove " + std::to_string(e.size()) + " hp " + std::to_string(int(v[0].hp)));
      });
  auto set = world_->OnSet<Health>(
      [&](absl::Span<const Entity> e, absl::Span<const Health> v, CommandBuffer&) {
        log_.push_back("set " + std::to_string(e.size()) + " hp " + std::to_string(int(v[0].hp)));
      });
  // Spawn: the level's adds, delivered at the end of the spawn.
  EntityCompiler compiler;
  ASSERT_THAT(Registry().RegisterCompilers(compiler), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(
      EntityCompiler::Result compiled,
      compiler.Compile(R"({"entities": [{"name": "a", "components": [{"type": "health", "hp": 5}]},
                                        {"name": "b", "components": [{"type": "health"}]}]})",
                       {}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(compiled.blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> level, world_->Spawn(view));
  EXPECT_THAT(log_, ElementsAre("add 2"));
  // Commands: a created entity with health is indexed by name too.
  CommandBuffer commands(world_->pages());
  ComponentBundle bundle;
  bundle.Set(world_->Pages<Health>().component(), Health{7});
  const Entity pending = commands.Create(bundle);
  commands.Remove(level[0], world_->Pages<Health>().component());
  STRATA_ASSERT_OK_AND_ASSIGN(CommandBuffer::Result played, world_->Playback(commands));
  EXPECT_EQ(played.applied, 2u);
  const Entity made = commands.Resolve(pending);
  EXPECT_THAT(log_, ElementsAre("add 2", "add 1", "remove 1 hp 5"));
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue hp, world_->properties().Get(made, "health", "hp"));
  EXPECT_EQ(std::get<float>(hp), 7.0f);
  EXPECT_THAT(world_->properties().Get(level[0], "health", "hp").status(),
              ::strata::testing::StatusIs(absl::StatusCode::kNotFound));
  // A property set is a set.
  ASSERT_THAT(world_->properties().Set(made, "health", "hp", PropertyValue(3.0f)), IsOk());
  ASSERT_THAT(world_->Flush(), IsOk());
  EXPECT_EQ(log_.back(), "set 1 hp 3");
  // A destroy: the values outlive the entity until the observers ran.
  ASSERT_THAT(world_->Destroy(made), IsOk());
  ASSERT_THAT(world_->Flush(), IsOk());
  EXPECT_EQ(log_.back(), "remove 1 hp 3");
  EXPECT_FALSE(world_->index().Contains(made));
}

TEST_F(WorldEvents, AnObserverReactsThroughCommands) {
  // Poison kills: adding the tag destroys the entity, through the observer's commands.
  auto poison = world_->OnAdd<Poisoned>([](absl::Span<const Entity> e, CommandBuffer& out) {
    for (Entity x : e) out.Destroy(x);
  });
  int deaths = 0;
  auto death = world_->OnRemove<Health>(
      [&](absl::Span<const Entity> e, absl::Span<const Health>, CommandBuffer&) {
        deaths += static_cast<int>(e.size());
      });
  std::vector<Entity> e(10);
  world_->entities().CreateBatch(absl::MakeSpan(e));
  CommandBuffer commands(world_->pages());
  for (Entity x : e) commands.Add(x, world_->Pages<Health>().component(), Health{});
  for (size_t i = 0; i < 4; ++i) commands.Add(e[i], world_->Pages<Poisoned>().component(), Poisoned{});
  ASSERT_THAT(world_->Playback(commands).status(), IsOk());
  EXPECT_EQ(deaths, 4);
  EXPECT_EQ(world_->entities().size(), 6u);
}

// Observers declared once on the type run in every World made from the registry.
struct Armor {
  float value = 1;
};

TEST(WorldDeclaredObservers, EveryWorldOfTheRegistrySubscribesThem) {
  auto removed_value = std::make_shared<float>(0);
  auto added = std::make_shared<int>(0);
  ComponentRegistry registry;
  ASSERT_THAT(registry.Add(ComponentDeclaration<Armor>("armor")
                               .Field("value", &Armor::value)
                               .OnAdd([added](absl::Span<const Entity> e, CommandBuffer&) {
                                 *added += static_cast<int>(e.size());
                               })
                               .OnRemove([removed_value](absl::Span<const Entity>,
                                                         absl::Span<const Armor> last,
                                                         CommandBuffer&) {
                                 for (const Armor& a : last) *removed_value += a.value;
                               })
                               .Build()),
              IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> first, World::Create(registry));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> second, World::Create(registry));
  std::vector<Entity> a(3), b(2);
  first->entities().CreateBatch(absl::MakeSpan(a));
  second->entities().CreateBatch(absl::MakeSpan(b));
  for (Entity e : a) ASSERT_THAT(first->pages().Add(e, first->Pages<Armor>().component(), Armor{2}), IsOk());
  for (Entity e : b) ASSERT_THAT(second->pages().Add(e, second->Pages<Armor>().component(), Armor{5}), IsOk());
  ASSERT_THAT(first->Flush(), IsOk());
  EXPECT_EQ(*added, 3);
  ASSERT_THAT(second->Flush(), IsOk());
  EXPECT_EQ(*added, 5);
  ASSERT_THAT(first->DestroyBatch(a), IsOk());
  ASSERT_THAT(first->Flush(), IsOk());
  EXPECT_EQ(*removed_value, 6.0f);
  // A World's subscriptions go with it; the other World's stay.
  first.reset();
  ASSERT_THAT(second->Destroy(b[0]), IsOk());
  ASSERT_THAT(second->Flush(), IsOk());
  EXPECT_EQ(*removed_value, 11.0f);
  EXPECT_EQ(second->events().observers(), 2u);
}

TEST(WorldDeclaredObservers, NamedStorageRefusesThem) {
  absl::StatusOr<ComponentType> named =
      ComponentDeclaration<Armor>("armor", ComponentStorage::kNamed)
          .Field("value", &Armor::value)
          .OnSet([](absl::Span<const Entity>, absl::Span<const Armor>, CommandBuffer&) {})
          .Build();
  EXPECT_THAT(named.status(), ::strata::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                          ::testing::HasSubstr("page storage")));
}

}  // namespace
}  // namespace strata
