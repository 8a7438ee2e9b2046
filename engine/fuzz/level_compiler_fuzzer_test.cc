// Runs the level compiler fuzzer's check under the normal build: every seed-corpus
// level must compile and pass it, every regression input (a former finding) must pass
// it, and so must thousands of deterministic mutations of the seeds, so `bazel test
// //...` (and its ASan and UBSan configs) covers the check without clang.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/fuzz/level_compiler_fuzzer.h"
#include "gtest/gtest.h"
#include "resource/tool_io.h"
#include "testing/random.h"

namespace strata {
namespace {

std::vector<std::string> LoadDirectory(const std::string& dir) {
  std::vector<std::string> paths;
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) return {};
  for (const auto& entry : std::filesystem::directory_iterator(dir)) paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());  // deterministic order for the mutations
  std::vector<std::string> texts;
  for (const std::string& path : paths) {
    absl::StatusOr<std::vector<std::byte>> bytes = ReadToolFile(path);
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    if (bytes.ok()) texts.emplace_back(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  }
  return texts;
}

TEST(LevelCompilerFuzzer, EverySeedCompilesAndPassesTheCheck) {
  const std::vector<std::string> corpus = LoadDirectory("engine/fuzz/corpus");
  ASSERT_GE(corpus.size(), 6u);
  for (const std::string& text : corpus) EXPECT_TRUE(CheckLevelJson(text)) << text.substr(0, 200);
}

TEST(LevelCompilerFuzzer, RegressionInputsPassTheCheck) {
  for (const std::string& text : LoadDirectory("engine/fuzz/regressions")) CheckLevelJson(text);
}

TEST(LevelCompilerFuzzer, RejectsWhatIsNotALevel) {
  EXPECT_FALSE(CheckLevelJson(""));
  EXPECT_FALSE(CheckLevelJson("[]"));
  EXPECT_FALSE(CheckLevelJson(R"({"entities": [{"name": "a", "name": "a"}]})"));
  EXPECT_FALSE(CheckLevelJson("{\"entities\": [{\"name\": \"\xff\"}]}"));
  EXPECT_TRUE(CheckLevelJson(R"({"entities": [{"components": [{"type": "sprite", "size": 2}]}]})"));
}

TEST(LevelCompilerFuzzer, SurvivesDeterministicMutations) {
  testing::Random rng(testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  const std::vector<std::string> corpus = LoadDirectory("engine/fuzz/corpus");
  ASSERT_FALSE(corpus.empty());
  const char* tokens[] = {"\"entities\"", "\"components\"", "\"children\"", "\"type\"", "\"name\"",
                          "\"transform\"", "\"sprite\"", "\"spark\"", "\"render_data\"", "\"matrix\"",
                          "\"#0000002a\"", "\"a/b\"", "1e39", "-1", "0", "null", "{}", "[]", ",", ":",
                          "\"zoo\"", "\"faction\"", "\"red\"", "\"glad\"", "{\"unchecked\": 7}",
                          "18446744073709551615"};
  constexpr int kMutations = 3000;
  int accepted = 0;
  for (int m = 0; m < kMutations; ++m) {
    std::string text = corpus[rng.UniformIndex(corpus.size())];
    const int edits = static_cast<int>(rng.UniformInt(1, 2));
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = rng.UniformIndex(text.size());
      switch (rng.UniformInt(0, 3)) {
        case 0:  // delete a short span
          text.erase(at, rng.UniformInt(1, 8));
          break;
        case 1:  // insert a level token
          text.insert(at, tokens[rng.UniformIndex(std::size(tokens))]);
          break;
        case 2: {  // duplicate a span (duplicate keys, repeated entities)
          const std::string span = text.substr(at, rng.UniformInt(1, 40));
          text.insert(at, span);
          break;
        }
        default:  // overwrite a byte
          text[at] = static_cast<char>(rng.Next32() & 0xFF);
          break;
      }
    }
    accepted += CheckLevelJson(text);
  }
  // Some mutations must survive the compiler, or only its rejections were exercised.
  EXPECT_GT(accepted, kMutations / 50);
}

}  // namespace
}  // namespace strata
