// World::Reload against a reference model: a level held as a map of named entities is
// edited at random (entities added, removed, reordered, inserted at the top; fields,
// references and components changed), the game changes the world between reloads
// (writes, removes a component, destroys entities), and after every reload each
// entity's handle, liveness, components, values, references and transform parent are
// what the model says: a field changed in the file takes the file's value, every other
// keeps the game's. Observers count the reload's adds, removes and sets. A refused
// reload leaves SaveAll byte-identical.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/fixed_string.h"
#include "component/declare.h"
#include "component/registry.h"
#include "engine/world.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "resource/metadata.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::Random;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;
using json = nlohmann::json;

struct Hp {
  float hp = 10;
  float max = 10;
};
struct Link {
  Entity target;
};
struct Light {
  float intensity = 1;
};

const ComponentRegistry& Registry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry();
    EXPECT_THAT(r->Add(ComponentDeclaration<Hp>("hp").Field("hp", &Hp::hp).Field("max", &Hp::max).Build()), IsOk());
    EXPECT_THAT(r->Add(ComponentDeclaration<Link>("link").Field("target", &Link::target).Build()), IsOk());
    EXPECT_THAT(r->Add(ComponentDeclaration<Light>("light", ComponentStorage::kNamed)
                           .Field("intensity", &Light::intensity)
                           .Build()),
                IsOk());
    return r;
  }();
  return *registry;
}

std::vector<std::byte> Compile(const ComponentRegistry& registry, const std::string& text) {
  EntityCompiler compiler;
  EXPECT_THAT(registry.RegisterCompilers(compiler), IsOk());
  absl::StatusOr<EntityCompiler::Result> result = compiler.Compile(text, {});
  EXPECT_THAT(result, IsOk()) << text;
  return result.ok() ? result->blob : std::vector<std::byte>();
}

// The level as the reference model holds it: every entity named, with a transform.
struct Spec {
  std::string parent;  // "" for a root
  double order = 0;    // siblings are written in this order
  float x = 0;
  std::optional<Hp> hp;
  std::optional<std::string> link;  // the link component, and its target ("": none)
  std::optional<float> light;       // a named "light" instance "Glow"
};
using Level = std::map<std::string, Spec>;

json EntityJson(const Level& level, const std::string& name) {
  const Spec& s = level.at(name);
  json components = json::array();
  components.push_back({{"type", "transform"}, {"position", {s.x, 0, 0}}});
  if (s.hp) components.push_back({{"type", "hp"}, {"hp", s.hp->hp}, {"max", s.hp->max}});
  if (s.link) {
    json target = s.link->empty() ? json(nullptr) : json(*s.link);
    components.push_back({{"type", "link"}, {"target", target}});
  }
  if (s.light) components.push_back({{"type", "light"}, {"name", "Glow"}, {"intensity", *s.light}});
  json e = {{"name", name}, {"components", components}};
  std::vector<std::pair<double, std::string>> children;
  for (const auto& [n, c] : level) {
    if (c.parent == name) children.emplace_back(c.order, n);
  }
  std::sort(children.begin(), children.end());
  if (!children.empty()) {
    json list = json::array();
    for (const auto& [o, n] : children) list.push_back(EntityJson(level, n));
    e["children"] = list;
  }
  return e;
}

std::string LevelJson(const Level& level) {
  std::vector<std::pair<double, std::string>> roots;
  for (const auto& [n, s] : level) {
    if (s.parent.empty()) roots.emplace_back(s.order, n);
  }
  std::sort(roots.begin(), roots.end());
  json entities = json::array();
  for (const auto& [o, n] : roots) entities.push_back(EntityJson(level, n));
  return json{{"entities", entities}}.dump();
}

// What the game has of one level entity.
struct Live {
  Entity handle;
  bool alive = true;
  float x = 0;
  std::optional<Hp> hp;
  std::optional<Entity> link;
  std::optional<float> light;
  std::string parent;
};

class Harness {
 public:
  explicit Harness(uint64_t seed) : rng_(seed) {}

  World& world() { return *world_; }
  Random& rng() { return rng_; }

  void Start() {
    const int n = static_cast<int>(rng_.UniformInt(1, 30));
    for (int i = 0; i < n; ++i) AddEntity();
    absl::StatusOr<std::unique_ptr<World>> world = World::Create(Registry());
    ASSERT_THAT(world, IsOk());
    world_ = *std::move(world);
    hp_added_ = world_->OnAdd<Hp>([this](absl::Span<const Entity> e, CommandBuffer&) { adds_ += e.size(); });
    hp_removed_ = world_->OnRemove<Hp>(
        [this](absl::Span<const Entity> e, absl::Span<const Hp>, CommandBuffer&) { removes_ += e.size(); });
    hp_set_ = world_->OnSet<Hp>(
        [this](absl::Span<const Entity> e, absl::Span<const Hp>, CommandBuffer&) { sets_ += e.size(); });
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, world_->SpawnLevel(Compile(Registry(), LevelJson(file_))));
    ASSERT_EQ(spawned.size(), file_.size());
    for (const Entity e : spawned) {
      const std::string name(world_->EntityName(e));
      ASSERT_TRUE(file_.contains(name));
      live_[name] = FromFile(file_.at(name), e);
    }
    for (auto& [name, l] : live_) ResolveLink(file_.at(name), &l);
    Check();
  }

  // The game's turn: writes, a removed component, a destroyed entity.
  void Play() {
    std::vector<std::string> names;
    for (const auto& [n, l] : live_) {
      if (l.alive) names.push_back(n);
    }
    if (names.empty()) return;
    for (int i = 0; i < 3; ++i) {
      const std::string& n = names[rng_.UniformIndex(names.size())];
      Live& l = live_[n];
      if (!l.alive || !l.hp) continue;
      Hp* hp = world_->pages().TryGet(l.handle, world_->Pages<Hp>().component());
      ASSERT_NE(hp, nullptr);
      hp->hp = l.hp->hp = static_cast<float>(rng_.UniformInt(-50, 50));
    }
    if (rng_.Bernoulli(0.3)) {
      Live& l = live_[names[rng_.UniformIndex(names.size())]];
      if (l.alive && l.hp) {
        ASSERT_THAT(world_->pages().Remove(l.handle, world_->Pages<Hp>().component()), IsOk());
        l.hp.reset();
      }
    }
    if (rng_.Bernoulli(0.2)) {
      const std::string victim = names[rng_.UniformIndex(names.size())];
      if (live_[victim].alive) {
        ASSERT_THAT(world_->Destroy(live_[victim].handle), IsOk());
        // Its transform descendants go with it: every level entity has a transform.
        for (auto& [n, l] : live_) {
          if (l.alive && !world_->entities().Alive(l.handle)) l.alive = false;
        }
        EXPECT_FALSE(live_[victim].alive);
      }
    }
    ASSERT_THAT(world_->Flush(), IsOk());
  }

  // The editor's turn: random edits of the file.
  void Edit() {
    const int edits = static_cast<int>(rng_.UniformInt(0, 5));
    for (int i = 0; i < edits; ++i) {
      switch (rng_.UniformInt(0, 6)) {
        case 0: AddEntity(); break;
        case 1: AddEntity(/*at_top=*/true); break;
        case 2: RemoveEntity(); break;
        case 3: ChangeField(); break;
        case 4: ToggleComponent(); break;
        case 5: if (!file_.empty()) RandomSpec().order = rng_.UniformFloat(-100, 100); break;
        default: ChangeField(); break;
      }
    }
  }

  // Reloads the edited file and checks the world against the model.
  void Reload() {
    const Level before = reloaded_;
    adds_ = removes_ = sets_ = 0;
    STRATA_ASSERT_OK_AND_ASSIGN(ReloadReport report, world_->Reload(Compile(Registry(), LevelJson(file_))));
    size_t expect_adds = 0, expect_removes = 0, expect_sets = 0;
    uint32_t expect_added = 0, expect_removed = 0;
    std::map<std::string, Live> next;
    for (const auto& [name, spec] : file_) {
      auto was = before.find(name);
      if (was == before.end()) {
        ++expect_added;
        next[name] = FromFile(spec, Entity());
        if (spec.hp) ++expect_adds;
        continue;
      }
      Live l = live_.at(name);
      if (l.alive) {
        const Spec& old = was->second;
        if (spec.x != old.x) l.x = spec.x;
        if (spec.hp && !old.hp) {
          if (!l.hp) ++expect_adds;  // the game had none: the file's comes
          if (!l.hp) l.hp = spec.hp;
        } else if (!spec.hp && old.hp) {
          if (l.hp) ++expect_removes;
          l.hp.reset();
        } else if (spec.hp && l.hp) {
          bool changed = false;
          if (spec.hp->hp != old.hp->hp) l.hp->hp = spec.hp->hp, changed = true;
          if (spec.hp->max != old.hp->max) l.hp->max = spec.hp->max, changed = true;
          expect_sets += changed ? 1 : 0;
        }
        if (spec.light != old.light) {
          if (!spec.light) l.light.reset();
          else if (!old.light || l.light) l.light = spec.light;
        }
        l.link = std::nullopt;  // resolved below (a changed target needs the new handles)
      }
      next[name] = l;
    }
    for (const auto& [name, spec] : before) {
      if (file_.contains(name)) continue;
      ++expect_removed;
      const Live& l = live_.at(name);
      // Destroyed with what hangs below it; a descendant is removed from the file too.
      if (l.alive && l.hp) ++expect_removes;
    }
    // Handles: kept entities keep theirs; added ones are found by name.
    for (const Entity e : world_->LevelEntities()) {
      const std::string name(world_->EntityName(e));
      if (!world_->entities().Alive(e)) continue;
      ASSERT_TRUE(next.contains(name)) << name;
      if (!before.contains(name)) next[name].handle = e;
    }
    for (auto& [name, l] : next) {
      if (!before.contains(name)) {
        ResolveLinkFrom(file_.at(name), &l, next);
        continue;
      }
      const Spec& spec = file_.at(name);
      const Spec& old = before.at(name);
      const Live& was = live_.at(name);
      if (!l.alive) continue;
      if (spec.link && old.link && *spec.link == *old.link) {
        l.link = was.link;  // unchanged in the file: the game's value
        if (!was.link) l.link.reset();
      } else if (spec.link && old.link) {
        ResolveLinkFrom(spec, &l, next);
      } else if (spec.link) {
        ResolveLinkFrom(spec, &l, next);
      } else {
        l.link.reset();
      }
    }
    for (const auto& [name, l] : live_) {
      if (!file_.contains(name)) {
        EXPECT_FALSE(world_->entities().Alive(l.handle)) << name;
      }
    }
    live_ = std::move(next);
    EXPECT_EQ(report.entities_added, expect_added);
    EXPECT_EQ(report.entities_removed, expect_removed);
    EXPECT_EQ(adds_, expect_adds);
    EXPECT_EQ(removes_, expect_removes);
    EXPECT_EQ(sets_, expect_sets);
    reloaded_ = file_;
    totals_.entities_added += report.entities_added;
    totals_.entities_removed += report.entities_removed;
    totals_.components_added += report.components_added;
    totals_.components_removed += report.components_removed;
    totals_.fields_written += report.fields_written;
    totals_.skipped += report.skipped;
    Check();
  }

  // totals: what the reloads did, summed (the test checks every kind happened).
  const ReloadReport& totals() const { return totals_; }

  // Check: every level entity of the model as the world has it.
  void Check() {
    const auto hp = world_->Pages<Hp>().component();
    const auto link = world_->Pages<Link>().component();
    NamedComponentManager<Light>& lights = world_->Named<Light>();
    for (const auto& [name, l] : live_) {
      SCOPED_TRACE(name);
      ASSERT_EQ(world_->entities().Alive(l.handle), l.alive);
      if (!l.alive) continue;
      EXPECT_EQ(world_->EntityName(l.handle), name);
      const TransformHandle t = world_->transforms().Lookup(l.handle);
      ASSERT_TRUE(t.is_valid());
      EXPECT_EQ(world_->transforms().Local(t).m[12], l.x);
      const Spec& spec = file_.at(name);
      if (!spec.parent.empty() && live_.at(spec.parent).alive) {
        const TransformHandle parent = world_->transforms().Parent(t);
        ASSERT_TRUE(parent.is_valid());
        EXPECT_EQ(world_->transforms().entity(parent), live_.at(spec.parent).handle);
      }
      const Hp* h = world_->pages().TryGet(l.handle, hp);
      ASSERT_EQ(h != nullptr, l.hp.has_value());
      if (h != nullptr) {
        EXPECT_EQ(h->hp, l.hp->hp);
        EXPECT_EQ(h->max, l.hp->max);
      }
      const Link* k = world_->pages().TryGet(l.handle, link);
      ASSERT_EQ(k != nullptr, l.link.has_value());
      if (k != nullptr) {
        EXPECT_EQ(k->target, *l.link);
      }
      const Instance glow = lights.Lookup(l.handle, IdString32("Glow"));
      ASSERT_EQ(glow.is_valid(), l.light.has_value());
      if (glow.is_valid()) {
        EXPECT_EQ(lights.Get(glow).intensity, *l.light);
      }
    }
  }

 private:
  Spec& RandomSpec() {
    auto it = file_.begin();
    std::advance(it, static_cast<ptrdiff_t>(rng_.UniformIndex(file_.size())));
    return it->second;
  }
  std::string RandomName() {
    auto it = file_.begin();
    std::advance(it, static_cast<ptrdiff_t>(rng_.UniformIndex(file_.size())));
    return it->first;
  }

  void AddEntity(bool at_top = false) {
    Spec s;
    if (!file_.empty() && rng_.Bernoulli(0.4)) s.parent = RandomName();
    s.order = at_top ? -1000 - next_name_ : rng_.UniformFloat(-100, 100);
    s.x = static_cast<float>(rng_.UniformInt(-9, 9));
    if (rng_.Bernoulli(0.6)) s.hp = Hp{static_cast<float>(rng_.UniformInt(1, 9)), 10};
    if (rng_.Bernoulli(0.4)) s.link = file_.empty() || rng_.Bernoulli(0.2) ? "" : RandomName();
    if (rng_.Bernoulli(0.3)) s.light = static_cast<float>(rng_.UniformInt(0, 5));
    file_[absl::StrCat("n", next_name_++)] = s;
  }

  void RemoveEntity() {
    if (file_.empty()) return;
    std::vector<std::string> doomed = {RandomName()};
    for (size_t i = 0; i < doomed.size(); ++i) {
      for (const auto& [n, s] : file_) {
        if (s.parent == doomed[i]) doomed.push_back(n);
      }
    }
    for (const std::string& n : doomed) file_.erase(n);
    for (auto& [n, s] : file_) {
      if (s.link && std::find(doomed.begin(), doomed.end(), *s.link) != doomed.end()) s.link = "";
    }
  }

  void ChangeField() {
    if (file_.empty()) return;
    Spec& s = RandomSpec();
    switch (rng_.UniformInt(0, 4)) {
      case 0: s.x = static_cast<float>(rng_.UniformInt(-9, 9)); break;
      case 1: if (s.hp) s.hp->hp = static_cast<float>(rng_.UniformInt(1, 9)); break;
      case 2: if (s.hp) s.hp->max = static_cast<float>(rng_.UniformInt(10, 20)); break;
      case 3: if (s.link) s.link = rng_.Bernoulli(0.2) ? "" : RandomName(); break;
      default: if (s.light) s.light = static_cast<float>(rng_.UniformInt(0, 5)); break;
    }
  }

  void ToggleComponent() {
    if (file_.empty()) return;
    Spec& s = RandomSpec();
    switch (rng_.UniformInt(0, 2)) {
      case 0: s.hp = s.hp ? std::nullopt : std::optional<Hp>(Hp{3, 10}); break;
      case 1: s.link = s.link ? std::nullopt : std::optional<std::string>(""); break;
      default: s.light = s.light ? std::nullopt : std::optional<float>(2); break;
    }
  }

  static Live FromFile(const Spec& s, Entity e) {
    Live l;
    l.handle = e;
    l.x = s.x;
    l.hp = s.hp;
    l.light = s.light;
    l.parent = s.parent;
    return l;
  }
  void ResolveLink(const Spec& s, Live* l) { ResolveLinkFrom(s, l, live_); }
  static void ResolveLinkFrom(const Spec& s, Live* l, const std::map<std::string, Live>& by_name) {
    if (!s.link) {
      l->link.reset();
    } else if (s.link->empty()) {
      l->link = Entity();
    } else {
      l->link = by_name.at(*s.link).handle;
    }
  }

  Random rng_;
  std::unique_ptr<World> world_;
  Level file_;      // the file as edited
  Level reloaded_;  // the file the world was last spawned or reloaded from
  std::map<std::string, Live> live_;
  int next_name_ = 0;
  ReloadReport totals_;
  size_t adds_ = 0;
  size_t removes_ = 0;
  size_t sets_ = 0;
  ComponentEvents::Subscription hp_added_;
  ComponentEvents::Subscription hp_removed_;
  ComponentEvents::Subscription hp_set_;

 public:
  void MarkStarted() { reloaded_ = file_; }
};

TEST(Reload, AgreesWithTheModelOnRandomEditsAndPlay) {
  const uint64_t seed = ::strata::testing::TestSeed();
  ReloadReport all;
  for (int run = 0; run < 40; ++run) {
    Harness h(seed + run);
    SCOPED_TRACE(h.rng().DescribeSeed());
    ASSERT_NO_FATAL_FAILURE(h.Start());
    h.MarkStarted();
    for (int round = 0; round < 8; ++round) {
      SCOPED_TRACE(absl::StrCat("round ", round));
      ASSERT_NO_FATAL_FAILURE(h.Play());
      ASSERT_NO_FATAL_FAILURE(h.Edit());
      ASSERT_NO_FATAL_FAILURE(h.Reload());
    }
    all.entities_added += h.totals().entities_added;
    all.entities_removed += h.totals().entities_removed;
    all.components_added += h.totals().components_added;
    all.components_removed += h.totals().components_removed;
    all.fields_written += h.totals().fields_written;
    all.skipped += h.totals().skipped;
  }
  // Every kind of change happened, many times.
  EXPECT_GT(all.entities_added, 50u);
  EXPECT_GT(all.entities_removed, 20u);
  EXPECT_GT(all.components_added, 20u);
  EXPECT_GT(all.components_removed, 20u);
  EXPECT_GT(all.fields_written, 50u);
  EXPECT_GT(all.skipped, 5u);
  std::printf("reloads: %u added, %u removed, %u components added, %u removed, %u fields, %u skipped\n",
              all.entities_added, all.entities_removed, all.components_added, all.components_removed,
              all.fields_written, all.skipped);
}

constexpr char kLevel[] = R"({"entities": [
  {"name": "door", "components": [{"type": "transform", "position": [1, 0, 0]}, {"type": "hp", "hp": 5, "max": 9}]},
  {"name": "chest", "components": [{"type": "hp", "hp": 7, "max": 7}, {"type": "link", "target": "door"}]}]})";

TEST(Reload, WritesWhatChangedInTheFileAndKeepsTheRest) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, world->SpawnLevel(Compile(Registry(), kLevel)));
  const Entity door = spawned[0];
  const Entity chest = spawned[1];
  const auto hp = world->Pages<Hp>().component();
  world->pages().TryGet(chest, hp)->hp = 1;  // the game's
  // The file changes the chest's max and inserts an entity before both.
  std::string edited = kLevel;
  edited.replace(edited.find(R"("hp": 7, "max": 7)"), 17, R"("hp": 7, "max": 8)");
  edited.replace(edited.find("[\n  {"), 5, R"([{"name": "new", "components": [{"type": "link", "target": "chest"}]},
  {)");
  STRATA_ASSERT_OK_AND_ASSIGN(ReloadReport report, world->Reload(Compile(Registry(), edited)));
  EXPECT_EQ(report.entities_added, 1u);
  EXPECT_EQ(report.entities_kept, 2u);
  EXPECT_EQ(report.fields_written, 1u);
  EXPECT_EQ(report.written, (std::vector<std::pair<std::string, uint32_t>>{{"hp.max", 1}}));
  EXPECT_GT(report.level_bytes, 0u);
  EXPECT_THAT(report.Summary(), HasSubstr("1 added, 0 removed, 2 kept; 1 fields written in 1 instances (hp.max x1)"));
  EXPECT_EQ(world->pages().TryGet(chest, hp)->hp, 1);
  EXPECT_EQ(world->pages().TryGet(chest, hp)->max, 8);
  // The chest's link names the door as before, though the door's number moved.
  EXPECT_EQ(world->pages().TryGet(chest, world->Pages<Link>().component())->target, door);
  ASSERT_EQ(world->LevelEntities().size(), 3u);
  const Entity added = world->LevelEntities()[0];
  EXPECT_EQ(world->EntityName(added), "new");
  EXPECT_EQ(world->pages().TryGet(added, world->Pages<Link>().component())->target, chest);
  // The same file again: nothing to do.
  STRATA_ASSERT_OK_AND_ASSIGN(ReloadReport again, world->Reload(Compile(Registry(), edited)));
  EXPECT_EQ(again.entities_added + again.entities_removed + again.fields_written, 0u);
  // Removing the door: the chest's reference behaves as one to a destroyed entity.
  std::string without_door = edited;
  const size_t at = without_door.find(R"({"name": "door")");
  without_door.erase(at, without_door.find("\n", at) + 1 - at);
  without_door.replace(without_door.find(R"("target": "door")"), 16, R"("target": null)");
  STRATA_ASSERT_OK_AND_ASSIGN(ReloadReport removed, world->Reload(Compile(Registry(), without_door)));
  EXPECT_EQ(removed.entities_removed, 1u);
  EXPECT_FALSE(world->entities().Alive(door));
  EXPECT_EQ(world->pages().TryGet(chest, world->Pages<Link>().component())->target, Entity());
}

TEST(Reload, WhatTheGameDestroyedRemovedOrAddedStaysSo) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, world->SpawnLevel(Compile(Registry(), kLevel)));
  const Entity door = spawned[0];
  const Entity chest = spawned[1];
  const auto hp = world->Pages<Hp>().component();
  const auto link = world->Pages<Link>().component();
  ASSERT_THAT(world->DestroyKeepingChildren(chest), IsOk());
  ASSERT_THAT(world->pages().Remove(door, hp), IsOk());
  ASSERT_THAT(world->pages().Add(door, link, Link{door}), IsOk());
  // The file: the chest's hp, the door's hp changed, and a link given to the door.
  const std::string edited = R"({"entities": [
    {"name": "door", "components": [{"type": "transform", "position": [1, 0, 0]}, {"type": "hp", "hp": 6, "max": 9},
                                    {"type": "link", "target": "chest"}]},
    {"name": "chest", "components": [{"type": "hp", "hp": 8, "max": 7}, {"type": "link", "target": "door"}]}]})";
  STRATA_ASSERT_OK_AND_ASSIGN(ReloadReport report, world->Reload(Compile(Registry(), edited)));
  EXPECT_EQ(report.skipped, 3u);  // the chest's hp, the door's hp, the door's link
  EXPECT_EQ(report.fields_written, 0u);
  EXPECT_EQ(report.components_added, 0u);
  EXPECT_FALSE(world->entities().Alive(chest));
  EXPECT_EQ(world->pages().TryGet(door, hp), nullptr);
  EXPECT_EQ(world->pages().TryGet(door, link)->target, door);  // the game's
  EXPECT_EQ(world->LevelEntities()[1], chest);                  // still the chest, dead
}

// A world spawned from a blob of an older declaration of "hp" (no "max"): a reload
// compares "max" with its default, which the spawn gave it, and writes it only when the
// file says otherwise.
TEST(Reload, ALayoutThatChangedMigratesAsASpawnDoes) {
  ComponentRegistry old_registry;
  struct OldHp {
    float hp = 10;
  };
  ASSERT_THAT(old_registry.Add(ComponentDeclaration<OldHp>("hp").Field("hp", &OldHp::hp).Build()), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<Entity> spawned,
      world->SpawnLevel(Compile(old_registry, R"({"entities": [{"name": "a", "components": [{"type": "hp", "hp": 4}]}]})")));
  const auto hp = world->Pages<Hp>().component();
  EXPECT_EQ(world->pages().TryGet(spawned[0], hp)->max, 10);  // the default
  world->pages().TryGet(spawned[0], hp)->hp = 1;
  STRATA_ASSERT_OK_AND_ASSIGN(
      ReloadReport same,
      world->Reload(Compile(Registry(), R"({"entities": [{"name": "a", "components": [{"type": "hp", "hp": 4}]}]})")));
  EXPECT_EQ(same.fields_written, 0u);
  STRATA_ASSERT_OK_AND_ASSIGN(
      ReloadReport more,
      world->Reload(Compile(Registry(), R"({"entities": [{"name": "a", "components": [{"type": "hp", "hp": 4, "max": 50}]}]})")));
  EXPECT_EQ(more.written, (std::vector<std::pair<std::string, uint32_t>>{{"hp.max", 1}}));
  EXPECT_EQ(world->pages().TryGet(spawned[0], hp)->hp, 1);
  EXPECT_EQ(world->pages().TryGet(spawned[0], hp)->max, 50);
}

// A declaration whose str grew and whose enum was renumbered since the level was first
// compiled. Its instances are compared by value, each side read through its own plan:
// read at the declared size, the old blob's 4-byte text would be compared over 32 bytes,
// past the instance (and, for the last instance of the blob, past the blob: ASan
// reports it). Each blob is copied to its exact size so that any such read is caught.
enum class Mood : uint8_t { kAngry, kCalm, kGlad };
enum class OldMood : uint8_t { kCalm, kAngry };
struct Plate {
  float hp = 1;
  Mood mood = Mood::kCalm;
  FixedString<32> title;  // last: an overread of the old 4 bytes leaves the blob
};
struct OldPlate {
  float hp = 1;
  OldMood mood = OldMood::kCalm;
  FixedString<4> title;
};

std::vector<std::byte> ExactCopy(const std::vector<std::byte>& blob) {
  std::vector<std::byte> exact;
  exact.reserve(blob.size());
  exact.assign(blob.begin(), blob.end());
  return exact;
}

// Now: angry=0, calm=1, glad=2 (renumbered) and a 32-byte title.
const ComponentRegistry& PlateNow() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry();
    EXPECT_THAT(r->Add(ComponentDeclaration<Plate>("plate")
                           .Field("hp", &Plate::hp)
                           .Enum("mood", &Plate::mood, {{"angry", Mood::kAngry}, {"calm", Mood::kCalm}, {"glad", Mood::kGlad}})
                           .Field("title", &Plate::title)
                           .Build()),
                IsOk());
    return r;
  }();
  return *registry;
}

// Then: calm=0, angry=1 and a 4-byte title.
const ComponentRegistry& PlateThen() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry();
    EXPECT_THAT(r->Add(ComponentDeclaration<OldPlate>("plate")
                           .Field("hp", &OldPlate::hp)
                           .Enum("mood", &OldPlate::mood, {{"calm", OldMood::kCalm}, {"angry", OldMood::kAngry}})
                           .Field("title", &OldPlate::title)
                           .Build()),
                IsOk());
    return r;
  }();
  return *registry;
}

std::string PlateLevel(const std::string& last_title, const std::string& last_mood) {
  return absl::StrCat(R"({"entities": [
    {"name": "a", "components": [{"type": "plate", "hp": 2, "mood": "angry", "title": "abc"}]},
    {"name": "b", "components": [{"type": "plate", "hp": 3, "mood": ")", last_mood, R"(", "title": ")", last_title,
                      R"("}]}]})");
}

TEST(Reload, FieldsTheDeclarationMigratedAreComparedByValue) {
  const ComponentRegistry& now = PlateNow();
  const ComponentRegistry& then = PlateThen();
  const auto title_of = [](World& w, Entity e) { return std::string(w.pages().TryGet(e, w.Pages<Plate>().component())->title.view()); };
  const auto mood_of = [](World& w, Entity e) { return w.pages().TryGet(e, w.Pages<Plate>().component())->mood; };

  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(now));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned,
                              world->SpawnLevel(ExactCopy(Compile(then, PlateLevel("wxyz", "calm")))));
  ASSERT_EQ(spawned.size(), 2u);
  EXPECT_EQ(title_of(*world, spawned[1]), "wxyz");
  EXPECT_EQ(mood_of(*world, spawned[0]), Mood::kAngry);
  EXPECT_EQ(mood_of(*world, spawned[1]), Mood::kCalm);
  world->pages().TryGet(spawned[0], world->Pages<Plate>().component())->hp = 9;  // the game's

  // The same values, recompiled under the old declaration and then under the new one:
  // nothing changed in the file, though the bytes did.
  STRATA_ASSERT_OK_AND_ASSIGN(ReloadReport same_old, world->Reload(ExactCopy(Compile(then, PlateLevel("wxyz", "calm")))));
  EXPECT_EQ(same_old.fields_written, 0u) << same_old.Summary();
  STRATA_ASSERT_OK_AND_ASSIGN(ReloadReport same_new, world->Reload(ExactCopy(Compile(now, PlateLevel("wxyz", "calm")))));
  EXPECT_EQ(same_new.fields_written, 0u) << same_new.Summary();
  EXPECT_EQ(world->pages().TryGet(spawned[0], world->Pages<Plate>().component())->hp, 9);

  // Back to an old blob whose last title and mood changed: old (4 bytes, calm=0)
  // against new (32 bytes, calm=1), each field read through its plan.
  STRATA_ASSERT_OK_AND_ASSIGN(ReloadReport to_old, world->Reload(ExactCopy(Compile(then, PlateLevel("wx", "angry")))));
  EXPECT_EQ(to_old.written, (std::vector<std::pair<std::string, uint32_t>>{{"plate.mood", 1}, {"plate.title", 1}}))
      << to_old.Summary();
  EXPECT_EQ(title_of(*world, spawned[1]), "wx");
  EXPECT_EQ(mood_of(*world, spawned[1]), Mood::kAngry);
  // Old against old: only the title.
  STRATA_ASSERT_OK_AND_ASSIGN(ReloadReport old_old, world->Reload(ExactCopy(Compile(then, PlateLevel("v", "angry")))));
  EXPECT_EQ(old_old.written, (std::vector<std::pair<std::string, uint32_t>>{{"plate.title", 1}})) << old_old.Summary();
  EXPECT_EQ(title_of(*world, spawned[1]), "v");
  // The game's title is kept where the file did not change it, across a migration.
  ASSERT_TRUE(world->pages().TryGet(spawned[0], world->Pages<Plate>().component())->title.Assign("game"));
  STRATA_ASSERT_OK_AND_ASSIGN(ReloadReport to_new, world->Reload(ExactCopy(Compile(now, PlateLevel("a longer title", "glad")))));
  EXPECT_EQ(to_new.written, (std::vector<std::pair<std::string, uint32_t>>{{"plate.mood", 1}, {"plate.title", 1}}))
      << to_new.Summary();
  EXPECT_EQ(title_of(*world, spawned[0]), "game");
  EXPECT_EQ(title_of(*world, spawned[1]), "a longer title");
  EXPECT_EQ(mood_of(*world, spawned[1]), Mood::kGlad);
  EXPECT_EQ(world->pages().TryGet(spawned[0], world->Pages<Plate>().component())->hp, 9);
}

TEST(Reload, ARefusedReloadLeavesTheWorldAsItWas) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(Registry()));
  EXPECT_THAT(world->Reload(Compile(Registry(), kLevel)), StatusIs(absl::StatusCode::kFailedPrecondition));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> spawned, world->SpawnLevel(Compile(Registry(), kLevel)));
  world->pages().TryGet(spawned[0], world->Pages<Hp>().component())->hp = 3;
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> before, world->SaveAll());

  // A blob whose "hp" another build declared with a field of another type.
  ComponentRegistry other;
  struct OtherHp {
    int32_t hp = 0;
    float max = 0;
  };
  ASSERT_THAT(other.Add(ComponentDeclaration<OtherHp>("hp").Field("hp", &OtherHp::hp).Field("max", &OtherHp::max).Build()),
              IsOk());
  ASSERT_THAT(other.Add(ComponentDeclaration<Link>("link").Field("target", &Link::target).Build()), IsOk());
  std::string edited = kLevel;
  edited.insert(edited.find("[\n") + 2, R"({"name": "extra", "components": [{"type": "link", "target": "door"}]},)");
  const absl::StatusOr<ReloadReport> refused = world->Reload(Compile(other, edited));
  EXPECT_THAT(refused, StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("\"hp\"")));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> after, world->SaveAll());
  EXPECT_EQ(before, after);

  // A blob whose reference points past its entities: refused as a spawn would.
  EntityResourceContents contents;
  contents.parent_index = {kNoParent};
  ComponentTypeContents& section = contents.component_types.emplace_back();
  const ComponentType& link = *Registry().Find("link");
  section.type = link.id();
  section.instance_stride = link.instance_size();
  section.layout_fingerprint = link.fingerprint();
  section.entity_index = {0};
  section.names = {link.id().value()};
  const uint32_t far = 99;
  section.data.resize(4);
  std::memcpy(section.data.data(), &far, 4);
  MetadataSections meta;
  meta.layout_types = {link.id().value()};
  meta.layouts = {link.layout()};
  std::vector<ComponentTypeContents> types;
  std::move(meta).AppendTo(types, kNativeEndianness);
  types.push_back(std::move(contents.component_types[0]));
  contents.component_types = std::move(types);
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bad, WriteEntityResource(contents));
  EXPECT_THAT(world->Reload(bad), StatusIs(absl::StatusCode::kDataLoss));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> still, world->SaveAll());
  EXPECT_EQ(before, still);
  // A corrupt blob.
  std::vector<std::byte> corrupt = Compile(Registry(), kLevel);
  corrupt[corrupt.size() / 2] ^= std::byte{1};
  EXPECT_THAT(world->Reload(corrupt), StatusIs(absl::StatusCode::kDataLoss));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> last, world->SaveAll());
  EXPECT_EQ(before, last);
}

// Hostile blobs: compiled levels with bytes changed at random and the checksum made
// right again, so that the structure checks and the reload itself judge them, reloaded
// over a world spawned from the older declaration's blob (its fields migrated) or the
// current one's. Each is refused, leaving SaveAll as it was, or applied; under ASan
// (the sanitizer configs run this test) any read out of bounds aborts it.
TEST(Reload, HostileBlobsAreRefusedOrAppliedAndNeverReadOutOfBounds) {
  Random rng(::strata::testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  const std::vector<std::byte> sources[] = {
      Compile(PlateThen(), PlateLevel("wxyz", "calm")),
      Compile(PlateNow(), PlateLevel("a longer title", "glad")),
      Compile(PlateThen(), R"({"entities": [{"name": "c"}, {"name": "b", "components": [{"type": "plate", "title": "q"}]},
                                            {"name": "a", "components": [{"type": "plate", "mood": "calm"}]}]})"),
  };
  int refused = 0;
  int applied = 0;
  for (int round = 0; round < 400; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(PlateNow()));
    ASSERT_THAT(world->SpawnLevel(ExactCopy(sources[rng.UniformIndex(2)])).status(), IsOk());
    STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> before, world->SaveAll());
    std::vector<std::byte> blob = ExactCopy(sources[rng.UniformIndex(3)]);
    const int changes = static_cast<int>(rng.UniformInt(1, 4));
    for (int c = 0; c < changes; ++c) {
      size_t at = rng.UniformIndex(blob.size() - 4);
      if (at >= entity_resource_layout::kChecksumOffset) at += 4;  // not the checksum
      blob[at] = static_cast<std::byte>(rng.Next32());
    }
    const uint32_t checksum = ResourceChecksum(blob);
    std::memcpy(blob.data() + entity_resource_layout::kChecksumOffset, &checksum, 4);
    if (world->Reload(std::move(blob)).ok()) {
      ++applied;
      continue;
    }
    ++refused;
    STRATA_ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> after, world->SaveAll());
    EXPECT_EQ(before, after);
  }
  // Both outcomes happen: the changes reach past the first check.
  EXPECT_GT(refused, 20);
  EXPECT_GT(applied, 20);
  std::printf("hostile reloads: %d refused, %d applied\n", refused, applied);
}

}  // namespace
}  // namespace strata
