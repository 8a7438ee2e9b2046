// Schedule: a frame's systems, each with its declared access, run in a fixed order on
// oneTBB workers where their access allows, with command buffers played back at sync
// points the schedule places itself, and the same results for any thread count.
//
//   Schedule frame(world.entities(), world.pages(), {.threads = 0});  // 0: all cores
//   frame.Stage("update");
//   frame.Add(System("move", [&](SystemContext& ctx) {
//                ForEachMatch(world.pages(), moving, [&](Position& p, const Velocity& v) {
//                  p.x += v.x * dt;
//                }, pos, vel);
//              }).Writes(pos).Reads(vel));
//   frame.Add(System("expire", [&](SystemContext& ctx) {
//                ForEachMatch(world.pages(), aging, [&](Entity e, Age& a) {
//                  if (++a.frames > 100) ctx.command_buffer().Destroy(e);
//                }, age);
//              }).Writes(age).Commands(pos, vel, age));
//   frame.Stage("render");
//   frame.Add(System("draw", [&](SystemContext&) { ... }).Reads(pos).MainThread());
//   STRATA_RETURN_IF_ERROR(frame.Build());   // errors: cycles, unknown names, ...
//   std::cout << frame.Describe();           // stages, conflicts, sync points
//   STRATA_RETURN_IF_ERROR(frame.Run());     // one frame
//
// Access. A system declares the page components it reads (`Reads`), writes
// (`Writes`, which includes reading), reads with change detection (`ReadsChanged`: it
// filters with Filter::Changed(c, ctx.last_run())), and changes through its commands
// (`Commands`: every component its commands add, remove, set, or that entities it
// creates or destroys have). Anything else it shares (a store that is not paged, the
// transform graph, a game's own state) is a `Resource("name")`. Every walk over the
// schedule's page store inside a system checks the walk's components against the
// declaration (iteration/declared_access.h) and aborts with a message naming the system
// and the component when one is missing, in every build mode. A system that changes
// structure directly (Add, Remove, Compact, creating or destroying entities) must be
// `Exclusive()`: it runs alone; the others run inside an EntityPages::WalkScope, under
// which such a call aborts at the call.
//
// Order. Stages run in the order they were opened; within a stage, systems are ordered
// by their After/Before constraints, then by declaration. That run order decides every
// pair of systems that conflict (one writes what the other reads or writes, or records
// commands on what the other touches). A conflicting pair in the same stage that no
// constraint orders is reported as ambiguous (Describe, ambiguities(); an error in
// Build with strict_order): it runs in declaration order, but the code does not say so.
// A cycle of constraints is a Build error naming its systems.
//
// Running. The run order is cut into segments; within a segment a system starts once
// the earlier systems it conflicts with (or is constrained after) finished, on a TBB
// worker of the schedule's task_arena (MainThread systems on the thread that calls Run).
// A segment ends, and a sync point plays back pending commands (then the observers
// run), just before the first system that touches a component those commands change;
// nowhere else. Segments also end around an Exclusive system, and before a system that
// writes what an earlier system of the segment reads with ReadsChanged (so the write
// gets a later tick). Commands still pending at the frame's end are played back then.
// Each step (segment or sync point) starts at a new EntityPages tick; a system's
// ctx.last_run() is the tick of its previous run, so a Changed filter with it sees every
// write since, exactly once. Playback order is run order, each system's buffers in page
// order, so the world after a frame is the same for 1, 2 or N threads.
//
// Thread-safety: Run on one thread at a time; the systems' functions run on workers.
#ifndef STRATA_SCHEDULE_SCHEDULE_H_
#define STRATA_SCHEDULE_SCHEDULE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "entity/entity_manager.h"
#include "iteration/command_buffer.h"
#include "iteration/components.h"
#include "iteration/declared_access.h"
#include "iteration/entity_pages.h"
#include "iteration/parallel_query.h"
#include "schedule/internal/plan.h"

namespace strata {

// Resource: something systems share that is not a page component, by name ("transform",
// "draw_list", "game_rules"). Two systems conflict on it as on a component.
struct Resource {
  explicit Resource(std::string n) : name(std::move(n)) {}
  std::string name;
};

// SystemContext: what a running system gets from the schedule.
class SystemContext {
 public:
  const std::string& name() const { return *name_; }
  // last_run: the tick of this system's previous run (EntityPages::kNeverRan before its
  // first): the `since` of its Changed / Added filters. tick: the tick it runs at.
  uint32_t last_run() const { return last_run_; }
  uint32_t tick() const { return tick_; }
  // parallel: the schedule runs with workers; a system may split a large walk over
  // them (ParallelForEachMatch) and the walk then runs in the schedule's arena.
  bool parallel() const { return parallel_; }
  // commands: this system's buffers, played back at the next sync point that needs them
  // (or the frame's end). For a serial walk, command_buffer() (the first range's buffer);
  // for ParallelForEachMatchWithCommands, commands().
  ParallelCommands& commands() { return *commands_; }
  CommandBuffer& command_buffer() { return commands_->Buffer(0); }

 private:
  friend class Schedule;
  const std::string* name_ = nullptr;
  uint32_t last_run_ = EntityPages::kNeverRan;
  uint32_t tick_ = 0;
  bool parallel_ = false;
  ParallelCommands* commands_ = nullptr;
};

// System: a name, a function, and what it touches. Built with chained calls; added to a
// Schedule.
class System {
 public:
  using Function = std::function<absl::Status(SystemContext&)>;

  // System(name, fn): fn is callable as absl::Status(SystemContext&) or
  // void(SystemContext&).
  template <typename Fn>
  System(std::string name, Fn fn) : name_(std::move(name)) {
    if constexpr (std::is_same_v<std::invoke_result_t<Fn&, SystemContext&>, void>) {
      fn_ = [fn = std::move(fn)](SystemContext& ctx) mutable {
        fn(ctx);
        return absl::OkStatus();
      };
    } else {
      fn_ = std::move(fn);
    }
  }

  // Reads / Writes / ReadsChanged / Commands: see the header comment. Each takes page
  // components (Component<T>, OptionalComponent<T> or a ComponentId) and Resources.
  template <typename... Keys>
  System& Reads(const Keys&... keys) {
    (Add(spec_.reads, resource_reads_, keys), ...);
    return *this;
  }
  template <typename... Keys>
  System& Writes(const Keys&... keys) {
    (Add(spec_.writes, resource_writes_, keys), ...);
    return *this;
  }
  template <typename... Keys>
  System& ReadsChanged(const Keys&... keys) {
    (Add(spec_.changed, resource_changed_, keys), ...);
    return *this;
  }
  template <typename... Keys>
  System& Commands(const Keys&... keys) {
    (Add(spec_.commands, resource_commands_, keys), ...);
    return *this;
  }
  // Exclusive: runs alone and may change structure directly (Add, Remove, create,
  // destroy, Compact). It conflicts with every other system.
  System& Exclusive() {
    spec_.exclusive = true;
    return *this;
  }
  // MainThread: runs on the thread that calls Schedule::Run (render, input).
  System& MainThread() {
    spec_.main_thread = true;
    return *this;
  }
  // RunIf: runs only in frames where `condition` (called on the Run thread at the start
  // of the system's segment) returns true. A skipped system keeps its last_run.
  System& RunIf(std::function<bool()> condition) {
    condition_ = std::move(condition);
    return *this;
  }
  // After / Before: ordered after / before the named system (of the same schedule).
  System& After(std::string name) {
    spec_.after.push_back(std::move(name));
    return *this;
  }
  System& Before(std::string name) {
    spec_.before.push_back(std::move(name));
    return *this;
  }

  const std::string& name() const { return name_; }
  // set_function: replaces the function (for helpers that derive the access first).
  void set_function(Function fn) { fn_ = std::move(fn); }

 private:
  friend class Schedule;
  static void Add(std::vector<uint32_t>& ids, std::vector<std::string>&, ComponentId c) {
    ids.push_back(c);
  }
  template <typename T>
  static void Add(std::vector<uint32_t>& ids, std::vector<std::string>&, Component<T> c) {
    ids.push_back(c.id);
  }
  template <typename T>
  static void Add(std::vector<uint32_t>& ids, std::vector<std::string>&, OptionalComponent<T> c) {
    ids.push_back(c.id);
  }
  static void Add(std::vector<uint32_t>&, std::vector<std::string>& names, const Resource& r) {
    names.push_back(r.name);
  }

  std::string name_;
  Function fn_;
  std::function<bool()> condition_;
  // Component ids in spec_'s key lists until Build interns them with the resources.
  schedule_internal::NodeSpec spec_;
  std::vector<std::string> resource_reads_, resource_writes_, resource_changed_,
      resource_commands_;
};

// FixedTimestep: the steps of `step` seconds a variable frame owes a fixed-rate group
// (physics), for a second Schedule that an exclusive system runs Advance(dt) times:
//
//   FixedTimestep fixed(1.0 / 60);
//   frame.Add(System("physics", [&](SystemContext&) -> absl::Status {
//               for (int n = fixed.Advance(frame_dt); n > 0; --n) {
//                 STRATA_RETURN_IF_ERROR(physics.Run());
//               }
//               return absl::OkStatus();
//             }).Exclusive());
//
// Time not yet stepped carries over; at most `max_steps` per frame (the rest is dropped,
// so a slow frame cannot snowball). alpha(): the fraction of a step carried, for
// interpolating what is drawn.
class FixedTimestep {
 public:
  explicit FixedTimestep(double step, int max_steps = 8) : step_(step), max_steps_(max_steps) {}
  int Advance(double frame_seconds) {
    carried_ += frame_seconds;
    int n = 0;
    while (carried_ >= step_ && n < max_steps_) {
      carried_ -= step_;
      ++n;
    }
    if (n == max_steps_ && carried_ >= step_) carried_ = 0;  // dropped, not owed
    return n;
  }
  double alpha() const { return carried_ / step_; }
  double step() const { return step_; }

 private:
  double step_;
  int max_steps_;
  double carried_ = 0;
};

// ScheduleOptions: how a Schedule runs.
struct ScheduleOptions {
  // threads: 1 runs every system on the calling thread, in run order; N > 1 runs them
  // on a TBB task_arena of N threads (the caller's included); 0: one per core.
  int threads = 1;
  // strict_order: Build fails on an ambiguous pair instead of reporting it.
  bool strict_order = false;
};

// FrameTimes: what the last Run measured, in nanoseconds.
struct FrameTimes {
  double wall_ns = 0;      // the whole Run
  double systems_ns = 0;   // every system's own wall time, summed (the serial work)
  double sync_ns = 0;      // sync points: playback and observers
  // critical_ns: the longest chain of dependent work: per segment the longest path
  // through its systems' dependencies (their times this frame), plus the sync points.
  // (systems_ns + sync_ns) / critical_ns bounds the speedup any thread count can give.
  double critical_ns = 0;
  std::vector<double> system_ns;  // by declaration index (0 when it did not run)
  std::vector<uint8_t> ran;       // by declaration index: 1 if it ran
  CommandBuffer::Result played;   // the commands played back this frame
};

class Schedule {
 public:
  using Playback = std::function<absl::StatusOr<CommandBuffer::Result>(ParallelCommands&)>;
  using Flush = std::function<absl::Status()>;

  // Schedule: systems over `pages` (and its manager `entities`), both outliving it.
  Schedule(EntityManager& entities, EntityPages& pages, ScheduleOptions options = {});
  ~Schedule();
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  // set_playback / set_flush: how a sync point plays a system's commands back (default:
  // ParallelCommands::Playback on the pages) and runs the observers (default: nothing);
  // engine/world_schedule.h sets World::Playback and World::Flush. The flush also runs
  // at the end of every frame.
  void set_playback(Playback playback) { playback_ = std::move(playback); }
  void set_flush(Flush flush) { flush_ = std::move(flush); }

  // Stage: systems added from now on belong to a new stage named `name`, after the
  // previous stages. Systems added before any Stage call are in the stage "main".
  Schedule& Stage(std::string name);
  // Add: appends a system to the current stage. Invalidates the build.
  Schedule& Add(System system);

  // Build: checks and plans (see above). InvalidArgument for a repeated or empty name,
  // an After/Before naming no system, a cycle of constraints (naming the systems), a
  // component not registered in the pages, and, with strict_order, an ambiguous pair
  // (naming both and what they share). Run calls it when needed.
  absl::Status Build();
  // Run: one frame. The first error of a system (in run order) or of a sync point's
  // flush; the steps after the failing one do not run (commands already recorded stay
  // in their buffers until the next sync point).
  absl::Status Run();

  // Describe: the stages, each segment's systems with what they touch and wait for,
  // the sync points with their reason, the conflicts and the ambiguous pairs. Empty
  // before a successful Build.
  std::string Describe() const;
  // ambiguities: "a / b (key)" for each conflicting pair no constraint orders.
  std::vector<std::string> ambiguities() const;
  const schedule_internal::Plan& plan() const { return plan_; }
  size_t num_systems() const { return systems_.size(); }
  const std::string& system_name(size_t i) const { return systems_[i].name_; }
  // threads: the thread count Run uses.
  int threads() const { return threads_; }
  const FrameTimes& last_frame() const { return times_; }
  // last_run: the tick system `i` (declaration index) last ran at.
  uint32_t last_run(size_t i) const { return state_[i].last_run; }

 private:
  struct SystemState {
    std::unique_ptr<ParallelCommands> commands;
    std::unique_ptr<DeclaredAccess> access;
    uint32_t last_run = EntityPages::kNeverRan;
    bool active = false;
    absl::Status status;
  };
  struct Executor;
  std::string KeyName(uint32_t key) const;
  absl::Status RunSegment(const schedule_internal::Segment& segment, size_t step);
  void RunSystem(size_t i);
  absl::Status RunSync(const schedule_internal::Step& step);

  EntityManager* entities_;
  EntityPages* pages_;
  ScheduleOptions options_;
  int threads_ = 1;
  Playback playback_;
  Flush flush_;
  std::vector<std::string> stages_;
  std::vector<System> systems_;
  bool built_ = false;
  // Interned keys: page component ids are themselves; resources from kResourceBase on.
  static constexpr uint32_t kResourceBase = 1u << 16;
  std::vector<std::string> resources_;
  std::vector<schedule_internal::NodeSpec> specs_;
  schedule_internal::Plan plan_;
  std::vector<SystemState> state_;
  FrameTimes times_;
  std::unique_ptr<Executor> executor_;
};

}  // namespace strata

#endif  // STRATA_SCHEDULE_SCHEDULE_H_
