// Helpers the TransformComponent tests share: the two-mode fixture and a naive
// recursive reference of world matrices. Testonly.
//
//   INSTANTIATE_TEST_SUITE_P(Modes, TransformModes,
//                            ::testing::Values(Mode::kImmediate, Mode::kDeferred), ModeName);
#ifndef STRATA_TRANSFORM_INTERNAL_TRANSFORM_TEST_UTIL_H_
#define STRATA_TRANSFORM_INTERNAL_TRANSFORM_TEST_UTIL_H_

#include <map>
#include <string>

#include "base/matrix.h"
#include "entity/entity.h"
#include "gtest/gtest.h"
#include "testing/random.h"
#include "transform/transform_component.h"

namespace strata::transform_internal {

using Mode = TransformComponent::Mode;
using ::strata::testing::Random;

inline TransformComponent::Options WithMode(Mode mode) {
  TransformComponent::Options options;
  options.mode = mode;
  return options;
}

// TransformModes: a test run in both modes (the parameter).
class TransformModes : public ::testing::TestWithParam<Mode> {
 protected:
  // Deferred mode needs UpdateWorld before World() is current; immediate mode does not.
  void Settle(TransformComponent& tc) {
    if (tc.mode() == Mode::kDeferred) tc.UpdateWorld();
  }
};

// ModeName: "Immediate" or "Deferred", the instantiations' suffix.
inline std::string ModeName(const ::testing::TestParamInfo<Mode>& info) {
  return info.param == Mode::kImmediate ? std::string("Immediate") : std::string("Deferred");
}

struct RefNode {
  Matrix4x4 local;
  Entity parent;
};

// The oracle: recursion straight from the definition world = local * parent world
// (memoised per check in `cache`, so a check costs O(n), not O(n * depth)).
inline Matrix4x4 RefWorld(const std::map<Entity, RefNode>& nodes, Entity e,
                   std::map<Entity, Matrix4x4>& cache) {
  if (auto it = cache.find(e); it != cache.end()) return it->second;
  const RefNode& n = nodes.at(e);
  const Matrix4x4 world = n.parent.is_valid()
                              ? MultiplyMatrixReference(n.local, RefWorld(nodes, n.parent, cache))
                              : n.local;
  cache[e] = world;
  return world;
}

inline bool RefIsAncestorOrSelf(const std::map<Entity, RefNode>& nodes, Entity a, Entity x) {
  for (; x.is_valid(); x = nodes.at(x).parent) {
    if (x == a) return true;
  }
  return false;
}

inline Matrix4x4 RandomRigid(Random& rng) {
  return Matrix4x4::Compose(
      {rng.UniformFloat(-1, 1), rng.UniformFloat(-1, 1), rng.UniformFloat(-1, 1)},
      Quaternion::FromAxisAngle({rng.UniformFloat(-1, 1), rng.UniformFloat(-1, 1), 1.0f},
                                rng.UniformFloat(-3, 3)),
      {1, 1, 1});
}

}  // namespace strata::transform_internal

#endif  // STRATA_TRANSFORM_INTERNAL_TRANSFORM_TEST_UTIL_H_
