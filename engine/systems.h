// The demo's systems: the frame of a sparks pressure test like the one "Efficient
// Entity Page Iteration" ends with. Each is a plain function over a World; the demo
// times each one per frame.
//
//   TransformAnimator animator(world, spawned);  // roots with children sway and turn
//   std::vector<Entity> created;
//   ParallelCommands commands(world.pages());
//   std::vector<SpriteVertex> vertices;
//   for (int frame = 0; frame < n; ++frame) {
//     EmitSparks(world, 2000, /*seed=*/frame, &created);     // batch create
//     MoveSparks(world, dt, threads > 1);                    // page query
//     FadeSparks(world, dt, threads > 1, &commands);         // page query, record destroys
//     PlayCommands(world, &commands);                        // one DestroyBatch
//     animator.Step(world, frame * dt);                      // SetLocalBatch, propagate
//     SyncChangedSprites(world, last_sync);                  // sprite <- moved transform
//     RenderSprites(world, &vertices);                       // gather the draw list
//   }
//
// Parallel variants split the page walk over TBB worker threads
// (iteration/parallel_query.h); the caller limits the thread count with
// tbb::global_control. Results are identical to the serial walk (tested).
#ifndef STRATA_ENGINE_SYSTEMS_H_
#define STRATA_ENGINE_SYSTEMS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "engine/sample_components.h"
#include "engine/world.h"
#include "entity/entity.h"
#include "iteration/command_buffer.h"
#include "iteration/parallel_query.h"

namespace strata {

// EmitSparks: creates `count` sparks spread round-robin over the world's spark
// emitters (or at the origin with default settings when there is none): one
// CreateBatch, one CreateFromBundle (sprite + spark), a pass writing each spark's
// start position (its emitter's world position), velocity, lifetime and colour (the
// page store's listener registers the new components in the entity index).
// Deterministic for a given world state and `seed`, wherever a Compact has put the
// entities. `created` receives the new entities. O(count + emitters log emitters).
absl::Status EmitSparks(DemoWorld& world, uint32_t count, uint64_t seed,
                        std::vector<Entity>* created);

// MoveSparks: for every entity with spark + sprite: velocity.y -= g dt, position +=
// velocity dt, g the world's SparkRules resource's gravity (read once: a system that
// calls it declares Reads(WorldResource<SparkRules>(world))). O(pages / lanes + sparks).
void MoveSparks(DemoWorld& world, float dt, bool parallel);

// FadeSparks: lifetime -= dt, alpha = lifetime / max_lifetime; records a Destroy in
// `commands` for each spark whose lifetime ran out (the walk may not destroy them
// itself). Returns how many. Serial and parallel record the same commands in the same
// playback order (page order).
size_t FadeSparks(DemoWorld& world, float dt, bool parallel, ParallelCommands* commands);

// PlayCommands: plays `commands` back through World::Playback (one DestroyBatch per run
// of destroys: every subsystem drops the entities through its destroy listener; then
// the observers run), then releases the page store's empty pages. Errors of the
// observers' flush.
absl::StatusOr<CommandBuffer::Result> PlayCommands(DemoWorld& world, ParallelCommands* commands);

// SyncSprites: every sprite whose entity has a transform (and no spark) takes the
// transform's world translation as its position. Returns how many. O(sprites).
size_t SyncSprites(DemoWorld& world);
// SyncChangedSprites: SyncSprites for the sprites whose transform changed after tick
// `since` (a Changed query on the World's transform mirror: call
// World::TrackTransformChanges once first, or nothing matches), then returns how many.
// A system calling it every frame keeps the tick it last ran at, and advances the tick
// after it, so changes later in the frame count for its next run. A sprite added to an
// entity whose transform stays still is not seen: the demo adds none.
size_t SyncChangedSprites(DemoWorld& world, uint32_t since);

// SpriteVertex: one entry of the draw list.
struct SpriteVertex {
  float position[3];
  float size;
  float color[4];
};

// RenderSprites: clears `out` and appends every visible sprite (alpha >= 1/255, size
// > 0): the draw list a renderer would upload. Returns how many.
size_t RenderSprites(DemoWorld& world, std::vector<SpriteVertex>* out);

// SpawnSmoke: `count` smoke puffs spread round-robin over the spark emitters (the
// chimneys; the origin when there is none), each with its own drift and lifetime and a
// start age spread over it, so the pool looks steady from the first frame: one
// CreateBatch, one CreateFromBundle (smoke + puff). Deterministic for a given world
// state and `seed`. The new entities, in creation order.
absl::StatusOr<std::vector<Entity>> SpawnSmoke(DemoWorld& world, uint32_t count, uint64_t seed);

// DriftSmoke: for every entity with smoke + puff: age += dt; past its lifetime a puff
// starts again at its origin, otherwise it drifts (its velocity plus a wind that turns
// slowly with `seconds`); it grows and fades with its age. The same result serial or
// parallel. O(pages / lanes + puffs).
void DriftSmoke(DemoWorld& world, float dt, float seconds, bool parallel);

// PuffVertex: one entry of the smoke's draw list (laid out as a Puff).
struct PuffVertex {
  float position[3];
  float size;
  float alpha;
};

// RenderSmoke: clears `out` and appends every visible puff (alpha >= 1/255, size > 0).
// Returns how many.
size_t RenderSmoke(DemoWorld& world, std::vector<PuffVertex>* out);

// TransformAnimator: moves the roots of the level's hierarchies each frame with one
// SetLocalBatch on a PreparedBatch (the roots are checked once, not every frame), so
// the transform component propagates to all their descendants.
class TransformAnimator {
 public:
  // TransformAnimator: animates every entity of `entities` whose transform is a root
  // with children (buildings, vehicles, trees), around its spawn-time local matrix.
  TransformAnimator(DemoWorld& world, absl::Span<const Entity> entities);
  ~TransformAnimator();

  // Step: sets every animated root's local matrix for time `seconds` (a slow turn and
  // a small sway) in one batch, then UpdateTransforms() for deferred worlds.
  absl::Status Step(DemoWorld& world, float seconds);
  // Rest: sets every animated root's local matrix back to the one it had when this
  // animator was made (before a level reload, so that a new animator starts from it).
  absl::Status Rest(DemoWorld& world);

  size_t num_roots() const;
  // num_nodes: animated roots plus all their descendants (the nodes recomputed).
  size_t num_nodes() const { return num_nodes_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  size_t num_nodes_ = 0;
};

}  // namespace strata

#endif  // STRATA_ENGINE_SYSTEMS_H_
