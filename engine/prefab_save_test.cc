// Saves of worlds made from prefabs, written as deltas: an instance is its prefab plus
// the fields it overrides (those the level overrode and those whose value differs from
// the prefab's), so a load with a changed prefab gives every instance the new values
// of the fields it did not override; components the game removed, children it
// destroyed and fields it changed in children stay so; a save of a level without
// prefabs is unchanged; a delta save is smaller than a full one and loads to the same
// world.
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/id_string.h"
#include "base/status_macros.h"
#include "component/declare.h"
#include "component/registry.h"
#include "engine/world.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "resource/prefab.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

struct Hp {
  float hp = 1;
  float max = 1;
};
struct Speed {
  float value = 0;
};
struct Follow {
  Entity target;
};

const ComponentRegistry& Registry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry();
    EXPECT_THAT(r->Add(ComponentDeclaration<Hp>("hp").Field("hp", &Hp::hp).Field("max", &Hp::max).Build()), IsOk());
    EXPECT_THAT(r->Add(ComponentDeclaration<Speed>("speed").Field("value", &Speed::value).Build()), IsOk());
    EXPECT_THAT(r->Add(ComponentDeclaration<Follow>("follow").Field("target", &Follow::target).Build()), IsOk());
    return r;
  }();
  return *registry;
}

std::vector<std::byte> Compile(const std::string& text) {
  EntityCompiler compiler;
  EXPECT_THAT(Registry().RegisterCompilers(compiler), IsOk());
  absl::StatusOr<EntityCompiler::Result> result = compiler.Compile(text, {});
  EXPECT_THAT(result, IsOk()) << text;
  return result.ok() ? result->blob : std::vector<std::byte>();
}

// An orc: hp, speed, a transform, and a child "eye" that follows its root.
std::string Prefabs(int orc_hp, int eye_hp) {
  return absl::StrCat(R"("prefabs": {"orc": {"components": [{"type": "transform", "position": [0, 1, 0]},
                                    {"type": "hp", "hp": )", orc_hp, R"(, "max": 100}, {"type": "speed", "value": 3}],
                     "children": [{"name": "eye", "components": [{"type": "transform"}, {"type": "hp", "hp": )", eye_hp, R"(, "max": 5},
                                                                  {"type": "follow", "target": "orc"}]}]}})");
}

std::string Level(int orc_hp, int eye_hp) {
  return absl::StrCat("{", Prefabs(orc_hp, eye_hp), R"(, "entities": [
    {"name": "a", "prefab": "orc"},
    {"name": "b", "prefab": "orc", "components": [{"type": "hp", "hp": 50}]},
    {"name": "c", "prefab": "orc"},
    {"name": "d", "prefab": "orc"},
    {"name": "e", "prefab": "orc", "components": [{"type": "hp", "max": 30}, {"type": "transform", "position": [9, 0, 0]}]},
    {"name": "f", "prefab": "orc"},
    {"name": "rock", "components": [{"type": "hp", "hp": 1, "max": 1}]}]})");
}

// The live entities of `world` by path of names ("a", "a/eye").
std::map<std::string, Entity> ByPath(const World& world) {
  std::map<std::string, Entity> out;
  for (const Entity e : world.Entities()) {
    std::string path(world.EntityName(e));
    const TransformHandle t = world.transforms().Lookup(e);
    if (t.is_valid()) {
      for (TransformHandle p = world.transforms().Parent(t); p.is_valid(); p = world.transforms().Parent(p)) {
        path = absl::StrCat(world.EntityName(world.transforms().entity(p)), "/", path);
      }
    }
    out[path] = e;
  }
  return out;
}

Hp* HpOf(const World& world, Entity e) { return world.pages().TryGet(e, world.Pages<Hp>().component()); }

TEST(PrefabSave, AnInstanceFollowsItsPrefabInEveryFieldItDidNotOverride) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  ASSERT_THAT(world->Spawn(*EntityResourceView::Create(Compile(Level(10, 2)))).status(), IsOk());
  std::map<std::string, Entity> e = ByPath(*world);
  ASSERT_EQ(e.size(), 13u);  // six orcs, their eyes, the rock
  // The game's doing: c's hp changed; d's changed and set back; f's eye changed; e's
  // speed removed; b's eye destroyed.
  HpOf(*world, e["c"])->hp = 7;
  HpOf(*world, e["d"])->hp = 70;
  HpOf(*world, e["d"])->hp = 10;
  HpOf(*world, e["f/eye"])->hp = 4;
  ASSERT_THAT(world->pages().Remove(e["e"], world->Pages<Speed>().component()), IsOk());
  ASSERT_THAT(world->Destroy(e["b/eye"]), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> saved, world->SaveAll());

  // Loaded where the orc's hp default is now 20 and the eye's 3.
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(Registry()));
  const std::vector<std::byte> edited = Compile(Level(20, 3));
  ASSERT_THAT(loaded->LoadPrefabs(*EntityResourceView::Create(edited)), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView saved_view, EntityResourceView::Create(saved));
  ASSERT_THAT(loaded->Spawn(saved_view).status(), IsOk());
  std::map<std::string, Entity> l = ByPath(*loaded);
  ASSERT_EQ(l.size(), 12u);
  EXPECT_FALSE(l.contains("b/eye"));
  EXPECT_EQ(HpOf(*loaded, l["a"])->hp, 20);  // not overridden: the new prefab's
  EXPECT_EQ(HpOf(*loaded, l["b"])->hp, 50);  // the level's
  EXPECT_EQ(HpOf(*loaded, l["c"])->hp, 7);   // the game's
  EXPECT_EQ(HpOf(*loaded, l["d"])->hp, 20);  // set back to the prefab's: follows it
  EXPECT_EQ(HpOf(*loaded, l["e"])->hp, 20);  // max overridden, not hp
  EXPECT_EQ(HpOf(*loaded, l["e"])->max, 30);
  EXPECT_EQ(HpOf(*loaded, l["a"])->max, 100);
  EXPECT_EQ(HpOf(*loaded, l["a/eye"])->hp, 3);  // a child follows its prefab entity too
  EXPECT_EQ(HpOf(*loaded, l["f/eye"])->hp, 4);
  EXPECT_EQ(HpOf(*loaded, l["rock"])->hp, 1);   // not from a prefab: as saved
  EXPECT_EQ(loaded->pages().TryGet(l["e"], loaded->Pages<Speed>().component()), nullptr);  // removed stays so
  EXPECT_EQ(loaded->pages().TryGet(l["a"], loaded->Pages<Speed>().component())->value, 3);
  // The eye's reference to its own orc, and e's own position.
  EXPECT_EQ(loaded->pages().TryGet(l["c/eye"], loaded->Pages<Follow>().component())->target, l["c"]);
  EXPECT_EQ(loaded->transforms().Local(loaded->transforms().Lookup(l["e"])).m[12], 9);
  EXPECT_EQ(loaded->transforms().Local(loaded->transforms().Lookup(l["a"])).m[13], 1);

  // Loaded without the edit: the save's own copy of the prefab, the same world as
  // saved; and saving it again gives the same bytes.
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> as_saved, World::Create(Registry()));
  ASSERT_THAT(as_saved->Spawn(saved_view).status(), IsOk());
  std::map<std::string, Entity> s = ByPath(*as_saved);
  EXPECT_EQ(HpOf(*as_saved, s["a"])->hp, 10);
  EXPECT_EQ(HpOf(*as_saved, s["c"])->hp, 7);
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> again, as_saved->SaveAll());
  EXPECT_EQ(again, saved);
  // A full save of each is the same: the delta lost nothing.
  SaveOptions full;
  full.prefab_deltas = false;
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> full_original, world->SaveAll(full));
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> full_loaded, as_saved->SaveAll(full));
  EXPECT_EQ(full_original, full_loaded);
}

TEST(PrefabSave, ALevelWithoutPrefabsSavesAsItCompiled) {
  const std::vector<std::byte> level =
      Compile(R"({"entities": [{"name": "rock", "components": [{"type": "hp", "hp": 1, "max": 1}]}]})");
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  ASSERT_THAT(world->Spawn(*EntityResourceView::Create(level)).status(), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> saved, world->SaveAll());
  EXPECT_EQ(saved, level);
}

TEST(PrefabSave, InstancesMadeByCodeSaveAsDeltas) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  ASSERT_THAT(world->LoadPrefabs(*EntityResourceView::Create(Compile(Level(10, 2)))), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(const PrefabId orc, world->FindPrefab("orc"));
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<Entity> made, world->Instantiate(orc, 3));
  HpOf(*world, made[1])->hp = 99;
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> saved, world->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(Registry()));
  ASSERT_THAT(loaded->LoadPrefabs(*EntityResourceView::Create(Compile(Level(20, 3)))), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<Entity> spawned, loaded->Spawn(*EntityResourceView::Create(saved)));
  std::vector<float> hps;  // of the roots, in order
  for (const Entity e : spawned) {
    const TransformHandle t = loaded->transforms().Lookup(e);
    if (t.is_valid() && !loaded->transforms().Parent(t).is_valid()) hps.push_back(HpOf(*loaded, e)->hp);
  }
  EXPECT_EQ(hps, (std::vector<float>{20, 99, 20}));
}

TEST(PrefabSave, ADeltaSaveIsSmaller) {
  std::string text = absl::StrCat("{", Prefabs(10, 2), R"(, "entities": [)");
  for (int i = 0; i < 1000; ++i) {
    absl::StrAppend(&text, i == 0 ? "" : ",", R"({"prefab": "orc", "components": [{"type": "transform", "position": [)", i,
                    R"(, 0, 0]}]})");
  }
  absl::StrAppend(&text, "]}");
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  ASSERT_THAT(world->Spawn(*EntityResourceView::Create(Compile(text))).status(), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> delta, world->SaveAll());
  SaveOptions full;
  full.prefab_deltas = false;
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> whole, world->SaveAll(full));
  std::printf("1000 orcs with their own positions: delta %zu bytes, full %zu bytes (%.3fx)\n", delta.size(),
              whole.size(), static_cast<double>(delta.size()) / whole.size());
  EXPECT_LT(static_cast<double>(delta.size()), 0.75 * static_cast<double>(whole.size()));
}

// A delta whose prefab's "hp" has another layout than the save's cannot be merged:
// refused with the type and prefab named, nothing spawned.
TEST(PrefabSave, APrefabOfAnotherLayoutIsRefusedNamingIt) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  ASSERT_THAT(world->Spawn(*EntityResourceView::Create(Compile(Level(10, 2)))).status(), IsOk());
  std::map<std::string, Entity> e = ByPath(*world);
  HpOf(*world, e["a"])->max = 3;  // a partial override of hp: merged on load
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> saved, world->SaveAll());
  struct WideHp {
    float hp = 1;
    float max = 1;
    float armor = 0;
  };
  ComponentRegistry wide;
  ASSERT_THAT(wide.Add(ComponentDeclaration<WideHp>("hp").Field("hp", &WideHp::hp).Field("max", &WideHp::max)
                           .Field("armor", &WideHp::armor).Build()),
              IsOk());
  ASSERT_THAT(wide.Add(ComponentDeclaration<Speed>("speed").Field("value", &Speed::value).Build()), IsOk());
  ASSERT_THAT(wide.Add(ComponentDeclaration<Follow>("follow").Field("target", &Follow::target).Build()), IsOk());
  EntityCompiler compiler;
  ASSERT_THAT(wide.RegisterCompilers(compiler), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result other, compiler.Compile(Level(20, 3), {}));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(Registry()));
  ASSERT_THAT(loaded->LoadPrefabs(*EntityResourceView::Create(other.blob)), IsOk());
  EXPECT_THAT(loaded->Spawn(*EntityResourceView::Create(saved)).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("prefab \"orc\"")));
  EXPECT_EQ(loaded->entities().size(), 0u);
}

// A removed record: what a delta says of a prefab component an entity no longer has;
// outside a delta it is refused as corrupt.
TEST(PrefabSave, ARemovedRecordIsReadInADeltaOnly) {
  PrefabDefinition orc;
  orc.name = "orc";
  orc.blob = Compile(R"({"entities": [{"components": [{"type": "hp"}]}]})");
  for (const bool delta : {false, true}) {
    PrefabOverrideRecord removed;
    removed.type = IdString32("hp").value();
    removed.name = IdString32("hp").value();
    removed.removed = true;
    EntityResourceContents contents;
    contents.parent_index = {kNoParent};
    contents.component_types.push_back(MakePrefabSection({&orc, 1}, {PrefabEntityRecord{0, 0, 0}}, {&removed, 1},
                                                         kNativeEndianness, delta));
    STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> blob, WriteEntityResource(contents));
    STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView view, EntityResourceView::Create(blob));
    absl::StatusOr<PrefabTable> table = ReadPrefabTable(view);
    if (delta) {
      ASSERT_THAT(table, IsOk());
      EXPECT_TRUE(table->delta);
      ASSERT_EQ(table->overrides.size(), 1u);
      EXPECT_TRUE(table->overrides[0].removed);
      // Spawned: the orc without its hp.
      STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
      STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<Entity> spawned, world->Spawn(view));
      EXPECT_EQ(HpOf(*world, spawned[0]), nullptr);
    } else {
      EXPECT_THAT(table, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("override record 0 out of range")));
    }
  }
}


// Spawns `blob` (a save) into a fresh world that knows the prefabs of `prefabs` (a
// compiled level, or empty for none).
absl::StatusOr<std::unique_ptr<World>> Load(const std::vector<std::byte>& blob,
                                            const std::vector<std::byte>& prefabs) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<World> world, World::Create(Registry()));
  if (!prefabs.empty()) {
    STRATA_ASSIGN_OR_RETURN(const EntityResourceView view, EntityResourceView::Create(prefabs));
    STRATA_RETURN_IF_ERROR(world->LoadPrefabs(view));
  }
  STRATA_ASSIGN_OR_RETURN(const EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_RETURN_IF_ERROR(world->Spawn(view).status());
  return world;
}

TEST(PrefabSave, EntitiesNotFromAPrefabAreWrittenInFull) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  ASSERT_THAT(world->Spawn(*EntityResourceView::Create(Compile(Level(10, 2)))).status(), IsOk());
  // One more made by code with the orc's values exactly: equal to the prefab, yet
  // not from it, so it is written whole.
  const Entity made = world->entities().Create();
  ASSERT_THAT(world->pages().Add(made, world->Pages<Hp>().component(), Hp{10, 100}), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> saved, world->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView view, EntityResourceView::Create(saved));
  STRATA_ASSERT_OK_AND_ASSIGN(const PrefabTable table, ReadPrefabTable(view));
  ASSERT_TRUE(table.delta);
  EXPECT_EQ(table.entities.size(), 12u);  // the six orcs and their eyes
  std::vector<bool> from_prefab(view.num_entities());
  for (const PrefabEntityRecord& r : table.entities) from_prefab[r.entity] = true;
  // The hp section holds every entity not from a prefab, whole (rock and `made`), and
  // of the orcs only those whose hp the level overrode (b, e).
  size_t plain = 0, instances = 0;
  for (const ComponentTypeView& s : view.component_types()) {
    if (s.type != IdString32("hp")) continue;
    ASSERT_EQ(s.instance_stride, sizeof(Hp));
    for (uint32_t i = 0; i < s.num_instances; ++i) {
      if (from_prefab[s.entity_index[i]]) {
        ++instances;
      } else {
        ++plain;
      }
    }
  }
  EXPECT_EQ(plain, 2u);
  EXPECT_EQ(instances, 2u);  // b (the level's hp), e (the level's max)
  // Loaded where the prefab changed: the plain entities keep their values.
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, Load(saved, Compile(Level(20, 3))));
  std::map<std::string, Entity> l = ByPath(*loaded);
  EXPECT_EQ(HpOf(*loaded, l["rock"])->hp, 1);
  size_t with_ten = 0;
  for (const Entity e : loaded->Entities()) {
    const Hp* hp = HpOf(*loaded, e);
    if (hp != nullptr && hp->hp == 10 && hp->max == 100) ++with_ten;
  }
  EXPECT_EQ(with_ten, 1u);  // `made`; every orc now has hp 20 or its own
}

// The prefab of a saved instance that the loading world does not know: the save
// carries the prefab it was made with, so it loads as saved; a world that knows the
// prefab by that name takes its version.
TEST(PrefabSave, APrefabTheWorldDoesNotKnowIsTakenFromTheSave) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  ASSERT_THAT(world->Spawn(*EntityResourceView::Create(Compile(Level(10, 2)))).status(), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> saved, world->SaveAll());
  // A world that knows other prefabs, not "orc".
  const std::vector<std::byte> goblin = Compile(
      R"({"prefabs": {"goblin": {"components": [{"type": "hp", "hp": 3}]}}, "entities": []})");
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, Load(saved, goblin));
  std::map<std::string, Entity> l = ByPath(*loaded);
  EXPECT_EQ(HpOf(*loaded, l["a"])->hp, 10);
  EXPECT_EQ(HpOf(*loaded, l["a/eye"])->hp, 2);
  EXPECT_TRUE(loaded->FindPrefab("orc").ok());  // and it knows the orc now
  EXPECT_TRUE(loaded->FindPrefab("goblin").ok());
}

// The rule is a value diff at each save: a field the game changed is written while it
// differs; set back to the prefab's value (also after a load), it follows the prefab
// again. A field the level overrode stays overridden through saves and loads.
TEST(PrefabSave, AFieldSetBackToThePrefabsValueFollowsLaterEdits) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  ASSERT_THAT(world->Spawn(*EntityResourceView::Create(Compile(Level(10, 2)))).status(), IsOk());
  std::map<std::string, Entity> e = ByPath(*world);
  HpOf(*world, e["c"])->hp = 7;   // the game's
  HpOf(*world, e["d"])->max = 1;  // the game's, in another field
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> first, world->SaveAll());
  // Loaded with the prefab as saved; c's and d's changes set back, b's level
  // override set to the prefab's value.
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> second, Load(first, {}));
  std::map<std::string, Entity> s = ByPath(*second);
  ASSERT_EQ(HpOf(*second, s["c"])->hp, 7);
  ASSERT_EQ(HpOf(*second, s["d"])->max, 1);
  HpOf(*second, s["c"])->hp = 10;
  HpOf(*second, s["d"])->max = 100;
  HpOf(*second, s["b"])->hp = 10;
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> again, second->SaveAll());
  // The orc's hp is 20 now.
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> third, Load(again, Compile(Level(20, 3))));
  std::map<std::string, Entity> t = ByPath(*third);
  EXPECT_EQ(HpOf(*third, t["c"])->hp, 20);   // set back: follows
  EXPECT_EQ(HpOf(*third, t["d"])->hp, 20);
  EXPECT_EQ(HpOf(*third, t["d"])->max, 100);
  EXPECT_EQ(HpOf(*third, t["b"])->hp, 10);   // the level's: kept, at the value it has
  EXPECT_EQ(HpOf(*third, t["e"])->max, 30);  // the level's, through two loads
  EXPECT_EQ(HpOf(*third, t["e"])->hp, 20);
  // And the level's overrides survive one more round without edits.
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> third_save, third->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> fourth, Load(third_save, Compile(Level(30, 3))));
  std::map<std::string, Entity> f = ByPath(*fourth);
  EXPECT_EQ(HpOf(*fourth, f["b"])->hp, 10);
  EXPECT_EQ(HpOf(*fourth, f["c"])->hp, 30);
  EXPECT_EQ(HpOf(*fourth, f["e"])->max, 30);
}

// A chain of eight prefabs, each based on the one before and overriding one thing:
// an instance of the last follows an edit of the first in every field no prefab of
// the chain (and not the instance) overrode.
TEST(PrefabSave, InstancesOfADeepChainFollowTheChainsFirstPrefab) {
  auto chain = [](int base_hp, int base_speed) {
    std::string text = absl::StrCat(R"({"prefabs": {"p1": {"components": [{"type": "transform"},
                                                               {"type": "hp", "hp": )", base_hp,
                                     R"(, "max": 5}, {"type": "speed", "value": )", base_speed, "}]}");
    for (int d = 2; d <= 8; ++d) {
      absl::StrAppend(&text, R"(, "p)", d, R"(": {"prefab": "p)", d - 1, R"(")");
      if (d == 4) absl::StrAppend(&text, R"(, "components": [{"type": "hp", "max": 40}])");
      if (d == 6) {
        absl::StrAppend(&text, R"(, "children": [{"name": "kid", "components": [{"type": "transform"},
                                                                            {"type": "speed", "value": 6}]}])");
      }
      text += "}";
    }
    absl::StrAppend(&text, R"(}, "entities": [{"name": "x", "prefab": "p8"},
                                {"name": "y", "prefab": "p8", "components": [{"type": "speed", "value": 9}]},
                                {"name": "z", "prefab": "p5"}]})");
    return text;
  };
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  ASSERT_THAT(world->Spawn(*EntityResourceView::Create(Compile(chain(1, 2)))).status(), IsOk());
  std::map<std::string, Entity> e = ByPath(*world);
  ASSERT_EQ(e.size(), 5u);  // x, x/kid, y, y/kid, z
  HpOf(*world, e["z"])->max = 41;
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> saved, world->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, Load(saved, Compile(chain(11, 12))));
  std::map<std::string, Entity> l = ByPath(*loaded);
  ASSERT_EQ(l.size(), 5u);
  auto speed = [&](const std::string& path) {
    return loaded->pages().TryGet(l[path], loaded->Pages<Speed>().component())->value;
  };
  EXPECT_EQ(HpOf(*loaded, l["x"])->hp, 11);  // p1's, through the chain
  EXPECT_EQ(HpOf(*loaded, l["x"])->max, 40);  // p4's
  EXPECT_EQ(speed("x"), 12);
  EXPECT_EQ(speed("x/kid"), 6);  // p6's child
  EXPECT_EQ(speed("y"), 9);      // the instance's
  EXPECT_EQ(HpOf(*loaded, l["y"])->hp, 11);
  EXPECT_EQ(HpOf(*loaded, l["z"])->hp, 11);
  EXPECT_EQ(HpOf(*loaded, l["z"])->max, 41);  // the game's
}

// A save that names its prefabs without carrying them: smaller; it loads where the
// world knows the prefabs (with their current values), and elsewhere it is refused
// with NotFound naming the prefab, nothing spawned.
TEST(PrefabSave, ASaveWithoutPrefabCopiesNeedsTheWorldToKnowThem) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  ASSERT_THAT(world->Spawn(*EntityResourceView::Create(Compile(Level(10, 2)))).status(), IsOk());
  std::map<std::string, Entity> e = ByPath(*world);
  HpOf(*world, e["c"])->hp = 7;
  SaveOptions by_name;
  by_name.prefab_copies = false;
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> named, world->SaveAll(by_name));
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> carried, world->SaveAll());
  EXPECT_LT(named.size(), carried.size());
  STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView named_view, EntityResourceView::Create(named));
  STRATA_ASSERT_OK_AND_ASSIGN(const PrefabTable table, ReadPrefabTable(named_view));
  ASSERT_EQ(table.prefabs.size(), 1u);
  EXPECT_TRUE(table.prefabs[0].by_name);
  EXPECT_EQ(table.prefabs[0].name, "orc");

  // A world that knows the orc, edited: the new values where not overridden.
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, Load(named, Compile(Level(20, 3))));
  std::map<std::string, Entity> l = ByPath(*loaded);
  ASSERT_EQ(l.size(), 13u);
  EXPECT_EQ(HpOf(*loaded, l["a"])->hp, 20);
  EXPECT_EQ(HpOf(*loaded, l["a/eye"])->hp, 3);
  EXPECT_EQ(HpOf(*loaded, l["b"])->hp, 50);
  EXPECT_EQ(HpOf(*loaded, l["c"])->hp, 7);
  EXPECT_EQ(loaded->pages().TryGet(l["c/eye"], loaded->Pages<Follow>().component())->target, l["c"]);
  // Its own saves name the orc too, and the same bytes follow from the same world.
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> same, Load(named, Compile(Level(10, 2))));
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> named_again, same->SaveAll(by_name));
  EXPECT_EQ(named_again, named);

  // A world that does not know it: refused, naming it; LoadPrefabs of the save loads
  // nothing.
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> stranger, World::Create(Registry()));
  EXPECT_THAT(stranger->LoadPrefabs(named_view), IsOk());
  EXPECT_FALSE(stranger->FindPrefab("orc").ok());
  EXPECT_THAT(stranger->Spawn(named_view).status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("prefab \"orc\"")));
  EXPECT_EQ(stranger->entities().size(), 0u);
  EXPECT_EQ(stranger->Entities().size(), 0u);

  // A level (not a delta) may not name a prefab without its blob.
  PrefabDefinition nameless;
  nameless.name = "orc";
  EntityResourceContents contents;
  contents.parent_index = {kNoParent};
  contents.component_types.push_back(
      MakePrefabSection({&nameless, 1}, {PrefabEntityRecord{0, 0, 0}}, {}, kNativeEndianness, /*delta=*/false));
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> level, WriteEntityResource(contents));
  EXPECT_THAT(ReadPrefabTable(*EntityResourceView::Create(level)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("prefab 0: no blob")));
}

// The pieces of a blob, to rebuild it (checksum and all) after an edit.
EntityResourceContents ContentsOf(const EntityResourceView& view) {
  EntityResourceContents contents;
  contents.parent_index.assign(view.parent_index().begin(), view.parent_index().end());
  for (const ComponentTypeView& s : view.component_types()) {
    ComponentTypeContents& c = contents.component_types.emplace_back();
    c.type = s.type;
    c.instance_stride = s.instance_stride;
    c.layout_fingerprint = s.layout_fingerprint;
    c.entity_index.assign(s.entity_index.begin(), s.entity_index.end());
    c.names.assign(s.names.begin(), s.names.end());
    c.data.assign(s.data.begin(), s.data.end());
  }
  return contents;
}

// Every word of a delta save's prefab tables (header, prefab, entity and override
// records, masks) set to hostile values, the blob rebuilt so that it validates: the
// prefab section is refused, or the save spawns, or its merge is refused with a
// Status; nothing is read out of bounds (the test runs under ASan and UBSan too), and
// a refused spawn leaves the world empty.
TEST(PrefabSave, HostileDeltaRecordsAreRefusedOrSpawnWithoutReadingOutOfBounds) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  ASSERT_THAT(world->Spawn(*EntityResourceView::Create(Compile(Level(10, 2)))).status(), IsOk());
  std::map<std::string, Entity> e = ByPath(*world);
  HpOf(*world, e["c"])->hp = 7;
  HpOf(*world, e["f/eye"])->hp = 4;
  ASSERT_THAT(world->pages().Remove(e["e"], world->Pages<Speed>().component()), IsOk());
  size_t refused = 0, spawned = 0;
  for (const bool copies : {true, false}) {
    SCOPED_TRACE(copies ? "with prefab copies" : "prefabs by name");
    SaveOptions options;
    options.prefab_copies = copies;
    STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> saved, world->SaveAll(options));
    STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView view, EntityResourceView::Create(saved));
    const EntityResourceContents contents = ContentsOf(view);
    size_t section = 0;
    while (contents.component_types[section].type != IdString32("strata.prefabs")) ++section;
    const std::vector<std::byte>& data = contents.component_types[section].data;
    uint32_t header[8];
    std::memcpy(header, data.data(), sizeof(header));
    const size_t table_words = 8 + 4 * size_t{header[1]} + 3 * size_t{header[2]} + 6 * size_t{header[3]} + header[4];
    ASSERT_GT(header[3], 0u);  // override records to corrupt
    const std::vector<std::byte> edited_prefabs = Compile(Level(20, 3));
    for (size_t w = 0; w < table_words; ++w) {
      uint32_t original;
      std::memcpy(&original, data.data() + 4 * w, 4);
      for (const uint32_t value : {0u, 1u, 2u, 3u, 4u, 13u, original + 1, original - 1, 0x7FFFFFFFu, 0xFFFFFFFFu}) {
        if (value == original) continue;
        EntityResourceContents hostile = contents;
        std::memcpy(hostile.component_types[section].data.data() + 4 * w, &value, 4);
        STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> blob, WriteEntityResource(hostile));
        for (const bool knows_prefabs : {false, true}) {
          STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(Registry()));
          if (knows_prefabs) {
            ASSERT_THAT(loaded->LoadPrefabs(*EntityResourceView::Create(edited_prefabs)), IsOk());
          }
          STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView hostile_view, EntityResourceView::Create(blob));
          absl::StatusOr<std::vector<Entity>> result = loaded->Spawn(hostile_view);
          if (result.ok()) {
            ++spawned;
            EXPECT_EQ(result->size(), view.num_entities());
          } else {
            ++refused;
            EXPECT_THAT(result.status().code(),
                        ::testing::AnyOf(absl::StatusCode::kDataLoss, absl::StatusCode::kFailedPrecondition,
                                 absl::StatusCode::kNotFound))
                << "word " << w << " = " << value << ": " << result.status();
            EXPECT_EQ(loaded->entities().size(), 0u) << "word " << w << " = " << value;
          }
        }
      }
    }
  }
  std::printf("hostile prefab words: %zu spawns refused, %zu spawned\n", refused, spawned);
  EXPECT_GT(refused, 0u);
  EXPECT_GT(spawned, 0u);  // a mask or a node changed within range still spawns
}

// A delta whose records hang below a long chain of entities from no prefab (a hostile
// shape: finding each instance's root by walking up would be quadratic) spawns in
// time linear in its size; the records there find no instance root, so their
// references to the prefab's entities are none.
TEST(PrefabSave, ADeepEntityChainIsWalkedOnce) {
  constexpr uint32_t kChain = 40000, kLeaves = 40000;
  PrefabDefinition orc;
  orc.name = "orc";
  orc.blob = Compile(absl::StrCat("{", Prefabs(10, 2), R"(, "entities": []})"));
  STRATA_ASSERT_OK_AND_ASSIGN(const EntityResourceView orc_view, EntityResourceView::Create(orc.blob));
  STRATA_ASSERT_OK_AND_ASSIGN(const PrefabTable orc_table, ReadPrefabTable(orc_view));
  ASSERT_EQ(orc_table.prefabs.size(), 1u);
  orc.blob.assign(orc_table.prefabs[0].view.blob().begin(), orc_table.prefabs[0].view.blob().end());
  EntityResourceContents contents;
  contents.parent_index.push_back(kNoParent);
  for (uint32_t k = 1; k < kChain; ++k) contents.parent_index.push_back(k - 1);
  std::vector<PrefabEntityRecord> records;
  for (uint32_t k = 0; k < kLeaves; ++k) {
    contents.parent_index.push_back(kChain - 1);
    records.push_back(PrefabEntityRecord{kChain + k, 0, 1});  // the orc's eye
  }
  contents.component_types.push_back(MakePrefabSection({&orc, 1}, records, {}, kNativeEndianness, /*delta=*/true));
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> blob, WriteEntityResource(contents));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(Registry()));
  STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<Entity> spawned, loaded->Spawn(*EntityResourceView::Create(blob)));
  ASSERT_EQ(spawned.size(), kChain + kLeaves);
  const Entity leaf = spawned[kChain + 7];
  EXPECT_EQ(HpOf(*loaded, leaf)->hp, 2);  // the eye's, from the prefab
  EXPECT_EQ(loaded->pages().TryGet(leaf, loaded->Pages<Follow>().component())->target, Entity());
}

}  // namespace
}  // namespace strata
