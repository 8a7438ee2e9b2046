// Hot loops of TransformComponent over its raw SoA columns, Highway-dispatched once per
// call (not once per matrix). Plain C++ interface: pointers and counts only.
//
// Internal to //transform: the columns and their invariants belong to
// TransformComponent (transform/transform_component.h).
#ifndef STRATA_TRANSFORM_INTERNAL_TRANSFORM_KERNELS_H_
#define STRATA_TRANSFORM_INTERNAL_TRANSFORM_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "base/matrix.h"

namespace strata::transform_internal {

// kNone: "no node" in the link columns.
inline constexpr uint32_t kNone = 0xFFFFFFFFu;

// HierarchyView: the columns the kernels use; positions index every column.
struct HierarchyView {
  Matrix4x4* local;
  Matrix4x4* world;
  const uint32_t* parent;
  const uint32_t* first_child;
  const uint32_t* next_sibling;
};

// SetAndUpdateSubtrees: for each k in roots[0..num_roots) (k = 0..num_roots-1 when
// `roots` is null), in order: p = positions[k];
// local[p] = locals[k]; world[p] = local[p] * world[parent[p]] (local[p] for a root);
// then every descendant of p in preorder, world = local * world[parent]. No recursion,
// no stack: the walk follows first_child / next_sibling / parent links.
// Requires: no root is a descendant of another root (each node is computed once) and
// the parents of the roots are up to date. O(sum of subtree sizes).
// stream: write the set locals and the worlds of nodes without children with
// non-temporal stores (for updates too large to stay in cache; see
// TransformComponent::Options::stream_min_nodes), then fence them (sfence), so a
// thread that synchronises with this one afterwards sees them. Same results.
// Calls on disjoint sets of subtrees may run concurrently (each writes only the nodes
// of its own subtrees and reads their ancestors, which no call writes).
void SetAndUpdateSubtrees(const HierarchyView& view, const uint32_t* positions,
                          const Matrix4x4* locals, const uint32_t* roots, size_t num_roots,
                          bool stream);

// SetRootRun: for k in [0, n): local[first + k] = world[first + k] = locals[k]. For a run
// of roots without children (their world is their local); reads no link. stream: as
// for SetAndUpdateSubtrees (both matrices streamed, then fenced). Calls on disjoint
// runs may run concurrently.
void SetRootRun(const HierarchyView& view, uint32_t first, const Matrix4x4* locals, size_t n,
                bool stream);

// UpdateSubtrees: as SetAndUpdateSubtrees without setting locals; roots are positions.
void UpdateSubtrees(const HierarchyView& view, const uint32_t* roots, size_t num_roots);

// UpdateRange: for i in [begin, end), in increasing order, world[i] = local[i] *
// world[parent[i]] (local[i] for a root). Requires every parent in the range to sit
// before its children. O(end - begin). Ordinary stores only: streaming the leaves'
// worlds measured slower here (README, "Large updates"). Calls on ranges with no parent
// of one range's node in another range may run concurrently.
void UpdateRange(const HierarchyView& view, uint32_t begin, uint32_t end);

}  // namespace strata::transform_internal

#endif  // STRATA_TRANSFORM_INTERNAL_TRANSFORM_KERNELS_H_
