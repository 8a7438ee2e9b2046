// Compiling on several threads against compiling on one: the same blob, warnings and
// messages, whatever the thread count and the slice size (tiny slices make a small
// level span many slices, so every hierarchy and reference crosses slice borders).
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "resource/testing/level_generator.h"
#include "resource/testing/test_levels.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::Random;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

const EntityCompiler& Compiler() { return testing::TestLevelCompiler(); }

EntityCompiler::Options WithThreads(EntityCompiler::Options options, int threads, size_t slice_bytes) {
  options.threads = threads;
  options.slice_bytes = slice_bytes;
  return options;
}

// ExpectSameAsSerial: `level` compiled on `threads` threads with `slice_bytes` slices
// gives what one thread with the default slices gives: status and message, or every
// byte, warning and the entity count.
void ExpectSameAsSerial(const std::string& level, const EntityCompiler::Options& options, int threads,
                        size_t slice_bytes) {
  SCOPED_TRACE(absl::StrCat("threads ", threads, ", slice_bytes ", slice_bytes));
  absl::StatusOr<EntityCompiler::Result> serial = Compiler().Compile(level, WithThreads(options, 1, 0));
  absl::StatusOr<EntityCompiler::Result> parallel =
      Compiler().Compile(level, WithThreads(options, threads, slice_bytes));
  ASSERT_EQ(parallel.status(), serial.status());
  testing::ExpectSameOutput(parallel, serial);
}

TEST(EntityCompilerParallel, RandomLevelsAreByteIdenticalForAnyThreadCountAndSliceSize) {
  Random random(testing::TestSeed());
  SCOPED_TRACE(random.DescribeSeed());
  EntityCompiler::Options skip;
  skip.unknown_components = EntityCompiler::UnknownComponents::kSkip;
  EntityCompiler::Options other_endian_no_names = skip;
  other_endian_no_names.endianness =
      kNativeEndianness == Endianness::kLittle ? Endianness::kBig : Endianness::kLittle;
  other_endian_no_names.keep_names = false;
  int compiled = 0;
  for (int round = 0; round < 40; ++round) {
    const std::string level = testing::RandomLevel(random, /*max_roots=*/30, /*max_entities=*/150);
    SCOPED_TRACE(level.substr(0, 300));
    for (const EntityCompiler::Options& options : {skip, other_endian_no_names, EntityCompiler::Options{}}) {
      compiled += Compiler().Compile(level, options).ok();
      for (int threads : {2, 3, 8}) {
        for (size_t slice_bytes : {size_t{1}, size_t{100}, size_t{1000}, size_t{0}}) {
          ExpectSameAsSerial(level, options, threads, slice_bytes);
        }
      }
      // One thread with tiny slices: the slicing alone changes nothing either.
      ExpectSameAsSerial(level, options, 1, 1);
    }
  }
  EXPECT_GT(compiled, 40);  // most levels compile with kSkip: bytes were compared
}

TEST(EntityCompilerParallel, EmptyAndOneEntityLevels) {
  for (const char* level : {R"({"entities": []})", "{ \"entities\" : [ ] }\n",
                            R"({"entities": [{}]})",
                            R"({"entities": [{"name": "a", "components": [{"type": "transform", "position": [1, 2, 3]}]}]})"}) {
    SCOPED_TRACE(level);
    for (int threads : {2, 8}) ExpectSameAsSerial(level, {}, threads, 1);
    STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result result,
                                Compiler().Compile(level, WithThreads({}, 8, 1)));
    EXPECT_EQ(result.num_entities, absl::string_view(level).find("{}") != absl::string_view::npos ||
                                           absl::string_view(level).find("\"a\"") != absl::string_view::npos
                                       ? 1u
                                       : 0u);
    STRATA_EXPECT_OK(EntityResourceView::Create(result.blob).status());
  }
}

TEST(EntityCompilerParallel, LevelLargerThanOneDefaultSlice) {
  const std::string level = testing::TransformLevel(20000);  // about 1.3 MB: 6 slices
  ASSERT_GT(level.size(), 1000000u);
  for (int threads : {2, 3, 0}) ExpectSameAsSerial(level, {}, threads, 0);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result result, Compiler().Compile(level, WithThreads({}, 2, 0)));
  EXPECT_EQ(result.num_entities, 20000u);
}

// An error in the first, a middle or the last of many slices, or in several: the
// message is the serial compile's (the first in document order; a syntax error
// anywhere before any semantic one).
TEST(EntityCompilerParallel, ErrorsInAnySliceGiveTheSerialMessage) {
  const std::string good = testing::TransformLevel(3000);  // about 200 KB
  constexpr size_t kSlice = 4096;                         // about 50 slices
  auto break_entity = [](std::string level, size_t entity) {
    // Entity k is on line k + 2: "{"entities": [" is line 1.
    size_t at = 0;
    for (size_t line = 0; line <= entity; ++line) at = level.find('\n', at) + 1;
    const size_t key = level.find("\"position\"", at);
    level.replace(key, 10, "\"postion\"");
    return level;
  };
  struct Case {
    std::string level;
    std::string expected;  // part of the message
  };
  std::vector<Case> cases = {
      {break_entity(good, 0), "entities[0]"},
      {break_entity(good, 1500), "entities[1500]"},
      {break_entity(good, 2999), "entities[2999]"},
      {break_entity(break_entity(good, 2999), 1200), "entities[1200]"},  // the first wins
      {break_entity(break_entity(good, 2), 2500), "entities[2]"},
  };
  // A syntax error late in the text wins over a semantic error early, as serially.
  std::string syntax = break_entity(good, 3);
  syntax.insert(syntax.size() - 4, ",");
  cases.push_back({syntax, "JSON syntax error at line"});
  // An entity reference nothing resolves, found only after every slice is merged.
  std::string unresolved = good;
  unresolved.replace(unresolved.rfind("{\"type\": \"transform\""), 0, R"({"type": "link", "to": "nobody"}, )");
  cases.push_back({unresolved, "no entity of this level is named \"nobody\""});
  // Not an entity object, in a middle slice.
  std::string not_object = good;
  not_object.insert(not_object.find("\n", good.size() / 2) + 1, "7,\n");
  cases.push_back({not_object, "expected an entity object, got number"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expected);
    EXPECT_THAT(Compiler().Compile(c.level, WithThreads({}, 3, kSlice)),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.expected)));
    for (int threads : {2, 3, 8}) ExpectSameAsSerial(c.level, {}, threads, kSlice);
    ExpectSameAsSerial(c.level, {}, 2, 1);
  }
}

TEST(EntityCompilerParallel, ThreadCountOutOfRangeIsInvalidArgument) {
  for (int threads : {-1, EntityCompiler::kMaxThreads + 1}) {
    EXPECT_THAT(Compiler().Compile(R"({"entities": []})", WithThreads({}, threads, 0)),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("threads")));
  }
  STRATA_EXPECT_OK(Compiler().Compile(R"({"entities": []})", WithThreads({}, EntityCompiler::kMaxThreads, 1)).status());
}

// The slices really are compiled on several threads (the others above would pass on
// one): compile functions record the threads that called them.
TEST(EntityCompilerParallel, CompileFunctionsRunOnSeveralThreads) {
  std::mutex mu;
  std::set<std::thread::id> seen;
  EntityCompiler compiler;
  STRATA_ASSERT_OK(compiler.RegisterComponentCompiler(
      "transform",
      [&](const nlohmann::json&, ComponentDataWriter& out) {
        {
          std::lock_guard<std::mutex> lock(mu);
          seen.insert(std::this_thread::get_id());
        }
        out.WriteU32(1);
        return absl::OkStatus();
      },
      0, 4));
  const std::string level = testing::TransformLevel(20000);
  // A scheduler may let one thread take every slice; a few tries make that unlikely.
  for (int attempt = 0; attempt < 10 && seen.size() < 2; ++attempt) {
    seen.clear();
    STRATA_ASSERT_OK(compiler.Compile(level, WithThreads({}, 4, 2048)).status());
  }
  EXPECT_GE(seen.size(), 2u);
  seen.clear();
  STRATA_ASSERT_OK(compiler.Compile(level, WithThreads({}, 1, 2048)).status());
  EXPECT_EQ(seen.size(), 1u);
  EXPECT_EQ(*seen.begin(), std::this_thread::get_id());
}

}  // namespace
}  // namespace strata
