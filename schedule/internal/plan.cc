#include "schedule/internal/plan.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace strata::schedule_internal {
namespace {

bool Intersects(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b, uint32_t* key) {
  for (uint32_t x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) {
      *key = x;
      return true;
    }
  }
  return false;
}

std::vector<uint32_t> Reads(const NodeSpec& s) {
  std::vector<uint32_t> r = s.reads;
  r.insert(r.end(), s.changed.begin(), s.changed.end());
  return r;
}

std::vector<uint32_t> Accessed(const NodeSpec& s) {
  std::vector<uint32_t> r = Reads(s);
  r.insert(r.end(), s.writes.begin(), s.writes.end());
  return r;
}

// An edge of the ordering graph: a constraint, or the order of two stages.
struct Edge {
  size_t to;
  bool stage;
};

}  // namespace

bool ConflictBetween(const NodeSpec& a, const NodeSpec& b, Conflict::Kind* kind, uint32_t* key) {
  *key = 0;
  if (a.exclusive || b.exclusive) {
    *kind = Conflict::kExclusive;
    return true;
  }
  if (Intersects(a.writes, b.writes, key)) {
    *kind = Conflict::kWriteWrite;
    return true;
  }
  if (Intersects(a.writes, Reads(b), key) || Intersects(Reads(a), b.writes, key)) {
    *kind = Conflict::kReadWrite;
    return true;
  }
  if (Intersects(a.commands, Accessed(b), key) || Intersects(b.commands, Accessed(a), key) ||
      Intersects(a.commands, b.commands, key)) {
    *kind = Conflict::kCommands;
    return true;
  }
  return false;
}

absl::StatusOr<Plan> MakePlan(absl::Span<const NodeSpec> specs) {
  const size_t n = specs.size();
  absl::flat_hash_map<std::string, size_t> by_name;
  for (size_t i = 0; i < n; ++i) {
    if (specs[i].name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("system ", i, " has no name"));
    }
    if (!by_name.emplace(specs[i].name, i).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("two systems are named \"", specs[i].name, "\""));
    }
  }
  // The constraint graph (before -> after), then the stage order on top of it.
  std::vector<std::vector<Edge>> out(n);
  std::vector<std::vector<size_t>> constraint_out(n);
  auto find = [&](const std::string& name, size_t from) -> absl::StatusOr<size_t> {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      return absl::InvalidArgumentError(absl::StrCat("system \"", specs[from].name,
                                                     "\" is ordered against \"", name,
                                                     "\", which is not in the schedule"));
    }
    if (it->second == from) {
      return absl::InvalidArgumentError(
          absl::StrCat("system \"", name, "\" is ordered against itself"));
    }
    return it->second;
  };
  for (size_t i = 0; i < n; ++i) {
    for (const std::string& a : specs[i].after) {
      absl::StatusOr<size_t> j = find(a, i);
      if (!j.ok()) return j.status();
      constraint_out[*j].push_back(i);
    }
    for (const std::string& b : specs[i].before) {
      absl::StatusOr<size_t> j = find(b, i);
      if (!j.ok()) return j.status();
      constraint_out[i].push_back(*j);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t j : constraint_out[i]) out[i].push_back({j, false});
    for (size_t j = 0; j < n; ++j) {
      if (specs[j].stage > specs[i].stage) out[i].push_back({j, true});
    }
  }
  // Kahn's algorithm, the earliest (stage, declaration) first among the ready.
  std::vector<size_t> indegree(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (const Edge& e : out[i]) ++indegree[e.to];
  }
  using Key = std::pair<size_t, size_t>;  // (stage, index)
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> ready;
  for (size_t i = 0; i < n; ++i) {
    if (indegree[i] == 0) ready.push({specs[i].stage, i});
  }
  Plan plan;
  while (!ready.empty()) {
    const size_t i = ready.top().second;
    ready.pop();
    plan.order.push_back(i);
    for (const Edge& e : out[i]) {
      if (--indegree[e.to] == 0) ready.push({specs[e.to].stage, e.to});
    }
  }
  if (plan.order.size() != n) {
    // A cycle among the nodes left: walk back along their edges until one repeats.
    std::vector<int> seen(n, -1);
    size_t at = 0;
    while (indegree[at] == 0) ++at;
    std::vector<std::pair<size_t, bool>> path;  // (node, the edge to the next is a stage edge)
    while (seen[at] < 0) {
      seen[at] = static_cast<int>(path.size());
      for (const Edge& e : out[at]) {
        if (indegree[e.to] != 0) {
          path.push_back({at, e.stage});
          at = e.to;
          break;
        }
      }
    }
    std::string text;
    for (size_t k = static_cast<size_t>(seen[at]); k < path.size(); ++k) {
      absl::StrAppend(&text, "\"", specs[path[k].first].name, "\"",
                      path[k].second ? " -> (stage order) -> " : " -> ");
    }
    absl::StrAppend(&text, "\"", specs[at].name, "\"");
    return absl::InvalidArgumentError(
        absl::StrCat("the before/after constraints form a cycle: ", text));
  }
  plan.position.assign(n, 0);
  for (size_t p = 0; p < n; ++p) plan.position[plan.order[p]] = p;

  // Conflicts, and those the constraints leave unordered within a stage.
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  for (size_t i = 0; i < n; ++i) {
    std::vector<size_t> stack = {i};
    while (!stack.empty()) {
      const size_t at = stack.back();
      stack.pop_back();
      for (size_t j : constraint_out[at]) {
        if (!reach[i][j]) {
          reach[i][j] = true;
          stack.push_back(j);
        }
      }
    }
  }
  for (size_t p = 0; p < n; ++p) {
    for (size_t q = p + 1; q < n; ++q) {
      const size_t a = plan.order[p], b = plan.order[q];
      Conflict c{a, b, 0, Conflict::kWriteWrite};
      if (!ConflictBetween(specs[a], specs[b], &c.kind, &c.key)) continue;
      plan.conflicts.push_back(c);
      if (specs[a].stage == specs[b].stage && !reach[a][b] && !reach[b][a]) {
        plan.ambiguities.push_back(c);
      }
    }
  }

  // Steps: sync points where a system touches what pending commands change; segment
  // boundaries there, around exclusive systems, and where a system writes what an
  // earlier system of the segment reads for change detection (it needs a later tick).
  Step current;
  Step::Boundary next_boundary = Step::kStart;
  auto close = [&](Step::Boundary why) {
    if (!current.segment.systems.empty()) {
      plan.steps.push_back(std::move(current));
      next_boundary = why;
    }
    current = Step();
  };
  std::vector<uint32_t> pending;
  std::vector<size_t> writers;
  std::vector<uint32_t> segment_changed;
  for (size_t p = 0; p < n; ++p) {
    const size_t i = plan.order[p];
    const NodeSpec& s = specs[i];
    uint32_t key = 0;
    const bool needs_sync = !pending.empty() && (s.exclusive || Intersects(Accessed(s), pending, &key));
    if (needs_sync) {
      if (s.exclusive && !Intersects(Accessed(s), pending, &key)) key = pending.front();
      close(Step::kAfterSync);
      Step sync;
      sync.kind = Step::kSync;
      sync.reader = i;
      sync.key = key;
      sync.writers = std::move(writers);
      plan.steps.push_back(std::move(sync));
      next_boundary = Step::kAfterSync;
      pending.clear();
      writers.clear();
      segment_changed.clear();
    }
    if (s.exclusive) {
      close(Step::kExclusive);
      current.boundary = needs_sync ? Step::kAfterSync
                         : plan.steps.empty() ? Step::kStart
                                              : Step::kExclusive;
      current.segment.exclusive = true;
      current.segment.systems = {i};
      current.segment.preds = {{}};
      close(Step::kExclusive);
      segment_changed.clear();
    } else {
      if (!current.segment.systems.empty() && Intersects(s.writes, segment_changed, &key)) {
        close(Step::kTick);
        segment_changed.clear();
      }
      if (current.segment.systems.empty()) current.boundary = next_boundary;
      Segment& seg = current.segment;
      std::vector<size_t> preds;
      for (size_t k = 0; k < seg.systems.size(); ++k) {
        const size_t j = seg.systems[k];
        Conflict::Kind kind;
        uint32_t unused;
        const bool data = ConflictBetween(specs[j], s, &kind, &unused) &&
                          (kind == Conflict::kWriteWrite || kind == Conflict::kReadWrite);
        const bool constrained = std::find(constraint_out[j].begin(), constraint_out[j].end(),
                                           i) != constraint_out[j].end();
        if (data || constrained) preds.push_back(k);
      }
      seg.systems.push_back(i);
      seg.preds.push_back(std::move(preds));
      segment_changed.insert(segment_changed.end(), s.changed.begin(), s.changed.end());
    }
    if (!s.commands.empty()) {
      for (uint32_t k : s.commands) {
        if (std::find(pending.begin(), pending.end(), k) == pending.end()) pending.push_back(k);
      }
      writers.push_back(i);
    }
  }
  close(Step::kStart);
  if (!pending.empty()) {
    Step sync;
    sync.kind = Step::kSync;
    sync.key = pending.front();
    sync.writers = std::move(writers);
    plan.steps.push_back(std::move(sync));
  }
  return plan;
}

}  // namespace strata::schedule_internal
