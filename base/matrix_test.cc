#include "base/matrix.h"

#include <cmath>
#include <cstddef>
#include <vector>

#include "gtest/gtest.h"
#include "testing/random.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "base/matrix_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
// After foreach_target.h: compiled once per target (see matrix-inl.h).
#include "base/matrix-inl.h"

// Per-target part: every compiled Highway target (SSE4, AVX2, AVX-512, EMU128, ...)
// multiplies like the scalar reference.
// NOTE: outside namespace strata, whose `testing` would hide ::testing in Highway's
// test macros.
HWY_BEFORE_NAMESPACE();
namespace strata_matrix_test {
namespace HWY_NAMESPACE {
namespace {

using ::strata::Matrix4x4;
using ::strata::MultiplyMatrixReference;
using ::strata::NearlyEqual;
using Random = ::strata::testing::Random;

// NOTE: the kernels run out of line, in frames without addressable locals. Inlined into
// a test body, GCC spills zmm registers with aligned stores into ASan's fake stack
// (detect_stack_use_after_return=1), whose frames are not 64-byte aligned.
HWY_NOINLINE void Multiply4x4(const float* a, const float* b, float* out) {
  ::strata::HWY_NAMESPACE::Multiply4x4(a, b, out);
}
HWY_NOINLINE void Copy4x4(const float* a, float* out) {
  ::strata::HWY_NAMESPACE::Copy4x4(a, out);
}

Matrix4x4 RandomMatrix(Random& rng) {
  Matrix4x4 m;
  for (float& x : m.m) x = rng.UniformFloat(-4.0f, 4.0f);
  return m;
}

void TestMultiplyMatchesReference() {
  Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  for (int trial = 0; trial < 2000; ++trial) {
    const Matrix4x4 a = RandomMatrix(rng);
    const Matrix4x4 b = RandomMatrix(rng);
    Matrix4x4 out;
    Multiply4x4(a.m, b.m, out.m);
    ASSERT_TRUE(NearlyEqual(out, MultiplyMatrixReference(a, b), 1e-4f, 1e-5f))
        << "target " << hwy::TargetName(HWY_TARGET) << "\n"
        << out << "\n" << MultiplyMatrixReference(a, b);
  }
}

void TestMultiplyAliasing() {
  Random rng(::strata::testing::TestSeed() + 1);
  SCOPED_TRACE(rng.DescribeSeed());
  const Matrix4x4 a = RandomMatrix(rng);
  const Matrix4x4 b = RandomMatrix(rng);
  const Matrix4x4 expected = MultiplyMatrixReference(a, b);
  Matrix4x4 in_a = a;
  Multiply4x4(in_a.m, b.m, in_a.m);  // out == a
  EXPECT_TRUE(NearlyEqual(in_a, expected, 1e-4f, 1e-5f)) << hwy::TargetName(HWY_TARGET);
  Matrix4x4 in_b = b;
  Multiply4x4(a.m, in_b.m, in_b.m);  // out == b
  EXPECT_TRUE(NearlyEqual(in_b, expected, 1e-4f, 1e-5f)) << hwy::TargetName(HWY_TARGET);
  Matrix4x4 square = a;
  Multiply4x4(square.m, square.m, square.m);  // all three
  EXPECT_TRUE(NearlyEqual(square, MultiplyMatrixReference(a, a), 1e-4f, 1e-5f));
}

void TestIdentityAndCopyExact() {
  Random rng(::strata::testing::TestSeed() + 2);
  const Matrix4x4 a = RandomMatrix(rng);
  const Matrix4x4 identity = Matrix4x4::Identity();
  Matrix4x4 out;
  Multiply4x4(a.m, identity.m, out.m);
  EXPECT_EQ(out, a) << hwy::TargetName(HWY_TARGET);
  Multiply4x4(identity.m, a.m, out.m);
  EXPECT_EQ(out, a) << hwy::TargetName(HWY_TARGET);
  Copy4x4(a.m, out.m);
  EXPECT_EQ(out, a);
}

}  // namespace
}  // namespace HWY_NAMESPACE
}  // namespace strata_matrix_test
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strata_matrix_test {
HWY_BEFORE_TEST(MatrixKernel);
HWY_EXPORT_AND_TEST_P(MatrixKernel, TestMultiplyMatchesReference);
HWY_EXPORT_AND_TEST_P(MatrixKernel, TestMultiplyAliasing);
HWY_EXPORT_AND_TEST_P(MatrixKernel, TestIdentityAndCopyExact);
}  // namespace strata_matrix_test

namespace strata {
namespace {

using testing::Random;

Matrix4x4 RandomMatrix(Random& rng) {
  Matrix4x4 m;
  for (float& x : m.m) x = rng.UniformFloat(-4.0f, 4.0f);
  return m;
}

TEST(Matrix4x4, LayoutIsRowMajorWithTranslationInRow3) {
  const Matrix4x4 t = Matrix4x4::Translation(1, 2, 3);
  EXPECT_EQ(t.m[12], 1.0f);
  EXPECT_EQ(t.m[13], 2.0f);
  EXPECT_EQ(t.m[14], 3.0f);
  EXPECT_EQ(t(3, 0), 1.0f);
  EXPECT_EQ(t.translation(), (Vector3{1, 2, 3}));
  EXPECT_EQ(sizeof(Matrix4x4), 64u);
}

TEST(Matrix4x4, RowVectorConventionAppliesLeftFirst) {
  // Scale then translate: the point is scaled, then moved.
  const Matrix4x4 m = Matrix4x4::Scaling(2, 2, 2) * Matrix4x4::Translation(10, 0, 0);
  EXPECT_EQ(m.TransformPoint({1, 1, 1}), (Vector3{12, 2, 2}));
  const Matrix4x4 n = Matrix4x4::Translation(10, 0, 0) * Matrix4x4::Scaling(2, 2, 2);
  EXPECT_EQ(n.TransformPoint({1, 1, 1}), (Vector3{22, 2, 2}));
}

TEST(Matrix4x4, DispatchedMultiplyMatchesReference) {
  Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  std::vector<Matrix4x4> a(257), b(257), out(257);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = RandomMatrix(rng);
    b[i] = RandomMatrix(rng);
  }
  MultiplyMatrices(a.data(), b.data(), out.data(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const Matrix4x4 expected = MultiplyMatrixReference(a[i], b[i]);
    ASSERT_TRUE(NearlyEqual(out[i], expected, 1e-4f, 1e-5f)) << i;
    ASSERT_TRUE(NearlyEqual(a[i] * b[i], expected, 1e-4f, 1e-5f)) << i;
  }
  MultiplyMatrices(a.data(), b.data(), out.data(), 0);  // empty is fine
}

TEST(Matrix4x4, ComposeDecomposeRoundTrip) {
  Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  for (int trial = 0; trial < 1000; ++trial) {
    const Vector3 pos{rng.UniformFloat(-100, 100), rng.UniformFloat(-100, 100),
                      rng.UniformFloat(-100, 100)};
    const Quaternion rot = Quaternion::FromAxisAngle(
        {rng.UniformFloat(-1, 1), rng.UniformFloat(-1, 1), rng.UniformFloat(-1, 1)},
        rng.UniformFloat(-3.1f, 3.1f));
    const Vector3 scale{rng.UniformFloat(0.1f, 5), rng.UniformFloat(0.1f, 5),
                        rng.UniformFloat(0.1f, 5)};
    const Matrix4x4 m = Matrix4x4::Compose(pos, rot, scale);
    Vector3 p2, s2;
    Quaternion r2;
    ASSERT_TRUE(m.Decompose(&p2, &r2, &s2));
    EXPECT_EQ(p2, pos);
    EXPECT_NEAR(s2.x, scale.x, 1e-4f * scale.x);
    EXPECT_NEAR(s2.y, scale.y, 1e-4f * scale.y);
    EXPECT_NEAR(s2.z, scale.z, 1e-4f * scale.z);
    // q and -q are the same rotation: compare the recomposed matrices.
    ASSERT_TRUE(NearlyEqual(Matrix4x4::Compose(p2, r2, s2), m, 1e-3f, 1e-4f))
        << m << "\n" << Matrix4x4::Compose(p2, r2, s2);
    EXPECT_GE(r2.w, 0.0f);
  }
}

TEST(Matrix4x4, RotationMatchesAxisAngle) {
  // 90 degrees around z takes x to y (right-handed).
  const Matrix4x4 r = Matrix4x4::Rotation(Quaternion::FromAxisAngle({0, 0, 1}, 1.5707964f));
  const Vector3 p = r.TransformPoint({1, 0, 0});
  EXPECT_NEAR(p.x, 0.0f, 1e-6f);
  EXPECT_NEAR(p.y, 1.0f, 1e-6f);
  EXPECT_NEAR(p.z, 0.0f, 1e-6f);
  // A zero quaternion or axis means identity, not NaN.
  EXPECT_EQ(Matrix4x4::Rotation(Quaternion{0, 0, 0, 0}), Matrix4x4::Identity());
  EXPECT_EQ(Quaternion::FromAxisAngle({0, 0, 0}, 1.0f), Quaternion::Identity());
}

TEST(Matrix4x4, DecomposeNegativeScaleAndRejects) {
  Vector3 p, s;
  Quaternion q;
  const Matrix4x4 mirrored = Matrix4x4::Scaling(-2, 3, 4);
  ASSERT_TRUE(mirrored.Decompose(&p, &q, &s));
  EXPECT_FLOAT_EQ(s.x, -2.0f);
  EXPECT_FLOAT_EQ(s.y, 3.0f);
  EXPECT_TRUE(NearlyEqual(Matrix4x4::Compose(p, q, s), mirrored));

  const Vector3 untouched{7, 7, 7};
  p = untouched;
  EXPECT_FALSE(Matrix4x4::Scaling(0, 1, 1).Decompose(&p, &q, &s));
  EXPECT_EQ(p, untouched);
  Matrix4x4 projective = Matrix4x4::Identity();
  projective.m[3] = 0.5f;
  EXPECT_FALSE(projective.Decompose(&p, &q, &s));
  Matrix4x4 nan = Matrix4x4::Identity();
  nan.m[0] = std::nanf("");
  EXPECT_FALSE(nan.Decompose(&p, &q, &s));
  EXPECT_EQ(p, untouched);
}

TEST(Matrix4x4, NearlyEqualRejectsNaN) {
  Matrix4x4 a = Matrix4x4::Identity();
  EXPECT_TRUE(NearlyEqual(a, a));
  a.m[5] = std::nanf("");
  EXPECT_FALSE(NearlyEqual(a, Matrix4x4::Identity()));
  EXPECT_FALSE(NearlyEqual(Matrix4x4::Identity(), Matrix4x4::Translation(1e-3f, 0, 0)));
}

}  // namespace
}  // namespace strata
#endif  // HWY_ONCE
