// Allocation counting for tests and benchmarks: the "Memory used (MB)" columns of the
// articles' tables, and "everything freed" checks.
//
// Two ways to count:
//  * CountingAllocator<T>: a standard allocator bound to an AllocationCounter, for one
//    container (std::vector, absl::flat_hash_map, ...):
//
//      AllocationCounter counter;
//      std::vector<int, CountingAllocator<int>> v{CountingAllocator<int>(&counter)};
//      v.resize(1000);
//      EXPECT_GE(counter.live_bytes(), 1000 * sizeof(int));
//
//  * GlobalAllocationCounter(): every operator new/delete in the process, when the test
//    or benchmark also depends on //testing:global_allocation_counter:
//
//      const int64_t before = GlobalAllocationCounter().live_bytes();
//      { EntityIndex index; ... }
//      EXPECT_EQ(GlobalAllocationCounter().live_bytes(), before);
//
// Thread-safety: AllocationCounter is safe to update from any number of threads.
#ifndef STRATA_TESTING_COUNTING_ALLOCATOR_H_
#define STRATA_TESTING_COUNTING_ALLOCATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace strata::testing {

// AllocationCounter: live bytes, the peak of live bytes, and allocation counts.
class AllocationCounter {
 public:
  constexpr AllocationCounter() = default;
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;

  void RecordAllocation(size_t bytes) {
    const int64_t live =
        live_bytes_.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed) +
        static_cast<int64_t>(bytes);
    allocations_.fetch_add(1, std::memory_order_relaxed);
    int64_t peak = peak_bytes_.load(std::memory_order_relaxed);
    while (live > peak &&
           !peak_bytes_.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
    }
  }

  void RecordDeallocation(size_t bytes) {
    live_bytes_.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
    deallocations_.fetch_add(1, std::memory_order_relaxed);
  }

  // live_bytes: bytes allocated and not yet freed.
  int64_t live_bytes() const { return live_bytes_.load(std::memory_order_relaxed); }
  // peak_bytes: the largest live_bytes() seen since construction or ResetPeak().
  int64_t peak_bytes() const { return peak_bytes_.load(std::memory_order_relaxed); }
  // allocations / deallocations: number of calls since construction.
  int64_t allocations() const { return allocations_.load(std::memory_order_relaxed); }
  int64_t deallocations() const { return deallocations_.load(std::memory_order_relaxed); }
  // live_allocations: blocks allocated and not yet freed.
  int64_t live_allocations() const { return allocations() - deallocations(); }

  // ResetPeak: starts a new peak measurement from the current live bytes.
  void ResetPeak() { peak_bytes_.store(live_bytes(), std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> live_bytes_{0};
  std::atomic<int64_t> peak_bytes_{0};
  std::atomic<int64_t> allocations_{0};
  std::atomic<int64_t> deallocations_{0};
};

// CountingAllocator<T>: std::allocator<T> that reports to an AllocationCounter. Copies
// (including rebinds) share the counter; the counter must outlive every container
// using it. Allocators compare equal when they share a counter.
template <typename T>
class CountingAllocator {
 public:
  using value_type = T;

  explicit CountingAllocator(AllocationCounter* counter) : counter_(counter) {}
  template <typename U>
  CountingAllocator(const CountingAllocator<U>& other)  // NOLINT: rebind is implicit
      : counter_(other.counter()) {}

  T* allocate(size_t n) {
    T* result = std::allocator<T>().allocate(n);
    counter_->RecordAllocation(n * sizeof(T));
    return result;
  }

  void deallocate(T* p, size_t n) {
    counter_->RecordDeallocation(n * sizeof(T));
    std::allocator<T>().deallocate(p, n);
  }

  AllocationCounter* counter() const { return counter_; }

  template <typename U>
  bool operator==(const CountingAllocator<U>& other) const {
    return counter_ == other.counter();
  }

 private:
  AllocationCounter* counter_;
};

// GlobalAllocationCounter: the counter that //testing:global_allocation_counter feeds
// from the replaced global operator new/delete. Without that dependency it stays at
// zero (see GlobalAllocationCountingEnabled()).
AllocationCounter& GlobalAllocationCounter();

// GlobalAllocationCountingEnabled: true when //testing:global_allocation_counter is
// linked in, i.e. when GlobalAllocationCounter() sees every allocation.
bool GlobalAllocationCountingEnabled();

}  // namespace strata::testing

#endif  // STRATA_TESTING_COUNTING_ALLOCATOR_H_
