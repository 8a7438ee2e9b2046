#include "entity/contiguous_store.h"

#include <cstdint>
#include <vector>

#include "entity/internal/store_conformance_test.h"
#include "entity/store_handle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace strata {
namespace entity_internal {
// The suite must be instantiated in the namespace that defines it.
using ContiguousStores = ::testing::Types<ContiguousStore<Payload>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Contiguous, StoreConformance, ContiguousStores);
}  // namespace entity_internal

namespace {

using ::strata::entity_internal::Payload;
using ::strata::testing::IsOk;
using ::testing::ElementsAre;

std::vector<int> Dense(const ContiguousStore<Payload>& store) {
  std::vector<int> values;
  for (const Payload& p : store.active_entries()) values.push_back(p.value);
  return values;
}

// The header's usage example.
TEST(ContiguousStore, HeaderExample) {
  struct Npc {
    const char* name;
    int health = 100;
    void Think() { --health; }
  };
  ContiguousStore<Npc> npcs(/*capacity=*/4096);
  STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle h, npcs.Add(Npc{"guard"}));
  for (Npc& npc : npcs.active_entries()) npc.Think();
  if (Npc* npc = npcs.TryGet(h)) npc->health -= 10;
  EXPECT_EQ(npcs.TryGet(h)->health, 89);
  ASSERT_THAT(npcs.Remove(h), IsOk());
  EXPECT_EQ(npcs.TryGet(h), nullptr);
}

TEST(ContiguousStore, RemoveSwapsTheLastActiveEntryIn) {
  ContiguousStore<Payload> store(8);
  std::vector<StoreHandle> h;
  for (int i = 0; i < 5; ++i) {
    STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle added, store.Add(i));
    h.push_back(added);
  }
  ASSERT_THAT(store.Remove(h[1]), IsOk());
  EXPECT_THAT(Dense(store), ElementsAre(0, 4, 2, 3));
  EXPECT_EQ(store.TryGet(h[4]), &store.active_entries()[1]);
  ASSERT_THAT(store.Remove(h[3]), IsOk());  // the last one: nothing moves
  EXPECT_THAT(Dense(store), ElementsAre(0, 4, 2));
}

TEST(ContiguousStore, PendingEntriesLiveAfterTheActiveOnes) {
  ContiguousStore<Payload> store(8);
  STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle a, store.Add(1));
  STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle p, store.AddPending(2));
  STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle q, store.AddPending(3));
  STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle b, store.Add(4));  // moves pending 2 back
  EXPECT_THAT(Dense(store), ElementsAre(1, 4));
  EXPECT_EQ(store.TryGet(p)->value, 2);
  EXPECT_EQ(store.TryGet(q)->value, 3);
  EXPECT_EQ(store.TryGet(p), store.active_entries().data() + 3);
  ASSERT_THAT(store.Activate(p), IsOk());
  EXPECT_THAT(Dense(store), ElementsAre(1, 4, 2));
  // Removing an active entry with pending ones behind it keeps both ranges packed.
  ASSERT_THAT(store.Remove(a), IsOk());
  EXPECT_THAT(Dense(store), ElementsAre(2, 4));
  EXPECT_EQ(store.TryGet(q)->value, 3);
  EXPECT_EQ(store.TryGet(q), store.active_entries().data() + 2);
  EXPECT_EQ(store.TryGet(b)->value, 4);
  EXPECT_EQ(store.size(), 3u);
}

TEST(ContiguousStore, AddMayCopyAnEntryOfTheSameStore) {
  ContiguousStore<Payload> store(4);
  STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle a, store.Add(1));
  STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle p, store.AddPending(2));
  // The new entry is built before the pending one moves out of its way.
  STRATA_ASSERT_OK_AND_ASSIGN(StoreHandle copy, store.Add(*store.TryGet(p)));
  EXPECT_EQ(store.TryGet(copy)->value, 2);
  EXPECT_EQ(store.TryGet(p)->value, 2);
  EXPECT_EQ(store.TryGet(p)->name, store.TryGet(copy)->name);
  EXPECT_EQ(store.TryGet(a)->value, 1);
}

}  // namespace
}  // namespace strata
