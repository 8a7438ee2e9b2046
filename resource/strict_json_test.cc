#include "resource/strict_json.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

absl::Status Parse(absl::string_view text) {
  nlohmann::json root;
  return ParseStrictJson(text, &root);
}

TEST(StrictJson, ParsesWhatNlohmannParses) {
  nlohmann::json root;
  STRATA_ASSERT_OK(ParseStrictJson(R"({"a": [1, 2.5, "x", null, true, {"b": {}}], "c": -3})", &root));
  EXPECT_EQ(root, nlohmann::json::parse(R"({"a": [1, 2.5, "x", null, true, {"b": {}}], "c": -3})"));
  STRATA_ASSERT_OK(ParseStrictJson("  7 ", &root));
  EXPECT_EQ(root, 7);
  STRATA_ASSERT_OK(ParseStrictJson("\"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\"", &root));
  EXPECT_EQ(root.get<std::string>(), "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80");
}

TEST(StrictJson, SameKeyInDifferentObjectsIsFine) {
  STRATA_EXPECT_OK(Parse(R"([{"type": 1}, {"type": 2, "x": {"type": 3}}])"));
  // A frame reused for a sibling object starts with no keys.
  STRATA_EXPECT_OK(Parse(R"({"a": {"k": 1, "j": 2}, "b": {"k": 1, "j": 2}})"));
}

TEST(StrictJson, DuplicateKeyNamesKeyAndPath) {
  EXPECT_THAT(Parse(R"({"entities": [], "entities": []})"),
              StatusIs(absl::StatusCode::kInvalidArgument, "level: duplicate key \"entities\""));
  EXPECT_THAT(
      Parse(R"({"entities": [{}, {"children": [{"components": [{"type": "t", "type": "t"}]}]}]})"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "entities[1].children[0].components[0]: duplicate key \"type\""));
  // Any depth, any key; odd keys are quoted and escaped.
  EXPECT_THAT(Parse(R"({"entities": [{"name": "a", "components": [], "name": "b"}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument, "entities[0]: duplicate key \"name\""));
  EXPECT_THAT(Parse(R"([[1, {"a b": {"x\n": 1, "x\n": 2}}]])"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "[0][1][\"a b\"]: duplicate key \"x\\n\""));
  // The empty key counts too.
  EXPECT_THAT(Parse(R"({"": 1, "": 2})"), StatusIs(absl::StatusCode::kInvalidArgument,
                                                   "level: duplicate key \"\""));
}

TEST(StrictJson, ManyKeysInOneObject) {
  std::string text = "{";
  for (int i = 0; i < 5000; ++i) absl::StrAppend(&text, i == 0 ? "" : ",", "\"k", i, "\": ", i);
  STRATA_EXPECT_OK(Parse(text + "}"));
  EXPECT_THAT(Parse(text + ", \"k4321\": 0}"),
              StatusIs(absl::StatusCode::kInvalidArgument, "level: duplicate key \"k4321\""));
}

TEST(StrictJson, DeepNestingIsIterativeAndPathIsBounded) {
  constexpr int kDepth = 100000;
  std::string text;
  for (int i = 0; i < kDepth; ++i) text += "{\"a\": ";
  text += "{\"z\": 1, \"z\": 2}";
  for (int i = 0; i < kDepth; ++i) text += "}";
  const absl::Status status = Parse(text);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                               "a.a.a.a.a.a...(99984 levels).a.a.a.a.a.a.a.a.a.a: duplicate key \"z\""));
  EXPECT_LT(status.message().size(), 200u);
  std::string arrays(kDepth, '[');
  arrays += std::string(kDepth, ']');
  STRATA_EXPECT_OK(Parse(arrays));
}

TEST(StrictJson, NotUtf8GivesTheByteOffset) {
  // Outside strings and inside them.
  EXPECT_THAT(Parse("{\"a\": 1}\xff"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "input is not UTF-8 at byte 8 (line 1, column 9): byte 0xff cannot start "
                       "a character"));
  EXPECT_THAT(Parse("{\n  \"na\xc3\x28me\": 1}"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not UTF-8 at byte 7 (line 2, column 6)")));
  // Overlong, surrogate, past U+10FFFF, lone continuation, truncated at the end.
  for (const char* bad : {"\"\xc0\xaf\"", "\"\xe0\x80\xaf\"", "\"\xed\xa0\x80\"",
                          "\"\xf4\x90\x80\x80\"", "\"\xf0\x80\x80\xaf\"", "\"\x80\"",
                          "\"\xf5\x80\x80\x80\""}) {
    EXPECT_THAT(Parse(bad), StatusIs(absl::StatusCode::kInvalidArgument,
                                     HasSubstr("not UTF-8 at byte 1 (line 1, column 2)")))
        << bad;
  }
  EXPECT_THAT(Parse("\"abcdefgh\xe2\x82"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "input is not UTF-8 at byte 9 (line 1, column 10): the input ends inside "
                       "a character"));
  // The first bad byte is reported, after a long ASCII run (the 8-byte fast path).
  std::string long_text(1000, ' ');
  long_text[997] = '\xfe';
  long_text[998] = '\xff';
  EXPECT_THAT(Parse(long_text), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("not UTF-8 at byte 997 ")));
  // The largest code point and the last before the surrogates are fine.
  STRATA_EXPECT_OK(CheckUtf8("\xf4\x8f\xbf\xbf \xed\x9f\xbf \xee\x80\x80"));
  STRATA_EXPECT_OK(CheckUtf8(""));
}

TEST(StrictJson, SyntaxErrorsGiveLineAndColumn) {
  EXPECT_THAT(Parse("{\n  \"a\": 1,\n  }"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("JSON syntax error at line 3, column 3:")));
  EXPECT_THAT(Parse(""), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("JSON syntax error at line 1, column 1:")));
  EXPECT_THAT(Parse("[1, 2"), StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("JSON syntax error at line 1, column 6:")));
  EXPECT_THAT(Parse("{} {}"), StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("JSON syntax error at line 1, column 4:")));
}

}  // namespace
}  // namespace strata
