// Per-target 4x4 multiply (Highway), for .cc files compiled once per target through
// hwy/foreach_target.h (see STYLE.md "Highway kernels"). No include guard of the usual
// kind: the HWY_TARGET_TOGGLE pattern re-includes it once per target.
//
// NOTE: matrices are 16 row-major floats, row vectors: out row r = sum_k a[r][k] * b row k.
// One vector holds 128 / 256 / 512 bits = 1 / 2 / 4 rows. b's rows are broadcast to every
// 128-bit block (LoadDup128) and a's elements to every lane of their block (Broadcast<k>
// works per block), so the same code multiplies 1, 2 or 4 rows per instruction: 16, 8
// or 4 multiply-adds per matrix.

#if defined(STRATA_BASE_MATRIX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef STRATA_BASE_MATRIX_INL_H_
#undef STRATA_BASE_MATRIX_INL_H_
#else
#define STRATA_BASE_MATRIX_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace strata {
namespace HWY_NAMESPACE {

// StoreMatrixRows: stores `v` (rows of a matrix) at `out`, with a non-temporal store
// when kStream (`out` must then be aligned to the vector size; TransformComponent's
// matrix columns are 64-byte aligned, so on AVX-512 one store writes one whole cache
// line without reading it first). Non-temporal stores need a fence before another
// thread may read them: see transform/internal/transform_kernels.cc.
template <bool kStream, class D, class V>
HWY_INLINE void StoreMatrixRows(V v, D d, float* out) {
  namespace hn = hwy::HWY_NAMESPACE;
  if constexpr (kStream) {
    hn::Stream(v, d, out);
  } else {
    hn::StoreU(v, d, out);
  }
}

// Multiply4x4: out = a * b. `out` may alias `a` or `b`: all of b is loaded before the
// first store, and each store covers only rows of a already read. Multiply4x4To<true>
// stores with non-temporal stores (same arithmetic, so bit-identical results).
template <bool kStream>
HWY_INLINE void Multiply4x4To(const float* a, const float* b, float* out) {
#if HWY_TARGET == HWY_SCALAR
  float r[16];
  for (int row = 0; row < 4; ++row) {
    for (int col = 0; col < 4; ++col) {
      r[row * 4 + col] = a[row * 4 + 0] * b[0 * 4 + col] + a[row * 4 + 1] * b[1 * 4 + col] +
                         a[row * 4 + 2] * b[2 * 4 + col] + a[row * 4 + 3] * b[3 * 4 + col];
    }
  }
  for (int i = 0; i < 16; ++i) out[i] = r[i];
#else
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::CappedTag<float, 16> d;  // one whole matrix at most
  const size_t lanes = hn::Lanes(d);
  const auto b0 = hn::LoadDup128(d, b + 0);
  const auto b1 = hn::LoadDup128(d, b + 4);
  const auto b2 = hn::LoadDup128(d, b + 8);
  const auto b3 = hn::LoadDup128(d, b + 12);
  for (size_t row = 0; row < 16; row += lanes) {
    const auto va = hn::LoadU(d, a + row);
    auto acc = hn::Mul(hn::Broadcast<0>(va), b0);
    acc = hn::MulAdd(hn::Broadcast<1>(va), b1, acc);
    acc = hn::MulAdd(hn::Broadcast<2>(va), b2, acc);
    acc = hn::MulAdd(hn::Broadcast<3>(va), b3, acc);
    StoreMatrixRows<kStream>(acc, d, out + row);
  }
#endif
}

HWY_INLINE void Multiply4x4(const float* a, const float* b, float* out) {
  Multiply4x4To<false>(a, b, out);
}

// Copy4x4: out = a, with full-width vectors (a root's world matrix is its local).
// Copy4x4To<true> stores with non-temporal stores. `out` may equal `a`.
template <bool kStream>
HWY_INLINE void Copy4x4To(const float* a, float* out) {
#if HWY_TARGET == HWY_SCALAR
  for (int i = 0; i < 16; ++i) out[i] = a[i];
#else
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::CappedTag<float, 16> d;
  const size_t lanes = hn::Lanes(d);
  for (size_t i = 0; i < 16; i += lanes) {
    StoreMatrixRows<kStream>(hn::LoadU(d, a + i), d, out + i);
  }
#endif
}

HWY_INLINE void Copy4x4(const float* HWY_RESTRICT a, float* HWY_RESTRICT out) {
  Copy4x4To<false>(a, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace strata
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
