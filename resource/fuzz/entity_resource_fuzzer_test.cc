// Runs the fuzz entry point under the normal build: every file of the checked-in seed
// corpus, then thousands of deterministic mutations of them (bit flips, hostile uint32
// values at field offsets, truncations, splices), so `bazel test //...` (and its ASan
// and UBSan configs) covers the loader's bad-input paths without clang.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "resource/format.h"
#include "resource/prefab.h"
#include "resource/prefab_delta.h"
#include "resource/tool_io.h"
#include "testing/random.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace strata {
namespace {

constexpr char kCorpus[] = "resource/testdata/fuzz_corpus";

std::vector<std::vector<std::byte>> LoadCorpus() {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus)) {
    paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());  // deterministic order for the mutations
  std::vector<std::vector<std::byte>> corpus;
  for (const std::string& path : paths) {
    absl::StatusOr<std::vector<std::byte>> bytes = ReadToolFile(path);
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    if (bytes.ok()) corpus.push_back(std::move(*bytes));
  }
  return corpus;
}

void RunFuzzInput(const std::vector<std::byte>& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

TEST(EntityResourceFuzzer, ReplaysSeedCorpus) {
  const std::vector<std::vector<std::byte>> corpus = LoadCorpus();
  ASSERT_GE(corpus.size(), 6u);
  // The corpus must hold valid blobs, or the mutations below test only the magic check.
  int valid = 0;
  for (const std::vector<std::byte>& input : corpus) {
    RunFuzzInput(input);
    valid += EntityResourceView::Create(input).ok();
  }
  EXPECT_GE(valid, 3);
}

// The delta seeds reach the merge, not only the refusals: the one carrying its
// prefabs is made whole; the one naming them is NotFound without them.
TEST(EntityResourceFuzzer, DeltaSeedsExpand) {
  for (const bool carried : {true, false}) {
    absl::StatusOr<std::vector<std::byte>> blob = ReadToolFile(
        absl::StrCat(kCorpus, carried ? "/prefabs_delta.entities" : "/prefabs_delta_by_name.entities"));
    ASSERT_TRUE(blob.ok()) << blob.status();
    absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(*blob);
    ASSERT_TRUE(view.ok()) << view.status();
    absl::StatusOr<PrefabTable> table = ReadPrefabTable(*view);
    ASSERT_TRUE(table.ok()) << table.status();
    ASSERT_TRUE(table->delta);
    std::vector<EntityResourceView> bases;
    for (const PrefabTable::Prefab& prefab : table->prefabs) bases.push_back(prefab.view);
    absl::StatusOr<std::vector<std::byte>> whole = ExpandPrefabDeltas(*view, *table, bases);
    if (carried) {
      ASSERT_TRUE(whole.ok()) << whole.status();
      EXPECT_TRUE(EntityResourceView::Create(*whole).ok());
    } else {
      EXPECT_EQ(whole.status().code(), absl::StatusCode::kNotFound) << whole.status();
    }
  }
}

TEST(EntityResourceFuzzer, SurvivesDeterministicMutations) {
  testing::Random rng(testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  const std::vector<std::vector<std::byte>> corpus = LoadCorpus();
  ASSERT_FALSE(corpus.empty());
  constexpr int kMutations = 4000;
  const uint32_t interesting[] = {0, 1, 2, 3, 4, 12, 15, 16, 17, 31, 32, 33, 64, 0x7FFFFFFFu,
                                  0x80000000u, 0xFFFFFFF0u, 0xFFFFFFFEu, 0xFFFFFFFFu};
  for (int m = 0; m < kMutations; ++m) {
    std::vector<std::byte> input = corpus[rng.UniformIndex(corpus.size())];
    const int edits = static_cast<int>(rng.UniformInt(1, 3));
    for (int e = 0; e < edits && !input.empty(); ++e) {
      switch (rng.UniformInt(0, 4)) {
        case 0:  // flip a bit
          input[rng.UniformIndex(input.size())] ^= std::byte(1u << rng.UniformIndex(8));
          break;
        case 1: {  // a hostile uint32 at a 4-aligned offset (every field is one)
          if (input.size() < 4) break;
          const size_t at = 4 * rng.UniformIndex(input.size() / 4);
          uint32_t v = interesting[rng.UniformIndex(std::size(interesting))];
          if (rng.Bernoulli(0.3)) v = static_cast<uint32_t>(input.size() + rng.UniformInt(-40, 40));
          std::memcpy(input.data() + at, &v, 4);
          break;
        }
        case 2:  // truncate
          input.resize(rng.UniformIndex(input.size()));
          break;
        case 3: {  // splice in a chunk of another corpus file
          const std::vector<std::byte>& other = corpus[rng.UniformIndex(corpus.size())];
          if (other.empty()) break;
          const size_t from = rng.UniformIndex(other.size());
          const size_t len = std::min<size_t>(other.size() - from, rng.UniformInt(1, 64));
          const size_t at = rng.UniformIndex(input.size() + 1);
          input.insert(input.begin() + static_cast<std::ptrdiff_t>(at), other.begin() + static_cast<std::ptrdiff_t>(from),
                       other.begin() + static_cast<std::ptrdiff_t>(from + len));
          break;
        }
        default:  // overwrite a random byte
          input[rng.UniformIndex(input.size())] = std::byte(rng.Next32() & 0xFF);
          break;
      }
    }
    RunFuzzInput(input);
  }
}

}  // namespace
}  // namespace strata
