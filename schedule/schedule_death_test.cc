// A system that touches what it did not declare, or changes structure without being
// exclusive, aborts with a message in every build mode (these run in -c opt too).
#include <string>

#include "entity/entity_manager.h"
#include "gtest/gtest.h"
#include "iteration/entity_pages.h"
#include "iteration/filter.h"
#include "schedule/schedule.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

struct Hp {
  float hp;
};
struct Armor {
  float value;
};

struct Fixture {
  Fixture() {
    hp = *pages.RegisterComponent<Hp>("hp");
    armor = *pages.RegisterComponent<Armor>("armor");
    Entity e;
    manager.CreateBatch(absl::MakeSpan(&e, 1));
    STRATA_CHECK(pages.Add(e, hp, Hp{10}).ok(), "add");
    STRATA_CHECK(pages.Add(e, armor, Armor{1}).ok(), "add");
    entity = e;
  }
  EntityManager manager;
  EntityPages pages{manager};
  Component<Hp> hp;
  Component<Armor> armor;
  Entity entity;
};

TEST(ScheduleDeathTest, WritingAComponentDeclaredReadAborts) {
  Fixture f;
  Schedule schedule(f.manager, f.pages);
  schedule.Add(System("regen", [&](SystemContext&) {
                 Filter q;
                 q.Include(f.hp);
                 ForEachMatch(f.pages, q, [](Hp& h) { h.hp += 1; }, f.hp);
               }).Reads(f.hp));
  EXPECT_DEATH((void)schedule.Run(),
               "system \"regen\" writes component \"hp\" but did not declare it written");
}

TEST(ScheduleDeathTest, ReadingAnUndeclaredComponentAborts) {
  Fixture f;
  Schedule schedule(f.manager, f.pages, {.threads = 2});
  schedule.Add(System("armor_sum", [&](SystemContext&) {
                 Filter q;
                 q.Include(f.hp).Include(f.armor);
                 float total = 0;
                 ForEachMatch(f.pages, q, [&](Hp& h, const Armor& a) { total += a.value + h.hp; },
                              f.hp, f.armor);
               }).Writes(f.hp));
  EXPECT_DEATH((void)schedule.Run(), "system \"armor_sum\" reads component \"armor\"");
}

TEST(ScheduleDeathTest, DeclaredAccessPasses) {
  Fixture f;
  float total = 0;
  Schedule schedule(f.manager, f.pages);
  schedule.Add(System("armor_sum", [&](SystemContext&) {
                 Filter q;
                 q.Include(f.hp).Include(f.armor);
                 ForEachMatch(f.pages, q, [&](Hp& h, const Armor& a) { total += a.value + h.hp; },
                              f.hp, f.armor);
               }).Writes(f.hp).Reads(f.armor));
  STRATA_ASSERT_OK(schedule.Run());
  EXPECT_EQ(total, 11.0f);
  // Outside the schedule, walks are not checked.
  Filter q;
  q.Include(f.armor);
  ForEachMatch(f.pages, q, [](Armor& a) { a.value = 2; }, f.armor);
}

TEST(ScheduleDeathTest, StructuralChangeInANonExclusiveSystemAborts) {
  Fixture f;
  Schedule schedule(f.manager, f.pages);
  schedule.Add(System("strip", [&](SystemContext&) { (void)f.pages.Remove(f.entity, f.armor); })
                   .Writes(f.armor));
  EXPECT_DEATH((void)schedule.Run(), "EntityPages::Remove inside a walk of the store");
}

}  // namespace
}  // namespace strata
