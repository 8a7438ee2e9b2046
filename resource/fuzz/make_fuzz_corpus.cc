// Writes the fuzz seed corpus (resource/testdata/fuzz_corpus/): level JSON texts and
// the blobs the compiler makes of them (native and other-endian), using the fuzz
// component types. Rerun after a format change:
//   bazel run //resource:make_fuzz_corpus -- resource/testdata/fuzz_corpus
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "resource/format.h"
#include "resource/fuzz/fuzz_components.h"
#include "resource/tool_io.h"

namespace {

struct Level {
  const char* name;
  const char* json;
};

constexpr Level kLevels[] = {
    {"empty", R"({"entities": []})"},
    {"bare", R"({"entities": [{}, {"children": [{}, {"children": [{}]}]}]})"},
    {"fixed", R"({"entities": [{"name": "a", "components": [{"type": "fuzz_fixed", "v": [1, 2, 3]}]},
                  {"components": [{"type": "fuzz_fixed", "name": "x"}, {"type": "fuzz_fixed", "name": "y"}]}]})"},
    {"mixed", R"({"entities": [
       {"name": "car", "components": [{"type": "fuzz_fixed", "v": [0, 1, 0]}, {"type": "fuzz_var", "n": 3}],
        "children": [{"components": [{"type": "fuzz_var", "n": 0}]},
                     {"components": [{"type": "fuzz_fixed"}, {"type": "fuzz_var", "name": "V", "n": 5}],
                      "children": [{"components": [{"type": "fuzz_fixed", "v": [9, 9, 9]}]}]}]},
       {"name": "sun", "components": [{"type": "fuzz_var", "n": 1}]}]})"},
    {"unknown", R"({"entities": [{"components": [{"type": "fuzz_fixed"}, {"type": "mystery"}]}]})"},
    {"prefabs", R"({"prefabs": {
       "wheel": {"components": [{"type": "fuzz_fixed", "v": [1, 1, 1]}]},
       "car": {"components": [{"type": "fuzz_var", "n": 2}],
               "children": [{"name": "w", "components": [{"type": "fuzz_fixed"}]}]},
       "truck": {"prefab": "car", "components": [{"type": "fuzz_var", "n": 4}]}},
     "entities": [{"prefab": "car"}, {"prefab": "truck", "components": [{"type": "fuzz_fixed", "v": [2, 2, 2]}]},
                  {"prefab": "wheel", "components": [{"type": "fuzz_fixed", "v": [3, 3, 3]}]}]})"},
};

bool Write(const std::string& path, absl::Span<const std::byte> bytes) {
  absl::Status status = strata::WriteToolFileAtomically(path, bytes, {});
  if (!status.ok()) std::fprintf(stderr, "%s\n", status.ToString().c_str());
  return status.ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = strata::ResolveToolPath(argv[1]);
  for (const Level& level : kLevels) {
    const std::string json = level.json;
    if (!Write(absl::StrCat(dir, "/", level.name, ".json"),
               absl::MakeConstSpan(reinterpret_cast<const std::byte*>(json.data()), json.size()))) {
      return 1;
    }
    strata::EntityCompiler::Options options;
    options.unknown_components = strata::EntityCompiler::UnknownComponents::kSkip;
    for (strata::Endianness endianness : {strata::Endianness::kLittle, strata::Endianness::kBig}) {
      options.endianness = endianness;
      absl::StatusOr<strata::EntityCompiler::Result> result =
          strata::fuzz_internal::Compiler().Compile(json, options);
      if (!result.ok()) {
        std::fprintf(stderr, "%s: %s\n", level.name, result.status().ToString().c_str());
        return 1;
      }
      const bool native = endianness == strata::kNativeEndianness;
      if (!native && std::string(level.name) != "mixed") continue;  // one is enough
      if (!Write(absl::StrCat(dir, "/", level.name, native ? "" : "_other_endian", ".entities"),
                 result->blob)) {
        return 1;
      }
    }
  }
  std::printf("wrote the corpus to %s\n", dir.c_str());
  return 0;
}
