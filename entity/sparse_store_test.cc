#include "entity/sparse_store.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "entity/internal/store_conformance_test.h"
#include "entity/store_handle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace entity_internal {
// The suite must be instantiated in the namespace that defines it.
using SparseStores = ::testing::Types<SparseStore<Payload>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Sparse, StoreConformance, SparseStores);
}  // namespace entity_internal

namespace {

using ::strata::entity_internal::Payload;
using ::strata::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The header's usage example.
struct Npc {
  const char* name;
  int health = 100;
  void Think() { --health; }
};

TEST(SparseStore, HeaderExample) {
  SparseStore<Npc> npcs(/*capacity=*/4096);
  STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle boss, npcs.AddPending(Npc{"boss"}));
  int thinking = 0;
  npcs.ForEach([&](Npc& npc) { npc.Think(), ++thinking; });
  EXPECT_EQ(thinking, 0);
  ASSERT_THAT(npcs.Activate(boss), IsOk());
  npcs.ForEach([](Npc& npc) { npc.Think(); });
  if (Npc* npc = npcs.TryGet(boss)) npc->health -= 10;
  EXPECT_EQ(npcs.TryGet(boss)->health, 89);
  ASSERT_THAT(npcs.Remove(boss), IsOk());
  EXPECT_EQ(npcs.TryGet(boss), nullptr);
}

TEST(SparseStore, PointersStayValidAcrossOtherChanges) {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  SparseStore<Payload> store(512);
  STRATA_ASSERT_OK_AND_ASSIGN(const StoreHandle player, store.Add(-1));
  Payload* const player_ptr = store.TryGet(player);
  std::vector<StoreHandle> others;
  for (int step = 0; step < 5000; ++step) {
    if (others.empty() || (rng.Bernoulli(0.55) && store.size() < store.capacity())) {
      auto h = rng.Bernoulli(0.3) ? store.AddPending(step) : store.Add(step);
      ASSERT_THAT(h, IsOk());
      others.push_back(*h);
    } else {
      const size_t k = rng.UniformIndex(others.size());
      if (store.IsPending(others[k]) && rng.Bernoulli(0.5)) {
        ASSERT_THAT(store.Activate(others[k]), IsOk());
        continue;
      }
      ASSERT_THAT(store.Remove(others[k]), IsOk());
      others[k] = others.back();
      others.pop_back();
    }
    ASSERT_EQ(store.TryGet(player), player_ptr);
    ASSERT_EQ(player_ptr->value, -1);
  }
  // And every other live entry sits at the slot its handle names.
  for (StoreHandle h : others) {
    ASSERT_EQ(store.HandleOf(store.TryGet(h)), h);
  }
}

TEST(SparseStore, EntriesNeedNotBeMovable) {
  struct Locked {
    explicit Locked(int v) : value(v) {}
    std::mutex mutex;  // neither copyable nor movable
    int value;
  };
  SparseStore<Locked> store(4);
  STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle h, store.Add(7));
  EXPECT_EQ(store.TryGet(h)->value, 7);
}

TEST(SparseStore, ScanAndIterationListVisitTheSameEntries) {
  SparseStore<Payload> store(64);
  std::vector<StoreHandle> h;
  for (int i = 0; i < 64; ++i) {
    auto added = i % 5 == 0 ? store.AddPending(i) : store.Add(i);
    ASSERT_THAT(added, IsOk());
    h.push_back(*added);
  }
  for (int i = 1; i < 64; i += 3) ASSERT_THAT(store.Remove(h[i]), IsOk());
  std::vector<int> scanned;
  store.ForEachScan([&](Payload& p) { scanned.push_back(p.value); });
  std::vector<int> listed;
  store.ForEach([&](Payload& p) { listed.push_back(p.value); });
  // The scan walks slots in order; here slot == value.
  EXPECT_TRUE(std::is_sorted(scanned.begin(), scanned.end()));
  EXPECT_EQ(scanned.size(), store.active_size());
  EXPECT_THAT(listed, ::testing::UnorderedElementsAreArray(scanned));
  for (int v : scanned) {
    EXPECT_NE(v % 5, 0);
    EXPECT_NE(v % 3, 1);
  }
  EXPECT_EQ(store.iteration_list().size(), store.active_size());
}

TEST(SparseStore, IterationListFollowsActivationAndCanBeSorted) {
  SparseStore<Payload> store(8);
  std::vector<StoreHandle> h;
  for (int i = 0; i < 6; ++i) {
    STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle added, store.AddPending(i));
    h.push_back(added);
  }
  for (int i : {4, 1, 5, 0}) ASSERT_THAT(store.Activate(h[i]), IsOk());
  EXPECT_THAT(store.iteration_list(), ElementsAre(4, 1, 5, 0));
  ASSERT_THAT(store.Remove(h[1]), IsOk());  // the last listed takes its place
  EXPECT_THAT(store.iteration_list(), ElementsAre(4, 0, 5));
  store.SortIterationList();
  EXPECT_THAT(store.iteration_list(), ElementsAre(0, 4, 5));
  ASSERT_THAT(store.Remove(h[4]), IsOk());  // positions were rebuilt by the sort
  EXPECT_THAT(store.iteration_list(), ElementsAre(0, 5));
  ASSERT_THAT(store.Remove(h[5]), IsOk());
  ASSERT_THAT(store.Remove(h[0]), IsOk());
  EXPECT_THAT(store.iteration_list(), IsEmpty());
  EXPECT_EQ(store.pending_size(), 2u);
}

// Visits through all three ForEach forms must be exactly the iteration list, in order,
// with each entry's own handle. Payload values equal slots in the tests below.
void ExpectForEachVisitsTheList(SparseStore<Payload>& store) {
  std::vector<int> expected;
  for (uint32_t slot : store.iteration_list()) expected.push_back(static_cast<int>(slot));
  std::vector<int> visited;
  store.ForEach([&](Payload& p) { visited.push_back(p.value); });
  EXPECT_EQ(visited, expected);
  std::vector<int> visited_const;
  std::as_const(store).ForEach([&](const Payload& p) { visited_const.push_back(p.value); });
  EXPECT_EQ(visited_const, expected);
  std::vector<int> handle_slots;
  store.ForEach([&](StoreHandle handle, Payload& p) {
    EXPECT_EQ(store.TryGet(handle), &p);
    handle_slots.push_back(static_cast<int>(handle.index()));
  });
  EXPECT_EQ(handle_slots, expected);
}

// Adds entries 0..count-1 in order to an empty store (pending or active), so that
// entry i has slot i and value i; returns their handles.
std::vector<StoreHandle> FillInOrder(SparseStore<Payload>& store, uint32_t count,
                                     bool pending) {
  std::vector<StoreHandle> handles;
  for (uint32_t i = 0; i < count; ++i) {
    const int value = static_cast<int>(i);
    auto added = pending ? store.AddPending(value) : store.Add(value);
    if (!added.ok() || added->index() != i) {
      ADD_FAILURE() << "adding entry " << i << ": " << added.status();
      break;
    }
    handles.push_back(*added);
  }
  return handles;
}

// ForEach walks the list in blocks of 16 with a prefetch 128 slots ahead; every
// length around those boundaries must still visit exactly the list, in list order,
// through all three ForEach forms.
TEST(SparseStore, ForEachVisitsTheIterationListInOrderAtEveryBlockBoundary) {
  for (uint32_t n : {0u, 1u, 15u, 16u, 17u, 31u, 32u, 33u, 127u, 128u, 129u, 143u, 144u,
                     145u, 160u, 161u, 300u}) {
    SCOPED_TRACE(n);
    SparseStore<Payload> store(2 * n + 2);
    const std::vector<StoreHandle> h = FillInOrder(store, 2 * n + 2, /*pending=*/false);
    ASSERT_EQ(h.size(), 2 * n + 2);
    // Remove every other entry and one more: n active entries left, listed out of
    // slot order by the swap-removes.
    for (uint32_t i = 0; i < 2 * n + 2; i += 2) ASSERT_THAT(store.Remove(h[i]), IsOk());
    ASSERT_THAT(store.Remove(h[1]), IsOk());
    ASSERT_EQ(store.active_size(), n);
    ExpectForEachVisitsTheList(store);
  }
}

// The full 16-entry blocks of the iteration list whose slots are evenly spaced,
// ascending by 1 to 255: what evenly_spaced_blocks() counts right after a sort.
size_t CountEvenBlocks(absl::Span<const uint32_t> list) {
  size_t even_blocks = 0;
  for (size_t begin = 0; begin + 16 <= list.size(); begin += 16) {
    const uint32_t stride = list[begin + 1] - list[begin];
    bool even = stride >= 1 && stride <= 255;
    for (size_t j = begin + 2; j < begin + 16; ++j) even &= list[j] - list[j - 1] == stride;
    even_blocks += even;
  }
  return even_blocks;
}

// Every `stride`-th slot of `blocks` full blocks active, the list sorted: the article's
// HalfFullWorstCase at stride 2. Strides up to 255 are walked by pointer steps, wider
// ones by index; both must visit the same entries.
TEST(SparseStore, ForEachStepsThroughEvenlySpacedBlocks) {
  for (uint32_t stride : {1u, 2u, 3u, 255u, 256u}) {
    for (uint32_t active : {15u, 16u, 17u, 48u, 50u}) {
      SCOPED_TRACE(absl::StrCat("stride ", stride, ", active ", active));
      const uint32_t capacity = stride * active;
      SparseStore<Payload> store(capacity);
      const std::vector<StoreHandle> h = FillInOrder(store, capacity, /*pending=*/false);
      ASSERT_EQ(h.size(), capacity);
      for (uint32_t i = 0; i < capacity; ++i) {
        if (i % stride != 0) {
          ASSERT_THAT(store.Remove(h[i]), IsOk());
        }
      }
      store.SortIterationList();
      ASSERT_EQ(store.active_size(), active);
      EXPECT_EQ(store.evenly_spaced_blocks(), stride <= 255 ? active / 16 : 0);
      ExpectForEachVisitsTheList(store);
    }
  }
}

TEST(SparseStore, OnlyExactlyEvenAscendingBlocksAreStepped) {
  SparseStore<Payload> store(64);
  const std::vector<StoreHandle> h = FillInOrder(store, 64, /*pending=*/true);
  ASSERT_EQ(h.size(), 64u);
  // Block 0: 63, 61, ..., 33, evenly spaced but descending.
  for (int i = 63; i >= 33; i -= 2) ASSERT_THAT(store.Activate(h[i]), IsOk());
  // Block 1: 0, 2, ..., 28 and then 31, even but for the last gap.
  for (int i = 0; i <= 28; i += 2) ASSERT_THAT(store.Activate(h[i]), IsOk());
  ASSERT_THAT(store.Activate(h[31]), IsOk());
  // Block 2: 1, 3, ..., 29 and then 30, even but for the last gap (of 1, not 2).
  for (int i = 1; i <= 29; i += 2) ASSERT_THAT(store.Activate(h[i]), IsOk());
  ASSERT_EQ(store.active_size(), 47u);
  EXPECT_EQ(store.evenly_spaced_blocks(), 0u);
  ExpectForEachVisitsTheList(store);
  ASSERT_THAT(store.Activate(h[30]), IsOk());
  ASSERT_THAT(store.Activate(h[32]), IsOk());  // the fourth block starts
  EXPECT_EQ(store.evenly_spaced_blocks(), 0u);
  ExpectForEachVisitsTheList(store);
  // Sorted: 0..32, then 33, 35, ..., 63. Blocks 0 (0..15) and 1 (16..31) are even;
  // block 2 (32, 33, 35, ..., 61) is not.
  store.SortIterationList();
  EXPECT_THAT(store.iteration_list().subspan(30, 5), ElementsAre(30, 31, 32, 33, 35));
  EXPECT_EQ(store.evenly_spaced_blocks(), 2u);
  ExpectForEachVisitsTheList(store);
}

// With fewer than a quarter of the full blocks even, ForEach walks them all by index;
// the visits are the same either way.
TEST(SparseStore, FewEvenBlocksStillVisitTheList) {
  SparseStore<Payload> store(96);
  const std::vector<StoreHandle> h = FillInOrder(store, 96, /*pending=*/true);
  ASSERT_EQ(h.size(), 96u);
  for (int i = 0; i < 16; ++i) ASSERT_THAT(store.Activate(h[i]), IsOk());  // even
  for (int i = 95; i >= 16; --i) ASSERT_THAT(store.Activate(h[i]), IsOk());  // descending
  EXPECT_EQ(store.evenly_spaced_blocks(), 1u);  // of 6
  ExpectForEachVisitsTheList(store);
  store.SortIterationList();
  EXPECT_EQ(store.evenly_spaced_blocks(), 6u);
  ExpectForEachVisitsTheList(store);
}

// Removing an entry breaks its block (the last listed entry takes its place); a push
// that completes a block makes it stepped only if it is even.
TEST(SparseStore, RemovalsAndAddsKeepTheSteppedBlocksExact) {
  SparseStore<Payload> store(80);
  const std::vector<StoreHandle> h = FillInOrder(store, 64, /*pending=*/false);
  ASSERT_EQ(h.size(), 64u);
  EXPECT_EQ(store.evenly_spaced_blocks(), 4u);  // four blocks of 16 added in order
  ExpectForEachVisitsTheList(store);
  ASSERT_THAT(store.Remove(h[20]), IsOk());     // slot 63 moves into block 1
  EXPECT_EQ(store.evenly_spaced_blocks(), 2u);  // 0 and 2; 1 broken, 3 partial
  ExpectForEachVisitsTheList(store);
  // Slots 64..79 have never been used, so they come first: block 3 refills with 64.
  STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle added, store.Add(64));
  EXPECT_EQ(store.iteration_list()[63], 64u);
  EXPECT_EQ(store.evenly_spaced_blocks(), 2u);  // block 3 is 48..62, 64: uneven
  ExpectForEachVisitsTheList(store);
  ASSERT_THAT(store.Remove(h[0]), IsOk());      // 64 moves to the front of block 0
  ASSERT_THAT(store.Remove(added), IsOk());     // and leaves it again: 62 moves there
  EXPECT_EQ(store.evenly_spaced_blocks(), 1u);  // only block 2 (32..47) is left
  ExpectForEachVisitsTheList(store);
  // Sorted: 1..19, 21..62. Blocks 0 (1..16) and 2 (34..49) are even, block 1 is not.
  store.SortIterationList();
  EXPECT_EQ(store.evenly_spaced_blocks(), 2u);
  ExpectForEachVisitsTheList(store);
}

// Random adds, activations, removals and sorts, with the list's order checked after
// every step: the stepped blocks must never visit anything but the list.
TEST(SparseStore, ForEachFollowsTheListThroughRandomChanges) {
  ::strata::testing::Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  for (int round = 0; round < 20; ++round) {
    const auto capacity = static_cast<uint32_t>(rng.UniformInt(1, 200));
    SparseStore<Payload> store(capacity);
    std::vector<StoreHandle> issued;
    // Start from evenly spaced blocks: every `stride`-th slot active, sorted.
    const auto stride = static_cast<uint32_t>(rng.UniformInt(1, 3));
    for (uint32_t i = 0; i < capacity; ++i) {
      auto added = store.Add(0);
      ASSERT_THAT(added, IsOk());
      store.TryGet(*added)->value = static_cast<int>(added->index());
      if (i % stride != 0) {
        ASSERT_THAT(store.Remove(*added), IsOk());
      } else {
        issued.push_back(*added);
      }
    }
    store.SortIterationList();
    for (int step = 0; step < 300; ++step) {
      SCOPED_TRACE(step);
      const int op = static_cast<int>(rng.UniformInt(0, 9));
      if (op <= 2) {
        auto added = op == 0 ? store.AddPending(0) : store.Add(0);
        if (added.ok()) {
          store.TryGet(*added)->value = static_cast<int>(added->index());
          issued.push_back(*added);
        }
      } else if (op == 9) {
        store.SortIterationList();
      } else if (!issued.empty()) {
        const StoreHandle h = issued[rng.UniformIndex(issued.size())];
        if (op <= 5) {
          (void)store.Activate(h);  // may be stale or active already: then a no-op
        } else {
          (void)store.Remove(h);
        }
      }
      // Removals may leave an even block unrecorded until the next sort, never the
      // other way round.
      if (op == 9) {
        ASSERT_EQ(store.evenly_spaced_blocks(), CountEvenBlocks(store.iteration_list()));
      } else {
        ASSERT_LE(store.evenly_spaced_blocks(), CountEvenBlocks(store.iteration_list()));
      }
      ASSERT_NO_FATAL_FAILURE(ExpectForEachVisitsTheList(store));
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// ForEachScan and SortIterationList follow ForEach's rule: no change inside a walk.
TEST(SparseStore, ChangingTheStoreInsideAWalkAborts) {
  SparseStore<int> store(8);
  const absl::StatusOr<StoreHandle> a = store.Add(1);
  ASSERT_THAT(a, IsOk());
  EXPECT_DEATH(store.ForEachScan([&](int&) { store.Remove(*a).IgnoreError(); }),
               "Remove: called inside this store's ForEach");
  EXPECT_DEATH(store.ForEach([&](int&) { store.SortIterationList(); }),
               "SortIterationList: called inside this store's ForEach");
  int visited = 0;
  store.ForEachScan([&](int&) { store.ForEach([&](int&) { ++visited; }); });
  EXPECT_EQ(visited, 1);
  store.SortIterationList();
  ASSERT_THAT(store.Remove(*a), IsOk());
  EXPECT_EQ(store.size(), 0u);
}

TEST(SparseStore, LargestFullStore) {
  constexpr uint32_t kCapacity = 1 << 16;
  SparseStore<uint32_t> store(kCapacity);
  for (uint32_t i = 0; i < kCapacity; ++i) ASSERT_THAT(store.Add(i), IsOk());
  EXPECT_FALSE(store.Add(0u).ok());
  uint64_t sum = 0;
  store.ForEach([&](uint32_t v) { sum += v; });
  EXPECT_EQ(sum, uint64_t{kCapacity} * (kCapacity - 1) / 2);
  EXPECT_NE(store.TryGet(StoreHandle(kCapacity - 1, 0)), nullptr);
  // One past the end. (Built from capacity() rather than the constant: with the
  // constant, GCC 12 -O2 warns -Warray-bounds on the guarded load in Contains().)
  EXPECT_EQ(store.TryGet(StoreHandle(store.capacity(), 0)), nullptr);
}

}  // namespace
}  // namespace strata
