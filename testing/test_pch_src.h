// The headers nearly every test translation unit includes, precompiled once per
// build configuration by //testing:test_pch (see bazel/precompiled_header.bzl).
// Tests still include what they use; this list only makes that cheap. Keep it to
// headers most tests need: every test loads the whole precompiled header.
#ifndef STRATA_TESTING_TEST_PCH_H_
#define STRATA_TESTING_TEST_PCH_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#endif  // STRATA_TESTING_TEST_PCH_H_
