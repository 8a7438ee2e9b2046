#include "base/matrix.h"

#include <cmath>
#include <cstddef>
#include <string>

#include "absl/strings/str_format.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "base/matrix.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// After foreach_target.h: compiled once per target (see matrix-inl.h).
#include "base/matrix-inl.h"

HWY_BEFORE_NAMESPACE();
namespace strata {
namespace HWY_NAMESPACE {

void MultiplyMatrixT(const Matrix4x4* a, const Matrix4x4* b, Matrix4x4* out) {
  Multiply4x4(a->m, b->m, out->m);
}

void MultiplyMatricesT(const Matrix4x4* a, const Matrix4x4* b, Matrix4x4* out, size_t n) {
  for (size_t i = 0; i < n; ++i) Multiply4x4(a[i].m, b[i].m, out[i].m);
}

}  // namespace HWY_NAMESPACE
}  // namespace strata
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strata {

HWY_EXPORT(MultiplyMatrixT);
HWY_EXPORT(MultiplyMatricesT);

void MultiplyMatrix(const Matrix4x4& a, const Matrix4x4& b, Matrix4x4* out) {
  HWY_DYNAMIC_DISPATCH(MultiplyMatrixT)(&a, &b, out);
}

void MultiplyMatrices(const Matrix4x4* a, const Matrix4x4* b, Matrix4x4* out, size_t n) {
  HWY_DYNAMIC_DISPATCH(MultiplyMatricesT)(a, b, out, n);
}

Matrix4x4 operator*(const Matrix4x4& a, const Matrix4x4& b) {
  Matrix4x4 out;
  MultiplyMatrix(a, b, &out);
  return out;
}

Matrix4x4 MultiplyMatrixReference(const Matrix4x4& a, const Matrix4x4& b) {
  Matrix4x4 out;
  for (int row = 0; row < 4; ++row) {
    for (int col = 0; col < 4; ++col) {
      float sum = 0.0f;
      for (int k = 0; k < 4; ++k) sum += a(row, k) * b(k, col);
      out(row, col) = sum;
    }
  }
  return out;
}

bool NearlyEqual(const Matrix4x4& a, const Matrix4x4& b, float abs_tolerance,
                 float rel_tolerance) {
  for (int i = 0; i < 16; ++i) {
    const float diff = std::fabs(a.m[i] - b.m[i]);
    // Written so that NaN fails.
    if (!(diff <= abs_tolerance + rel_tolerance * std::fabs(b.m[i]))) return false;
  }
  return true;
}

namespace {

// Normalised copy of q; the identity for a zero or non-finite quaternion.
Quaternion Normalized(Quaternion q) {
  const float len2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
  if (!(len2 > 0.0f) || !std::isfinite(len2)) return Quaternion::Identity();
  const float inv = 1.0f / std::sqrt(len2);
  return Quaternion{q.x * inv, q.y * inv, q.z * inv, q.w * inv};
}

}  // namespace

Quaternion Quaternion::FromAxisAngle(Vector3 axis, float radians) {
  const float len2 = axis.x * axis.x + axis.y * axis.y + axis.z * axis.z;
  if (!(len2 > 0.0f) || !std::isfinite(len2)) return Quaternion::Identity();
  const float s = std::sin(radians * 0.5f) / std::sqrt(len2);
  return Quaternion{axis.x * s, axis.y * s, axis.z * s, std::cos(radians * 0.5f)};
}

Matrix4x4 Matrix4x4::Rotation(Quaternion q) {
  return Compose(Vector3{}, q, Vector3{1.0f, 1.0f, 1.0f});
}

Matrix4x4 Matrix4x4::Compose(Vector3 position, Quaternion rotation, Vector3 scale) {
  const Quaternion q = Normalized(rotation);
  const float xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
  const float xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  const float wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  // Row i is the image of basis vector i (row-vector convention: the transpose of the
  // usual column-vector rotation matrix), scaled by scale[i].
  return Matrix4x4{{
      scale.x * (1 - 2 * (yy + zz)), scale.x * (2 * (xy + wz)), scale.x * (2 * (xz - wy)), 0,
      scale.y * (2 * (xy - wz)), scale.y * (1 - 2 * (xx + zz)), scale.y * (2 * (yz + wx)), 0,
      scale.z * (2 * (xz + wy)), scale.z * (2 * (yz - wx)), scale.z * (1 - 2 * (xx + yy)), 0,
      position.x, position.y, position.z, 1,
  }};
}

bool Matrix4x4::Decompose(Vector3* position, Quaternion* rotation, Vector3* scale) const {
  if (m[3] != 0.0f || m[7] != 0.0f || m[11] != 0.0f || m[15] != 1.0f) return false;
  float s[3];
  for (int row = 0; row < 3; ++row) {
    const float* r = m + row * 4;
    s[row] = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    if (!(s[row] > 0.0f) || !std::isfinite(s[row])) return false;
  }
  const float det = m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) +
                    m[2] * (m[4] * m[9] - m[5] * m[8]);
  if (det < 0.0f) s[0] = -s[0];
  // r[i][j]: the rotation in row-vector form; its transpose is the column-vector matrix
  // c[j][i] that the usual quaternion extraction (Shepperd) reads.
  float r[3][3];
  for (int row = 0; row < 3; ++row) {
    for (int col = 0; col < 3; ++col) r[row][col] = m[row * 4 + col] / s[row];
  }
  auto c = [&r](int i, int j) { return r[j][i]; };
  Quaternion q;
  const float trace = c(0, 0) + c(1, 1) + c(2, 2);
  if (trace > 0.0f) {
    const float t = std::sqrt(trace + 1.0f) * 2.0f;
    q = {(c(2, 1) - c(1, 2)) / t, (c(0, 2) - c(2, 0)) / t, (c(1, 0) - c(0, 1)) / t, 0.25f * t};
  } else if (c(0, 0) > c(1, 1) && c(0, 0) > c(2, 2)) {
    const float t = std::sqrt(1.0f + c(0, 0) - c(1, 1) - c(2, 2)) * 2.0f;
    q = {0.25f * t, (c(0, 1) + c(1, 0)) / t, (c(0, 2) + c(2, 0)) / t, (c(2, 1) - c(1, 2)) / t};
  } else if (c(1, 1) > c(2, 2)) {
    const float t = std::sqrt(1.0f + c(1, 1) - c(0, 0) - c(2, 2)) * 2.0f;
    q = {(c(0, 1) + c(1, 0)) / t, 0.25f * t, (c(1, 2) + c(2, 1)) / t, (c(0, 2) - c(2, 0)) / t};
  } else {
    const float t = std::sqrt(1.0f + c(2, 2) - c(0, 0) - c(1, 1)) * 2.0f;
    q = {(c(0, 2) + c(2, 0)) / t, (c(1, 2) + c(2, 1)) / t, 0.25f * t, (c(1, 0) - c(0, 1)) / t};
  }
  q = Normalized(q);
  if (q.w < 0.0f) q = Quaternion{-q.x, -q.y, -q.z, -q.w};
  *position = translation();
  *rotation = q;
  *scale = Vector3{s[0], s[1], s[2]};
  return true;
}

Vector3 Matrix4x4::TransformPoint(Vector3 p) const {
  return Vector3{p.x * m[0] + p.y * m[4] + p.z * m[8] + m[12],
                 p.x * m[1] + p.y * m[5] + p.z * m[9] + m[13],
                 p.x * m[2] + p.y * m[6] + p.z * m[10] + m[14]};
}

std::string Matrix4x4::DebugString() const {
  return absl::StrFormat("[%g %g %g %g | %g %g %g %g | %g %g %g %g | %g %g %g %g]", m[0], m[1],
                         m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9], m[10], m[11], m[12],
                         m[13], m[14], m[15]);
}

}  // namespace strata
#endif  // HWY_ONCE
