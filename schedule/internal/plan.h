// The schedule's planner: from systems' declared access and ordering constraints to
// the steps a frame runs (segments of systems that may overlap, separated by sync
// points), with no World, threads or clocks: plain data in, plain data out, so that
// tests can check it against a brute-force reference on random system sets.
//
// Keys are small integers naming what a system touches (a page component, a resource);
// the caller interns them.
#ifndef STRATA_SCHEDULE_INTERNAL_PLAN_H_
#define STRATA_SCHEDULE_INTERNAL_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace strata::schedule_internal {

// NodeSpec: one system as the planner sees it. Key lists need not be sorted.
struct NodeSpec {
  std::string name;
  size_t stage = 0;                 // stages run in increasing order
  std::vector<uint32_t> reads;      // read only
  std::vector<uint32_t> writes;     // read and written
  std::vector<uint32_t> changed;    // read with change detection (also counted as reads)
  std::vector<uint32_t> commands;   // changed by its commands (seen after a sync point)
  bool exclusive = false;           // runs alone, may change structure directly
  bool main_thread = false;
  std::vector<std::string> after;   // names of systems it runs after
  std::vector<std::string> before;  // names of systems it runs before
};

// Conflict: systems `first` and `second` (indices into the specs, `first` earlier in
// the run order) touch `key` in a way whose order matters.
struct Conflict {
  enum Kind : uint8_t { kWriteWrite, kReadWrite, kCommands, kExclusive };
  size_t first;
  size_t second;
  uint32_t key;  // unused for kExclusive
  Kind kind;
  bool operator==(const Conflict&) const = default;
};

// Segment: systems that run between two boundaries, `systems` in run order; preds[k]:
// the positions (in `systems`) that systems[k] waits for.
struct Segment {
  std::vector<size_t> systems;
  std::vector<std::vector<size_t>> preds;
  bool exclusive = false;
};

// Step: a segment, or a sync point (play back the commands recorded so far, run the
// observers). Every step starts at a new tick.
struct Step {
  enum Kind : uint8_t { kSegment, kSync };
  // Why a segment starts here (the first: kStart).
  enum Boundary : uint8_t { kStart, kAfterSync, kExclusive, kTick };
  Kind kind = kSegment;
  Boundary boundary = kStart;
  Segment segment;
  // kSync: the system that needs it (SIZE_MAX: the frame's end), the key it reads that
  // pending commands change, and the systems whose commands are pending (run order).
  size_t reader = SIZE_MAX;
  uint32_t key = 0;
  std::vector<size_t> writers;
};

struct Plan {
  std::vector<size_t> order;         // run order: a topological order of the constraints
  std::vector<size_t> position;      // position[system] in `order`
  std::vector<Step> steps;
  std::vector<Conflict> conflicts;   // every conflicting pair, in run order
  std::vector<Conflict> ambiguities; // conflicting, same stage, not ordered by constraints
};

// MakePlan: see schedule/schedule.h for the rules. InvalidArgument for a repeated or
// empty name, a constraint naming no system, or a cycle of constraints (the message
// names the systems of one cycle in order).
absl::StatusOr<Plan> MakePlan(absl::Span<const NodeSpec> specs);

// ConflictBetween: the first reason systems a (earlier) and b conflict, if any.
bool ConflictBetween(const NodeSpec& a, const NodeSpec& b, Conflict::Kind* kind, uint32_t* key);

}  // namespace strata::schedule_internal

#endif  // STRATA_SCHEDULE_INTERNAL_PLAN_H_
