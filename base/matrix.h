// Matrix4x4: the 4x4 float matrix of the transform graph, with a Highway multiply.
//
// Row-vector convention, as in the seed article: a point is a row vector p, transformed
// as p' = p * M, so a child's world matrix is `local * parent_world`. Storage is 16
// floats row-major; rows 0..2 are the (scaled) basis vectors, row 3 the translation
// (elements 12, 13, 14).
//
//   Matrix4x4 local = Matrix4x4::Compose({1, 2, 3}, Quaternion::Identity(), {2, 2, 2});
//   Matrix4x4 world = local * Matrix4x4::Translation(10, 0, 0);
//   Vector3 t = world.translation();                       // {12, 2, 3}
//   Vector3 pos, scale; Quaternion rot;
//   bool ok = world.Decompose(&pos, &rot, &scale);         // pos {12, 2, 3}, scale {2, 2, 2}
//
// operator* dispatches once per call to the best Highway target of the CPU (SSE4, AVX2,
// AVX-512, ...). Hot loops over many matrices should use the batch kernels in
// transform/internal/transform_kernels.h, which dispatch once per loop.
//
// Thread-safety: all functions are pure and thread-safe.
#ifndef STRATA_BASE_MATRIX_H_
#define STRATA_BASE_MATRIX_H_

#include <cstddef>
#include <ostream>
#include <string>

#include "base/policy_checks.h"

namespace strata {

// Vector3: a position or a scale.
struct Vector3 {
  float x = 0.0f;
  float y = 0.0f;
  float z = 0.0f;
  friend bool operator==(const Vector3& a, const Vector3& b) {
    return a.x == b.x && a.y == b.y && a.z == b.z;
  }
};

// Vector4: four floats, e.g. an RGBA colour. Not a rotation: that is Quaternion.
struct Vector4 {
  float x = 0.0f;
  float y = 0.0f;
  float z = 0.0f;
  float w = 0.0f;
  friend bool operator==(const Vector4& a, const Vector4& b) {
    return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
  }
};

// Quaternion: a rotation, (x, y, z) the vector part and w the scalar part. Compose
// expects a unit quaternion (it normalises a non-unit one; a zero one means identity).
struct Quaternion {
  float x = 0.0f;
  float y = 0.0f;
  float z = 0.0f;
  float w = 1.0f;
  static constexpr Quaternion Identity() { return Quaternion{0.0f, 0.0f, 0.0f, 1.0f}; }
  // FromAxisAngle: rotation of `radians` around `axis` (normalised here; a zero axis
  // gives the identity).
  static Quaternion FromAxisAngle(Vector3 axis, float radians);
  friend bool operator==(const Quaternion& a, const Quaternion& b) {
    return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
  }
};

// NOTE: 16-byte aligned so one row is one aligned SSE load; the SoA columns of
// TransformComponent align each matrix to 64 bytes (one cache line).
struct alignas(16) Matrix4x4 {
  float m[16];

  static constexpr Matrix4x4 Identity() {
    return Matrix4x4{{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}};
  }
  static constexpr Matrix4x4 Translation(float x, float y, float z) {
    return Matrix4x4{{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, x, y, z, 1}};
  }
  static constexpr Matrix4x4 Scaling(float x, float y, float z) {
    return Matrix4x4{{x, 0, 0, 0, 0, y, 0, 0, 0, 0, z, 0, 0, 0, 0, 1}};
  }
  // Rotation: the rotation matrix of quaternion `q` (normalised first).
  static Matrix4x4 Rotation(Quaternion q);

  // Compose: scale, then rotate, then translate (S * R * T in row-vector order): the
  // local matrix of a node from its position, rotation and scale. O(1).
  static Matrix4x4 Compose(Vector3 position, Quaternion rotation, Vector3 scale);

  // Decompose: the inverse of Compose for an affine matrix without shear: writes
  // position, a unit rotation (w >= 0) and scale. A negative determinant is reported
  // as a negative x scale. Returns false and writes nothing if the matrix is not affine
  // (column 3 is not (0, 0, 0, 1)) or a scale is zero or not finite. O(1). Shear, if
  // present, is lost (the rotation is that of the orthonormalised basis).
  bool Decompose(Vector3* position, Quaternion* rotation, Vector3* scale) const;

  // translation: row 3, elements 12, 13, 14.
  constexpr Vector3 translation() const { return Vector3{m[12], m[13], m[14]}; }

  // TransformPoint: p * M for the point (p, 1), dropping w (affine matrices).
  Vector3 TransformPoint(Vector3 p) const;

  float& operator()(int row, int col) { return m[row * 4 + col]; }
  float operator()(int row, int col) const { return m[row * 4 + col]; }

  // Exact, element-wise comparison (no tolerance; -0 == 0, NaN != NaN).
  friend bool operator==(const Matrix4x4& a, const Matrix4x4& b) {
    for (int i = 0; i < 16; ++i) {
      if (a.m[i] != b.m[i]) return false;
    }
    return true;
  }
  friend bool operator!=(const Matrix4x4& a, const Matrix4x4& b) { return !(a == b); }

  // operator*: a * b, Highway-dispatched (see MultiplyMatrix).
  friend Matrix4x4 operator*(const Matrix4x4& a, const Matrix4x4& b);

  std::string DebugString() const;
  friend std::ostream& operator<<(std::ostream& os, const Matrix4x4& matrix) {
    return os << matrix.DebugString();
  }
};

static_assert(sizeof(Matrix4x4) == 64, "Matrix4x4 is 16 packed floats");

// MultiplyMatrix: *out = a * b with the best Highway target of this CPU. `out` may alias
// `a` or `b`. O(1): 16 multiply-adds, 4 with AVX-512.
void MultiplyMatrix(const Matrix4x4& a, const Matrix4x4& b, Matrix4x4* out);

// MultiplyMatrices: out[i] = a[i] * b[i] for i < n, one dispatch for the whole array.
// `out` may alias `a` or `b` element-wise (same index), not shifted.
void MultiplyMatrices(const Matrix4x4* a, const Matrix4x4* b, Matrix4x4* out, size_t n);

// MultiplyMatrixReference: the textbook triple loop in plain C++ (no FMA contraction
// guaranteed either way), the oracle of the tests.
Matrix4x4 MultiplyMatrixReference(const Matrix4x4& a, const Matrix4x4& b);

// NearlyEqual: every element differs by at most abs_tolerance + rel_tolerance * |b|.
bool NearlyEqual(const Matrix4x4& a, const Matrix4x4& b, float abs_tolerance = 1e-5f,
                 float rel_tolerance = 1e-5f);

}  // namespace strata

#endif  // STRATA_BASE_MATRIX_H_
