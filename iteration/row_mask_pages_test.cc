#include "iteration/row_mask_pages.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "testing/random.h"

namespace strata {
namespace {

constexpr uint64_t Bit(uint32_t c) { return uint64_t{1} << c; }

TEST(RowMaskPages, DocumentationExample) {
  constexpr uint32_t kPosition = 0, kVelocity = 1, kFrozen = 2;
  RowMaskPages rows;
  EXPECT_TRUE(rows.Add(17, kPosition));
  EXPECT_TRUE(rows.Add(17, kVelocity));
  EXPECT_FALSE(rows.Add(17, kVelocity));
  EXPECT_TRUE(rows.Add(18, kPosition));
  std::vector<uint32_t> seen;
  rows.ForEachMatch(Bit(kPosition) | Bit(kVelocity), Bit(kFrozen),
                    [&](uint32_t index) { seen.push_back(index); });
  EXPECT_EQ(seen, std::vector<uint32_t>{17});
  EXPECT_EQ(rows.UpdateDirtyPages(), 0u);
  EXPECT_EQ(rows.page_caches(0), std::make_pair(Bit(kPosition) | Bit(kVelocity), uint64_t{0}));
}

TEST(RowMaskPages, EmptyAndReleasedPages) {
  RowMaskPages rows;
  EXPECT_FALSE(rows.Remove(5, 0));
  EXPECT_FALSE(rows.Delete(5));
  EXPECT_EQ(rows.Row(5), 0u);
  int calls = 0;
  rows.ForEachMatch(0, 0, [&](uint32_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(rows.Add(100, 63));
  EXPECT_EQ(rows.allocated_pages(), 1u);
  EXPECT_TRUE(rows.Remove(100, 63));
  EXPECT_EQ(rows.UpdateDirtyPages(), 1u);
  EXPECT_EQ(rows.allocated_pages(), 0u);
  EXPECT_EQ(rows.Row(100), 0u);
}

TEST(RowMaskPages, FullPageCachesBitAnd) {
  RowMaskPages rows;
  std::vector<uint32_t> indices(32);
  for (uint32_t i = 0; i < 32; ++i) indices[i] = i;
  rows.CreateFromBundle(indices, Bit(1) | Bit(2));
  rows.UpdateDirtyPages();
  EXPECT_EQ(rows.page_caches(0).second, Bit(1) | Bit(2));
  // Every entity has the excluded component: the page is skipped by its cache, and
  // the result is the same as the row check would give.
  int calls = 0;
  rows.ForEachMatch(Bit(1), Bit(2), [&](uint32_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  // Removing from one row must un-skip the page immediately, before UpdateDirtyPages.
  EXPECT_TRUE(rows.Remove(7, 2));
  std::vector<uint32_t> seen;
  rows.ForEachMatch(Bit(1), Bit(2), [&](uint32_t i) { seen.push_back(i); });
  EXPECT_EQ(seen, std::vector<uint32_t>{7});
}

// Random operations against a naive per-row model; filters checked with stale
// (conservative) caches and after UpdateDirtyPages.
TEST(RowMaskPages, RandomOperationsMatchReferenceModel) {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  constexpr uint32_t kEntities = 32 * 40;
  std::vector<uint64_t> model(kEntities, 0);
  RowMaskPages rows;
  for (int step = 0; step < 20000; ++step) {
    const uint32_t index = static_cast<uint32_t>(rng.UniformIndex(kEntities));
    const uint32_t c = static_cast<uint32_t>(rng.UniformIndex(8));
    switch (rng.UniformInt(0, 4)) {
      case 0:
      case 1:
        ASSERT_EQ(rows.Add(index, c), (model[index] & Bit(c)) == 0);
        model[index] |= Bit(c);
        break;
      case 2:
        ASSERT_EQ(rows.Remove(index, c), (model[index] & Bit(c)) != 0);
        model[index] &= ~Bit(c);
        break;
      case 3:
        ASSERT_EQ(rows.Delete(index), model[index] != 0);
        model[index] = 0;
        break;
      default:
        if (rng.Bernoulli(0.1)) rows.UpdateDirtyPages();
        break;
    }
    if (step % 1000 == 0) {
      const uint64_t include = (rng.Next64() & 0xF) | 1;  // at least one include
      const uint64_t exclude = rng.Next64() & 0xF0;
      std::vector<uint32_t> want, got;
      for (uint32_t i = 0; i < kEntities; ++i) {
        ASSERT_EQ(rows.Row(i), model[i]);
        if ((model[i] & include) == include && (model[i] & exclude) == 0) {
          want.push_back(i);
        }
      }
      rows.ForEachMatch(include, exclude, [&](uint32_t i) { got.push_back(i); });
      ASSERT_EQ(got, want) << "step " << step;
    }
  }
  for (uint32_t i = 0; i < kEntities; ++i) rows.Delete(i);
  rows.UpdateDirtyPages();
  EXPECT_EQ(rows.allocated_pages(), 0u);
}

}  // namespace
}  // namespace strata
