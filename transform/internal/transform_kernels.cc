#include "transform/internal/transform_kernels.h"

#include <cstddef>
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "transform/internal/transform_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "transform/matrix-inl.h"

HWY_BEFORE_NAMESPACE();
namespace strata {
namespace transform_internal {
namespace HWY_NAMESPACE {

using ::strata::HWY_NAMESPACE::Copy4x4;
using ::strata::HWY_NAMESPACE::Multiply4x4;

HWY_INLINE void ComputeWorld(const HierarchyView& v, uint32_t i) {
  const uint32_t p = v.parent[i];
  if (p == kNone) {
    Copy4x4(v.local[i].m, v.world[i].m);
  } else {
    Multiply4x4(v.local[i].m, v.world[p].m, v.world[i].m);
  }
}

// Preorder walk below `root` (root itself already computed).
HWY_INLINE void UpdateDescendants(const HierarchyView& v, uint32_t root) {
  uint32_t x = v.first_child[root];
  while (x != kNone) {
    ComputeWorld(v, x);
    const uint32_t child = v.first_child[x];
    if (child != kNone) {
      x = child;
      continue;
    }
    // Climb until a node with a next sibling; stop at the root.
    while (v.next_sibling[x] == kNone) {
      x = v.parent[x];
      if (x == root) return;
    }
    x = v.next_sibling[x];
  }
}

void SetAndUpdateSubtreesT(const HierarchyView& v, const uint32_t* positions,
                           const Matrix4x4* locals, const uint32_t* roots, size_t num_roots) {
  for (size_t k = 0; k < num_roots; ++k) {
    const uint32_t source = roots != nullptr ? roots[k] : static_cast<uint32_t>(k);
    const uint32_t p = positions[source];
    Copy4x4(locals[source].m, v.local[p].m);
    ComputeWorld(v, p);
    if (v.first_child[p] != kNone) UpdateDescendants(v, p);
  }
}

void UpdateSubtreesT(const HierarchyView& v, const uint32_t* roots, size_t num_roots) {
  for (size_t k = 0; k < num_roots; ++k) {
    const uint32_t p = roots[k];
    ComputeWorld(v, p);
    if (v.first_child[p] != kNone) UpdateDescendants(v, p);
  }
}

void UpdateRangeT(const HierarchyView& v, uint32_t begin, uint32_t end) {
  for (uint32_t i = begin; i < end; ++i) ComputeWorld(v, i);
}

}  // namespace HWY_NAMESPACE
}  // namespace transform_internal
}  // namespace strata
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strata::transform_internal {

HWY_EXPORT(SetAndUpdateSubtreesT);
HWY_EXPORT(UpdateSubtreesT);
HWY_EXPORT(UpdateRangeT);

void SetAndUpdateSubtrees(const HierarchyView& view, const uint32_t* positions,
                          const Matrix4x4* locals, const uint32_t* roots, size_t num_roots) {
  HWY_DYNAMIC_DISPATCH(SetAndUpdateSubtreesT)(view, positions, locals, roots, num_roots);
}

void UpdateSubtrees(const HierarchyView& view, const uint32_t* roots, size_t num_roots) {
  HWY_DYNAMIC_DISPATCH(UpdateSubtreesT)(view, roots, num_roots);
}

void UpdateRange(const HierarchyView& view, uint32_t begin, uint32_t end) {
  HWY_DYNAMIC_DISPATCH(UpdateRangeT)(view, begin, end);
}

}  // namespace strata::transform_internal
#endif  // HWY_ONCE
