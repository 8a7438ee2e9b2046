#include "base/prefault.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "base/huge_page_allocator.h"
#include "gtest/gtest.h"

namespace strata {
namespace {

#if defined(__linux__)
// A fresh anonymous mapping of `bytes`, untouched: no page is resident yet.
struct Mapping {
  explicit Mapping(size_t n) : bytes(n) {
    p = static_cast<unsigned char*>(
        mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  }
  ~Mapping() { munmap(p, bytes); }
  // The number of resident pages in [p + from, p + to).
  size_t Resident(size_t from, size_t to) const {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in_core((to - from + page - 1) / page);
    if (mincore(p + from, to - from, in_core.data()) != 0) return SIZE_MAX;
    size_t n = 0;
    for (unsigned char c : in_core) n += c & 1;
    return n;
  }
  unsigned char* p;
  size_t bytes;
};

TEST(PrefaultTest, PopulateFaultsPagesInWithoutChangingThem) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  Mapping m(16 * page);
  ASSERT_NE(m.p, MAP_FAILED);
  EXPECT_EQ(m.Resident(0, 16 * page), 0u);
  m.p[3 * page + 5] = 42;  // one page written before
  if (!BackgroundPrefault::Supported()) {
    EXPECT_FALSE(BackgroundPrefault::Populate(m.p, 16 * page));
    return;
  }
  // An unaligned start and length: widened to whole pages.
  EXPECT_TRUE(BackgroundPrefault::Populate(m.p + 2 * page + 100, 6 * page));
  EXPECT_EQ(m.Resident(2 * page, 9 * page), 7u);
  EXPECT_EQ(m.Resident(10 * page, 16 * page), 0u);  // nothing beyond the range
  EXPECT_EQ(m.p[3 * page + 5], 42);
  for (size_t i = 2 * page; i < 9 * page; ++i) {
    if (i != 3 * page + 5) {
      ASSERT_EQ(m.p[i], 0) << i;  // still zero: nothing written
    }
  }
  EXPECT_TRUE(BackgroundPrefault::Populate(m.p, 0));
}

TEST(PrefaultTest, HelperFaultsEveryRangeInWhileTheCallerWrites) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  // Three ranges of different sizes in one mapping, as the columns of one block.
  Mapping m(1024 * page);
  ASSERT_NE(m.p, MAP_FAILED);
  const size_t a = 0, a_bytes = 600 * page + 17;
  const size_t b = 640 * page, b_bytes = 300 * page;
  const size_t c = 960 * page + 8, c_bytes = 50;
  {
    BackgroundPrefault prefault({{m.p + a, a_bytes}, {m.p + b, b_bytes}, {m.p + c, c_bytes}},
                                /*slice_bytes=*/16 * page);
    EXPECT_EQ(prefault.started(), BackgroundPrefault::Supported());
    // The caller writes side by side with the helper (the kernel serialises the faults;
    // the helper never touches the bytes, so there is nothing to race on).
    for (size_t i = 0; i < b_bytes; ++i) {
      m.p[a + i] = static_cast<unsigned char>(i * 7);
      m.p[b + i] = static_cast<unsigned char>(i * 13);
    }
    prefault.Wait();
    EXPECT_FALSE(prefault.started());
  }
  for (size_t i = 0; i < b_bytes; ++i) {
    ASSERT_EQ(m.p[a + i], static_cast<unsigned char>(i * 7)) << i;
    ASSERT_EQ(m.p[b + i], static_cast<unsigned char>(i * 13)) << i;
  }
  if (BackgroundPrefault::Supported()) {
    // Every page of every range is resident, the gaps between them are not.
    EXPECT_EQ(m.Resident(a, a + a_bytes), (a_bytes + page - 1) / page);
    EXPECT_EQ(m.Resident(b, b + b_bytes), b_bytes / page);
    EXPECT_EQ(m.Resident(c - 8, c + c_bytes), 1u);
    EXPECT_EQ(m.Resident(601 * page, 640 * page), 0u);
    EXPECT_EQ(m.Resident(961 * page, 1024 * page), 0u);
  }
}
#endif  // __linux__

TEST(PrefaultTest, NothingToFaultStartsNothing) {
  BackgroundPrefault idle;
  EXPECT_FALSE(idle.started());
  idle.Wait();
  std::vector<unsigned char> v(10);
  BackgroundPrefault empty({{v.data(), 0}, {nullptr, 0}});
  EXPECT_FALSE(empty.started());
  BackgroundPrefault none(std::vector<BackgroundPrefault::Range>{});
  EXPECT_FALSE(none.started());
}

TEST(PrefaultTest, HugePageBlockKeepsWhatIsWrittenDuringThePrefault) {
  const size_t bytes = 3 * kHugePageBytes + 4096;
  auto* p = static_cast<uint32_t*>(AllocateLarge(bytes, alignof(uint32_t)));
  const size_t n = bytes / sizeof(uint32_t);
  {
    BackgroundPrefault prefault({{p, bytes}});
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint32_t>(i ^ 0x5A5A5A5Au);
  }
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(p[i], static_cast<uint32_t>(i ^ 0x5A5A5A5Au)) << i;
  DeallocateLarge(p, bytes, alignof(uint32_t));
}

}  // namespace
}  // namespace strata
