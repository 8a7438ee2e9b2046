// Structural changes inside a walk abort at the call, with a message, in every build
// mode (the test runs in -c opt too); outside a walk the same calls work.
#include <cstddef>
#include <vector>

#include "absl/types/span.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "gtest/gtest.h"
#include "iteration/components.h"
#include "iteration/entity_pages.h"
#include "iteration/filter.h"
#include "iteration/parallel_query.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;

struct Position {
  float x = 0;
};
struct Health {
  float hp = 0;
};

class Walked : public ::testing::Test {
 protected:
  void SetUp() override {
    pos_ = *pages_.RegisterComponent<Position>("position");
    health_ = *pages_.RegisterComponent<Health>("health");
    entities_.resize(100);
    manager_.CreateBatch(absl::MakeSpan(entities_));
    for (Entity e : entities_) ASSERT_THAT(pages_.Add(e, pos_, Position{1}), IsOk());
    all_.Include(pos_);
  }
  // Runs `change` from inside a ForEachMatch callback, at the first entity.
  template <typename Change>
  void InsideWalk(Change change) {
    bool done = false;
    ForEachMatch(pages_, all_, [&](Entity, Position&) {
      if (!done) {
        done = true;
        change();
      }
    }, pos_);
  }

  EntityManager manager_;
  EntityPages pages_{manager_};
  Component<Position> pos_;
  Component<Health> health_;
  std::vector<Entity> entities_;
  Filter all_;
};

using WalkedDeathTest = Walked;

TEST_F(WalkedDeathTest, EveryStructuralChangeAbortsAtTheCall) {
  const char* kWalk = "inside a walk of the store";
  EXPECT_DEATH(InsideWalk([&] { (void)pages_.Add(entities_[5], health_, Health{}); }),
               "EntityPages::Add inside a walk");
  // A later entity of the same page: it would have been handed out with a stale handle.
  EXPECT_DEATH(InsideWalk([&] { (void)pages_.Remove(entities_[7], pos_); }),
               "EntityPages::Remove inside a walk");
  EXPECT_DEATH(InsideWalk([&] { (void)pages_.Add(absl::MakeConstSpan(entities_), health_, Health{}); }),
               kWalk);
  EXPECT_DEATH(InsideWalk([&] { (void)pages_.Remove(absl::MakeConstSpan(entities_), pos_); }), kWalk);
  EXPECT_DEATH(InsideWalk([&] { (void)pages_.Delete(entities_[9]); }), "EntityPages::Delete inside");
  // Destroying an entity of the store's manager reaches the store's destroy listener.
  EXPECT_DEATH(InsideWalk([&] { (void)manager_.Destroy(entities_[9]); }), "DeleteEntities");
  EXPECT_DEATH(InsideWalk([&] {
                 std::vector<Entity> fresh(3);
                 manager_.CreateBatch(absl::MakeSpan(fresh));
                 ComponentBundle bundle;
                 bundle.Set(pos_, Position{2});
                 (void)pages_.CreateFromBundle(fresh, bundle);
               }),
               "CreateFromBundle inside");
  EXPECT_DEATH(InsideWalk([&] { (void)pages_.RegisterComponent<float>("late"); }), kWalk);
  EXPECT_DEATH(InsideWalk([&] { pages_.ReleaseEmptyPages(); }), kWalk);
  // The parallel walk opens its scope on the calling thread, for every worker.
  EXPECT_DEATH(ParallelForEachMatch(pages_, all_,
                                    [&](Entity e, Position&) {
                                      if (e == entities_[0]) (void)pages_.Remove(e, pos_);
                                    },
                                    pos_),
               kWalk);
  // A job system's own walk, through WalkScope.
  EXPECT_DEATH(
      {
        EntityPages::WalkScope scope(pages_);
        (void)pages_.Add(entities_[1], health_, Health{});
      },
      kWalk);
}

TEST_F(Walked, WritesInPlaceAndCreatingHandlesAreAllowedAndChangesWorkAfterTheWalk) {
  size_t visited = 0;
  ForEachMatch(pages_, all_, [&](Entity e, Position& p) {
    p.x += 1;
    // Reading any entity and writing through TryGet are not structural.
    auto* other = static_cast<Position*>(pages_.TryGet(entities_[99 - visited], pos_.id));
    ASSERT_NE(other, nullptr);
    EXPECT_TRUE(pages_.walking());
    ++visited;
    (void)e;
  }, pos_);
  EXPECT_EQ(visited, entities_.size());
  EXPECT_FALSE(pages_.walking());
  {
    // Scopes nest; the store is free again once the last one closes.
    EntityPages::WalkScope outer(pages_);
    {
      EntityPages::WalkScope inner(pages_);
      EXPECT_TRUE(pages_.walking());
    }
    EXPECT_TRUE(pages_.walking());
  }
  EXPECT_FALSE(pages_.walking());
  ASSERT_THAT(pages_.Remove(entities_[7], pos_), IsOk());
  ASSERT_THAT(pages_.Add(entities_[7], health_, Health{3}), IsOk());
  ASSERT_THAT(manager_.Destroy(entities_[9]), IsOk());
  EXPECT_EQ(CountMatches(pages_, all_), entities_.size() - 2);
}

}  // namespace
}  // namespace strata
