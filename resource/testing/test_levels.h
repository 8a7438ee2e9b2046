// Random levels and the compile functions they use, shared by the compiler's tests (the
// stream against the DOM walk, threads against one thread):
//
//   const EntityCompiler& compiler = TestLevelCompiler();  // transform, labelled, link
//   Random random(TestSeed());
//   std::string level = RandomLevel(random, /*max_roots=*/5, /*max_entities=*/60);
//   compiler.Compile(level, options);
//
// Deterministic: the same Random state gives the same level.
#ifndef STRATA_RESOURCE_TESTING_TEST_LEVELS_H_
#define STRATA_RESOURCE_TESTING_TEST_LEVELS_H_

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json_fwd.hpp"
#include "resource/entity_compiler.h"
#include "testing/random.h"

namespace strata::testing {

// TestLevelCompiler: a compiler with three types: "transform" (a position, 12 bytes,
// spawn order 0), "labelled" (variable size: a count, a label's bytes, a name field;
// order 10) and "link" (an entity reference, 4 bytes; order 20). Thread-safe to share:
// its compile functions keep no state.
const EntityCompiler& TestLevelCompiler();

// CompilePosition: a compile function for a 12-byte position, three floats under the
// key "position" (missing means 0, 0, 0); rejects other keys.
absl::Status CompilePosition(const nlohmann::json& config, ComponentDataWriter& out);

// ExpectSameOutput: gtest expectations that `actual` and `expected` both failed or both
// compiled to the same blob, warnings and entity count. Compare statuses first where
// the messages must match too.
void ExpectSameOutput(const absl::StatusOr<EntityCompiler::Result>& actual,
                      const absl::StatusOr<EntityCompiler::Result>& expected);

// RandomEntity: appends one random entity to `out`: keys in a random order (children
// may come before components, the name last), components of every kind (and of
// unknown types), names repeated across entities, children down to depth 6 while
// `*budget` lasts (decremented per child).
void RandomEntity(Random& random, int depth, int* budget, std::string* out);

// RandomLevel: `{"entities": [...]}` with 0 to `max_roots` random roots and up to
// about `max_entities` children in all, one root per line.
std::string RandomLevel(Random& random, int max_roots, int max_entities);

}  // namespace strata::testing

#endif  // STRATA_RESOURCE_TESTING_TEST_LEVELS_H_
