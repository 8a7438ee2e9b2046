#include "schedule/internal/plan.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/random.h"

namespace strata::schedule_internal {
namespace {

using ::testing::HasSubstr;

NodeSpec Node(std::string name, std::vector<uint32_t> reads, std::vector<uint32_t> writes,
              std::vector<uint32_t> commands = {}) {
  NodeSpec s;
  s.name = std::move(name);
  s.reads = std::move(reads);
  s.writes = std::move(writes);
  s.commands = std::move(commands);
  return s;
}

size_t CountSyncs(const Plan& plan) {
  return static_cast<size_t>(std::count_if(plan.steps.begin(), plan.steps.end(),
                                           [](const Step& s) { return s.kind == Step::kSync; }));
}

TEST(MakePlan, EmptyScheduleHasNoSteps) {
  absl::StatusOr<Plan> plan = MakePlan({});
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->steps.empty());
  EXPECT_TRUE(plan->order.empty());
}

TEST(MakePlan, IndependentSystemsShareOneSegmentWithNoEdges) {
  absl::StatusOr<Plan> plan = MakePlan({Node("a", {0}, {1}), Node("b", {0}, {2}), Node("c", {}, {3})});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->steps.size(), 1u);
  EXPECT_EQ(plan->steps[0].segment.systems, (std::vector<size_t>{0, 1, 2}));
  for (const auto& p : plan->steps[0].segment.preds) EXPECT_TRUE(p.empty());
  EXPECT_TRUE(plan->conflicts.empty());
}

TEST(MakePlan, ConflictsAreOrderedInRunOrder) {
  absl::StatusOr<Plan> plan =
      MakePlan({Node("write", {}, {0}), Node("read", {0}, {}), Node("other", {}, {1})});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->conflicts.size(), 1u);
  EXPECT_EQ(plan->conflicts[0], (Conflict{0, 1, 0, Conflict::kReadWrite}));
  EXPECT_EQ(plan->steps[0].segment.preds[1], (std::vector<size_t>{0}));
  // Same stage, no constraint: reported.
  EXPECT_EQ(plan->ambiguities.size(), 1u);
}

TEST(MakePlan, ConstraintsReorderAndSettleAmbiguity) {
  NodeSpec read = Node("read", {0}, {});
  read.before = {"write"};
  absl::StatusOr<Plan> plan = MakePlan({Node("write", {}, {0}), read});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->order, (std::vector<size_t>{1, 0}));
  EXPECT_TRUE(plan->ambiguities.empty());
  EXPECT_EQ(plan->conflicts[0].first, 1u);
}

TEST(MakePlan, SyncPointGoesJustBeforeTheFirstReaderOfCommands) {
  absl::StatusOr<Plan> plan = MakePlan({Node("spawn", {}, {}, {5}), Node("unrelated", {1}, {2}),
                                        Node("reader", {5}, {}), Node("late", {5}, {})});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->steps.size(), 3u);
  EXPECT_EQ(plan->steps[0].segment.systems, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(plan->steps[1].kind, Step::kSync);
  EXPECT_EQ(plan->steps[1].reader, 2u);
  EXPECT_EQ(plan->steps[1].writers, (std::vector<size_t>{0}));
  EXPECT_EQ(plan->steps[2].segment.systems, (std::vector<size_t>{2, 3}));
}

TEST(MakePlan, PendingCommandsAtTheEndGetAFinalSync) {
  absl::StatusOr<Plan> plan = MakePlan({Node("a", {}, {0}, {3})});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->steps.size(), 2u);
  EXPECT_EQ(plan->steps[1].kind, Step::kSync);
  EXPECT_EQ(plan->steps[1].reader, SIZE_MAX);
}

TEST(MakePlan, ExclusiveSystemRunsAlone) {
  NodeSpec ex = Node("compact", {}, {});
  ex.exclusive = true;
  absl::StatusOr<Plan> plan = MakePlan({Node("a", {}, {0}), ex, Node("b", {}, {1})});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->steps.size(), 3u);
  EXPECT_TRUE(plan->steps[1].segment.exclusive);
  EXPECT_EQ(plan->steps[1].segment.systems, (std::vector<size_t>{1}));
}

TEST(MakePlan, WriteAfterAChangeReadStartsANewTick) {
  NodeSpec watcher = Node("watch", {}, {});
  watcher.changed = {0};
  absl::StatusOr<Plan> plan = MakePlan({watcher, Node("writer", {}, {0})});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->steps.size(), 2u);
  EXPECT_EQ(plan->steps[1].boundary, Step::kTick);
}

TEST(MakePlan, CycleNamesItsSystems) {
  NodeSpec a = Node("physics", {}, {0});
  a.after = {"input"};
  NodeSpec b = Node("input", {}, {1});
  b.after = {"ai"};
  NodeSpec c = Node("ai", {}, {2});
  c.after = {"physics"};
  absl::StatusOr<Plan> plan = MakePlan({a, b, c, Node("free", {}, {})});
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("cycle"));
  for (const char* name : {"\"physics\"", "\"input\"", "\"ai\""}) {
    EXPECT_THAT(std::string(plan.status().message()), HasSubstr(name));
  }
  EXPECT_THAT(std::string(plan.status().message()), ::testing::Not(HasSubstr("free")));
}

TEST(MakePlan, ConstraintAgainstStageOrderIsACycle) {
  NodeSpec early = Node("early", {}, {});
  NodeSpec late = Node("late", {}, {});
  late.stage = 1;
  late.before = {"early"};
  absl::StatusOr<Plan> plan = MakePlan({early, late});
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("stage order"));
}

TEST(MakePlan, BadNamesAreErrors) {
  NodeSpec a = Node("a", {}, {});
  a.after = {"nobody"};
  EXPECT_THAT(std::string(MakePlan({a}).status().message()), HasSubstr("\"nobody\""));
  EXPECT_FALSE(MakePlan({Node("x", {}, {}), Node("x", {}, {})}).ok());
  EXPECT_FALSE(MakePlan({Node("", {}, {})}).ok());
  NodeSpec self = Node("self", {}, {});
  self.before = {"self"};
  EXPECT_FALSE(MakePlan({self}).ok());
}

// ---- The brute-force reference on random system sets. ----

struct Sets {
  std::set<uint32_t> reads, writes, changed, commands;
  bool exclusive;
};
Sets SetsOf(const NodeSpec& s) {
  Sets r{{s.reads.begin(), s.reads.end()}, {s.writes.begin(), s.writes.end()},
         {s.changed.begin(), s.changed.end()}, {s.commands.begin(), s.commands.end()},
         s.exclusive};
  return r;
}
bool Meets(const std::set<uint32_t>& a, const std::set<uint32_t>& b) {
  for (uint32_t x : a) {
    if (b.count(x) != 0) return true;
  }
  return false;
}
std::set<uint32_t> Touched(const Sets& s) {
  std::set<uint32_t> t = s.reads;
  t.insert(s.writes.begin(), s.writes.end());
  t.insert(s.changed.begin(), s.changed.end());
  return t;
}
// Data conflict: the two may not overlap in time.
bool DataConflict(const Sets& a, const Sets& b) {
  if (a.exclusive || b.exclusive) return true;
  return Meets(a.writes, Touched(b)) || Meets(b.writes, Touched(a));
}
bool AnyConflict(const Sets& a, const Sets& b) {
  return DataConflict(a, b) || Meets(a.commands, Touched(b)) || Meets(b.commands, Touched(a)) ||
         Meets(a.commands, b.commands);
}

std::vector<NodeSpec> RandomSpecs(testing::Random& rng) {
  const size_t n = 1 + rng.UniformIndex(12);
  const uint32_t keys = 1 + static_cast<uint32_t>(rng.UniformIndex(6));
  std::vector<NodeSpec> specs(n);
  size_t stage = 0;
  for (size_t i = 0; i < n; ++i) {
    NodeSpec& s = specs[i];
    s.name = absl::StrCat("s", i);
    if (rng.Bernoulli(0.15)) ++stage;
    s.stage = stage;
    for (uint32_t k = 0; k < keys; ++k) {
      const uint64_t pick = rng.UniformIndex(10);
      if (pick == 0) s.writes.push_back(k);
      if (pick == 1) s.reads.push_back(k);
      if (pick == 2) s.changed.push_back(k);
      if (rng.Bernoulli(0.12)) s.commands.push_back(k);
    }
    s.exclusive = rng.Bernoulli(0.06);
    s.main_thread = rng.Bernoulli(0.2);
  }
  const size_t constraints = rng.UniformIndex(n + 1);
  for (size_t c = 0; c < constraints; ++c) {
    const size_t a = rng.UniformIndex(n), b = rng.UniformIndex(n);
    if (a == b) continue;
    (rng.Bernoulli(0.5) ? specs[a].after : specs[a].before).push_back(specs[b].name);
  }
  return specs;
}

TEST(MakePlan, MatchesTheBruteForceReferenceOnRandomSystemSets) {
  testing::Random rng(testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  size_t planned = 0, cycles = 0, syncs = 0;
  for (int round = 0; round < 3000; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    const std::vector<NodeSpec> specs = RandomSpecs(rng);
    const size_t n = specs.size();
    // Ordering edges: constraints, and stages.
    std::vector<std::vector<bool>> constraint(n, std::vector<bool>(n, false));
    std::vector<std::vector<bool>> edge(n, std::vector<bool>(n, false));
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        for (const std::string& a : specs[i].after) {
          if (a == specs[j].name) constraint[j][i] = true;
        }
        for (const std::string& b : specs[i].before) {
          if (b == specs[j].name) constraint[i][j] = true;
        }
      }
    }
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) edge[i][j] = constraint[i][j] || specs[j].stage > specs[i].stage;
    }
    auto closure = [n](std::vector<std::vector<bool>> r) {
      for (size_t k = 0; k < n; ++k)
        for (size_t i = 0; i < n; ++i)
          for (size_t j = 0; j < n; ++j)
            if (r[i][k] && r[k][j]) r[i][j] = true;
      return r;
    };
    const auto reach = closure(edge);
    const auto creach = closure(constraint);
    bool cyclic = false;
    for (size_t i = 0; i < n; ++i) cyclic = cyclic || reach[i][i];

    absl::StatusOr<Plan> plan = MakePlan(specs);
    ASSERT_EQ(plan.ok(), !cyclic) << plan.status();
    if (!plan.ok()) {
      ++cycles;
      EXPECT_THAT(std::string(plan.status().message()), HasSubstr("cycle"));
      continue;
    }
    ++planned;
    std::vector<Sets> sets;
    for (const NodeSpec& s : specs) sets.push_back(SetsOf(s));
    const std::vector<size_t>& pos = plan->position;
    // The run order honours every ordering edge.
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j)
        if (edge[i][j]) {
          EXPECT_LT(pos[i], pos[j]) << specs[i].name << " before " << specs[j].name;
        }

    // Conflicts and ambiguities against the naive pair loop.
    std::set<std::pair<size_t, size_t>> want_conflicts, want_ambiguous, got_conflicts, got_ambiguous;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        if (pos[i] >= pos[j] || !AnyConflict(sets[i], sets[j])) continue;
        want_conflicts.insert({i, j});
        if (specs[i].stage == specs[j].stage && !creach[i][j] && !creach[j][i]) {
          want_ambiguous.insert({i, j});
        }
      }
    }
    for (const Conflict& c : plan->conflicts) got_conflicts.insert({c.first, c.second});
    for (const Conflict& c : plan->ambiguities) got_ambiguous.insert({c.first, c.second});
    EXPECT_EQ(got_conflicts, want_conflicts);
    EXPECT_EQ(got_ambiguous, want_ambiguous);

    // Steps: segments concatenate to the run order; where each system runs.
    std::vector<size_t> step_of(n, SIZE_MAX), local(n, SIZE_MAX);
    std::vector<size_t> concatenated;
    for (size_t k = 0; k < plan->steps.size(); ++k) {
      const Step& st = plan->steps[k];
      if (st.kind == Step::kSync) {
        EXPECT_FALSE(st.writers.empty());
        continue;
      }
      const Segment& seg = st.segment;
      ASSERT_FALSE(seg.systems.empty());
      ASSERT_EQ(seg.preds.size(), seg.systems.size());
      if (seg.exclusive) {
        EXPECT_EQ(seg.systems.size(), 1u);
      }
      for (size_t l = 0; l < seg.systems.size(); ++l) {
        const size_t i = seg.systems[l];
        if (!seg.exclusive) {
          EXPECT_FALSE(specs[i].exclusive);
        }
        step_of[i] = k;
        local[i] = l;
        concatenated.push_back(i);
        for (size_t p : seg.preds[l]) EXPECT_LT(p, l);
      }
    }
    EXPECT_EQ(concatenated, plan->order);
    auto ordered = [&](size_t a, size_t b) {  // a finishes before b starts
      if (step_of[a] != step_of[b]) return step_of[a] < step_of[b];
      const Segment& seg = plan->steps[step_of[a]].segment;
      std::vector<bool> before(seg.systems.size(), false);
      before[local[a]] = true;
      for (size_t l = local[a] + 1; l <= local[b]; ++l) {
        for (size_t p : seg.preds[l]) before[l] = before[l] || before[p];
      }
      return static_cast<bool>(before[local[b]]);
    };
    auto sync_between = [&](size_t a, size_t b) {
      for (size_t k = step_of[a] + 1; k < step_of[b]; ++k) {
        if (plan->steps[k].kind == Step::kSync) return true;
      }
      return false;
    };
    // Every pair that may not overlap is ordered; every constraint is kept; every command
    // is played back before the next system that touches what it changes.
    std::vector<std::pair<size_t, size_t>> intervals;  // (writer pos, reader pos)
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = 0; b < n; ++b) {
        if (pos[a] >= pos[b]) continue;
        if (DataConflict(sets[a], sets[b]) || constraint[a][b]) {
          EXPECT_TRUE(ordered(a, b)) << specs[a].name << " must finish before " << specs[b].name;
        }
        if (Meets(sets[a].commands, Touched(sets[b])) ||
            (!sets[a].commands.empty() && sets[b].exclusive)) {
          EXPECT_TRUE(sync_between(a, b)) << specs[a].name << "'s commands before " << specs[b].name;
          intervals.push_back({pos[a], pos[b]});
        }
        // A write after a change read in one segment would share its tick.
        if (step_of[a] == step_of[b]) {
          EXPECT_FALSE(Meets(sets[a].changed, sets[b].writes));
        }
      }
    }
    // No sync point that no reader needs: as many as the fewest that stab every
    // (writer, reader] interval (the greedy by right end is optimal), plus one at the end
    // when commands are left.
    std::sort(intervals.begin(), intervals.end(),
              [](auto x, auto y) { return x.second < y.second; });
    size_t needed = 0;
    size_t last = 0;
    bool any = false;
    for (auto [w, r] : intervals) {
      if (any && last > w) continue;  // a sync before position `last` (> w) serves it
      last = r;
      any = true;
      ++needed;
    }
    size_t mid_syncs = 0;
    bool end_sync = false;
    for (const Step& st : plan->steps) {
      if (st.kind != Step::kSync) continue;
      if (st.reader == SIZE_MAX) {
        end_sync = true;
      } else {
        ++mid_syncs;
      }
    }
    EXPECT_EQ(mid_syncs, needed);
    // Commands recorded after the last sync point (or with none) need the one at the end.
    size_t last_sync_step = 0;
    for (size_t k = 0; k < plan->steps.size(); ++k) {
      if (plan->steps[k].kind == Step::kSync && plan->steps[k].reader != SIZE_MAX) {
        last_sync_step = k + 1;
      }
    }
    bool left = false;
    for (size_t i = 0; i < n; ++i) left = left || (!sets[i].commands.empty() && step_of[i] >= last_sync_step);
    EXPECT_EQ(end_sync, left);
    syncs += CountSyncs(*plan);
  }
  // The generator reaches every case.
  EXPECT_GT(planned, 1000u);
  EXPECT_GT(cycles, 50u);
  EXPECT_GT(syncs, 500u);
}

}  // namespace
}  // namespace strata::schedule_internal
