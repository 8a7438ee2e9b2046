// BackgroundPrefault: faults fresh memory in on another thread while the caller starts
// writing it, so the kernel's zeroing of new pages runs on a second core.
//
// The first write to a page of a new anonymous mapping traps into the kernel, which
// finds a free page and zeroes it (2 MiB at once for a transparent huge page). Filling
// a fresh block of 100+ MB, that zeroing is a third or more of the time, all on the
// writing thread. MADV_POPULATE_WRITE (Linux 5.14) faults pages in as a write would,
// without changing their contents, so a helper thread can run ahead of the writer:
//
//   {
//     BackgroundPrefault prefault({{local, n * 64}, {world, n * 64}, {links, n * 4}});
//     for (size_t k = 0; k < n; ++k) Write(k);   // meets pages already faulted in
//   }                                            // waits for the helper
//
// The ranges are faulted in together, in `steps` equal slices each (slice k of every
// range before slice k + 1 of any), the order of a writer that walks all of them side
// by side. Pages already present cost a page-table walk. Contents never change, so the
// writer needs no synchronisation with the helper; if it overtakes the helper, both may
// fault a page and the kernel keeps one (correct, the helper's work just wasted).
//
// Where MADV_POPULATE_WRITE is missing (another OS, an older kernel), or no thread can
// be started, the writer faults its pages itself, as without this class.
//
// Thread-safety: the object belongs to one thread. The ranges must stay mapped until
// Wait() or the destructor returns.
#ifndef STRATA_BASE_PREFAULT_H_
#define STRATA_BASE_PREFAULT_H_

#include <cstddef>
#include <thread>
#include <vector>

#include "base/policy_checks.h"

namespace strata {

class BackgroundPrefault {
 public:
  struct Range {
    void* begin;
    size_t bytes;
  };

  // kSliceBytes: the default slice of the largest range per step, one huge page.
  static constexpr size_t kSliceBytes = size_t{2} << 20;

  // An idle prefault (nothing to wait for).
  BackgroundPrefault() = default;
  // Starts faulting in `ranges` on a new thread, in ceil(largest range / slice_bytes)
  // steps (empty ranges are skipped; nothing starts if all are empty or the platform
  // cannot populate pages).
  explicit BackgroundPrefault(std::vector<Range> ranges, size_t slice_bytes = kSliceBytes);
  ~BackgroundPrefault() { Wait(); }

  BackgroundPrefault(const BackgroundPrefault&) = delete;
  BackgroundPrefault& operator=(const BackgroundPrefault&) = delete;

  // Wait: returns once the helper is done (at once if none was started).
  void Wait();
  // started: a helper thread was started (and not yet waited for).
  bool started() const { return thread_.joinable(); }

  // Supported: this platform can populate pages for writing (Linux with
  // MADV_POPULATE_WRITE). Probed once.
  static bool Supported();

  // Populate: faults in the pages of [begin, begin + bytes) as a write would, now, on
  // the calling thread, without changing their contents. False where unsupported.
  static bool Populate(void* begin, size_t bytes);

 private:
  std::thread thread_;
};

}  // namespace strata

#endif  // STRATA_BASE_PREFAULT_H_
