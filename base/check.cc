#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace strata::base_internal {

void CheckFailed(const char* file, int line, const char* condition, const char* message) {
  std::fprintf(stderr, "%s:%d: check failed: %s: %s\n", file, line, condition, message);
  std::fflush(stderr);
  std::abort();
}

}  // namespace strata::base_internal
