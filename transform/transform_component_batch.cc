// TransformComponent: batches (SetLocalBatch, PrepareBatch and the prepared
// SetLocalBatch), serial or split across threads.
#include "transform/transform_component.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/matrix.h"
#include "base/parallel_for.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_reduce.h"
#include "transform/internal/transform_kernels.h"

namespace strata {
namespace {

using transform_internal::HierarchyView;

// SetLocalBatch marks: (epoch << kMarkShift) | flags, valid only while the epoch matches.
constexpr uint32_t kMarkShift = 4;
constexpr uint32_t kInBatch = 1;     // the node is set by this batch
constexpr uint32_t kKnown = 2;       // kCovered below is computed
constexpr uint32_t kCovered = 4;     // the node or an ancestor is set by this batch
constexpr uint32_t kClaimedBit = 8;  // the node's (last) matrix is taken
constexpr uint32_t kMaxEpoch = (1u << (32 - kMarkShift)) - 1;

// Parallel updates: a SetLocalBatch task takes at least 1/16 of the smallest parallel
// batch (with the default parallel_min_nodes, 1024 roots: at least 1024 matrices, some
// 4 us of work against about 1 us of scheduling).
constexpr size_t kParallelGrainDivisor = 16;

// SetLocalBatch's check of a range of handles: the first invalid index, whether a node
// has a parent, and whether positions strictly increase (first/last: the range's first
// and last position, -1 while empty).
struct BatchScan {
  size_t first_invalid = SIZE_MAX;
  bool parented = false;
  bool increasing = true;
  int64_t first = -1;
  int64_t last = -1;

  // The scan of this range followed by `right`'s.
  BatchScan Then(const BatchScan& right) const {
    BatchScan both;
    both.first_invalid = std::min(first_invalid, right.first_invalid);
    both.parented = parented || right.parented;
    both.increasing = increasing && right.increasing &&
                      (last < 0 || right.first < 0 || last < right.first);
    both.first = first >= 0 ? first : right.first;
    both.last = right.last >= 0 ? right.last : last;
    return both;
  }
};

// ParallelReduce: fn(begin, end, acc) -> acc over disjoint ranges covering [0, n), each
// at least `grain` long (but the last), on several threads, combined left to right
// with Then (associative, not commutative): oneTBB's parallel_reduce. Under TSan (see
// base/parallel_for.h for why) up to kTsanThreads parts on std::threads through
// ParallelFor, which the update loops use directly.
#if defined(__SANITIZE_THREAD__)
constexpr size_t kTsanThreads = 4;

template <typename Fn>
BatchScan ParallelReduce(size_t n, size_t grain, const Fn& fn) {
  const size_t threads = std::clamp<size_t>(n / std::max<size_t>(grain, 1), 1, kTsanThreads);
  std::vector<BatchScan> parts(threads);
  ParallelFor(threads, 1, [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      parts[t] = fn(n * t / threads, n * (t + 1) / threads, BatchScan());
    }
  });
  BatchScan all;
  for (const BatchScan& part : parts) all = all.Then(part);
  return all;
}
#else
template <typename Fn>
BatchScan ParallelReduce(size_t n, size_t grain, const Fn& fn) {
  return tbb::parallel_reduce(
      tbb::blocked_range<size_t>(0, n, std::max<size_t>(grain, 1)), BatchScan(),
      [&fn](const tbb::blocked_range<size_t>& r, const BatchScan& acc) {
        return fn(r.begin(), r.end(), acc);
      },
      // parallel_reduce keeps left-to-right order (it needs associativity only).
      [](const BatchScan& left, const BatchScan& right) { return left.Then(right); });
}
#endif

}  // namespace

bool TransformComponent::InBatchOrBelowOne(uint32_t pos) {
  const uint32_t tag = batch_epoch_ << kMarkShift;
  // Climb until a node whose answer is known (or the root), then fill in the path.
  scratch_path_.clear();
  uint32_t x = pos;
  bool covered = false;
  while (x != kNone) {
    const uint32_t mark = mark_[x];
    if ((mark & ~((1u << kMarkShift) - 1)) == tag && (mark & kKnown)) {
      covered = (mark & kCovered) != 0;
      break;
    }
    scratch_path_.push_back(x);
    x = parent_[x];
  }
  for (size_t k = scratch_path_.size(); k-- > 0;) {
    const uint32_t y = scratch_path_[k];
    uint32_t mark = mark_[y];
    if ((mark & ~((1u << kMarkShift) - 1)) != tag) mark = tag;
    covered = covered || (mark & kInBatch) != 0;
    mark_[y] = mark | kKnown | (covered ? kCovered : 0);
  }
  return covered;
}

absl::Status TransformComponent::SetLocalBatch(absl::Span<const TransformHandle> instances,
                                               absl::Span<const Matrix4x4> locals) {
  if (instances.size() != locals.size()) {
    return absl::InvalidArgumentError(absl::StrCat("SetLocalBatch: span sizes differ (instances ",
                                                   instances.size(), ", locals ",
                                                   locals.size(), ")"));
  }
  auto not_found = [](size_t k) {
    return absl::NotFoundError(
        absl::StrCat("SetLocalBatch: instances[", k, "] is invalid or stale"));
  };
  if (options_.mode == Mode::kDeferred) {
    for (size_t k = 0; k < instances.size(); ++k) {
      if (!IsValid(instances[k])) return not_found(k);
    }
    if (change_log_) [[unlikely]] {
      for (TransformHandle i : instances) LogChange(entity_[PositionOf(i)], Change::kMoved);
    }
    for (size_t k = 0; k < instances.size(); ++k) {
      const uint32_t pos = PositionOf(instances[k]);
      local_[pos] = locals[k];
      Touch(pos);
    }
    return absl::OkStatus();
  }

  // Immediate: one propagation. Only nodes with no set ancestor start a walk ("roots");
  // the others just take their local, and the roots' walks recompute them.
  // One read-only pass (it writes only scratch_positions_) checks every handle and
  // resolves its position before anything changes (all or nothing), split across
  // threads for large batches: at 1M nodes it reads 20 bytes per node, which one core
  // alone would spend longer on than both cores on the update itself.
  const size_t n = instances.size();
  scratch_positions_.resize(n);
  const BatchScan scan = [&] {
    // The columns in locals: the stores to `out` could alias the members otherwise.
    const TransformHandle* in = instances.data();
    uint32_t* const out = scratch_positions_.data();
    const IdSlot* const slots = id_slots_.data();
    const uint32_t* const parent = parent_;
    const uint32_t id_limit = static_cast<uint32_t>(ids_.size());
    auto scan_range = [=](size_t begin, size_t end, BatchScan acc) {
      bool parented = false;
      bool increasing = true;
      int64_t last = acc.last;
      for (size_t k = begin; k < end; ++k) {
        const uint32_t id = in[k].id_;
        // A free id's generation has GenerationTable::kFreeBit set, which no issued
        // handle has; a forged handle carrying it is refused by the second test.
        if (id >= id_limit || slots[id].generation != in[k].generation_ ||
            (in[k].generation_ & GenerationTable::kFreeBit) != 0) {
          acc.first_invalid = std::min(acc.first_invalid, k);
          continue;
        }
        const uint32_t pos = slots[id].position;
        out[k] = pos;
        parented |= parent[pos] != kNone;
        increasing &= int64_t{pos} > last;
        if (acc.first < 0) acc.first = pos;
        last = pos;
      }
      acc.parented |= parented;
      acc.increasing &= increasing;
      acc.last = last;
      return acc;
    };
    if (n < options_.parallel_min_nodes) return scan_range(0, n, BatchScan());
    // NOTE (no data race): tasks read the component and write disjoint ranges of
    // scratch_positions_ (sized above, never resized inside).
    const size_t grain =
        std::max<size_t>(1, options_.parallel_min_nodes / kParallelGrainDivisor);
    return ParallelReduce(n, grain, scan_range);
  }();
  if (scan.first_invalid != SIZE_MAX) return not_found(scan.first_invalid);
  if (change_log_) [[unlikely]] {
    for (size_t k = 0; k < n; ++k) LogChange(entity_[scratch_positions_[k]], Change::kMoved);
  }
  const bool any_parented = scan.parented;
  const bool increasing = scan.increasing;  // positions strictly increasing: no repeats
  if (!any_parented && (increasing || n < options_.parallel_min_nodes)) {
    // Only roots (flat scenes, moving parents): none lies below another, so each starts
    // its own walk, in batch order; a repeated root is walked again and its last matrix
    // wins (serial only: a parallel batch has no repeats). No marks needed.
    SetAndUpdate(scratch_positions_.data(), locals.data(), nullptr, n,
                 /*stream=*/n >= options_.stream_min_nodes);
    return absl::OkStatus();
  }
  const size_t written =
      FindWalkRoots(scratch_positions_.data(), n, scratch_roots_, scratch_inner_);
  for (uint32_t k : scratch_inner_) local_[scratch_positions_[k]] = locals[k];
  SetAndUpdate(scratch_positions_.data(), locals.data(), scratch_roots_.data(),
               scratch_roots_.size(), /*stream=*/written >= options_.stream_min_nodes);
  return absl::OkStatus();
}

size_t TransformComponent::FindWalkRoots(const uint32_t* positions, size_t n,
                                         std::vector<uint32_t>& roots,
                                         std::vector<uint32_t>& inner) {
  if (batch_epoch_ == kMaxEpoch || marks_stale_) {
    std::memset(mark_, 0, (capacity_ + 1) * sizeof(uint32_t));  // marks of no epoch
    batch_epoch_ = 0;
    marks_stale_ = false;
  }
  const uint32_t tag = ++batch_epoch_ << kMarkShift;
  for (size_t k = 0; k < n; ++k) mark_[positions[k]] = tag | kInBatch;
  roots.clear();
  inner.clear();
  size_t written = 0;  // distinct nodes set
  // Backwards, so that a repeated instance keeps its last matrix: the first visit (in
  // this order) claims the node.
  for (size_t k = n; k-- > 0;) {
    const uint32_t pos = positions[k];
    if (mark_[pos] & kClaimedBit) continue;
    mark_[pos] |= kClaimedBit;
    ++written;
    const uint32_t parent = parent_[pos];
    if (parent != kNone && InBatchOrBelowOne(parent)) {
      inner.push_back(static_cast<uint32_t>(k));
    } else {
      roots.push_back(static_cast<uint32_t>(k));
    }
  }
  std::reverse(roots.begin(), roots.end());  // forward memory order
  return written;
}

// ---- Prepared batches ----------------------------------------------------------------

absl::StatusOr<TransformComponent::PreparedBatch> TransformComponent::PrepareBatch(
    absl::Span<const TransformHandle> instances) {
  PreparedBatch batch;
  batch.owner_ = serial_;
  batch.instances_.assign(instances.begin(), instances.end());
  absl::Status s = Resolve(batch);
  if (!s.ok()) return s;
  return batch;
}

absl::Status TransformComponent::Resolve(PreparedBatch& batch) {
  const size_t n = batch.instances_.size();
  for (size_t k = 0; k < n; ++k) {
    if (!IsValid(batch.instances_[k])) {
      return absl::NotFoundError(
          absl::StrCat("PreparedBatch: instances[", k, "] is invalid or stale"));
    }
  }
  batch.positions_.resize(n);
  bool parented = false;
  bool increasing = true;
  bool run = true;  // positions[k] == positions[0] + k, none with a child
  for (size_t k = 0; k < n; ++k) {
    const uint32_t pos = PositionOf(batch.instances_[k]);
    batch.positions_[k] = pos;
    parented |= parent_[pos] != kNone;
    increasing &= k == 0 || pos > batch.positions_[k - 1];
    run &= pos == batch.positions_[0] + k && first_child_[pos] == kNone;
  }
  batch.layout_version_ = layout_version_;
  batch.first_ = n > 0 ? batch.positions_[0] : 0;
  batch.roots_.clear();
  batch.inner_.clear();
  batch.written_ = n;
  if (!parented && increasing) {
    batch.shape_ = run ? PreparedBatch::Shape::kFlatRun : PreparedBatch::Shape::kRoots;
  } else {
    batch.shape_ = PreparedBatch::Shape::kMarked;
    batch.written_ = FindWalkRoots(batch.positions_.data(), n, batch.roots_, batch.inner_);
  }
  // Capacity beyond n would only be carried from frame to frame.
  batch.roots_.shrink_to_fit();
  batch.inner_.shrink_to_fit();
  return absl::OkStatus();
}

absl::Status TransformComponent::SetLocalBatch(PreparedBatch& batch,
                                               absl::Span<const Matrix4x4> locals) {
  if (batch.owner_ != serial_) {
    return absl::InvalidArgumentError("SetLocalBatch: the batch was not prepared here");
  }
  const size_t n = batch.instances_.size();
  if (locals.size() != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SetLocalBatch: span sizes differ (batch ", n, ", locals ", locals.size(), ")"));
  }
  if (n == 0) return absl::OkStatus();
  if (batch.layout_version_ != layout_version_) {
    absl::Status s = Resolve(batch);
    if (!s.ok()) return s;
  }
  const uint32_t* positions = batch.positions_.data();
  if (change_log_) [[unlikely]] {
    for (size_t k = 0; k < n; ++k) LogChange(entity_[positions[k]], Change::kMoved);
  }
  if (options_.mode == Mode::kDeferred) {
    // Touch may move nodes (a clean node joins the dirty range by swaps), which would
    // invalidate the positions still to be read: first every local (last of repeats
    // wins), then the clean nodes by id. Same locals and dirty set as SetLocal in
    // order, so UpdateWorld computes the same worlds.
    scratch_path_.clear();
    for (size_t k = 0; k < n; ++k) {
      const uint32_t pos = positions[k];
      local_[pos] = locals[k];
      if (IsDirty(pos)) {
        idle_[pos] = 0;
      } else {
        scratch_path_.push_back(id_[pos]);
      }
    }
    for (uint32_t id : scratch_path_) Touch(id_slots_[id].position);
    return absl::OkStatus();
  }
  const bool stream = batch.written_ >= options_.stream_min_nodes;
  switch (batch.shape_) {
    case PreparedBatch::Shape::kFlatRun: {
      const HierarchyView view = View();
      const uint32_t first = batch.first_;
      if (n < options_.parallel_min_nodes) {
        transform_internal::SetRootRun(view, first, locals.data(), n, stream);
        break;
      }
      // NOTE (no data race): each task writes the locals and worlds of its own range of
      // positions and reads nothing the others write.
      const size_t grain =
          std::max<size_t>(1, options_.parallel_min_nodes / kParallelGrainDivisor);
      ParallelFor(n, grain, [&](size_t begin, size_t end) {
        transform_internal::SetRootRun(view, first + static_cast<uint32_t>(begin),
                                       locals.data() + begin, end - begin, stream);
      });
      break;
    }
    case PreparedBatch::Shape::kRoots:
      SetAndUpdate(positions, locals.data(), nullptr, n, stream);
      break;
    case PreparedBatch::Shape::kMarked:
      for (uint32_t k : batch.inner_) local_[positions[k]] = locals[k];
      SetAndUpdate(positions, locals.data(), batch.roots_.data(), batch.roots_.size(), stream);
      break;
  }
  return absl::OkStatus();
}

void TransformComponent::SetAndUpdate(const uint32_t* positions, const Matrix4x4* locals,
                                      const uint32_t* roots, size_t num_roots, bool stream) {
  const HierarchyView view = View();
  if (num_roots < options_.parallel_min_nodes) {
    transform_internal::SetAndUpdateSubtrees(view, positions, locals, roots, num_roots,
                                             stream);
    return;
  }
  // NOTE (no data race): each task takes a disjoint range of the roots; no root is
  // in another's subtree (roots are distinct nodes, none set below another: checked
  // above by the strictly increasing positions of an all-roots batch, or by the marks),
  // so each node's local and world are written by exactly one task, and the parent
  // worlds a task reads are either in its own subtrees (written by it, before, in
  // preorder) or ancestors of its roots, which no task writes. parallel_for returns
  // after every task (a happens-before edge), and each task fenced its streamed stores.
  const size_t grain = std::max<size_t>(1, options_.parallel_min_nodes / kParallelGrainDivisor);
  ParallelFor(num_roots, grain, [&](size_t begin, size_t end) {
    if (roots == nullptr) {
      transform_internal::SetAndUpdateSubtrees(view, positions + begin, locals + begin,
                                               nullptr, end - begin, stream);
    } else {
      transform_internal::SetAndUpdateSubtrees(view, positions, locals, roots + begin,
                                               end - begin, stream);
    }
  });
}

}  // namespace strata
