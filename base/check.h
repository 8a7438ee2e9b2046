// STRATA_CHECK: a check of a caller's contract that holds in every build mode.
//
// ABSL_HARDENING_ASSERT compiles away unless Abseil is built hardened (Debian's is not),
// and assert() goes with NDEBUG, so neither stops a caller's mistake in a -c opt build:
// the call would go on with a value it cannot honour. STRATA_CHECK prints the failed
// condition and a message, with the file and line, to stderr and aborts, always.
//
//   STRATA_CHECK(options.max_generation < kFreeBit,
//                "EntityManager: max_generation must be below 2^31");
//
// For what can come from outside the program (files, configuration), return an
// absl::Status instead; a check is for programmer errors only. Costs one predicted
// branch; the failure path is out of line.
#ifndef STRATA_BASE_CHECK_H_
#define STRATA_BASE_CHECK_H_

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"

namespace strata::base_internal {

// CheckFailed: reports a failed STRATA_CHECK and aborts.
[[noreturn]] ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD void CheckFailed(
    const char* file, int line, const char* condition, const char* message);

}  // namespace strata::base_internal

// STRATA_CHECK(condition, message): aborts with `message` (a string literal or
// const char*) unless `condition` holds. Evaluates `condition` once; `message` only on
// failure.
#define STRATA_CHECK(condition, message)                                              \
  do {                                                                                \
    if (ABSL_PREDICT_FALSE(!(condition))) {                                           \
      ::strata::base_internal::CheckFailed(__FILE__, __LINE__, #condition, (message)); \
    }                                                                                 \
  } while (false)

#endif  // STRATA_BASE_CHECK_H_
