// TransformComponent and its EntityManager: either may be destroyed first; Create
// accepts only entities alive in the connected manager; sizes from configuration are
// rejected with a Status.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/matrix.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"
#include "transform/transform_component.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;
using TransformHandle = TransformHandle;

// Under ASan, a component that still pointed at its freed manager fails here: in
// Create's liveness check, in the listener's removal by Disconnect and by the
// destructor.
TEST(TransformComponentLifetime, ManagerDestroyedFirst) {
  auto manager = std::make_unique<EntityManager>();
  auto tc = std::make_unique<TransformComponent>();
  tc->ConnectTo(*manager);
  const Entity parent = manager->Create(), child = manager->Create();
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle p, tc->Create(parent, Matrix4x4::Translation(1, 0, 0)));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle c, tc->Create(child, Matrix4x4::Translation(0, 2, 0)));
  STRATA_ASSERT_OK(tc->Link(c, p));
  manager.reset();

  // The transforms stay, usable by instance and entity; nothing was destroyed.
  EXPECT_EQ(tc->size(), 2u);
  EXPECT_EQ(tc->Lookup(child), c);
  EXPECT_TRUE(tc->SetLocal(p, Matrix4x4::Translation(5, 0, 0)));
  EXPECT_EQ(tc->World(c), Matrix4x4::Translation(5, 2, 0));
  // No entity of the dead manager is alive: Create refuses, saying why.
  EXPECT_THAT(tc->Create(Entity(7, 0), Matrix4x4::Identity()),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("has been destroyed")));
  std::vector<TransformHandle> out(1);
  EXPECT_THAT(tc->CreateBatch({Entity(8, 0)}, {Matrix4x4::Identity()}, absl::MakeSpan(out)),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("entities[0]")));
  STRATA_ASSERT_OK(tc->Destroy(p));
  EXPECT_TRUE(tc->IsValid(c));
  // Disconnecting returns to the unconnected mode, where any valid entity is accepted.
  tc->Disconnect();
  EXPECT_THAT(tc->Create(Entity(7, 0), Matrix4x4::Identity()).status(), IsOk());
  EXPECT_THAT(tc->CheckInvariants(), IsOk());
  tc.reset();
}

TEST(TransformComponentLifetime, ManagerDestroyedFirstThenComponentDestroyedConnected) {
  auto manager = std::make_unique<EntityManager>();
  {
    TransformComponent tc;
    tc.ConnectTo(*manager);
    STRATA_ASSERT_OK(tc.Create(manager->Create(), Matrix4x4::Identity()).status());
    manager.reset();
  }  // the destructor must not reach the freed manager
  SUCCEED();
}

TEST(TransformComponentLifetime, ComponentDestroyedFirst) {
  EntityManager manager;
  std::vector<Entity> e(3);
  manager.CreateBatch(absl::MakeSpan(e));
  {
    TransformComponent tc;
    tc.ConnectTo(manager);
    std::vector<TransformHandle> out(3);
    STRATA_ASSERT_OK(tc.CreateBatch(e, std::vector<Matrix4x4>(3, Matrix4x4::Identity()),
                                    absl::MakeSpan(out)));
    EXPECT_EQ(manager.destroy_listeners(), 1u);
  }
  EXPECT_EQ(manager.destroy_listeners(), 0u);
  STRATA_ASSERT_OK(manager.DestroyBatch(e));  // nobody left to tell
}

TEST(TransformComponentLifetime, ConnectToAnotherManagerMovesTheConnection) {
  EntityManager first, second;
  TransformComponent tc;
  tc.ConnectTo(first);
  tc.ConnectTo(second);
  EXPECT_EQ(first.destroy_listeners(), 0u);
  EXPECT_EQ(second.destroy_listeners(), 1u);
  const Entity of_first = first.Create();
  first.Create();
  const Entity of_second = second.Create();
  // Entity(1, 0) is alive in `first` only.
  EXPECT_THAT(tc.Create(Entity(1, 0), Matrix4x4::Identity()).status(),
              StatusIs(absl::StatusCode::kNotFound));
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle i, tc.Create(of_second, Matrix4x4::Identity()));
  STRATA_ASSERT_OK(first.Destroy(of_first));  // not listened to any more
  STRATA_ASSERT_OK(second.Destroy(of_second));
  EXPECT_FALSE(tc.IsValid(i));
}

TEST(TransformComponentLifetime, CreateRejectsEntitiesNotAliveInTheConnectedManager) {
  EntityManager::Options options;
  options.min_free_indices = 0;  // reuse a slot at once, to make a stale handle
  EntityManager manager(options);
  TransformComponent tc;
  tc.ConnectTo(manager);
  const Entity dead = manager.Create();
  STRATA_ASSERT_OK(manager.Destroy(dead));
  const Entity reused = manager.Create();  // same slot, next generation
  ASSERT_EQ(reused.index(), dead.index());
  const Entity never_issued(1000, 0);
  const Entity forged(reused.index(), reused.generation() + 1);  // a future generation
  for (Entity e : {dead, never_issued, forged}) {
    EXPECT_THAT(tc.Create(e, Matrix4x4::Identity()),
                StatusIs(absl::StatusCode::kNotFound, HasSubstr(e.DebugString())))
        << e;
  }
  EXPECT_EQ(tc.size(), 0u);
  // All or nothing in a batch, naming the first entity that is not alive.
  const Entity alive = manager.Create();
  std::vector<TransformHandle> out(3);
  EXPECT_THAT(tc.CreateBatch({alive, reused, dead},
                             std::vector<Matrix4x4>(3, Matrix4x4::Identity()),
                             absl::MakeSpan(out)),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("entities[2]")));
  EXPECT_EQ(tc.size(), 0u);
  EXPECT_FALSE(tc.Lookup(alive).is_valid());
  // The live ones are accepted.
  STRATA_ASSERT_OK(tc.CreateBatch({alive, reused},
                                  std::vector<Matrix4x4>(2, Matrix4x4::Identity()),
                                  absl::MakeSpan(out).first(2)));
  EXPECT_EQ(tc.size(), 2u);
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST(TransformComponentLifetime, UnconnectedComponentAcceptsAnyValidEntity) {
  TransformComponent tc;
  EXPECT_THAT(tc.Create(Entity(1000, 7), Matrix4x4::Identity()).status(), IsOk());
  EXPECT_THAT(tc.Create(Entity(), Matrix4x4::Identity()),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(TransformComponentIds, FreedIdsAreReusedOldestFirstAtTheNextGeneration) {
  TransformComponent tc;
  std::vector<TransformHandle> h;
  for (uint32_t k = 0; k < 6; ++k) {
    absl::StatusOr<TransformHandle> made = tc.Create(Entity(k, 0), Matrix4x4::Identity());
    ASSERT_THAT(made.status(), IsOk());
    h.push_back(*made);
  }
  // Freed in the order 4, 1, 3: handed out again in that order, each one generation on.
  for (size_t k : {4, 1, 3}) ASSERT_THAT(tc.Destroy(h[k]), IsOk());
  for (size_t k : {4, 1, 3}) {
    absl::StatusOr<TransformHandle> again =
        tc.Create(Entity(static_cast<uint32_t>(10 + k), 0), Matrix4x4::Identity());
    ASSERT_THAT(again.status(), IsOk());
    EXPECT_EQ(again->id(), h[k].id());
    EXPECT_EQ(again->generation(), h[k].generation() + 1);
    EXPECT_FALSE(tc.IsValid(h[k]));
    EXPECT_TRUE(tc.IsValid(*again));
  }
  // No id is free now: the next one is new.
  absl::StatusOr<TransformHandle> fresh = tc.Create(Entity(20, 0), Matrix4x4::Identity());
  ASSERT_THAT(fresh.status(), IsOk());
  EXPECT_EQ(fresh->id(), 6u);
  EXPECT_EQ(fresh->generation(), 0u);
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST(TransformComponentIds, ForgedFreeMarkedGenerationIsRejected) {
  TransformComponent tc;
  absl::StatusOr<TransformHandle> a = tc.Create(Entity(1, 0), Matrix4x4::Identity());
  absl::StatusOr<TransformHandle> b = tc.Create(Entity(2, 0), Matrix4x4::Identity());
  ASSERT_THAT(a.status(), IsOk());
  ASSERT_THAT(b.status(), IsOk());
  ASSERT_THAT(tc.Destroy(*a), IsOk());
  // A freed id's stored word is its next generation with the free bit set; a handle
  // carrying exactly that word must not pass, alone or in a batch.
  // Forged bytewise: only the component makes handles.
  static_assert(std::is_trivially_copyable_v<TransformHandle> &&
                sizeof(TransformHandle) == 2 * sizeof(uint32_t));
  const uint32_t fields[2] = {a->id(), 1u | 0x80000000u};
  TransformHandle forged;
  std::memcpy(&forged, fields, sizeof(forged));
  ASSERT_EQ(forged.id(), a->id());
  ASSERT_EQ(forged.generation(), 1u | 0x80000000u);
  EXPECT_FALSE(tc.IsValid(forged));
  EXPECT_THAT(tc.SetLocalBatch({*b, forged}, {Matrix4x4::Identity(), Matrix4x4::Identity()}),
              StatusIs(absl::StatusCode::kNotFound));
}

// Ids at or above the number issued have slots with no content (allocated, never
// written) or none at all: a handle naming one must be rejected by every entry point,
// in both modes, also after destroys and reuse (which issue no new id).
TEST(TransformComponentIds, NeverIssuedIdsAreRejected) {
  for (const auto mode : {TransformComponent::Mode::kImmediate, TransformComponent::Mode::kDeferred}) {
    SCOPED_TRACE(mode == TransformComponent::Mode::kImmediate ? "immediate" : "deferred");
    TransformComponent::Options options;
    options.mode = mode;
    options.initial_capacity = 1000;
    TransformComponent tc(options);
    std::vector<TransformHandle> made;
    for (uint32_t k = 0; k < 3; ++k) {
      STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle h, tc.Create(Entity(k, 0), Matrix4x4::Identity()));
      made.push_back(h);
    }
    ASSERT_THAT(tc.Destroy(made[1]), IsOk());  // id 1 freed, then reused below
    STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle reused,
                                tc.Create(Entity(7, 0), Matrix4x4::Identity()));
    ASSERT_EQ(reused.id(), 1u);
    auto forge = [](uint32_t id, uint32_t generation) {
      const uint32_t fields[2] = {id, generation};
      TransformHandle h;
      std::memcpy(&h, fields, sizeof(h));
      return h;
    };
    ASSERT_GE(tc.capacity(), 1000u);
    const uint32_t capacity = static_cast<uint32_t>(tc.capacity());
    for (const uint32_t id : {3u, 4u, capacity - 1, capacity, 0xFFFFFFFEu, 0xFFFFFFFFu}) {
      for (const uint32_t generation : {0u, 1u}) {
        const TransformHandle forged = forge(id, generation);
        EXPECT_FALSE(tc.IsValid(forged)) << id;
        EXPECT_FALSE(tc.SetLocal(forged, Matrix4x4::Translation(1, 0, 0))) << id;
        EXPECT_EQ(tc.entity(forged), Entity()) << id;
        EXPECT_THAT(tc.Destroy(forged), StatusIs(absl::StatusCode::kNotFound)) << id;
        EXPECT_THAT(tc.SetLocalBatch({made[0], forged},
                                     {Matrix4x4::Identity(), Matrix4x4::Identity()}),
                    StatusIs(absl::StatusCode::kNotFound))
            << id;
        EXPECT_THAT(tc.PrepareBatch({forged}).status(), StatusIs(absl::StatusCode::kNotFound))
            << id;
      }
    }
    // The issued ones still resolve; the next new id is 3, and then it is accepted.
    EXPECT_TRUE(tc.IsValid(made[0]));
    EXPECT_TRUE(tc.IsValid(reused));
    EXPECT_FALSE(tc.IsValid(made[1]));
    STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle next, tc.Create(Entity(9, 0), Matrix4x4::Identity()));
    EXPECT_EQ(next.id(), 3u);
    EXPECT_TRUE(tc.IsValid(next));
    EXPECT_TRUE(tc.SetLocal(next, Matrix4x4::Translation(2, 0, 0)));
    tc.UpdateWorld();
    EXPECT_EQ(tc.World(next), Matrix4x4::Translation(2, 0, 0));
    EXPECT_FALSE(tc.IsValid(forge(4, 0)));
    EXPECT_THAT(tc.CheckInvariants(), IsOk());
  }
}

TEST(TransformComponentSizes, ReserveGrowsOrRejectsAboveTheMaximum) {
  TransformComponent tc;
  EXPECT_EQ(tc.capacity(), 0u);
  EXPECT_THAT(tc.Reserve(0), IsOk());
  EXPECT_EQ(tc.capacity(), 0u);
  STRATA_ASSERT_OK_AND_ASSIGN(TransformHandle i, tc.Create(Entity(1, 0), Matrix4x4::Translation(3, 0, 0)));
  EXPECT_THAT(tc.Reserve(1000), IsOk());
  EXPECT_GE(tc.capacity(), 1000u);
  const size_t capacity = tc.capacity();
  EXPECT_THAT(tc.Reserve(10), IsOk());  // never shrinks
  EXPECT_EQ(tc.capacity(), capacity);
  EXPECT_EQ(tc.Local(i), Matrix4x4::Translation(3, 0, 0));  // kept across the growth
  for (size_t bad : {TransformComponent::kMaxCapacity + 1, size_t{0xFFFFFFFFu},
                     ~size_t{0}}) {
    EXPECT_THAT(tc.Reserve(bad),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("kMaxCapacity")));
    EXPECT_EQ(tc.capacity(), capacity);
  }
  EXPECT_THAT(tc.CheckInvariants(), IsOk());
}

TEST(TransformComponentSizes, MakeRejectsAnInitialCapacityAboveTheMaximum) {
  TransformComponent::Options options;
  options.initial_capacity = 100;
  absl::StatusOr<std::unique_ptr<TransformComponent>> made = TransformComponent::Make(options);
  ASSERT_THAT(made.status(), IsOk());
  EXPECT_GE((*made)->capacity(), 100u);
  options.initial_capacity = TransformComponent::kMaxCapacity + 1;
  EXPECT_THAT(TransformComponent::Make(options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("initial_capacity")));
}

// The constructor refuses it in every build mode (this runs under -c opt too), before
// allocating.
TEST(TransformComponentSizesDeathTest, ConstructorAbortsAboveTheMaximum) {
  TransformComponent::Options options;
  options.initial_capacity = ~size_t{0};
  EXPECT_DEATH(TransformComponent tc(options), "initial_capacity");
}

}  // namespace
}  // namespace strata
