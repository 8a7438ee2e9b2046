// The FilterPages kernel compiled for every Highway target this binary carries and
// this CPU supports, each compared with FilterPagesScalar on random masks.
#include <cstddef>
#include <cstdint>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "iteration/filter_simd_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/test_util-inl.h"
#include "iteration/filter-inl.h"
#include "iteration/filter.h"
#include "testing/random.h"

// Tests live outside namespace strata: Highway's test macros name ::testing, which
// strata::testing would hide.
HWY_BEFORE_NAMESPACE();
namespace strata_iteration_test {
namespace HWY_NAMESPACE {

using ::strata::FilterPagesScalar;
using ::strata::kFilterOutputSlack;
using ::strata::MaskRows;
using ::strata::HWY_NAMESPACE::FilterPagesKernel;

void TestKernelMatchesScalar() {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  SCOPED_TRACE(hwy::TargetName(HWY_TARGET));
  constexpr size_t kPages = 777;  // not a multiple of any vector length
  constexpr size_t kRows = 16;
  std::vector<std::vector<uint32_t>> masks(kRows, std::vector<uint32_t>(kPages));
  const uint32_t* rows[kRows];
  std::vector<uint32_t> got_pages(kPages + kFilterOutputSlack);
  std::vector<uint32_t> got_masks(got_pages.size());
  std::vector<uint32_t> want_pages(kPages), want_masks(kPages);
  for (int trial = 0; trial < 200; ++trial) {
    // Densities from all-zero to all-ones, so both early exits and full pages occur.
    const int density = trial % 5;
    for (size_t r = 0; r < kRows; ++r) {
      for (uint32_t& m : masks[r]) {
        switch (density) {
          case 0: m = 0; break;
          case 1: m = ~uint32_t{0}; break;
          case 2: m = rng.Bernoulli(0.1) ? rng.Next32() : 0; break;
          case 3: m = rng.Next32() | rng.Next32(); break;
          default: m = rng.Next32(); break;
        }
      }
      rows[r] = masks[r].data();
    }
    const size_t num_include = rng.UniformInt(1, 8);
    const size_t num_exclude = rng.UniformInt(0, 8);
    const MaskRows mask_rows{rows, num_include, rows + 8, num_exclude};
    const size_t begin = rng.UniformIndex(kPages);
    const size_t end = begin + rng.UniformIndex(kPages - begin + 1);
    const size_t got =
        FilterPagesKernel(mask_rows, begin, end, got_pages.data(), got_masks.data());
    const size_t want =
        FilterPagesScalar(mask_rows, begin, end, want_pages.data(), want_masks.data());
    ASSERT_EQ(got, want) << "trial " << trial << " [" << begin << ", " << end << ")";
    for (size_t i = 0; i < got; ++i) {
      ASSERT_EQ(got_pages[i], want_pages[i]) << "trial " << trial << " match " << i;
      ASSERT_EQ(got_masks[i], want_masks[i]) << "trial " << trial << " match " << i;
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace strata_iteration_test
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strata_iteration_test {

HWY_BEFORE_TEST(FilterSimd);
HWY_EXPORT_AND_TEST_P(FilterSimd, TestKernelMatchesScalar);

}  // namespace strata_iteration_test
#endif  // HWY_ONCE
