// CheckLevelJson: the compiler fuzzer's property, as a function the libFuzzer entry
// point (level_compiler_fuzzer.cc) and the gcc-built corpus test share.
//
// `text` is compiled as level JSON with every component the game-built tools know
// (SampleRegistry()) and a "zoo" type with one field of each other field type (the
// wide and narrow numbers, enums, strings, arrays, a nested struct), rejecting and
// then skipping unknown types. Whatever compiles must pass the validating view, spawn into a fresh World,
// describe (the inspect listing) and export to level JSON that compiles back to the
// same bytes. Any violation is a
// finding: the reason goes to stderr and the process aborts. Rejected input is fine.
#ifndef STRATA_ENGINE_FUZZ_LEVEL_COMPILER_FUZZER_H_
#define STRATA_ENGINE_FUZZ_LEVEL_COMPILER_FUZZER_H_

#include "absl/strings/string_view.h"

namespace strata {

// CheckLevelJson: true if `text` compiled (under at least one of the two options), so
// callers can tell accepted input from rejected; aborts on a violation.
bool CheckLevelJson(absl::string_view text);

}  // namespace strata

#endif  // STRATA_ENGINE_FUZZ_LEVEL_COMPILER_FUZZER_H_
