// libFuzzer entry point for the level compiler: bytes in as level JSON, checked by
// CheckLevelJson (level_compiler_fuzzer.h). Under --config=fuzz this links with
// -fsanitize=fuzzer (engine/fuzz/run_fuzz.sh); under the normal build
// //engine:level_compiler_fuzzer replays the files it is given and
// //engine:level_compiler_fuzzer_test replays the seed corpus.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "engine/fuzz/level_compiler_fuzzer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  strata::CheckLevelJson(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
