#include "schedule/schedule.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

#if defined(__SANITIZE_THREAD__)
// Debian's libtbb is not TSan-instrumented (see base/parallel_for.h): under TSan the
// segments run on plain threads, whose synchronisation TSan sees.
#define STRATA_SCHEDULE_PLAIN_THREADS 1
#else
#include "oneapi/tbb/task_arena.h"
#include "oneapi/tbb/task_group.h"
#endif

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;
using schedule_internal::Conflict;
using schedule_internal::NodeSpec;
using schedule_internal::Plan;
using schedule_internal::Segment;
using schedule_internal::Step;

double NanosecondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::nano>(b - a).count();
}

void SortUnique(std::vector<uint32_t>& keys) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
}

}  // namespace

// The dependency graphs of the segments, and the state of the one running.
struct Schedule::Executor {
  struct Graph {
    std::vector<std::vector<size_t>> succs;
    std::vector<uint32_t> waits;
    std::vector<size_t> roots;
    bool has_main = false;
  };
  std::vector<Graph> graphs;  // by step index (empty for sync points)
  std::unique_ptr<std::atomic<uint32_t>[]> waiting;
  std::atomic<size_t> remaining{0};
  std::mutex mu;
  std::condition_variable cv;
  std::deque<size_t> main_queue;
#if defined(STRATA_SCHEDULE_PLAIN_THREADS)
  std::deque<size_t> worker_queue;
#else
  std::unique_ptr<tbb::task_arena> arena;
#endif
};

Schedule::Schedule(EntityManager& entities, EntityPages& pages, ScheduleOptions options)
    : entities_(&entities), pages_(&pages), options_(options) {
  threads_ = options.threads > 0 ? options.threads
                                 : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  stages_.push_back("main");
}

Schedule::~Schedule() = default;

Schedule& Schedule::Stage(std::string name) {
  const bool current_is_empty = systems_.empty() || systems_.back().spec_.stage + 1 < stages_.size();
  if (current_is_empty) {
    stages_.back() = std::move(name);  // rename it rather than leave an empty stage
  } else {
    stages_.push_back(std::move(name));
  }
  built_ = false;
  return *this;
}

Schedule& Schedule::Add(System system) {
  system.spec_.stage = stages_.size() - 1;
  system.spec_.name = system.name_;
  systems_.push_back(std::move(system));
  built_ = false;
  return *this;
}

std::string Schedule::KeyName(uint32_t key) const {
  if (key >= kResourceBase) return absl::StrCat(resources_[key - kResourceBase], " (resource)");
  return std::string(pages_->component_name(key));
}

absl::Status Schedule::Build() {
  built_ = false;
  resources_.clear();
  specs_.clear();
  auto intern = [this](const std::string& name) {
    for (size_t r = 0; r < resources_.size(); ++r) {
      if (resources_[r] == name) return static_cast<uint32_t>(kResourceBase + r);
    }
    resources_.push_back(name);
    return static_cast<uint32_t>(kResourceBase + resources_.size() - 1);
  };
  for (const System& system : systems_) {
    NodeSpec spec = system.spec_;
    for (std::vector<uint32_t>* ids : {&spec.reads, &spec.writes, &spec.changed, &spec.commands}) {
      for (uint32_t c : *ids) {
        if (c >= pages_->num_component_types()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "system \"", system.name_, "\" declares component id ", c,
              ", which is not registered in the schedule's page store"));
        }
      }
    }
    for (const std::string& r : system.resource_reads_) spec.reads.push_back(intern(r));
    for (const std::string& r : system.resource_writes_) spec.writes.push_back(intern(r));
    for (const std::string& r : system.resource_changed_) spec.changed.push_back(intern(r));
    for (const std::string& r : system.resource_commands_) spec.commands.push_back(intern(r));
    for (std::vector<uint32_t>* ids : {&spec.reads, &spec.writes, &spec.changed, &spec.commands}) {
      SortUnique(*ids);
    }
    // A written key is not also listed as read; a changed one is not a plain read.
    auto drop = [](std::vector<uint32_t>& from, const std::vector<uint32_t>& what) {
      from.erase(std::remove_if(from.begin(), from.end(),
                                [&](uint32_t k) {
                                  return std::binary_search(what.begin(), what.end(), k);
                                }),
                 from.end());
    };
    drop(spec.reads, spec.writes);
    drop(spec.reads, spec.changed);
    specs_.push_back(std::move(spec));
  }
  STRATA_ASSIGN_OR_RETURN(plan_, schedule_internal::MakePlan(specs_));
  if (options_.strict_order && !plan_.ambiguities.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("systems that conflict with no order between them (add After/Before): ",
                     absl::StrJoin(ambiguities(), "; ")));
  }
  // Per-system state, kept across builds for systems that stay (by position).
  state_.resize(systems_.size());
  for (size_t i = 0; i < systems_.size(); ++i) {
    SystemState& s = state_[i];
    if (s.commands == nullptr) s.commands = std::make_unique<ParallelCommands>(*pages_);
    s.access = std::make_unique<DeclaredAccess>(*pages_, systems_[i].name_);
    const NodeSpec& spec = specs_[i];
    for (uint32_t c : spec.reads) {
      if (c < kResourceBase) s.access->AllowRead(c);
    }
    for (uint32_t c : spec.changed) {
      if (c < kResourceBase) s.access->AllowRead(c);
    }
    for (uint32_t c : spec.writes) {
      if (c < kResourceBase) s.access->AllowWrite(c);
    }
    // Resources by name: World::Resource<T> checks a world resource's.
    for (const std::vector<uint32_t>* keys : {&spec.reads, &spec.changed}) {
      for (uint32_t c : *keys) {
        if (c >= kResourceBase) s.access->AllowResourceRead(resources_[c - kResourceBase]);
      }
    }
    for (uint32_t c : spec.writes) {
      if (c >= kResourceBase) s.access->AllowResourceWrite(resources_[c - kResourceBase]);
    }
  }
  executor_ = std::make_unique<Executor>();
  size_t widest = 0;
  executor_->graphs.resize(plan_.steps.size());
  for (size_t k = 0; k < plan_.steps.size(); ++k) {
    const Step& step = plan_.steps[k];
    if (step.kind != Step::kSegment) continue;
    const Segment& seg = step.segment;
    Executor::Graph& g = executor_->graphs[k];
    const size_t n = seg.systems.size();
    widest = std::max(widest, n);
    g.succs.assign(n, {});
    g.waits.assign(n, 0);
    for (size_t j = 0; j < n; ++j) {
      g.waits[j] = static_cast<uint32_t>(seg.preds[j].size());
      for (size_t p : seg.preds[j]) g.succs[p].push_back(j);
      if (seg.preds[j].empty()) g.roots.push_back(j);
      if (specs_[seg.systems[j]].main_thread) g.has_main = true;
    }
  }
  executor_->waiting = std::make_unique<std::atomic<uint32_t>[]>(std::max<size_t>(widest, 1));
#if !defined(STRATA_SCHEDULE_PLAIN_THREADS)
  if (threads_ > 1) executor_->arena = std::make_unique<tbb::task_arena>(threads_);
#endif
  times_ = FrameTimes();
  times_.system_ns.assign(systems_.size(), 0);
  times_.ran.assign(systems_.size(), false);
  built_ = true;
  return absl::OkStatus();
}

std::vector<std::string> Schedule::ambiguities() const {
  std::vector<std::string> out;
  for (const Conflict& c : plan_.ambiguities) {
    out.push_back(absl::StrCat("\"", systems_[c.first].name_, "\" / \"", systems_[c.second].name_,
                               "\"",
                               c.kind == Conflict::kExclusive ? " (exclusive)"
                                                              : absl::StrCat(" (", KeyName(c.key), ")")));
  }
  return out;
}

void Schedule::RunSystem(size_t i) {
  SystemState& s = state_[i];
  if (!s.active) return;
  const Clock::time_point start = Clock::now();
  SystemContext ctx;
  ctx.name_ = &systems_[i].name_;
  ctx.last_run_ = s.last_run;
  ctx.tick_ = pages_->tick();
  ctx.parallel_ = threads_ > 1;
  ctx.commands_ = s.commands.get();
  if (specs_[i].exclusive) {
    s.status = systems_[i].fn_(ctx);
  } else {
    const DeclaredAccess::Scope scope(*s.access);
    s.status = systems_[i].fn_(ctx);
  }
  s.last_run = ctx.tick_;
  times_.system_ns[i] = NanosecondsBetween(start, Clock::now());
  times_.ran[i] = true;
}

absl::Status Schedule::RunSegment(const Segment& segment, size_t step) {
  for (size_t i : segment.systems) {
    state_[i].active = !systems_[i].condition_ || systems_[i].condition_();
    state_[i].status = absl::OkStatus();
  }
  const size_t n = segment.systems.size();
  // Non-exclusive systems may not change structure: a call that would aborts.
  std::optional<EntityPages::WalkScope> no_structural_changes;
  if (!segment.exclusive) no_structural_changes.emplace(*pages_);
  if (threads_ == 1 || n == 1) {
    for (size_t i : segment.systems) RunSystem(i);
  } else {
    Executor& ex = *executor_;
    const Executor::Graph& g = ex.graphs[step];
    for (size_t k = 0; k < n; ++k) ex.waiting[k].store(g.waits[k], std::memory_order_relaxed);
    ex.remaining.store(n, std::memory_order_relaxed);
#if defined(STRATA_SCHEDULE_PLAIN_THREADS)
    auto dispatch = [&](size_t k) {
      const std::lock_guard<std::mutex> lock(ex.mu);
      (specs_[segment.systems[k]].main_thread ? ex.main_queue : ex.worker_queue).push_back(k);
      ex.cv.notify_all();
    };
#else
    tbb::task_group group;
    std::function<void(size_t)> dispatch;
#endif
    auto execute = [&](size_t k) {
      RunSystem(segment.systems[k]);
      for (size_t s : g.succs[k]) {
        if (ex.waiting[s].fetch_sub(1, std::memory_order_acq_rel) == 1) dispatch(s);
      }
      if (ex.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        const std::lock_guard<std::mutex> lock(ex.mu);
        ex.cv.notify_all();
      }
    };
#if defined(STRATA_SCHEDULE_PLAIN_THREADS)
    std::vector<std::thread> workers;
    auto worker = [&] {
      for (;;) {
        std::unique_lock<std::mutex> lock(ex.mu);
        ex.cv.wait(lock, [&] {
          return !ex.worker_queue.empty() || ex.remaining.load(std::memory_order_acquire) == 0;
        });
        if (ex.worker_queue.empty()) return;
        const size_t k = ex.worker_queue.front();
        ex.worker_queue.pop_front();
        lock.unlock();
        execute(k);
      }
    };
    for (int t = 1; t < threads_; ++t) workers.emplace_back(worker);
    for (size_t k : g.roots) dispatch(k);
    for (;;) {
      std::unique_lock<std::mutex> lock(ex.mu);
      ex.cv.wait(lock, [&] {
        return !ex.main_queue.empty() || !ex.worker_queue.empty() ||
               ex.remaining.load(std::memory_order_acquire) == 0;
      });
      std::deque<size_t>& q = !ex.main_queue.empty() ? ex.main_queue : ex.worker_queue;
      if (q.empty()) break;
      const size_t k = q.front();
      q.pop_front();
      lock.unlock();
      execute(k);
    }
    for (std::thread& w : workers) w.join();
#else
    dispatch = [&](size_t k) {
      if (specs_[segment.systems[k]].main_thread) {
        const std::lock_guard<std::mutex> lock(ex.mu);
        ex.main_queue.push_back(k);
        ex.cv.notify_all();
      } else {
        group.run([&execute, k] { execute(k); });
      }
    };
    for (size_t k : g.roots) dispatch(k);
    if (g.has_main) {
      // The main-thread systems run here as they become ready; the workers run the rest.
      for (;;) {
        std::unique_lock<std::mutex> lock(ex.mu);
        ex.cv.wait(lock, [&] {
          return !ex.main_queue.empty() || ex.remaining.load(std::memory_order_acquire) == 0;
        });
        if (ex.main_queue.empty()) break;
        const size_t k = ex.main_queue.front();
        ex.main_queue.pop_front();
        lock.unlock();
        execute(k);
      }
    }
    group.wait();
#endif
  }
  // The first error in run order.
  for (size_t i : segment.systems) {
    if (!state_[i].status.ok()) {
      return absl::Status(state_[i].status.code(),
                          absl::StrCat("system \"", systems_[i].name_, "\": ",
                                       state_[i].status.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status Schedule::RunSync(const Step& step) {
  for (size_t i : step.writers) {
    ParallelCommands& commands = *state_[i].commands;
    if (commands.size() == 0) continue;
    CommandBuffer::Result r;
    if (playback_) {
      STRATA_ASSIGN_OR_RETURN(r, playback_(commands));
    } else {
      r = commands.Playback(*entities_, *pages_);
    }
    times_.played.applied += r.applied;
    times_.played.skipped_dead += r.skipped_dead;
    times_.played.skipped_conflict += r.skipped_conflict;
  }
  if (flush_) STRATA_RETURN_IF_ERROR(flush_());
  return absl::OkStatus();
}

absl::Status Schedule::Run() {
  if (!built_) STRATA_RETURN_IF_ERROR(Build());
  const Clock::time_point frame_start = Clock::now();
  std::fill(times_.system_ns.begin(), times_.system_ns.end(), 0.0);
  std::fill(times_.ran.begin(), times_.ran.end(), false);
  times_.sync_ns = 0;
  times_.played = CommandBuffer::Result();
  double critical = 0;
  absl::Status status;
  auto steps = [&] {
    for (size_t k = 0; k < plan_.steps.size() && status.ok(); ++k) {
      const Step& step = plan_.steps[k];
      pages_->AdvanceTick();
      if (step.kind == Step::kSync) {
        const Clock::time_point start = Clock::now();
        status = RunSync(step);
        const double ns = NanosecondsBetween(start, Clock::now());
        times_.sync_ns += ns;
        critical += ns;
        continue;
      }
      status = RunSegment(step.segment, k);
      // The segment's longest dependent chain, from this frame's times.
      const Segment& seg = step.segment;
      std::vector<double> finish(seg.systems.size(), 0.0);
      double longest = 0;
      for (size_t j = 0; j < seg.systems.size(); ++j) {
        double ready = 0;
        for (size_t p : seg.preds[j]) ready = std::max(ready, finish[p]);
        finish[j] = ready + times_.system_ns[seg.systems[j]];
        longest = std::max(longest, finish[j]);
      }
      critical += longest;
    }
    // Observers of events outside playback (property sets) run at the frame's end.
    if (status.ok() && flush_) status = flush_();
  };
#if defined(STRATA_SCHEDULE_PLAIN_THREADS)
  steps();
#else
  if (executor_->arena != nullptr) {
    executor_->arena->execute(steps);
  } else {
    steps();
  }
#endif
  times_.systems_ns = 0;
  for (double ns : times_.system_ns) times_.systems_ns += ns;
  times_.critical_ns = critical;
  times_.wall_ns = NanosecondsBetween(frame_start, Clock::now());
  return status;
}

std::string Schedule::Describe() const {
  if (!built_) return "";
  std::string out;
  absl::StrAppendFormat(&out, "schedule: %zu systems in %zu stages, %zu steps, threads %d\n",
                        systems_.size(), stages_.size(), plan_.steps.size(), threads_);
  auto keys = [this](const std::vector<uint32_t>& ids) {
    std::vector<std::string> names;
    for (uint32_t k : ids) names.push_back(KeyName(k));
    return absl::StrJoin(names, ", ");
  };
  size_t stage = SIZE_MAX;
  size_t segment_number = 0;
  for (const Step& step : plan_.steps) {
    if (step.kind == Step::kSync) {
      std::vector<std::string> writers;
      for (size_t w : step.writers) writers.push_back(systems_[w].name_);
      absl::StrAppend(&out, "  == sync point: play back the commands of ",
                      absl::StrJoin(writers, ", "), step.reader == SIZE_MAX
                          ? "; end of frame\n"
                          : absl::StrCat("; \"", systems_[step.reader].name_, "\" touches ",
                                         KeyName(step.key), ", which they change\n"));
      continue;
    }
    const Segment& seg = step.segment;
    const size_t first_stage = specs_[seg.systems.front()].stage;
    if (first_stage != stage) {
      stage = first_stage;
      absl::StrAppend(&out, "stage \"", stages_[stage], "\"\n");
    }
    static constexpr const char* kWhy[] = {"frame start", "after the sync point",
                                           "exclusive system", "new tick: a write after a change read"};
    absl::StrAppendFormat(&out, "  segment %zu (%s)%s\n", ++segment_number, kWhy[step.boundary],
                          seg.exclusive ? ", exclusive" : "");
    for (size_t j = 0; j < seg.systems.size(); ++j) {
      const size_t i = seg.systems[j];
      const NodeSpec& s = specs_[i];
      if (specs_[i].stage != stage) {
        stage = specs_[i].stage;
        absl::StrAppend(&out, "  stage \"", stages_[stage], "\" (same segment)\n");
      }
      std::vector<std::string> parts;
      if (s.exclusive) parts.push_back("exclusive");
      if (!s.writes.empty()) parts.push_back(absl::StrCat("writes ", keys(s.writes)));
      if (!s.reads.empty()) parts.push_back(absl::StrCat("reads ", keys(s.reads)));
      if (!s.changed.empty()) parts.push_back(absl::StrCat("reads changes of ", keys(s.changed)));
      if (!s.commands.empty()) parts.push_back(absl::StrCat("commands on ", keys(s.commands)));
      if (s.main_thread) parts.push_back("main thread");
      if (systems_[i].condition_) parts.push_back("run condition");
      std::vector<std::string> waits;
      for (size_t p : seg.preds[j]) waits.push_back(systems_[seg.systems[p]].name_);
      if (!waits.empty()) parts.push_back(absl::StrCat("after ", absl::StrJoin(waits, ", ")));
      absl::StrAppendFormat(&out, "    %-14s %s\n", systems_[i].name_, absl::StrJoin(parts, "; "));
    }
  }
  absl::StrAppend(&out, "conflicts (ordered by run order):", plan_.conflicts.empty() ? " none\n" : "\n");
  static constexpr const char* kKind[] = {"write/write", "read/write", "commands", "exclusive"};
  for (const Conflict& c : plan_.conflicts) {
    absl::StrAppend(&out, "  ", systems_[c.first].name_, " -> ", systems_[c.second].name_, ": ",
                    kKind[c.kind],
                    c.kind == Conflict::kExclusive ? "" : absl::StrCat(" on ", KeyName(c.key)), "\n");
  }
  if (!plan_.ambiguities.empty()) {
    absl::StrAppend(&out, "ambiguous (conflicting, same stage, no After/Before; ran in "
                          "declaration order):\n");
    for (const std::string& a : ambiguities()) absl::StrAppend(&out, "  ", a, "\n");
  }
  return out;
}

}  // namespace strata
