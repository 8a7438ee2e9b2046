#include "base/prefault.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace strata {
namespace {

#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
size_t PageBytes() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

bool PopulateRange(void* begin, size_t bytes) {
  if (bytes == 0) return true;
  // madvise wants a page-aligned start; widen to whole pages (the neighbours are in
  // the same mapping or the call fails harmlessly with ENOMEM).
  const uintptr_t page = PageBytes();
  const uintptr_t start = reinterpret_cast<uintptr_t>(begin) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(begin) + bytes;
  return madvise(reinterpret_cast<void*>(start), end - start, MADV_POPULATE_WRITE) == 0;
}
#else
bool PopulateRange(void*, size_t) { return false; }
#endif

}  // namespace

bool BackgroundPrefault::Supported() {
  static const bool supported = [] {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    // An older kernel rejects the advice with EINVAL: probe on a page of our own.
    void* page = mmap(nullptr, PageBytes(), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return false;
    const bool ok = PopulateRange(page, PageBytes());
    munmap(page, PageBytes());
    return ok;
#else
    return false;
#endif
  }();
  return supported;
}

bool BackgroundPrefault::Populate(void* begin, size_t bytes) {
  return Supported() && PopulateRange(begin, bytes);
}

BackgroundPrefault::BackgroundPrefault(std::vector<Range> ranges, size_t slice_bytes) {
  ranges.erase(std::remove_if(ranges.begin(), ranges.end(),
                              [](const Range& r) { return r.bytes == 0; }),
               ranges.end());
  if (ranges.empty() || !Supported()) return;
  size_t largest = 0;
  for (const Range& r : ranges) largest = std::max(largest, r.bytes);
  slice_bytes = std::max<size_t>(slice_bytes, 1);
  const size_t steps = (largest + slice_bytes - 1) / slice_bytes;
  auto fault_in = [ranges = std::move(ranges), steps] {
    for (size_t step = 0; step < steps; ++step) {
      for (const Range& r : ranges) {
        // Slice `step` of `steps` equal slices of this range.
        const size_t from = r.bytes / steps * step + std::min(step, r.bytes % steps);
        const size_t to = r.bytes / steps * (step + 1) + std::min(step + 1, r.bytes % steps);
        // A failure (memory pressure: ENOMEM, EFAULT) only means the writer faults
        // those pages itself.
        if (to > from) (void)PopulateRange(static_cast<char*>(r.begin) + from, to - from);
      }
    }
  };
  try {
    thread_ = std::thread(std::move(fault_in));
  } catch (const std::system_error&) {
    // No thread to be had (a process at its thread limit): the writer faults its pages
    // itself, as without a prefault.
  }
}

void BackgroundPrefault::Wait() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace strata
