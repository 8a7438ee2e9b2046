// Change detection: Filter::Changed / Added against a reference record of every write
// and add, for systems that look at staggered intervals, across compactions, and
// across the tick's wrap-around.
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <set>
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
struct Velocity {
  float v = 1;
};

class Changes : public ::testing::Test {
 protected:
  void SetUp() override {
    pos_ = *pages_.RegisterComponent<Position>("position");
    vel_ = *pages_.RegisterComponent<Velocity>("velocity");
    ASSERT_THAT(pages_.TrackChanges(pos_.id), IsOk());
  }
  std::set<Entity> ChangedSince(uint32_t since) {
    std::set<Entity> out;
    Filter f;
    f.Include(pos_).Changed(pos_, since);
    ForEachMatch(pages_, f, [&](Entity e, const Position&) { out.insert(e); }, pos_);
    return out;
  }
  std::set<Entity> AddedSince(uint32_t since) {
    std::set<Entity> out;
    Filter f;
    f.Include(pos_).Added(pos_, since);
    ForEachMatch(pages_, f, [&](Entity e, const Position&) { out.insert(e); }, pos_);
    return out;
  }

  EntityManager manager_;
  EntityPages pages_{manager_};
  Component<Position> pos_;
  Component<Velocity> vel_;
};

TEST_F(Changes, WritableWalksMarkConstWalksDoNot) {
  std::vector<Entity> e(100);
  manager_.CreateBatch(absl::MakeSpan(e));
  ASSERT_THAT(pages_.Add(absl::MakeConstSpan(e), pos_, Position{}), IsOk());
  const uint32_t t0 = pages_.tick();
  EXPECT_EQ(AddedSince(EntityPages::kNeverRan).size(), 100u);
  EXPECT_EQ(ChangedSince(t0).size(), 0u);  // nothing after t0 yet
  pages_.AdvanceTick();
  Filter all;
  all.Include(pos_);
  ForEachMatch(pages_, all, [](const Position&) {}, pos_);
  EXPECT_EQ(ChangedSince(t0).size(), 0u);
  // One entity in three has velocity: a writable walk over those marks only them.
  for (size_t i = 0; i < e.size(); i += 3) ASSERT_THAT(pages_.Add(e[i], vel_, Velocity{}), IsOk());
  Filter moving;
  moving.Include(pos_).Include(vel_);
  ForEachMatch(pages_, moving, [](Position& p, const Velocity& v) { p.x += v.v; }, pos_, vel_);
  EXPECT_EQ(ChangedSince(t0).size(), 34u);
  EXPECT_EQ(AddedSince(t0).size(), 0u);
  // MarkChanged counts (after a write through TryGet, which does not by itself).
  const uint32_t t1 = pages_.tick();
  pages_.AdvanceTick();
  pages_.MarkChanged(e[1], pos_.id);
  pages_.TryGet(e[2], pos_)->x = 5;
  pages_.MarkChanged(e[2], pos_.id);
  pages_.TryGet(e[4], pos_)->x = 5;
  EXPECT_EQ(ChangedSince(t1), (std::set<Entity>{e[1], e[2]}));
  EXPECT_TRUE(pages_.Changed(e[2], pos_.id, t1));
  EXPECT_FALSE(pages_.Changed(e[4], pos_.id, t1));
  // An untracked type reports nothing changed (except to a first run).
  EXPECT_EQ(pages_.ChangedMask(vel_.id, 0, t0), 0u);
  EXPECT_EQ(pages_.ChangedMask(vel_.id, 0, EntityPages::kNeverRan), pages_.page_masks(vel_.id)[0]);
}

// The reference: per entity, the ticks of its position's last write and add.
struct Reference {
  std::map<Entity, uint32_t> written;
  std::map<Entity, uint32_t> added;
  std::set<Entity> Since(const std::map<Entity, uint32_t>& ticks, uint32_t since) const {
    std::set<Entity> out;
    for (const auto& [e, t] : ticks) {
      if (since == EntityPages::kNeverRan || static_cast<int32_t>(t - since) > 0) out.insert(e);
    }
    return out;
  }
};

TEST_F(Changes, StaggeredSystemsMissNoWriteAcrossCompactions) {
  std::mt19937 rng(9);
  Reference ref;
  std::vector<Entity> live;
  // Systems that look every frame, every 7th, once after 100 frames, and one that
  // starts late (its first run sees everything).
  struct System {
    int period;
    int first;
    uint32_t last = EntityPages::kNeverRan;
  };
  std::vector<System> systems = {{1, 0}, {7, 3}, {100, 100}, {13, 40}};
  size_t seen = 0;
  size_t moved = 0;
  for (int frame = 0; frame < 160; ++frame) {
    const uint32_t now = pages_.tick();
    // Some entities come, some go, some gain or lose a position.
    for (int k = 0; k < 40; ++k) {
      const Entity e = manager_.Create();
      live.push_back(e);
      if (rng() % 2) {
        ASSERT_THAT(pages_.Add(e, pos_, Position{}), IsOk());
        ref.written[e] = ref.added[e] = now;
      }
      if (rng() % 3 == 0) {
        ASSERT_THAT(pages_.Add(e, vel_, Velocity{}), IsOk());
      }
    }
    for (int k = 0; k < 15 && !live.empty(); ++k) {
      const size_t i = rng() % live.size();
      const Entity e = live[i];
      const int action = static_cast<int>(rng() % 4);
      if (action == 0) {
        ASSERT_THAT(manager_.Destroy(e), IsOk());
        ref.written.erase(e);
        ref.added.erase(e);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (action == 1 && ref.written.count(e)) {
        ASSERT_THAT(pages_.Remove(e, pos_), IsOk());
        ref.written.erase(e);
        ref.added.erase(e);
      } else if (action == 2 && ref.written.count(e)) {
        pages_.TryGet(e, pos_)->x += 1;
        pages_.MarkChanged(e, pos_.id);
        ref.written[e] = now;
      }
    }
    // A writable walk over the moving entities, in parallel half the time.
    if (frame % 5 == 0) {
      Filter moving;
      moving.Include(pos_).Include(vel_);
      if (frame % 10 == 0) {
        ParallelForEachMatch(pages_, moving, [](Position& p, const Velocity&) { p.x += 1; }, pos_, vel_);
      } else {
        ForEachMatch(pages_, moving, [](Position& p, const Velocity&) { p.x += 1; }, pos_, vel_);
      }
      for (auto& [e, t] : ref.written) {
        if (pages_.Has(e, vel_.id)) t = now;
      }
    }
    // The systems look.
    for (System& s : systems) {
      if (frame < s.first || (frame - s.first) % s.period != 0) continue;
      const std::set<Entity> changed = ChangedSince(s.last);
      ASSERT_EQ(changed, ref.Since(ref.written, s.last)) << "frame " << frame;
      ASSERT_EQ(AddedSince(s.last), ref.Since(ref.added, s.last)) << "frame " << frame;
      seen += changed.size();
      s.last = now;
    }
    // A bounded compaction moves entities, and their histories with them.
    moved += pages_.Compact(frame % 3 == 0 ? EntityPages::kUnbounded : 97);
    pages_.ReleaseEmptyPages();
    pages_.AdvanceTick();
  }
  // The comparisons were not vacuous, and compaction did move entities.
  EXPECT_GT(seen, 5000u);
  EXPECT_GT(moved, 1000u);
}

TEST_F(Changes, TheTickWrapsAroundAndOldHistoryIsClamped) {
  std::vector<Entity> e(64);
  manager_.CreateBatch(absl::MakeSpan(e));
  ASSERT_THAT(pages_.Add(absl::MakeConstSpan(e), pos_, Position{}), IsOk());
  // Close to the wrap: write half, cross zero, write the other half.
  pages_.AdvanceTick(0xFFFFFFF0u);
  const uint32_t before_wrap = pages_.tick();
  for (size_t i = 0; i < 32; ++i) pages_.MarkChanged(e[i], pos_.id);
  pages_.AdvanceTick(0x20);  // past 2^32: the tick is small again, never 0
  EXPECT_NE(pages_.tick(), EntityPages::kNeverRan);
  EXPECT_LT(pages_.tick(), before_wrap);
  const uint32_t after_wrap = pages_.tick();
  for (size_t i = 32; i < 64; ++i) pages_.MarkChanged(e[i], pos_.id);
  EXPECT_EQ(ChangedSince(before_wrap - 1).size(), 64u);
  EXPECT_EQ(ChangedSince(before_wrap).size(), 32u);
  EXPECT_EQ(ChangedSince(after_wrap - 1).size(), 32u);
  // A system that last ran more than kMaxTickAge ago: the clamped history still
  // reports the recent writes, and nothing older than the clamp.
  pages_.AdvanceTick(EntityPages::kMaxTickAge + 5);
  const uint32_t late = pages_.tick();
  pages_.MarkChanged(e[0], pos_.id);
  EXPECT_EQ(ChangedSince(after_wrap), (std::set<Entity>{e[0]}));
  EXPECT_EQ(ChangedSince(late - 1), (std::set<Entity>{e[0]}));
  EXPECT_EQ(ChangedSince(EntityPages::kNeverRan).size(), 64u);
}

TEST_F(Changes, TrackingStartsWithEverythingAddedNow) {
  std::vector<Entity> e(10);
  manager_.CreateBatch(absl::MakeSpan(e));
  ASSERT_THAT(pages_.Add(absl::MakeConstSpan(e), vel_, Velocity{}), IsOk());
  pages_.AdvanceTick();
  const uint32_t before = pages_.tick() - 1;
  ASSERT_THAT(pages_.TrackChanges(vel_.id), IsOk());
  EXPECT_TRUE(pages_.tracks_changes(vel_.id));
  EXPECT_TRUE(pages_.Added(e[3], vel_.id, before));
  EXPECT_FALSE(pages_.Added(e[3], vel_.id, pages_.tick()));
  EXPECT_FALSE(pages_.TrackChanges(ComponentId{99}).ok());
}

}  // namespace
}  // namespace strata
