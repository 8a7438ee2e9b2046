#include "entity/sparse_store.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

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

// ForEach walks the list in blocks of 16 with a prefetch 128 slots ahead; every
// length around those boundaries must still visit exactly the list, in list order,
// through all three ForEach forms.
TEST(SparseStore, ForEachVisitsTheIterationListInOrderAtEveryBlockBoundary) {
  for (uint32_t n : {0u, 1u, 15u, 16u, 17u, 31u, 32u, 33u, 127u, 128u, 129u, 143u, 144u,
                     145u, 160u, 161u, 300u}) {
    SCOPED_TRACE(n);
    SparseStore<Payload> store(2 * n + 2);
    std::vector<StoreHandle> h;
    for (uint32_t i = 0; i < 2 * n + 2; ++i) {
      STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle added, store.Add(static_cast<int>(i)));
      h.push_back(added);
    }
    // Remove every other entry and one more: n active entries left, listed out of
    // slot order by the swap-removes.
    for (uint32_t i = 0; i < 2 * n + 2; i += 2) ASSERT_THAT(store.Remove(h[i]), IsOk());
    ASSERT_THAT(store.Remove(h[1]), IsOk());
    ASSERT_EQ(store.active_size(), n);
    std::vector<int> expected;
    for (uint32_t slot : store.iteration_list()) {
      expected.push_back(static_cast<int>(slot));
    }
    std::vector<int> visited;
    store.ForEach([&](Payload& p) { visited.push_back(p.value); });
    EXPECT_EQ(visited, expected);
    std::vector<int> visited_const;
    std::as_const(store).ForEach(
        [&](const Payload& p) { visited_const.push_back(p.value); });
    EXPECT_EQ(visited_const, expected);
    std::vector<int> handle_slots;
    store.ForEach([&](StoreHandle handle, Payload& p) {
      EXPECT_EQ(store.TryGet(handle), &p);
      handle_slots.push_back(static_cast<int>(handle.index()));
    });
    EXPECT_EQ(handle_slots, expected);
  }
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
