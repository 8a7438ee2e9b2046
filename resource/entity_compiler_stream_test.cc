// The streaming front-end against the DOM walk: the same blob, warnings and messages.
// A level whose root key is escaped ("\u0065ntities") is the same level to JSON, but
// the stream leaves it to the DOM walk, so compiling both spellings compares the two.
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "resource/entity_compiler.h"
#include "resource/strict_json.h"
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

std::string DomOnly(absl::string_view level) {
  return absl::StrReplaceAll(level, {{"\"entities\"", "\"\\u0065ntities\""}});
}

// ExpectSameAsDom: both paths agree on `level` (and, if it compiles, on every byte).
void ExpectSameAsDom(const std::string& level, const EntityCompiler::Options& options = {}) {
  SCOPED_TRACE(level.substr(0, 300));
  absl::StatusOr<EntityCompiler::Result> stream = Compiler().Compile(level, options);
  absl::StatusOr<EntityCompiler::Result> dom = Compiler().Compile(DomOnly(level), options);
  // Syntax errors: the escaped key moves the column, so compare with the strict parser.
  const absl::Status strict = CheckStrictJson(level);
  ASSERT_EQ(stream.status(), strict.ok() ? dom.status() : strict);
  testing::ExpectSameOutput(stream, dom);
}

TEST(EntityCompilerStream, RandomLevelsMatchTheDomWalk) {
  Random random(testing::TestSeed());
  SCOPED_TRACE(random.DescribeSeed());
  for (int round = 0; round < 300; ++round) {
    const std::string level = testing::RandomLevel(random, /*max_roots=*/5, /*max_entities=*/60);
    EntityCompiler::Options skip;
    skip.unknown_components = EntityCompiler::UnknownComponents::kSkip;
    ExpectSameAsDom(level, skip);
    skip.endianness = kNativeEndianness == Endianness::kLittle ? Endianness::kBig : Endianness::kLittle;
    skip.keep_names = false;
    ExpectSameAsDom(level, skip);
    ExpectSameAsDom(level);  // unknown types rejected: the first error, in DOM order
  }
}

TEST(EntityCompilerStream, ChildrenBeforeComponentsKeepEntityOrder) {
  // Sorted keys, as nlohmann (and so export) writes them: children, components, name.
  const std::string level = R"({"entities": [
    {"children": [{"components": [{"type": "labelled", "label": "child"},
                                  {"type": "transform", "position": [2, 0, 0]}], "name": "c"}],
     "components": [{"type": "transform", "position": [1, 0, 0]},
                    {"type": "labelled", "label": "parent-longer"},
                    {"type": "link", "to": "c"}],
     "name": "p"}]})";
  ExpectSameAsDom(level);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result result, Compiler().Compile(level, {}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(result.blob));
  for (const ComponentTypeView& type : view.component_types()) {
    if (type.type == IdString32("transform")) {
      float x[2];
      std::memcpy(&x[0], type.data.data(), 4);
      std::memcpy(&x[1], type.data.data() + 12, 4);
      EXPECT_EQ(x[0], 1);  // the parent's, entity 0, first
      EXPECT_EQ(x[1], 2);
    }
  }
}

TEST(EntityCompilerStream, LevelsLargerThanASliceMatchTheDomWalk) {
  const std::string level = testing::TransformLevel(20000);  // about 1.3 MB
  ASSERT_GT(level.size(), 1000000u);
  ExpectSameAsDom(level);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result result, Compiler().Compile(level, {}));
  EXPECT_EQ(result.num_entities, 20000u);
  // An error far into the level names the element by its place in the whole array.
  std::string bad = level;
  const size_t at = bad.find("\"position\"", bad.size() - 2000);
  bad.replace(at, 10, "\"postion\"");
  EXPECT_THAT(Compiler().Compile(bad, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("entities[199")));
  ExpectSameAsDom(bad);
  // A syntax error after a semantic one wins, as when the whole text was parsed first.
  std::string both = bad;
  both.insert(both.size() - 4, ",");
  EXPECT_THAT(Compiler().Compile(both, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("JSON syntax error at line")));
}

TEST(EntityCompilerStream, RejectsWhatTheStrictParserRejectsWithItsMessage) {
  const char* kBad[] = {
      "{\"entities\": [{\"name\": \"a\tb\"}]}",                     // raw control character
      "{\"entities\": [{\"components\": [{\"type\": \"transform\", \"position\": [01, 0, 0]}]}]}",
      "{\"entities\": [{\"components\": [{\"type\": \"transform\", \"position\": [1., 0, 0]}]}]}",
      "{\"entities\": [{\"components\": [{\"type\": \"transform\", \"position\": [-, 0, 0]}]}]}",
      "{\"entities\": [{\"components\": [{\"type\": \"transform\", \"position\": [NaN, 0, 0]}]}]}",
      "{\"entities\": [{\"components\": [{\"type\": \"transform\", \"position\": [Infinity, 0, 0]}]}]}",
      "{\"entities\": [{\"components\": [{\"type\": \"transform\", \"position\": [1 2, 0]}]}]}",
      "{\"entities\": [{\"components\": [{\"type\": \"link\", \"to\": nul}]}]}",
      "{\"entities\": [{\"components\": [{\"type\": \"link\", \"to\": tru}]}]}",
      "{\"entities\": [{\"name\": \"a\",}]}",
      "{\"entities\": [{}, ]}",
      "{\"entities\": [{} {}]}",
      "{\"entities\": [{}]} x",
      "{\"entities\": [{}]",
      "{\"entities\": [{\"name\": \"a\\q\"}]}",                     // bad escape
      "{\"entities\": [{\"name\": \"\\ud800\"}]}",                  // lone surrogate escape
      "{\"entities\": [{\"name\": \"a\"}]} // comment",
      "{\"entities\": [{\"name\": \"a\", \"name\": \"a\"}]}",
      "{\"entities\": [{\"children\": [], \"children\": []}]}",
      "{\"entities\": [{\"components\": [{\"type\": \"link\", \"to\": \"a\", \"to\": \"a\"}]}]}",
      "{\"entities\": [{\"components\": [{\"type\": \"transform\", \"position\": [{\"a\": 1, \"a\": 1}]}]}]}",
      "{\"entities\": [], \"entities\": []}",
      "{\"entities\": [\"]\"]]}",
  };
  for (const char* text : kBad) {
    SCOPED_TRACE(text);
    const absl::Status strict = CheckStrictJson(text);
    ASSERT_FALSE(strict.ok());
    EXPECT_EQ(Compiler().Compile(text, {}).status(), strict);
  }
}

TEST(EntityCompilerStream, NumbersAndSemanticErrorsMatchTheDomWalk) {
  for (const char* number : {"0", "-0", "-0.0", "1e400", "-1e400", "1e-400", "18446744073709551615",
                             "18446744073709551616", "-9223372036854775808", "-9223372036854775809",
                             "3.4028235e38", "3.5e38", "0.1", "1E2", "123456789012345678901234567890"}) {
    ExpectSameAsDom(absl::StrCat(R"({"entities": [{"components": [{"type": "transform", "position": [)",
                                 number, ", 0, 0]}]}]}"));
    ExpectSameAsDom(absl::StrCat(R"({"entities": [{"components": [{"type": "labelled", "count": )",
                                 number, "}]}]}"));
  }
  for (const char* level : {
           R"({"entities": [1]})",
           R"({"entities": [{"zzz": 1, "name": 2}]})",
           R"({"entities": [{"aaa": 1, "name": "n"}]})",
           R"({"entities": [{"name": "n", "zzz": 1}]})",
           R"({"entities": [{"components": [{"type": "nope"}], "zzz": 1}]})",
           R"({"entities": [{"children": [{"components": 3}], "components": [{"type": "nope"}]}]})",
           R"({"entities": [{"components": [{"type": "transform"}, {"type": "transform"}]}]})",
           R"({"entities": [{"components": [{"type": "link", "to": "missing"}]}]})",
           R"({"entities": [{"components": [7, {"type": "transform"}]}]})",
           R"({"entities": [{"children": 5}]})",
           R"({"entities": {}})",
           R"({"entities": [], "more": 1})",
           R"([])",
       }) {
    ExpectSameAsDom(level);
  }
}

TEST(EntityCompilerStream, DeepNestingInsideAComponentGoesToTheDomWalk) {
  constexpr int kDepth = 100000;
  std::string level = R"({"entities": [{"components": [{"type": "transform", "position": )";
  level += std::string(kDepth, '[') + std::string(kDepth, ']');
  level += "}]}]}";
  EXPECT_THAT(Compiler().Compile(level, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"position\"")));
  ExpectSameAsDom(level);
  std::string objects = R"({"entities": [{"components": [{"type": "link", "to": )";
  for (int i = 0; i < kDepth; ++i) objects += "{\"a\": ";
  objects += "1" + std::string(kDepth, '}') + "}]}]}";
  ExpectSameAsDom(objects);
}

}  // namespace
}  // namespace strata
