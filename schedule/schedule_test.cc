#include "schedule/schedule.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <cstdint>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "iteration/command_buffer.h"
#include "iteration/entity_pages.h"
#include "iteration/filter.h"
#include "iteration/parallel_query.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::testing::HasSubstr;

struct Val {
  uint32_t v;
};

// A store with kKeys components of type Val ("k0".."k3") and `n` entities that have
// each with a pattern by index.
constexpr uint32_t kKeys = 4;
struct Store {
  explicit Store(size_t n) {
    for (uint32_t k = 0; k < kKeys; ++k) {
      c[k] = *pages.RegisterComponent<Val>(absl::StrCat("k", k));
    }
    std::vector<Entity> batch(n);
    manager.CreateBatch(absl::MakeSpan(batch));
    for (size_t i = 0; i < n; ++i) {
      for (uint32_t k = 0; k < kKeys; ++k) {
        if ((i + k) % 3 != 0) STRATA_CHECK(pages.Add(batch[i], c[k], Val{static_cast<uint32_t>(i * 7 + k)}).ok(), "add");
      }
    }
  }
  // Every (entity, key, value), sorted: the whole state.
  std::vector<std::tuple<uint64_t, uint32_t, uint32_t>> Dump() const {
    std::vector<std::tuple<uint64_t, uint32_t, uint32_t>> out;
    for (uint32_t k = 0; k < kKeys; ++k) {
      Filter f;
      f.Include(c[k]);
      ForEachMatch(pages, f, [&](Entity e, const Val& v) { out.emplace_back(e.bits(), k, v.v); }, c[k]);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  EntityManager manager;
  EntityPages pages{manager};
  Component<Val> c[kKeys];
};

TEST(Schedule, RunsSystemsInDeclarationOrderOnOneThread) {
  Store store(10);
  std::vector<std::string> ran;
  Schedule schedule(store.manager, store.pages);
  for (const char* name : {"a", "b", "c"}) {
    schedule.Add(System(name, [&ran, name](SystemContext& ctx) {
      EXPECT_EQ(ctx.name(), name);
      EXPECT_FALSE(ctx.parallel());
      ran.push_back(name);
    }));
  }
  STRATA_ASSERT_OK(schedule.Run());
  EXPECT_EQ(ran, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_THAT(schedule.Describe(), HasSubstr("segment 1"));
  EXPECT_EQ(schedule.last_frame().ran, (std::vector<uint8_t>{1, 1, 1}));
}

TEST(Schedule, EmptyScheduleRuns) {
  Store store(0);
  Schedule schedule(store.manager, store.pages, {.threads = 2});
  STRATA_ASSERT_OK(schedule.Run());
  EXPECT_EQ(schedule.last_frame().systems_ns, 0.0);
}

TEST(Schedule, BuildErrorsNameTheSystems) {
  Store store(1);
  Schedule cyclic(store.manager, store.pages);
  cyclic.Add(System("x", [](SystemContext&) {}).After("y"));
  cyclic.Add(System("y", [](SystemContext&) {}).After("x"));
  EXPECT_THAT(cyclic.Build(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                HasSubstr("\"x\" -> \"y\" -> \"x\"")));
  EXPECT_FALSE(cyclic.Run().ok());
  EXPECT_EQ(cyclic.Describe(), "");

  Schedule unregistered(store.manager, store.pages);
  unregistered.Add(System("z", [](SystemContext&) {}).Reads(ComponentId{77}));
  EXPECT_THAT(unregistered.Build(), testing::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"z\"")));

  Schedule strict(store.manager, store.pages, {.strict_order = true});
  strict.Add(System("w1", [](SystemContext&) {}).Writes(store.c[0]));
  strict.Add(System("w2", [](SystemContext&) {}).Writes(store.c[0]));
  EXPECT_THAT(strict.Build(), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                HasSubstr("\"w1\" / \"w2\" (k0)")));
  Schedule lenient(store.manager, store.pages);
  lenient.Add(System("w1", [](SystemContext&) {}).Writes(store.c[0]));
  lenient.Add(System("w2", [](SystemContext&) {}).Writes(store.c[0]));
  STRATA_ASSERT_OK(lenient.Build());
  EXPECT_EQ(lenient.ambiguities(), (std::vector<std::string>{"\"w1\" / \"w2\" (k0)"}));
  EXPECT_THAT(lenient.Describe(), HasSubstr("ambiguous"));
}

TEST(Schedule, SystemErrorStopsTheFrameAndNamesTheSystem) {
  Store store(1);
  int later = 0;
  Schedule schedule(store.manager, store.pages);
  schedule.Add(System("fails", [](SystemContext&) { return absl::DataLossError("boom"); }).Exclusive());
  schedule.Add(System("later", [&](SystemContext&) { ++later; }));
  EXPECT_THAT(schedule.Run(), testing::StatusIs(absl::StatusCode::kDataLoss,
                                                HasSubstr("system \"fails\": boom")));
  EXPECT_EQ(later, 0);
}

TEST(Schedule, CommandsAreVisibleToTheNextReaderInTheSameFrame) {
  for (int threads : {1, 2}) {
    Store store(0);
    size_t seen = 0;
    Schedule schedule(store.manager, store.pages, {.threads = threads});
    schedule.Add(System("spawn", [&](SystemContext& ctx) {
                   ComponentBundle bundle;
                   bundle.Set(store.c[0], Val{5});
                   for (int i = 0; i < 40; ++i) ctx.command_buffer().Create(bundle);
                 }).Commands(store.c[0]));
    schedule.Add(System("count", [&](SystemContext&) {
                   Filter f;
                   f.Include(store.c[0]);
                   seen = CountMatches(store.pages, f);
                 }).Reads(store.c[0]));
    STRATA_ASSERT_OK(schedule.Run());
    EXPECT_EQ(seen, 40u);
    EXPECT_EQ(schedule.last_frame().played.applied, 40u);
    EXPECT_THAT(schedule.Describe(), HasSubstr("sync point: play back the commands of spawn; \"count\" touches k0"));
    STRATA_ASSERT_OK(schedule.Run());
    EXPECT_EQ(seen, 80u);
  }
}

TEST(Schedule, MainThreadSystemsRunOnTheCallingThread) {
  Store store(100);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> main_runs{0};
  Schedule schedule(store.manager, store.pages, {.threads = 4});
  for (int i = 0; i < 6; ++i) {
    schedule.Add(System(absl::StrCat("worker", i), [](SystemContext& ctx) {
      EXPECT_TRUE(ctx.parallel());
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }));
    schedule.Add(System(absl::StrCat("main", i), [&](SystemContext&) {
                   EXPECT_EQ(std::this_thread::get_id(), caller);
                   main_runs.fetch_add(1);
                 }).MainThread());
  }
  for (int frame = 0; frame < 20; ++frame) STRATA_ASSERT_OK(schedule.Run());
  EXPECT_EQ(main_runs.load(), 6 * 20);
}

TEST(Schedule, RunConditionsSkipAndKeepLastRun) {
  Store store(10);
  int frame = 0, runs = 0;
  Schedule schedule(store.manager, store.pages);
  schedule.Add(System("odd", [&](SystemContext&) { ++runs; }).RunIf([&] { return frame % 2 == 1; }));
  uint32_t last_run = EntityPages::kNeverRan;
  for (frame = 0; frame < 6; ++frame) {
    STRATA_ASSERT_OK(schedule.Run());
    EXPECT_EQ(schedule.last_frame().ran[0], frame % 2 == 1 ? 1 : 0);
    if (frame % 2 == 0) {
      EXPECT_EQ(schedule.last_run(0), last_run);  // skipped: unchanged
    } else {
      EXPECT_GT(schedule.last_run(0), last_run);
      last_run = schedule.last_run(0);
    }
  }
  EXPECT_EQ(runs, 3);
}

// A watcher with ReadsChanged sees each write exactly once, whether the writer runs
// before or after it in the frame, and however rarely either runs.
TEST(Schedule, ChangedQueriesSeeEveryWriteOnceFromTheSystemsLastRun) {
  for (bool writer_first : {true, false}) {
    for (int threads : {1, 3}) {
      SCOPED_TRACE(absl::StrCat("writer_first ", writer_first, " threads ", threads));
      Store store(200);
      STRATA_ASSERT_OK(store.pages.TrackChanges(store.c[1].id));
      int frame = 0;
      int writes_since_watch = 1;  // the first run sees everything (added)
      size_t expected_total = 0, seen_total = 0;
      Filter has1;
      has1.Include(store.c[1]);
      const size_t with1 = CountMatches(store.pages, has1);
      System writer("writer", [&](SystemContext&) {
        Filter f;
        f.Include(store.c[1]);
        ForEachMatch(store.pages, f, [](Val& v) { ++v.v; }, store.c[1]);
        ++writes_since_watch;
      });
      writer.Writes(store.c[1]).RunIf([&] { return frame % 3 != 2; });
      System watcher("watcher", [&](SystemContext& ctx) {
        Filter f;
        f.Include(store.c[1]).Changed(store.c[1], ctx.last_run());
        size_t n = 0;
        ForEachMatch(store.pages, f, [&](const Val&) { ++n; }, store.c[1]);
        EXPECT_EQ(n, writes_since_watch > 0 ? with1 : 0u) << "frame " << frame;
        expected_total += writes_since_watch > 0 ? with1 : 0;
        seen_total += n;
        writes_since_watch = 0;
      });
      watcher.ReadsChanged(store.c[1]).RunIf([&] { return frame % 4 != 1; });
      // An unrelated system overlapping both.
      System other("other", [&](SystemContext&) {
        Filter f;
        f.Include(store.c[2]);
        ForEachMatch(store.pages, f, [](Val& v) { v.v ^= 1; }, store.c[2]);
      });
      other.Writes(store.c[2]);
      Schedule schedule(store.manager, store.pages, {.threads = threads});
      if (writer_first) {
        schedule.Add(std::move(writer)).Add(std::move(other)).Add(std::move(watcher));
      } else {
        schedule.Add(std::move(watcher)).Add(std::move(other)).Add(std::move(writer));
      }
      for (frame = 0; frame < 40; ++frame) STRATA_ASSERT_OK(schedule.Run());
      EXPECT_EQ(seen_total, expected_total);
      EXPECT_GT(seen_total, 0u);
      if (!writer_first) {
        EXPECT_THAT(schedule.Describe(), HasSubstr("new tick"));
      }
    }
  }
}

// ---- Determinism on random schedules. ----

struct RandomSystem {
  std::vector<uint32_t> reads, writes;
  int commands = 0;  // 0 none, 1 remove/add, 2 destroy/create
  bool main_thread = false;
  bool exclusive = false;
};

std::vector<RandomSystem> RandomSystems(testing::Random& rng) {
  std::vector<RandomSystem> out(2 + rng.UniformIndex(10));
  for (RandomSystem& s : out) {
    for (uint32_t k = 0; k < kKeys; ++k) {
      const uint64_t pick = rng.UniformIndex(4);
      if (pick == 0) s.writes.push_back(k);
      if (pick == 1) s.reads.push_back(k);
    }
    s.commands = static_cast<int>(rng.UniformIndex(3));
    s.main_thread = rng.Bernoulli(0.2);
    s.exclusive = rng.Bernoulli(0.05);
  }
  return out;
}

// Runs `systems` for `frames` frames with `threads` threads; returns the final state and
// the read-only systems' checksums.
std::pair<std::vector<std::tuple<uint64_t, uint32_t, uint32_t>>, std::vector<uint64_t>> RunRandom(
    const std::vector<RandomSystem>& systems, int threads, int frames) {
  Store store(3000);
  std::vector<uint64_t> sums(systems.size(), 0);
  Schedule schedule(store.manager, store.pages, {.threads = threads});
  for (size_t i = 0; i < systems.size(); ++i) {
    const RandomSystem& r = systems[i];
    System s(absl::StrCat("s", i), [&store, &sums, &r, i](SystemContext& ctx) {
      const uint32_t id = static_cast<uint32_t>(i);
      auto body = [&](CommandBuffer* out, Entity e, Val& first) {
        uint32_t sum = 0;
        for (uint32_t k : r.reads) {
          if (const Val* v = std::as_const(store.pages).TryGet(e, store.c[k])) sum += v->v;
        }
        first.v = first.v * 31 + sum + id;
        for (size_t w = 1; w < r.writes.size(); ++w) {
          if (Val* v = store.pages.TryGet(e, store.c[r.writes[w]])) v->v ^= first.v;
        }
        if (out == nullptr || first.v % 5 != 0) return;
        if (r.commands == 1) {
          const Component<Val> other = store.c[(r.writes[0] + 1 + first.v % 3) % kKeys];
          if (std::as_const(store.pages).TryGet(e, other) != nullptr) {
            out->Remove(e, other);
          } else {
            out->Add(e, other, Val{first.v});
          }
        } else if (r.commands == 2) {
          if (first.v % 2 == 0) {
            out->Destroy(e);
          } else {
            ComponentBundle bundle;
            bundle.Set(store.c[0], Val{first.v}).Set(store.c[3], Val{id});
            out->Create(bundle);
          }
        }
      };
      if (r.writes.empty()) {
        // A reader: a checksum over its components, in page order.
        for (uint32_t k : r.reads) {
          Filter f;
          f.Include(store.c[k]);
          ForEachMatch(store.pages, f, [&](Entity e, const Val& v) { sums[i] = sums[i] * 1099511628211u + v.v + e.index(); }, store.c[k]);
        }
        return;
      }
      Filter f;
      f.Include(store.c[r.writes[0]]);
      if (r.commands == 0) {
        if (ctx.parallel()) {
          ParallelForEachMatch(store.pages, f, [&](Entity e, Val& v) { body(nullptr, e, v); }, store.c[r.writes[0]]);
        } else {
          ForEachMatch(store.pages, f, [&](Entity e, Val& v) { body(nullptr, e, v); }, store.c[r.writes[0]]);
        }
      } else if (ctx.parallel()) {
        ParallelForEachMatchWithCommands(store.pages, f, ctx.commands(),
                                         [&](CommandBuffer& out, Entity e, Val& v) { body(&out, e, v); },
                                         store.c[r.writes[0]]);
      } else {
        CommandBuffer& out = ctx.command_buffer();
        ForEachMatch(store.pages, f, [&](Entity e, Val& v) { body(&out, e, v); }, store.c[r.writes[0]]);
      }
    });
    for (uint32_t k : r.reads) s.Reads(store.c[k]);
    for (uint32_t k : r.writes) s.Writes(store.c[k]);
    if (r.commands != 0 && !r.writes.empty()) s.Commands(store.c[0], store.c[1], store.c[2], store.c[3]);
    if (r.main_thread) s.MainThread();
    if (r.exclusive) s.Exclusive();
    schedule.Add(std::move(s));
  }
  for (int frame = 0; frame < frames; ++frame) {
    absl::Status status = schedule.Run();
    EXPECT_TRUE(status.ok()) << status;
  }
  return {store.Dump(), sums};
}

TEST(Schedule, RandomSchedulesGiveTheSameWorldForAnyThreadCount) {
  testing::Random rng(testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    const std::vector<RandomSystem> systems = RandomSystems(rng);
    const auto serial = RunRandom(systems, 1, 6);
    for (int threads : {2, 8}) {
      const auto parallel = RunRandom(systems, threads, 6);
      EXPECT_TRUE(parallel.first == serial.first) << "threads " << threads;
      EXPECT_EQ(parallel.second, serial.second) << "threads " << threads;
    }
  }
}

// World resources are keys as page components are: on random systems over the store's
// components and named resources (one named "k0" like a component, which must not meet
// it), the schedule's conflicts and ambiguities are exactly the brute-force pairs,
// each names a key both systems touch, every pair that may not overlap is ordered,
// and, run on two threads, no writer of a resource overlaps another system touching it.
TEST(Schedule, ResourceAndComponentConflictsMatchTheBruteForceReference) {
  testing::Random rng(testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  Store store(64);
  constexpr int kResources = 3;
  const std::string resource_names[kResources] = {"k0", "rules", "clock"};
  size_t resource_conflicts = 0, component_conflicts = 0, runs = 0;
  for (int round = 0; round < 400; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    const size_t n = 1 + rng.UniformIndex(8);
    // Keys: "c:k0".."c:k3" (components), "r:<name>" (resources).
    struct Access {
      std::set<std::string> reads, writes, commands;
    };
    std::vector<Access> access(n);
    // Overlap detectors for the threaded run: writers and readers inside, per resource.
    std::atomic<int> writers[kResources] = {}, readers[kResources] = {};
    std::atomic<bool> overlapped{false};
    Schedule schedule(store.manager, store.pages, {.threads = 2});
    for (size_t i = 0; i < n; ++i) {
      std::vector<int> written, read;
      System system(absl::StrCat("s", i), [] (SystemContext&) {});
      for (uint32_t k = 0; k < kKeys; ++k) {
        const std::string key = absl::StrCat("c:k", k);
        switch (rng.UniformIndex(6)) {
          case 0: system.Reads(store.c[k]); access[i].reads.insert(key); break;
          case 1: system.Writes(store.c[k]); access[i].writes.insert(key); break;
          case 2: system.Commands(store.c[k]); access[i].commands.insert(key); break;
          default: break;
        }
      }
      for (int r = 0; r < kResources; ++r) {
        const std::string key = absl::StrCat("r:", resource_names[r]);
        switch (rng.UniformIndex(5)) {
          case 0: system.Reads(Resource(resource_names[r])); access[i].reads.insert(key); read.push_back(r); break;
          case 1: system.Writes(Resource(resource_names[r])); access[i].writes.insert(key); written.push_back(r); break;
          default: break;
        }
      }
      system.set_function([&, written, read](SystemContext&) {
        for (int r : written) {
          if (writers[r].fetch_add(1) != 0 || readers[r].load() != 0) overlapped = true;
        }
        for (int r : read) {
          readers[r].fetch_add(1);
          if (writers[r].load() != 0) overlapped = true;
        }
        std::this_thread::yield();
        for (int r : written) writers[r].fetch_sub(1);
        for (int r : read) readers[r].fetch_sub(1);
        return absl::OkStatus();
      });
      schedule.Add(std::move(system));
    }
    STRATA_ASSERT_OK(schedule.Build());
    auto touched = [&](size_t i) {
      std::set<std::string> t = access[i].reads;
      t.insert(access[i].writes.begin(), access[i].writes.end());
      return t;
    };
    auto meets = [](const std::set<std::string>& a, const std::set<std::string>& b) {
      for (const std::string& x : a) {
        if (b.count(x) != 0) return true;
      }
      return false;
    };
    // One stage, no constraints: run order is declaration order, every conflict ambiguous.
    std::set<std::pair<size_t, size_t>> want, got, got_ambiguous;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = i + 1; j < n; ++j) {
        const bool data = meets(access[i].writes, touched(j)) || meets(access[j].writes, touched(i));
        const bool commands = meets(access[i].commands, touched(j)) ||
                              meets(access[j].commands, touched(i)) ||
                              meets(access[i].commands, access[j].commands);
        if (data || commands) want.insert({i, j});
      }
    }
    for (const schedule_internal::Conflict& c : schedule.plan().conflicts) got.insert({c.first, c.second});
    for (const schedule_internal::Conflict& c : schedule.plan().ambiguities) got_ambiguous.insert({c.first, c.second});
    EXPECT_EQ(got, want);
    EXPECT_EQ(got_ambiguous, want);
    // Each reported pair names a key both touch: "\"sI\" / \"sJ\" (k2)" or "(rules (resource))".
    const std::vector<std::string> texts = schedule.ambiguities();
    ASSERT_EQ(texts.size(), schedule.plan().ambiguities.size());
    for (size_t a = 0; a < texts.size(); ++a) {
      const schedule_internal::Conflict& c = schedule.plan().ambiguities[a];
      const std::string& text = texts[a];
      std::set<std::string> all_i = touched(c.first), all_j = touched(c.second);
      all_i.insert(access[c.first].commands.begin(), access[c.first].commands.end());
      all_j.insert(access[c.second].commands.begin(), access[c.second].commands.end());
      bool named_shared = false;
      for (const std::string& key : all_i) {
        if (all_j.count(key) == 0) continue;
        const bool resource = key[0] == 'r';
        const std::string shown = resource ? absl::StrCat("(", key.substr(2), " (resource))")
                                           : absl::StrCat("(", key.substr(2), ")");
        if (absl::EndsWith(text, shown)) {
          named_shared = true;
          (resource ? resource_conflicts : component_conflicts) += 1;
        }
      }
      EXPECT_TRUE(named_shared) << text;
    }
    // Every pair that may not overlap is ordered: a later step, or reachable through
    // the segment's dependency edges.
    std::vector<size_t> step_of(n), local(n);
    for (size_t k = 0; k < schedule.plan().steps.size(); ++k) {
      const schedule_internal::Step& st = schedule.plan().steps[k];
      if (st.kind != schedule_internal::Step::kSegment) continue;
      for (size_t l = 0; l < st.segment.systems.size(); ++l) {
        step_of[st.segment.systems[l]] = k;
        local[st.segment.systems[l]] = l;
      }
    }
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = i + 1; j < n; ++j) {
        if (!meets(access[i].writes, touched(j)) && !meets(access[j].writes, touched(i))) continue;
        if (step_of[i] != step_of[j]) {
          EXPECT_LT(step_of[i], step_of[j]);
          continue;
        }
        const schedule_internal::Segment& seg = schedule.plan().steps[step_of[i]].segment;
        std::vector<bool> after_i(seg.systems.size(), false);
        after_i[local[i]] = true;
        for (size_t l = local[i] + 1; l <= local[j]; ++l) {
          for (size_t p : seg.preds[l]) after_i[l] = after_i[l] || after_i[p];
        }
        EXPECT_TRUE(after_i[local[j]]) << "s" << i << " must finish before s" << j;
      }
    }
    if (round % 4 == 0) {
      STRATA_ASSERT_OK(schedule.Run());
      ++runs;
    }
    EXPECT_FALSE(overlapped.load());
  }
  // The generator reaches both kinds of key.
  EXPECT_GT(resource_conflicts, 100u);
  EXPECT_GT(component_conflicts, 100u);
  EXPECT_EQ(runs, 100u);
}

TEST(FixedTimestep, CarriesTimeAndCapsTheSteps) {
  FixedTimestep fixed(0.01, 3);
  EXPECT_EQ(fixed.Advance(0.005), 0);
  EXPECT_EQ(fixed.Advance(0.006), 1);  // 0.011 owed
  EXPECT_NEAR(fixed.alpha(), 0.1, 1e-9);
  EXPECT_EQ(fixed.Advance(0.0), 0);
  EXPECT_EQ(fixed.Advance(1.0), 3);  // capped; the rest dropped
  EXPECT_EQ(fixed.Advance(0.0), 0);
  EXPECT_EQ(fixed.Advance(0.02), 2);
}

// A fixed-rate group: a second schedule, run by an exclusive system of the frame.
TEST(Schedule, FixedStepGroupRunsInsideAnExclusiveSystem) {
  for (int threads : {1, 2}) {
    Store store(64);
    Schedule physics(store.manager, store.pages, {.threads = threads});
    int steps = 0;
    physics.Add(System("integrate", [&](SystemContext&) {
                  Filter f;
                  f.Include(store.c[0]);
                  ForEachMatch(store.pages, f, [](Val& v) { v.v += 1; }, store.c[0]);
                  ++steps;
                }).Writes(store.c[0]));
    FixedTimestep fixed(1.0 / 60);
    double frame_dt = 1.0 / 25;
    Schedule frame(store.manager, store.pages, {.threads = threads});
    frame.Add(System("physics", [&](SystemContext&) -> absl::Status {
                for (int n = fixed.Advance(frame_dt); n > 0; --n) STRATA_RETURN_IF_ERROR(physics.Run());
                return absl::OkStatus();
              }).Exclusive());
    for (int i = 0; i < 50; ++i) STRATA_ASSERT_OK(frame.Run());  // 2 s
    EXPECT_EQ(steps, 120);
  }
}

TEST(Schedule, ExclusiveSystemsMayChangeStructure) {
  Store store(5);
  Schedule schedule(store.manager, store.pages, {.threads = 2});
  schedule.Add(System("grow", [&](SystemContext&) {
                 Entity e;
                 store.manager.CreateBatch(absl::MakeSpan(&e, 1));
                 return store.pages.Add(e, store.c[0], Val{1});
               }).Exclusive());
  schedule.Add(System("compact", [&](SystemContext&) { store.pages.Compact(); }).Exclusive());
  STRATA_ASSERT_OK(schedule.Run());
  EXPECT_EQ(store.pages.num_entities(), 6u);
}

}  // namespace
}  // namespace strata
