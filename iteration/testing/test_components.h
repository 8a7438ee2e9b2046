// The component types of the iteration article's benchmark, shared by the iteration
// tests and filter_benchmark: Position{x,y,z}, Velocity{x,y,z} and the empty tag Frozen;
// and MovingWorld, a store with the three registered and n live entities.
//
//   testing::MovingWorld world(100);
//   world.pages.Add(world.entities[0], world.pos, testing::Position{1, 2, 3});
#ifndef STRATA_ITERATION_TESTING_TEST_COMPONENTS_H_
#define STRATA_ITERATION_TESTING_TEST_COMPONENTS_H_

#include <cstddef>
#include <vector>

#include "absl/types/span.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "iteration/entity_pages.h"

namespace strata::testing {

struct Position {
  float x, y, z;
};

struct Velocity {
  float x, y, z;
};

// Frozen: a tag; EntityPages stores no data for empty types.
struct Frozen {};

// MovingWorld: an entity manager, a page store on it with Position, Velocity and Frozen
// registered (in that order), and `n` live entities that have no components yet.
struct MovingWorld {
  EntityManager manager;
  EntityPages pages{manager};
  Component<Position> pos;
  Component<Velocity> vel;
  Component<Frozen> frozen;
  std::vector<Entity> entities;

  explicit MovingWorld(size_t n) : entities(n) {
    // value(): registering three fresh names in an empty store cannot fail.
    pos = pages.RegisterComponent<Position>("Position").value();
    vel = pages.RegisterComponent<Velocity>("Velocity").value();
    frozen = pages.RegisterComponent<Frozen>("Frozen").value();
    manager.CreateBatch(absl::MakeSpan(entities));
  }
};

}  // namespace strata::testing

#endif  // STRATA_ITERATION_TESTING_TEST_COMPONENTS_H_
