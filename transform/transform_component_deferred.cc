// TransformComponent: deferred mode's UpdateWorld, which recomputes the dirty range
// in one pass (or in independent chunks across threads), and the ordering of that range.
#include "transform/transform_component.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/base/macros.h"
#include "base/parallel_for.h"
#include "oneapi/tbb/task_arena.h"
#include "transform/internal/transform_kernels.h"

namespace strata {
namespace {

using transform_internal::HierarchyView;

// UpdateWorld cuts its dirty range in kChunksPerThread chunks per worker thread, slack
// for TBB to balance uneven chunks.
constexpr size_t kChunksPerThread = 4;

}  // namespace

// ---- Deferred update -----------------------------------------------------------------

void TransformComponent::UpdateWorld() {
  change_log_applied_ = changes_.size();
  if (options_.mode == Mode::kImmediate || first_dirty_ == size_) return;
  const uint32_t end = static_cast<uint32_t>(size_);
  const uint32_t idle_limit = options_.idle_updates_before_clean;
  // Pass 1: age the dirty nodes; a node idle long enough under a clean parent (or none)
  // has a final world matrix, so it leaves the range by a swap with the range's front.
  // (The swap may put a dirty node after its children; pass 2 repairs that.)
  for (uint32_t i = first_dirty_; i < end; ++i) {
    if (idle_[i] >= idle_limit) {
      const uint32_t p = parent_[i];
      if (p == kNone || p < first_dirty_) {
        Swap(i, first_dirty_);
        ++first_dirty_;
        continue;
      }
    }
    if (idle_[i] < 255) ++idle_[i];
  }
  const size_t dirty = end - first_dirty_;
  // No streaming stores here, unlike SetLocalBatch: in 12 alternating A/B pairs (each
  // the median of 5 repetitions) Hierarchy/Deferred took 14.3 ns per node (median)
  // with them and 13.0 without, faster without in 10 pairs; MovingRoot/Deferred/97656
  // (6 MB of worlds, which L3 holds) 10.2 against 8.7 (9 pairs); FlatAll/Deferred was
  // even. A streamed store evicts the line if a cache holds it, and here many are
  // held: a stable dirty range is rewritten every frame.
  const HierarchyView view = View();
  if (dirty >= options_.parallel_min_nodes) {
    // Pass 2, large: the same order check, scanning backwards to find where the range
    // splits into independent chunks; pass 3 runs the chunks in parallel.
    const size_t threads = static_cast<size_t>(tbb::this_task_arena::max_concurrency());
    DirtyRangeScan scan = ScanDirtyRange(kChunksPerThread * threads);
    // Put the range in preorder when it is out of order, or when its subtrees are not
    // contiguous so that it does not split for every thread (moving a parent whose
    // children were already dirty leaves [parents...][children...]: ordered, but no
    // cut separates the families). The permutation costs O(dirty) swaps once; the
    // order then lasts while the dirty range does not change (dirty_range_preordered_),
    // so a range that does not split because one subtree is that large is not
    // reordered again every update.
    if (!scan.ordered ||
        (scan.largest_chunk > dirty / threads && !dirty_range_preordered_)) {
      OrderDirtyRange();
      scan = ScanDirtyRange(kChunksPerThread * threads);
    }
    // NOTE (no data race): no node of a chunk has its parent in another chunk (see
    // ScanDirtyRange), so a task writes only its chunk's worlds and reads worlds of its
    // own chunk (parents first: the range is ordered) or of clean nodes, which no task
    // writes. parallel_for returns after every task.
    const std::vector<uint32_t>& splits = scratch_splits_;
    ParallelFor(splits.size() - 1, 1, [&](size_t begin, size_t end) {
      for (size_t c = begin; c < end; ++c) {
        transform_internal::UpdateRange(view, splits[c], splits[c + 1]);
      }
    });
    return;
  }
  // Pass 2: parents before children. Usually already true (a scan of the parent
  // column); otherwise the range is put in preorder by one permutation of swaps.
  bool ordered = true;
  for (uint32_t i = first_dirty_; i < end; ++i) {
    const uint32_t p = parent_[i];
    if (p != kNone && p > i) {
      ordered = false;
      break;
    }
  }
  if (!ordered) OrderDirtyRange();
  // Pass 3: one linear pass of multiplies.
  transform_internal::UpdateRange(view, first_dirty_, end);
}

TransformComponent::DirtyRangeScan TransformComponent::ScanDirtyRange(size_t chunks) {
  // Position s splits the range if no node at or after s has a dirty parent before s;
  // given parents before children, nodes before s have none at or after s either. One
  // backward scan keeps the smallest dirty parent of the nodes seen so far (min_parent)
  // and cuts at the first valid s at or below each target, about every `step` nodes.
  const uint32_t begin = first_dirty_;
  const uint32_t end = static_cast<uint32_t>(size_);
  const int64_t step = std::max<int64_t>(1, (int64_t{end} - begin) / std::max<size_t>(chunks, 1));
  scratch_splits_.clear();
  scratch_splits_.push_back(end);
  bool ordered = true;
  uint32_t min_parent = kNone;
  int64_t target = int64_t{end} - step;
  for (uint32_t i = end; i-- > begin;) {
    const uint32_t p = parent_[i];
    if (p != kNone && p >= begin) {
      ordered &= p < i;
      min_parent = std::min(min_parent, p);
    }
    if (int64_t{i} <= target && min_parent >= i && i > begin) {
      scratch_splits_.push_back(i);
      target = int64_t{i} - step;
    }
  }
  scratch_splits_.push_back(begin);
  std::reverse(scratch_splits_.begin(), scratch_splits_.end());
  DirtyRangeScan scan{ordered, 0};
  for (size_t c = 0; c + 1 < scratch_splits_.size(); ++c) {
    scan.largest_chunk = std::max(scan.largest_chunk, scratch_splits_[c + 1] - scratch_splits_[c]);
  }
  return scan;
}

void TransformComponent::OrderDirtyRange() {
  // The article swaps a child with its later parent as the pass meets it; on a reversed
  // chain of n that is O(n^2) swaps. Instead: list the dirty subtrees in preorder (every
  // descendant of a dirty node is dirty), then place each listed node with one swap.
  // O(dirty nodes), and each subtree ends up contiguous.
  const uint32_t end = static_cast<uint32_t>(size_);
  std::vector<uint32_t>& order = scratch_roots_;  // ids in the wanted order
  order.clear();
  for (uint32_t i = first_dirty_; i < end; ++i) {
    const uint32_t p = parent_[i];
    if (p != kNone && IsDirty(p)) continue;  // reached from its dirty ancestor
    order.push_back(id_[i]);
    uint32_t x = first_child_[i];
    while (x != kNone) {
      order.push_back(id_[x]);
      if (first_child_[x] != kNone) {
        x = first_child_[x];
        continue;
      }
      while (x != kNone && next_sibling_[x] == kNone) {
        x = parent_[x];
        if (x == i) x = kNone;
      }
      if (x != kNone) x = next_sibling_[x];
    }
  }
  ABSL_HARDENING_ASSERT(order.size() == end - first_dirty_);
  for (uint32_t k = 0; k < order.size(); ++k) {
    // Positions before first_dirty_ + k are final, so the node is at or after it.
    Swap(first_dirty_ + k, id_slots_[order[k]].position);
  }
  dirty_range_preordered_ = true;  // until the next Swap, Attach or Detach
}

}  // namespace strata
