// Level JSON for compiler tests and benchmarks, generated rather than checked in:
//
//   std::string big = TransformLevel(1'000'000);          // ~66 MB, one transform each
//   std::string named = NamedTransformLevel(1'000'000);   // ~96 MB, the same with names
//   std::string town = RepeatedLevel(default_json, 100);  // the default level's mix x100
//
// Deterministic: the same arguments give the same bytes.
#ifndef STRATA_RESOURCE_TESTING_LEVEL_GENERATOR_H_
#define STRATA_RESOURCE_TESTING_LEVEL_GENERATOR_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace strata::testing {

// TransformLevel: `n` root entities, each with one "transform" component with a
// position (integers and decimals), one entity per line.
std::string TransformLevel(size_t n);

// NamedTransformLevel: the same entities, each also named ("entity_<k>", k from 0), as
// a game's level names its entities: the compiler keeps the names for the index.
std::string NamedTransformLevel(size_t n);

// RepeatedLevel: the entities of `level` (a level JSON `{"entities": [...]}`) repeated
// `copies` times in one level: the same mix of components, hierarchies and names.
// InvalidArgument if `level` does not have that shape.
absl::StatusOr<std::string> RepeatedLevel(absl::string_view level, size_t copies);

}  // namespace strata::testing

#endif  // STRATA_RESOURCE_TESTING_LEVEL_GENERATOR_H_
