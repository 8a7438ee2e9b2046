#include "index/entity_index.h"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "base/id_string.h"
#include "entity/entity.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "index/legacy_entity_index.h"
#include "index/testing/article_example.h"
#include "index/testing/render_data_manager.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::Random;
using ::strata::testing::RenderDataManager;
using ::strata::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Managers = ::strata::testing::ArticleManagers;
using ::strata::testing::kBloom;
using ::strata::testing::kFog;
using ::strata::testing::kTransform;
using ::strata::testing::kVignette;

// ---------------------------------------------------------------------------------
// Behaviour shared by the new index and the legacy baseline.

template <typename Index>
class AnyEntityIndexTest : public ::testing::Test {
 protected:
  Index index_;
  Managers m_;
};

using Implementations = ::testing::Types<EntityIndex, LegacyEntityIndex>;
TYPED_TEST_SUITE(AnyEntityIndexTest, Implementations);

TYPED_TEST(AnyEntityIndexTest, EmptyIndexFindsNothing) {
  EXPECT_EQ(this->index_.FindComponentManager(Entity(0, 0), kFog), nullptr);
  EXPECT_EQ(this->index_.FindComponentManager(Entity(), kFog), nullptr);
  EXPECT_FALSE(this->index_.Contains(Entity(0, 0)));
  EXPECT_EQ(this->index_.num_entities(), 0u);
  EXPECT_FALSE(this->index_.RemoveEntity(Entity(3, 1)));
  EXPECT_THAT(this->index_.RemoveInstance(Entity(3, 1), kFog),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_TRUE(this->index_.Components(Entity(0, 0)).empty());
}

TYPED_TEST(AnyEntityIndexTest, FogAndVignetteOfOneManagerOnOneEntity) {
  const Entity e(5, 2);
  auto& idx = this->index_;
  EXPECT_THAT(idx.AddInstance(e, &this->m_.transform, kTransform), IsOk());
  EXPECT_THAT(idx.AddInstance(e, &this->m_.render_data_1, kFog), IsOk());
  EXPECT_THAT(idx.AddInstance(e, &this->m_.render_data_1, kVignette), IsOk());
  EXPECT_EQ(idx.FindComponentManager(e, kTransform), &this->m_.transform);
  EXPECT_EQ(idx.FindComponentManager(e, kFog), &this->m_.render_data_1);
  EXPECT_EQ(idx.FindComponentManager(e, kVignette), &this->m_.render_data_1);
  EXPECT_EQ(idx.FindComponentManager(e, kBloom), nullptr);
  // The same slot with another generation is another entity.
  EXPECT_EQ(idx.FindComponentManager(Entity(5, 1), kFog), nullptr);
  EXPECT_EQ(idx.FindComponentManager(Entity(5, 3), kFog), nullptr);
  EXPECT_EQ(idx.num_entities(), 1u);
}

TYPED_TEST(AnyEntityIndexTest, RejectsDuplicateNameInvalidEntityAndNullManager) {
  const Entity e(1, 0);
  auto& idx = this->index_;
  ASSERT_THAT(idx.AddInstance(e, &this->m_.render_data_1, kFog), IsOk());
  EXPECT_THAT(idx.AddInstance(e, &this->m_.render_data_2, kFog),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr(kFog.DebugString())));
  EXPECT_THAT(idx.AddInstance(Entity(), &this->m_.render_data_1, kFog),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(idx.AddInstance(e, nullptr, kBloom),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // Nothing changed.
  EXPECT_EQ(idx.FindComponentManager(e, kFog), &this->m_.render_data_1);
  EXPECT_EQ(idx.FindComponentManager(e, kBloom), nullptr);
  EXPECT_EQ(idx.Components(e).size(), 1u);
}

TYPED_TEST(AnyEntityIndexTest, UnregisterInTheMiddleKeepsTheOthersInOrder) {
  const Entity e(9, 0);
  auto& idx = this->index_;
  auto& m = this->m_;
  ASSERT_THAT(idx.AddInstance(e, &m.transform, kTransform), IsOk());
  ASSERT_THAT(idx.AddInstance(e, &m.render_data_1, kFog), IsOk());
  ASSERT_THAT(idx.AddInstance(e, &m.render_data_1, kVignette), IsOk());
  ASSERT_THAT(idx.RemoveInstance(e, kFog), IsOk());
  using Entry = typename std::decay_t<decltype(idx.Components(e))>::value_type;
  EXPECT_THAT(idx.Components(e), ElementsAre(Entry{kTransform, &m.transform},
                                             Entry{kVignette, &m.render_data_1}));
  EXPECT_EQ(idx.FindComponentManager(e, kFog), nullptr);
  EXPECT_THAT(idx.RemoveInstance(e, kFog), StatusIs(absl::StatusCode::kNotFound));
  // The name is free again, now on another manager.
  EXPECT_THAT(idx.AddInstance(e, &m.render_data_2, kFog), IsOk());
  EXPECT_EQ(idx.FindComponentManager(e, kFog), &m.render_data_2);
  // Unregistering everything forgets the entity.
  ASSERT_THAT(idx.RemoveInstance(e, kTransform), IsOk());
  ASSERT_THAT(idx.RemoveInstance(e, kVignette), IsOk());
  ASSERT_THAT(idx.RemoveInstance(e, kFog), IsOk());
  EXPECT_FALSE(idx.Contains(e));
  EXPECT_EQ(idx.num_entities(), 0u);
}

TYPED_TEST(AnyEntityIndexTest, RemoveEntityThenReuseTheSlot) {
  auto& idx = this->index_;
  const Entity old_e(4, 0);
  const Entity new_e(4, 1);
  ASSERT_THAT(idx.AddInstance(old_e, &this->m_.render_data_1, kFog), IsOk());
  EXPECT_TRUE(idx.RemoveEntity(old_e));
  EXPECT_FALSE(idx.RemoveEntity(old_e));
  EXPECT_EQ(idx.FindComponentManager(old_e, kFog), nullptr);
  ASSERT_THAT(idx.AddInstance(new_e, &this->m_.render_data_2, kFog), IsOk());
  EXPECT_EQ(idx.FindComponentManager(new_e, kFog), &this->m_.render_data_2);
  EXPECT_EQ(idx.FindComponentManager(old_e, kFog), nullptr);
  EXPECT_FALSE(idx.RemoveEntity(old_e));
  EXPECT_TRUE(idx.Contains(new_e));
}

TYPED_TEST(AnyEntityIndexTest, BatchEqualsOneByOne) {
  Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  TypeParam batch_index;
  auto& one_index = this->index_;
  auto& m = this->m_;
  ComponentManager* managers[] = {&m.transform, &m.render_data_1, &m.render_data_2};
  std::vector<Entity> entities;
  for (uint32_t i = 0; i < 300; ++i) entities.push_back(Entity(i * 7, i % 3));
  for (int round = 0; round < 12; ++round) {
    // A random subset, so the entities sit on many different prototypes.
    std::vector<Entity> subset;
    for (Entity e : entities) {
      if (rng.Bernoulli(0.6)) subset.push_back(e);
    }
    ComponentManager* manager = managers[rng.UniformIndex(3)];
    const IdString32 name = IdString32::FromValue(1000 + round);
    ASSERT_THAT(batch_index.AddInstance(absl::MakeConstSpan(subset), manager, name),
                IsOk());
    for (Entity e : subset) ASSERT_THAT(one_index.AddInstance(e, manager, name), IsOk());
  }
  for (Entity e : entities) {
    EXPECT_EQ(batch_index.Components(e), one_index.Components(e)) << e;
  }
  EXPECT_EQ(batch_index.num_entities(), one_index.num_entities());
  EXPECT_THAT(batch_index.AddInstance(absl::Span<const Entity>(), &m.transform, kTransform), IsOk());
}

TYPED_TEST(AnyEntityIndexTest, FailedBatchChangesNothing) {
  auto& idx = this->index_;
  auto& m = this->m_;
  const Entity a(1, 0), b(2, 0), c(3, 0);
  ASSERT_THAT(idx.AddInstance(c, &m.render_data_1, kFog), IsOk());
  const std::vector<Entity> has_fog = {a, b, c};
  EXPECT_THAT(idx.AddInstance(absl::MakeConstSpan(has_fog), &m.render_data_1, kFog),
              StatusIs(absl::StatusCode::kAlreadyExists));
  const std::vector<Entity> twice = {a, b, a};
  EXPECT_THAT(idx.AddInstance(absl::MakeConstSpan(twice), &m.render_data_1, kBloom),
              StatusIs(absl::StatusCode::kAlreadyExists));
  const std::vector<Entity> invalid = {a, Entity()};
  EXPECT_THAT(idx.AddInstance(absl::MakeConstSpan(invalid), &m.render_data_1, kBloom),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(idx.AddInstance(absl::MakeConstSpan(has_fog), nullptr, kBloom),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_FALSE(idx.Contains(a));
  EXPECT_FALSE(idx.Contains(b));
  EXPECT_EQ(idx.Components(c).size(), 1u);
  EXPECT_EQ(idx.num_entities(), 1u);
}

// The oracle: per entity, its (name, manager) list in registration order.
template <typename Index>
void RunRandomisedAgainstModel(Index& index, uint64_t seed, int steps) {
  Random rng(seed);
  SCOPED_TRACE(rng.DescribeSeed());
  Managers m;
  ComponentManager* managers[] = {&m.transform, &m.render_data_1, &m.render_data_2};
  using Entry = typename Index::ComponentEntry;
  std::map<Entity, std::vector<Entry>> model;
  // Some slots start just below 2^16, so their generations cross the 16 bits an
  // EntityIndex slot holds inline (the rest of a wide value lives in a side table).
  std::vector<uint32_t> generation(64, 0);
  for (uint32_t i = 0; i < generation.size(); i += 2) generation[i] = 0xFFFFu - i % 3;
  auto random_entity = [&] {
    const uint32_t i = static_cast<uint32_t>(rng.UniformIndex(generation.size()));
    return Entity(i, generation[i]);
  };
  auto has = [](const std::vector<Entry>& entries, IdString32 name) {
    return std::any_of(entries.begin(), entries.end(),
                       [name](const Entry& x) { return x.name == name; });
  };
  for (int step = 0; step < steps; ++step) {
    const int op = static_cast<int>(rng.UniformIndex(100));
    const IdString32 name = IdString32::FromValue(static_cast<uint32_t>(rng.UniformIndex(10)));
    ComponentManager* manager = managers[rng.UniformIndex(3)];
    if (op < 50) {
      const Entity e = random_entity();
      std::vector<Entry>& entries = model[e];
      const bool expect_ok = !has(entries, name);
      ASSERT_EQ(index.AddInstance(e, manager, name).ok(), expect_ok) << step;
      if (expect_ok) entries.push_back(Entry{name, manager});
      if (entries.empty()) model.erase(e);
    } else if (op < 65) {
      const Entity e = random_entity();
      auto it = model.find(e);
      const bool expect_ok = it != model.end() && has(it->second, name);
      ASSERT_EQ(index.RemoveInstance(e, name).ok(), expect_ok) << step;
      if (expect_ok) {
        std::erase_if(it->second, [name](const Entry& x) { return x.name == name; });
        if (it->second.empty()) model.erase(it);
      }
    } else if (op < 72) {
      // Destroy: the index forgets it, the slot's next entity gets a new generation.
      const Entity e = random_entity();
      ASSERT_EQ(index.RemoveEntity(e), model.erase(e) == 1) << step;
      ++generation[e.index()];
    } else if (op < 80) {
      std::vector<Entity> batch;
      for (uint32_t i = 0; i < generation.size(); ++i) {
        if (rng.Bernoulli(0.3)) batch.push_back(Entity(i, generation[i]));
      }
      bool expect_ok = true;
      for (Entity e : batch) {
        auto it = model.find(e);
        if (it != model.end() && has(it->second, name)) expect_ok = false;
      }
      ASSERT_EQ(index.AddInstance(absl::MakeConstSpan(batch), manager, name).ok(),
                expect_ok)
          << step;
      if (expect_ok) {
        for (Entity e : batch) model[e].push_back(Entry{name, manager});
      }
    } else if (op < 83) {
      index.CollectGarbage();
    } else {
      Entity e = random_entity();
      // Sometimes a handle that agrees with a live one in the low 16 bits of its
      // generation only: never found.
      if (rng.Bernoulli(0.2)) e = Entity(e.index(), e.generation() ^ 0x10000u);
      auto it = model.find(e);
      ComponentManager* expected = nullptr;
      if (it != model.end()) {
        for (const Entry& x : it->second) {
          if (x.name == name) expected = x.manager;
        }
      }
      ASSERT_EQ(index.FindComponentManager(e, name), expected) << step;
    }
  }
  ASSERT_EQ(index.num_entities(), model.size());
  for (const auto& [e, entries] : model) ASSERT_EQ(index.Components(e), entries) << e;
  // Remove everything: GC must then drop every prototype.
  for (const auto& [e, entries] : model) ASSERT_TRUE(index.RemoveEntity(e));
  index.CollectGarbage();
  EXPECT_EQ(index.num_entities(), 0u);
  EXPECT_EQ(index.num_prototypes(), 0u);
}

TYPED_TEST(AnyEntityIndexTest, RandomisedAgainstReferenceModel) {
  RunRandomisedAgainstModel(this->index_, ::strata::testing::TestSeed(), 20000);
}

// ---------------------------------------------------------------------------------
// The prototype chain.

TEST(EntityIndex, ArticleWorkedExample) {
  Managers m;
  EntityIndex index;
  const Entity entity_1(1, 0), entity_2(2, 0), entity_3(3, 0);
  for (Entity e : {entity_1, entity_2}) {
    ASSERT_THAT(index.AddInstance(e, &m.transform, kTransform), IsOk());
    ASSERT_THAT(index.AddInstance(e, &m.render_data_1, kFog), IsOk());
    ASSERT_THAT(index.AddInstance(e, &m.render_data_1, kVignette), IsOk());
  }
  // P1..P3.
  EXPECT_EQ(index.num_prototypes(), 3u);
  const EntityIndex::PrototypeHandle p3 = index.PrototypeOf(entity_1);
  EXPECT_EQ(index.PrototypeOf(entity_2), p3);

  ASSERT_THAT(index.AddInstance(entity_3, &m.transform, kTransform), IsOk());
  const EntityIndex::PrototypeHandle p1 = index.PrototypeOf(entity_3);
  ASSERT_THAT(index.AddInstance(entity_3, &m.render_data_2, kFog), IsOk());
  const EntityIndex::PrototypeHandle p4 = index.PrototypeOf(entity_3);
  ASSERT_THAT(index.AddInstance(entity_3, &m.render_data_2, kVignette), IsOk());
  const EntityIndex::PrototypeHandle p5 = index.PrototypeOf(entity_3);
  // P4 = P1 + [render_data_2, Fog], P5 = P4 + [render_data_2, Vignette].
  EXPECT_EQ(index.num_prototypes(), 5u);
  EXPECT_NE(p4, p3);
  EXPECT_NE(p5, p3);
  EXPECT_NE(p5, p4);
  // Ids follow the article's formula.
  const uint32_t id1 =
      EntityIndex::Mix(0, EntityIndex::Mix(EntityIndex::HashManager(&m.transform),
                                           kTransform.value()));
  const uint32_t id4 =
      EntityIndex::Mix(id1, EntityIndex::Mix(EntityIndex::HashManager(&m.render_data_2),
                                             kFog.value()));
  EXPECT_EQ(index.PrototypeId(p1), id1);
  EXPECT_EQ(index.PrototypeId(p4), id4);
  EXPECT_EQ(index.FindComponentManager(entity_1, kFog), &m.render_data_1);
  EXPECT_EQ(index.FindComponentManager(entity_3, kFog), &m.render_data_2);
  EXPECT_EQ(index.FindComponentManager(entity_3, kTransform), &m.transform);
  // At most one registry probe per registration (the transition cache saves most),
  // none per lookup.
  const uint64_t probes = index.registry_probes();
  EXPECT_LE(probes, 9u);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(index.FindComponentManager(entity_2, kVignette), &m.render_data_1);
  }
  EXPECT_EQ(index.registry_probes(), probes);
}

TEST(EntityIndex, EntitiesDivergeAfterAddAndRemove) {
  Managers m;
  EntityIndex index;
  const Entity a(1, 0), b(2, 0);
  for (Entity e : {a, b}) {
    ASSERT_THAT(index.AddInstance(e, &m.transform, kTransform), IsOk());
    ASSERT_THAT(index.AddInstance(e, &m.render_data_1, kFog), IsOk());
  }
  ASSERT_EQ(index.PrototypeOf(a), index.PrototypeOf(b));
  const auto shared = index.PrototypeOf(a);
  ASSERT_THAT(index.AddInstance(b, &m.render_data_1, kBloom), IsOk());
  EXPECT_NE(index.PrototypeOf(b), shared);
  EXPECT_EQ(index.PrototypeOf(a), shared);
  EXPECT_EQ(index.FindComponentManager(a, kBloom), nullptr);
  EXPECT_EQ(index.FindComponentManager(b, kBloom), &m.render_data_1);
  // Removing the extra component brings b back onto a's prototype.
  ASSERT_THAT(index.RemoveInstance(b, kBloom), IsOk());
  EXPECT_EQ(index.PrototypeOf(b), shared);
  // Removing Transform from a rebuilds [Fog] from P0: a new prototype.
  const size_t before = index.num_prototypes();
  ASSERT_THAT(index.RemoveInstance(a, kTransform), IsOk());
  EXPECT_EQ(index.num_prototypes(), before + 1);
  EXPECT_EQ(index.FindComponentManager(a, kFog), &m.render_data_1);
  EXPECT_EQ(index.FindComponentManager(a, kTransform), nullptr);
  EXPECT_EQ(index.FindComponentManager(b, kTransform), &m.transform);
}

TEST(EntityIndex, UnregisterInTheMiddleReusesExistingPrototypes) {
  Managers m;
  EntityIndex index;
  const Entity a(1, 0), b(2, 0);
  // a: Transform, Fog, Vignette. b: Transform, Vignette (already the target chain).
  ASSERT_THAT(index.AddInstance(a, &m.transform, kTransform), IsOk());
  ASSERT_THAT(index.AddInstance(a, &m.render_data_1, kFog), IsOk());
  ASSERT_THAT(index.AddInstance(a, &m.render_data_1, kVignette), IsOk());
  ASSERT_THAT(index.AddInstance(b, &m.transform, kTransform), IsOk());
  ASSERT_THAT(index.AddInstance(b, &m.render_data_1, kVignette), IsOk());
  const size_t before = index.num_prototypes();  // P1, P2, P3, P1+Vignette
  EXPECT_EQ(before, 4u);
  ASSERT_THAT(index.RemoveInstance(a, kFog), IsOk());
  EXPECT_EQ(index.PrototypeOf(a), index.PrototypeOf(b));
  EXPECT_EQ(index.num_prototypes(), before);
}

TEST(EntityIndex, CollectGarbageKeepsEveryReferencedPrototype) {
  Managers m;
  EntityIndex index;
  const Entity a(1, 0), b(2, 0), c(3, 0);
  for (Entity e : {a, b}) {
    ASSERT_THAT(index.AddInstance(e, &m.transform, kTransform), IsOk());
    ASSERT_THAT(index.AddInstance(e, &m.render_data_1, kFog), IsOk());
  }
  ASSERT_THAT(index.AddInstance(b, &m.render_data_1, kVignette), IsOk());
  ASSERT_THAT(index.AddInstance(c, &m.render_data_2, kBloom), IsOk());
  EXPECT_EQ(index.num_prototypes(), 4u);
  // Nothing is unused yet.
  EXPECT_EQ(index.CollectGarbage(), 0u);
  // b's leaf is now unused; a still uses its base P2, which P1 is the base of.
  ASSERT_TRUE(index.RemoveEntity(b));
  EXPECT_EQ(index.CollectGarbage(), 1u);
  EXPECT_EQ(index.num_prototypes(), 3u);
  EXPECT_EQ(index.FindComponentManager(a, kFog), &m.render_data_1);
  EXPECT_EQ(index.FindComponentManager(a, kTransform), &m.transform);
  // A whole chain goes once its last user does.
  ASSERT_TRUE(index.RemoveEntity(a));
  EXPECT_EQ(index.CollectGarbage(), 2u);
  EXPECT_EQ(index.FindComponentManager(c, kBloom), &m.render_data_2);
  EXPECT_EQ(index.num_prototypes(), 1u);
  // Freed records are reused and the rebuilt chain works.
  ASSERT_THAT(index.AddInstance(a, &m.transform, kTransform), IsOk());
  ASSERT_THAT(index.AddInstance(a, &m.render_data_1, kFog), IsOk());
  EXPECT_EQ(index.FindComponentManager(a, kFog), &m.render_data_1);
  EXPECT_EQ(index.num_prototypes(), 3u);
}

// RemoveManager takes every entry of one manager out of the index before the manager
// is destroyed: each entity keeps its other components in order (an entity left with
// none is no longer indexed, a wide slot included), as an index that never saw the
// manager would have them, and no record names the manager afterwards. Under ASan, a
// lookup that still reached the destroyed manager fails here.
TEST(EntityIndex, RemoveManagerForgetsEveryEntryOfTheManager) {
  Managers m;
  auto doomed = std::make_unique<RenderDataManager>("doomed");
  EntityIndex index, reference;
  struct Add {
    Entity e;
    RenderDataManager* manager;
    IdString32 name;
  };
  const Entity a(1, 0), b(2, 0), c(3, 0), d(4, 0x12345), e(5, 0);
  const std::vector<Add> adds = {{a, &m.transform, kTransform},    {a, doomed.get(), kFog},
                                 {a, &m.render_data_1, kVignette}, {b, doomed.get(), kFog},
                                 {b, &m.transform, kTransform},    {c, doomed.get(), kBloom},
                                 {d, doomed.get(), kFog},          {d, &m.render_data_2, kBloom},
                                 {e, &m.render_data_2, kFog}};
  for (const Add& add : adds) {
    ASSERT_THAT(index.AddInstance(add.e, add.manager, add.name), IsOk());
    if (add.manager != doomed.get()) {
      ASSERT_THAT(reference.AddInstance(add.e, add.manager, add.name), IsOk());
    }
  }
  EXPECT_EQ(index.RemoveManager(doomed.get()), 4u);  // a, b, c, d
  EXPECT_EQ(index.RemoveManager(doomed.get()), 0u);
  EXPECT_EQ(index.RemoveManager(nullptr), 0u);
  doomed.reset();
  for (const Entity x : {a, b, c, d, e}) {
    EXPECT_EQ(index.Components(x), reference.Components(x)) << x;
    EXPECT_EQ(index.FindComponentManager(x, kFog), reference.FindComponentManager(x, kFog)) << x;
  }
  EXPECT_FALSE(index.Contains(c));
  EXPECT_EQ(index.num_entities(), reference.num_entities());
  // A manager at the address the destroyed one had finds no entry of it.
  RenderDataManager successor("successor");
  ASSERT_THAT(index.AddInstance(c, &successor, kFog), IsOk());
  EXPECT_EQ(index.FindComponentManager(c, kFog), &successor);
  // Same reference counts: dropping every entity frees every prototype.
  EXPECT_EQ(index.RemoveEntity(absl::MakeConstSpan({a, b, c, d, e})), 5u);
  EXPECT_EQ(index.num_entities(), 0u);
  index.CollectGarbage();
  EXPECT_EQ(index.num_prototypes(), 0u);
}

// FindComponentManager caches (prototype, entry of its chain); GC may reuse both
// records for other chains, and a stale entry whose record still has the name looked
// up would answer for a chain that no longer contains it.
TEST(EntityIndex, LookupCacheForgetsRecordsThatGarbageCollectionReuses) {
  Managers m;
  EntityIndex index;
  const Entity a(1, 0), b(2, 0), c(3, 0);
  ASSERT_THAT(index.AddInstance(a, &m.render_data_1, kFog), IsOk());
  ASSERT_THAT(index.AddInstance(a, &m.transform, kTransform), IsOk());
  const EntityIndex::PrototypeHandle a_leaf = index.PrototypeOf(a);
  EXPECT_EQ(index.FindComponentManager(a, kFog), &m.render_data_1);  // cached
  // b keeps {Fog} alive; a's leaf {Fog, Transform} goes.
  ASSERT_THAT(index.AddInstance(b, &m.render_data_1, kFog), IsOk());
  ASSERT_TRUE(index.RemoveEntity(a));
  EXPECT_EQ(index.CollectGarbage(), 1u);
  // c's new prototype {Sky} reuses a's freed leaf; its chain has no Fog.
  ASSERT_THAT(index.AddInstance(c, &m.transform, IdString32("Sky")), IsOk());
  ASSERT_EQ(index.PrototypeOf(c), a_leaf);
  EXPECT_EQ(index.FindComponentManager(c, kFog), nullptr);
  EXPECT_EQ(index.FindComponentManager(c, IdString32("Sky")), &m.transform);
  EXPECT_EQ(index.FindComponentManager(b, kFog), &m.render_data_1);
}

// Lookups that repeat (the cached path) and lookups of every name of every chain
// agree with Components(), including after an unregister moved the entity.
TEST(EntityIndex, CachedLookupsAgreeWithTheChain) {
  Managers m;
  EntityIndex index;
  const IdString32 names[] = {kTransform, kFog, kVignette, kBloom};
  RenderDataManager* managers[] = {&m.transform, &m.render_data_1, &m.render_data_2,
                                   &m.render_data_1};
  for (uint32_t i = 0; i < 64; ++i) {
    const Entity e(i, 0);
    for (int k = 0; k < 4; ++k) {
      if ((i >> k) & 1) {
        ASSERT_THAT(index.AddInstance(e, managers[k], names[k]), IsOk());
      }
    }
    if (i % 3 == 0 && (i & 1)) {
      ASSERT_THAT(index.RemoveInstance(e, kTransform), IsOk());
    }
  }
  for (int round = 0; round < 2; ++round) {
    for (uint32_t i = 0; i < 64; ++i) {
      const Entity e(i, 0);
      for (int k = 0; k < 4; ++k) {
        const bool has = ((i >> k) & 1) && !(k == 0 && i % 3 == 0);
        EXPECT_EQ(index.FindComponentManager(e, names[k]), has ? managers[k] : nullptr)
            << "entity " << i << " name " << k << " round " << round;
      }
    }
  }
}

TEST(EntityIndex, BatchProbesTheRegistryOncePerDistinctPrototype) {
  Managers m;
  EntityIndex index;
  std::vector<Entity> level;
  for (uint32_t i = 0; i < 5000; ++i) level.push_back(Entity(i, 0));
  ASSERT_THAT(index.AddInstance(absl::MakeConstSpan(level), &m.transform, kTransform),
              IsOk());
  EXPECT_EQ(index.registry_probes(), 1u);
  ASSERT_THAT(index.AddInstance(absl::MakeConstSpan(level), &m.render_data_1, kFog),
              IsOk());
  EXPECT_EQ(index.registry_probes(), 2u);
  // Two groups on two prototypes, interleaved.
  for (uint32_t i = 0; i < level.size(); i += 2) {
    ASSERT_THAT(index.AddInstance(level[i], &m.render_data_1, kVignette), IsOk());
  }
  const uint64_t before = index.registry_probes();
  ASSERT_THAT(index.AddInstance(absl::MakeConstSpan(level), &m.render_data_2, kBloom),
              IsOk());
  EXPECT_EQ(index.registry_probes() - before, 2u);
  EXPECT_EQ(index.num_prototypes(), 5u);
  EXPECT_EQ(index.FindComponentManager(level[4999], kBloom), &m.render_data_2);
  EXPECT_EQ(index.FindComponentManager(level[4998], kVignette), &m.render_data_1);
}

uint32_t ConstantMix(uint32_t, uint32_t) { return 42; }
uint32_t SixteenIdsMix(uint32_t a, uint32_t b) { return (a * 31 + b) & 0xF; }

TEST(EntityIndex, ForcedPrototypeHashCollisionIsResolved) {
  Managers m;
  EntityIndex index(&ConstantMix);
  const Entity entity_1(1, 0), entity_3(3, 0);
  ASSERT_THAT(index.AddInstance(entity_1, &m.transform, kTransform), IsOk());
  ASSERT_THAT(index.AddInstance(entity_1, &m.render_data_1, kFog), IsOk());
  ASSERT_THAT(index.AddInstance(entity_3, &m.transform, kTransform), IsOk());
  ASSERT_THAT(index.AddInstance(entity_3, &m.render_data_2, kFog), IsOk());
  // Every prototype has id 42, yet each is its own record.
  EXPECT_EQ(index.PrototypeId(index.PrototypeOf(entity_1)), 42u);
  EXPECT_EQ(index.PrototypeId(index.PrototypeOf(entity_3)), 42u);
  EXPECT_NE(index.PrototypeOf(entity_1), index.PrototypeOf(entity_3));
  EXPECT_EQ(index.num_prototypes(), 3u);
  EXPECT_EQ(index.FindComponentManager(entity_1, kFog), &m.render_data_1);
  EXPECT_EQ(index.FindComponentManager(entity_3, kFog), &m.render_data_2);
  // Same chain, same record, even with colliding ids.
  const Entity entity_2(2, 0);
  ASSERT_THAT(index.AddInstance(entity_2, &m.transform, kTransform), IsOk());
  ASSERT_THAT(index.AddInstance(entity_2, &m.render_data_2, kFog), IsOk());
  EXPECT_EQ(index.PrototypeOf(entity_2), index.PrototypeOf(entity_3));
  EXPECT_EQ(index.num_prototypes(), 3u);
}

TEST(EntityIndex, RandomisedWithCollidingIdsMatchesModel) {
  EntityIndex all_collide(&ConstantMix);
  RunRandomisedAgainstModel(all_collide, ::strata::testing::TestSeed() + 1, 4000);
  EntityIndex sixteen_ids(&SixteenIdsMix);
  RunRandomisedAgainstModel(sixteen_ids, ::strata::testing::TestSeed() + 2, 10000);
}

}  // namespace
}  // namespace strata
