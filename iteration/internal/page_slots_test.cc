#include "iteration/internal/page_slots.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/config.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "testing/random.h"

#ifdef ABSL_HAVE_ADDRESS_SANITIZER
#include <sanitizer/asan_interface.h>
#endif

namespace strata::iteration_internal {
namespace {

constexpr uint32_t kCanary = 0xDEADBEEFu;

void CompareOnRandomPages(::strata::testing::Random& rng);

// Random masks whose bits are mostly clear, mostly set or half and half, so that pages
// of 0, a few, many and 32 matches all occur.
uint32_t RandomMask(::strata::testing::Random& rng) {
  switch (rng.UniformInt(0, 4)) {
    case 0:
      return 0;
    case 1:
      return ~uint32_t{0};
    case 2:
      return rng.Next32() & rng.Next32() & rng.Next32();  // sparse
    case 3:
      return rng.Next32() | rng.Next32();  // dense
    default:
      return rng.Next32();
  }
}

TEST(PageSlots, AppendPageSlotsListsEveryBitInOrder) {
  uint32_t out[32];
  EXPECT_EQ(AppendPageSlots(0, 64, out), 0u);
  ASSERT_EQ(AppendPageSlots(~uint32_t{0}, 64, out), 32u);
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(out[i], 64 + i);
  ASSERT_EQ(AppendPageSlots(0x80000101u, 0, out), 3u);
  EXPECT_EQ(out[0], 0u);
  EXPECT_EQ(out[1], 8u);
  EXPECT_EQ(out[2], 31u);
}

// Every target compiled in and supported here (the byte table below AVX2, the vector
// compress from it) against the slot-at-a-time reference.
TEST(PageSlots, DispatchedMatchesScalarOnRandomPages) {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
    SCOPED_TRACE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    ASSERT_NO_FATAL_FAILURE(CompareOnRandomPages(rng));
  }
  hwy::SetSupportedTargetsForTest(0);
}

void CompareOnRandomPages(::strata::testing::Random& rng) {
  constexpr uint32_t kPages = 300;
  for (int round = 0; round < 200; ++round) {
    const size_t num_types = static_cast<size_t>(rng.UniformInt(0, 3));
    std::vector<uint32_t> occupied(kPages);
    std::vector<std::vector<uint32_t>> mask_rows(num_types, std::vector<uint32_t>(kPages));
    std::vector<const uint32_t*> masks;
    std::vector<uint32_t> flips;
    for (uint32_t& word : occupied) word = RandomMask(rng);
    for (auto& row : mask_rows) {
      for (uint32_t& word : row) word = RandomMask(rng);
      masks.push_back(row.data());
      flips.push_back(rng.Bernoulli(0.5) ? 0 : ~uint32_t{0});
    }
    const uint32_t first = static_cast<uint32_t>(rng.UniformInt(0, kPages));
    const uint32_t end = static_cast<uint32_t>(rng.UniformInt(first, kPages));
    const uint32_t last_page = static_cast<uint32_t>(rng.UniformInt(0, kPages));
    const PageMatchRows rows{occupied.data(), masks.data(), flips.data(),
                             num_types,       last_page,    RandomMask(rng)};
    const size_t max = static_cast<size_t>(rng.UniformInt(0, 2000));
    const size_t start = max == 0 ? 0 : static_cast<size_t>(rng.UniformInt(0, max));
    SCOPED_TRACE(absl::StrCat("round ", round, " pages [", first, ", ", end, ") max ", max,
                              " start ", start));

    std::vector<uint32_t> want(max + 8, kCanary);
    std::vector<uint32_t> got(max + 8, kCanary);
    size_t n_want = start;
    size_t n_got = start;
    const uint32_t page_want = TakeWholePagesScalar(rows, first, end, want.data(), n_want, max);
    const uint32_t page_got = TakeWholePages(rows, first, end, got.data(), n_got, max);
    ASSERT_EQ(page_got, page_want);
    ASSERT_EQ(n_got, n_want);
    for (size_t i = start; i < n_want; ++i) ASSERT_EQ(got[i], want[i]) << "at " << i;
    for (size_t i = 0; i < start; ++i) ASSERT_EQ(got[i], kCanary) << "before the start";
    for (size_t i = max; i < got.size(); ++i) ASSERT_EQ(got[i], kCanary) << "past max";
    // Stopped only at the end or with less than a page of room.
    ASSERT_TRUE(page_want == end || n_want + kPageSlots > max);
    // Every slot is a match of its page, ascending.
    for (size_t i = start; i < n_want; ++i) {
      const uint32_t slot = want[i];
      ASSERT_LT(slot / kPageSlots, page_want);
      ASSERT_NE((PageMatches(rows, slot / kPageSlots) >> (slot % kPageSlots)) & 1u, 0u);
      if (i > start) {
        ASSERT_GT(slot, want[i - 1]);
      }
    }
  }
}

// Every target against the page-at-a-time reference, on blocks of every size up to
// kBlock (the vector loop's tail included) and every number of types up to 32.
TEST(PageSlots, ClassifyPagesMatchesScalar) {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  constexpr size_t kPages = 600;
  for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
    SCOPED_TRACE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    for (int round = 0; round < 60; ++round) {
      const size_t num_types = static_cast<size_t>(rng.UniformInt(0, kMaxClassifiedTypes));
      std::vector<uint32_t> occupied(kPages);
      for (uint32_t& word : occupied) word = RandomMask(rng);
      std::vector<std::vector<uint32_t>> rows(num_types, std::vector<uint32_t>(kPages));
      std::vector<const uint32_t*> masks;
      for (auto& row : rows) {
        // Masks equal to the page's occupancy, a shared partial mask or random ones, so
        // that full, split and mismatched pages all occur.
        for (size_t p = 0; p < kPages; ++p) {
          const int kind = static_cast<int>(rng.UniformInt(0, 3));
          row[p] = kind == 0   ? occupied[p]
                   : kind == 1 ? occupied[p] & 0x0F0F0F0Fu
                               : RandomMask(rng);
        }
        masks.push_back(row.data());
      }
      const size_t begin = static_cast<size_t>(rng.UniformInt(0, kPages - 1));
      const size_t count = static_cast<size_t>(
          rng.UniformInt(0, std::min<int64_t>(PageClasses::kBlock, kPages - begin)));
      SCOPED_TRACE(
          absl::StrCat("round ", round, " types ", num_types, " pages ", begin, "+", count));
      PageClasses want;
      PageClasses got;
      ClassifyPagesScalar(occupied.data(), masks.data(), num_types, begin, count, want);
      ClassifyPages(occupied.data(), masks.data(), num_types, begin, count, got);
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(got.split[i], want.split[i]) << "page " << begin + i;
        ASSERT_EQ(got.full[i], want.full[i]) << "page " << begin + i;
        ASSERT_EQ(got.part[i], want.part[i]) << "page " << begin + i;
        ASSERT_EQ(got.mismatch[i] != 0, want.mismatch[i] != 0) << "page " << begin + i;
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST(PageSlots, ClassifyPagesByHand) {
  // Page 0: full A, partial B; page 1: two different partial masks; page 2: empty.
  const uint32_t occupied[3] = {0xFFu, 0xFFu, 0};
  const uint32_t a[3] = {0xFFu, 0x0Fu, 0};
  const uint32_t b[3] = {0x03u, 0xF0u, 0};
  const uint32_t* masks[2] = {a, b};
  PageClasses classes;
  ClassifyPages(occupied, masks, 2, 0, 3, classes);
  EXPECT_EQ(classes.full[0], 1u);
  EXPECT_EQ(classes.part[0], 2u);
  EXPECT_EQ(classes.split[0], 0x03u);
  EXPECT_EQ(classes.mismatch[0], 0u);
  EXPECT_NE(classes.mismatch[1], 0u);
  EXPECT_EQ(classes.full[2] | classes.part[2] | classes.split[2] | classes.mismatch[2], 0u);
}

TEST(PageSlots, NoRoomOrNoPagesTakesNothing) {
  const uint32_t occupied[2] = {~uint32_t{0}, ~uint32_t{0}};
  const PageMatchRows rows{occupied, nullptr, nullptr, 0, 2, 0};
  uint32_t out[64];
  size_t n = 0;
  EXPECT_EQ(TakeWholePages(rows, 0, 0, out, n, 64), 0u);  // no pages
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(TakeWholePages(rows, 0, 2, out, n, 31), 0u);  // less than a page of room
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(TakeWholePages(rows, 0, 2, out, n, 63), 1u);  // one page fits, not two
  EXPECT_EQ(n, 32u);
  n = 0;
  EXPECT_EQ(TakeWholePages(rows, 0, 2, out, n, 64), 2u);
  ASSERT_EQ(n, 64u);
  for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(out[i], i);
}

// Under AddressSanitizer: whether any byte of the 64 KiB of stack below the caller's
// frame is still poisoned. Every instrumented function clears its frame's shadow when
// it returns, so after a call returns nothing below the caller may stay poisoned; a
// byte that does makes a later read of that stack by uninstrumented code (libstdc++
// formatting a number through vsnprintf) fail far from the cause. Always false in
// other builds.
ABSL_ATTRIBUTE_NOINLINE bool StackBelowCallerIsPoisoned() {
#ifdef ABSL_HAVE_ADDRESS_SANITIZER
  constexpr size_t kDepth = 64 * 1024;
  const char* frame = static_cast<const char*>(__builtin_frame_address(0));
  return __asan_region_is_poisoned(const_cast<char*>(frame - kDepth), kDepth) != nullptr;
#else
  return false;
#endif
}

// The kernels are not ASan-instrumented (page_slots.cc says why), but GCC still
// expands the scope marks of the Highway helpers it inlines into them; they must not
// leave stack poisoned behind them on any target.
TEST(PageSlots, KernelsLeaveNoStackPoisoned) {
  ASSERT_FALSE(StackBelowCallerIsPoisoned()) << "poisoned before any kernel ran";
  const uint32_t occupied[40] = {~uint32_t{0}, 0x80000101u, 0, 0x0F0F0F0Fu};
  const uint32_t* masks[1] = {occupied};
  const uint32_t flips[1] = {0};
  const PageMatchRows rows{occupied, masks, flips, 1, 3, ~uint32_t{0}};
  for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
    SCOPED_TRACE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    uint32_t out[4 * kPageSlots + 8];
    size_t n = 0;
    ASSERT_EQ(TakeWholePages(rows, 0, 4, out, n, 4 * kPageSlots), 4u);
    EXPECT_EQ(n, 32u + 3u + 16u);
    EXPECT_FALSE(StackBelowCallerIsPoisoned()) << "after TakeWholePages";
    PageClasses classes;
    ClassifyPages(occupied, masks, 1, 0, 40, classes);
    EXPECT_EQ(classes.full[0], 1u);
    EXPECT_EQ(classes.full[2], 0u);
    EXPECT_FALSE(StackBelowCallerIsPoisoned()) << "after ClassifyPages";
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace strata::iteration_internal
