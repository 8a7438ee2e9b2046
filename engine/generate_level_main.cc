// generate_level: writes a generated level JSON (resource/testing/level_generator.h) to a
// file, for benchmarks that run the tools and the demo as whole processes:
//
//   bazel run -c opt //engine:generate_level -- --entities=1000000 --names /tmp/1m.json
//
// --entities=N root entities with one transform each (1 to 100,000,000); --names also
// names each entity ("entity_<k>"). Exit 0 on success, 1 if the file cannot be written,
// 2 on a usage error.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "resource/testing/level_generator.h"

ABSL_FLAG(int64_t, entities, 0, "root entities, one transform each (1 to 100,000,000)");
ABSL_FLAG(bool, names, false, "name each entity entity_<k>, as a game's level does");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Writes a generated level JSON.\nUsage: generate_level --entities=N [--names] OUT.json");
  const std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  const int64_t entities = absl::GetFlag(FLAGS_entities);
  if (rest.size() != 2) {
    std::fprintf(stderr, "generate_level: expected one output path, got %zu arguments\n",
                 rest.size() - 1);
    return 2;
  }
  if (entities < 1 || entities > 100'000'000) {
    std::fprintf(stderr, "generate_level: --entities must be in [1, 100000000], got %lld\n",
                 static_cast<long long>(entities));
    return 2;
  }
  const std::string level = absl::GetFlag(FLAGS_names)
                                ? strata::testing::NamedTransformLevel(static_cast<size_t>(entities))
                                : strata::testing::TransformLevel(static_cast<size_t>(entities));
  std::ofstream out(rest[1], std::ios::binary | std::ios::trunc);
  out.write(level.data(), static_cast<std::streamsize>(level.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "generate_level: cannot write %s\n", rest[1]);
    return 1;
  }
  std::printf("%s: %lld entities, %zu bytes\n", rest[1], static_cast<long long>(entities),
              level.size());
  return 0;
}
