#include "transform/internal/transform_kernels.h"

#include <cstddef>
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "transform/internal/transform_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#if HWY_ARCH_X86
#include <immintrin.h>  // _mm_sfence
#endif
#include "base/matrix-inl.h"

HWY_BEFORE_NAMESPACE();
namespace strata {
namespace transform_internal {
namespace HWY_NAMESPACE {

using ::strata::HWY_NAMESPACE::Copy4x4To;
using ::strata::HWY_NAMESPACE::Multiply4x4To;
using ::strata::HWY_NAMESPACE::StoreMatrixRows;

// NOTE (streaming): with kStream, the world matrices of nodes without children, and the
// locals a batch sets, are written with non-temporal stores: nothing reads them back in
// this update (a leaf's world is no one's parent world; a set local is read from the
// caller's array, not from the column), and the update is large enough that they would
// leave the caches before anyone else reads them. A parent's world stays an ordinary
// store: its children read it right after. The arithmetic is the same either way.

// world[i] = local * world[parent[i]] (local for a root), `local` being local[i] or the
// matrix about to be stored there.
template <bool kStream>
HWY_INLINE void ComputeWorldFrom(const HierarchyView& v, uint32_t i, const float* local,
                                 bool leaf) {
  const uint32_t p = v.parent[i];
  float* out = v.world[i].m;
  if (kStream && leaf) {
    if (p == kNone) {
      Copy4x4To<true>(local, out);
    } else {
      Multiply4x4To<true>(local, v.world[p].m, out);
    }
  } else if (p == kNone) {
    Copy4x4To<false>(local, out);
  } else {
    Multiply4x4To<false>(local, v.world[p].m, out);
  }
}

// NOTE (prefetch): the walks load one node after the other (the next position comes
// from a link just loaded), so out-of-order execution keeps only a few locals in flight
// and a large update waits on memory latency, not bandwidth. Positions mostly increase
// along a walk (families are contiguous), so large updates (kStream) prefetch the local
// kPrefetchAhead positions ahead. The address stays inside the SoA block (the local
// column is followed by the world column and the others: at least 17 slots each, over
// 3 KB in all), and a prefetch never faults anyway.
constexpr uint32_t kPrefetchAhead = 24;

HWY_INLINE void PrefetchLocal(const HierarchyView& v, uint32_t x) {
  hwy::Prefetch(v.local[x + kPrefetchAhead].m);
}

// Preorder walk below `root` (root itself already computed).
template <bool kStream>
HWY_INLINE void UpdateDescendants(const HierarchyView& v, uint32_t root) {
  uint32_t x = v.first_child[root];
  while (x != kNone) {
    if (kStream) PrefetchLocal(v, x);
    const uint32_t child = v.first_child[x];
    ComputeWorldFrom<kStream>(v, x, v.local[x].m, child == kNone);
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

// Orders this thread's non-temporal stores before whatever it does next (such as
// signalling TBB that its task is done), so a thread that synchronises with it sees them.
HWY_INLINE void FenceStreams() {
#if HWY_ARCH_X86
  _mm_sfence();
#endif
}

// NOTE: the kernels copy the view into locals: the stores through float* (intrinsics
// may alias anything) would otherwise make the compiler reload every column pointer
// after each store.
template <bool kStream>
void SetAndUpdate(const HierarchyView& view, const uint32_t* positions,
                  const Matrix4x4* locals, const uint32_t* roots, size_t num_roots) {
  const HierarchyView v = view;
  for (size_t k = 0; k < num_roots; ++k) {
    const uint32_t source = roots != nullptr ? roots[k] : static_cast<uint32_t>(k);
    const uint32_t p = positions[source];
    const bool leaf = v.first_child[p] == kNone;
    if constexpr (kStream) {
      // A stack copy (the caller's matrix may alias a column), then both stores from
      // it: the column's local, streamed, must not be read back.
      alignas(64) float local[16];
      Copy4x4To<false>(locals[source].m, local);
      Copy4x4To<true>(local, v.local[p].m);
      ComputeWorldFrom<true>(v, p, local, leaf);
    } else {
      Copy4x4To<false>(locals[source].m, v.local[p].m);
      ComputeWorldFrom<false>(v, p, v.local[p].m, leaf);
    }
    if (!leaf) UpdateDescendants<kStream>(v, p);
  }
  if (kStream) FenceStreams();
}

void SetAndUpdateSubtreesT(const HierarchyView& v, const uint32_t* positions,
                           const Matrix4x4* locals, const uint32_t* roots, size_t num_roots,
                           bool stream) {
  if (stream) {
    SetAndUpdate<true>(v, positions, locals, roots, num_roots);
  } else {
    SetAndUpdate<false>(v, positions, locals, roots, num_roots);
  }
}

template <bool kStream>
void SetRootRunImpl(const HierarchyView& view, uint32_t first, const Matrix4x4* locals,
                    size_t n) {
  Matrix4x4* const local = view.local + first;
  Matrix4x4* const world = view.world + first;
#if HWY_TARGET == HWY_SCALAR
  for (size_t k = 0; k < n; ++k) {
    const Matrix4x4 m = locals[k];
    local[k] = m;
    world[k] = m;
  }
#else
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::CappedTag<float, 16> d;
  const size_t lanes = hn::Lanes(d);
  for (size_t k = 0; k < n; ++k) {
    // Each part is loaded before it is stored twice: nothing is read back from the
    // columns, so streamed stores are never re-read.
    for (size_t i = 0; i < 16; i += lanes) {
      const auto v = hn::LoadU(d, locals[k].m + i);
      StoreMatrixRows<kStream>(v, d, local[k].m + i);
      StoreMatrixRows<kStream>(v, d, world[k].m + i);
    }
  }
#endif
  if (kStream) FenceStreams();
}

void SetRootRunT(const HierarchyView& v, uint32_t first, const Matrix4x4* locals, size_t n,
                 bool stream) {
  if (stream) {
    SetRootRunImpl<true>(v, first, locals, n);
  } else {
    SetRootRunImpl<false>(v, first, locals, n);
  }
}

void UpdateSubtreesT(const HierarchyView& view, const uint32_t* roots, size_t num_roots) {
  const HierarchyView v = view;
  for (size_t k = 0; k < num_roots; ++k) {
    const uint32_t p = roots[k];
    ComputeWorldFrom<false>(v, p, v.local[p].m, false);
    if (v.first_child[p] != kNone) UpdateDescendants<false>(v, p);
  }
}

void UpdateRangeT(const HierarchyView& view, uint32_t begin, uint32_t end) {
  const HierarchyView v = view;
  for (uint32_t i = begin; i < end; ++i) {
    ComputeWorldFrom<false>(v, i, v.local[i].m, false);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace transform_internal
}  // namespace strata
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strata::transform_internal {

HWY_EXPORT(SetAndUpdateSubtreesT);
HWY_EXPORT(SetRootRunT);
HWY_EXPORT(UpdateSubtreesT);
HWY_EXPORT(UpdateRangeT);

void SetAndUpdateSubtrees(const HierarchyView& view, const uint32_t* positions,
                          const Matrix4x4* locals, const uint32_t* roots, size_t num_roots,
                          bool stream) {
  HWY_DYNAMIC_DISPATCH(SetAndUpdateSubtreesT)(view, positions, locals, roots, num_roots,
                                              stream);
}

void SetRootRun(const HierarchyView& view, uint32_t first, const Matrix4x4* locals, size_t n,
                bool stream) {
  HWY_DYNAMIC_DISPATCH(SetRootRunT)(view, first, locals, n, stream);
}

void UpdateSubtrees(const HierarchyView& view, const uint32_t* roots, size_t num_roots) {
  HWY_DYNAMIC_DISPATCH(UpdateSubtreesT)(view, roots, num_roots);
}

void UpdateRange(const HierarchyView& view, uint32_t begin, uint32_t end) {
  HWY_DYNAMIC_DISPATCH(UpdateRangeT)(view, begin, end);
}

}  // namespace strata::transform_internal
#endif  // HWY_ONCE
