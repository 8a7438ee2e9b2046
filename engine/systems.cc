// The demo's systems.
#include "engine/systems.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <optional>
#include <random>

#include "base/matrix.h"
#include "base/status_macros.h"
#include "engine/sample_components.h"
#include "iteration/entity_pages.h"
#include "iteration/filter.h"
#include "iteration/parallel_query.h"
#include "transform/transform_component.h"

namespace strata {
namespace {

static_assert(sizeof(SpriteVertex) == sizeof(Sprite) &&
                  offsetof(SpriteVertex, position) == offsetof(Sprite, position) &&
                  offsetof(SpriteVertex, size) == offsetof(Sprite, size) &&
                  offsetof(SpriteVertex, color) == offsetof(Sprite, color),
              "RenderSprites copies a Sprite into a SpriteVertex as bytes");
static_assert(sizeof(PuffVertex) == sizeof(Puff) && offsetof(PuffVertex, size) == offsetof(Puff, size) &&
                  offsetof(PuffVertex, alpha) == offsetof(Puff, alpha),
              "RenderSmoke copies a Puff into a PuffVertex as bytes");

struct EmitterPlace {
  uint32_t entity_index;
  Vector3 position;
  SparkEmitter emitter;
};

// The world positions of every spark emitter: its transform's world translation, or
// its sprite's position when it has no transform, or the origin. In entity index
// order, so that which emitter a spark comes from does not depend on where a Compact
// put the emitters.
std::vector<EmitterPlace> FindEmitters(DemoWorld& world) {
  std::vector<EmitterPlace> places;
  Filter filter;
  filter.Include(world.emitters().component());
  const TransformComponent& transforms = world.transforms();
  ForEachMatch(
      world.pages(), filter,
      [&](Entity e, const SparkEmitter& emitter) {
        Vector3 position;
        const TransformHandle t = transforms.Lookup(e);
        if (t.is_valid()) {
          position = transforms.World(t).translation();
        } else if (const Sprite* s =
                       std::as_const(world.pages()).TryGet(e, world.sprites().component())) {
          position = s->position;
        }
        places.push_back(EmitterPlace{e.index(), position, emitter});
      },
      world.emitters().component());
  std::sort(places.begin(), places.end(), [](const EmitterPlace& a, const EmitterPlace& b) {
    return a.entity_index < b.entity_index;
  });
  if (places.empty()) places.push_back(EmitterPlace{0, Vector3{}, SparkEmitter{}});
  return places;
}

Filter SparkFilter(const DemoWorld& world) {
  Filter filter;
  filter.Include(world.sparks().component()).Include(world.sprites().component());
  return filter;
}

}  // namespace

absl::Status EmitSparks(DemoWorld& world, uint32_t count, uint64_t seed,
                        std::vector<Entity>* created) {
  created->assign(count, Entity());
  if (count == 0) return absl::OkStatus();
  const std::vector<EmitterPlace> places = FindEmitters(world);
  world.entities().CreateBatch(absl::MakeSpan(*created));
  ComponentBundle bundle;
  bundle.Set(world.sprites().component(), Sprite{}).Set(world.sparks().component(), Spark{});
  STRATA_RETURN_IF_ERROR(world.pages().CreateFromBundle(*created, bundle));
  std::mt19937 rng(static_cast<uint32_t>(seed * 0x9E3779B9u + 1));
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_real_distribution<float> jitter(0.8f, 1.2f);
  EntityPages& pages = world.pages();
  const Component<Sprite> sprite_c = world.sprites().component();
  const Component<Spark> spark_c = world.sparks().component();
  for (uint32_t i = 0; i < count; ++i) {
    const EmitterPlace& place = places[i % places.size()];
    const SparkEmitter& em = place.emitter;
    Sprite* sprite = pages.TryGet((*created)[i], sprite_c);
    Spark* spark = pages.TryGet((*created)[i], spark_c);
    sprite->position.x = place.position.x;
    sprite->position.y = place.position.y;
    sprite->position.z = place.position.z;
    sprite->size = 0.1f;
    sprite->color = em.color;
    const float speed = em.speed * jitter(rng);
    spark->velocity.x = unit(rng) * em.spread * speed;
    spark->velocity.y = speed;
    spark->velocity.z = unit(rng) * em.spread * speed;
    spark->lifetime = spark->max_lifetime = std::max(em.lifetime * jitter(rng), 1e-3f);
  }
  return absl::OkStatus();
}

void MoveSparks(DemoWorld& world, float dt, bool parallel) {
  const Filter filter = SparkFilter(world);
  const float dv = world.world().ReadResource<SparkRules>().gravity * dt;
  auto move = [dt, dv](Spark& spark, Sprite& sprite) {
    spark.velocity.y -= dv;
    sprite.position.x += spark.velocity.x * dt;
    sprite.position.y += spark.velocity.y * dt;
    sprite.position.z += spark.velocity.z * dt;
  };
  if (parallel) {
    ParallelForEachMatch(world.pages(), filter, move, world.sparks().component(),
                         world.sprites().component());
  } else {
    ForEachMatch(world.pages(), filter, move, world.sparks().component(),
                 world.sprites().component());
  }
}

size_t FadeSparks(DemoWorld& world, float dt, bool parallel, ParallelCommands* commands) {
  const Filter filter = SparkFilter(world);
  const size_t before = commands->size();
  auto fade = [dt](CommandBuffer& out, Entity e, Spark& spark, Sprite& sprite) {
    spark.lifetime -= dt;
    sprite.color.w = spark.lifetime > 0.0f ? spark.lifetime / spark.max_lifetime : 0.0f;
    if (spark.lifetime <= 0.0f) out.Destroy(e);
  };
  if (parallel) {
    // Each page range records into its own buffer; playback goes in page order, so
    // the destroys (and the handles they free) are the serial variant's.
    ParallelForEachMatchWithCommands(world.pages(), filter, *commands, fade,
                                     world.sparks().component(), world.sprites().component());
  } else {
    CommandBuffer& out = commands->Buffer(0);
    ForEachMatch(
        world.pages(), filter,
        [&](Entity e, Spark& spark, Sprite& sprite) { fade(out, e, spark, sprite); },
        world.sparks().component(), world.sprites().component());
  }
  return commands->size() - before;
}

absl::StatusOr<CommandBuffer::Result> PlayCommands(DemoWorld& world, ParallelCommands* commands) {
  // Through the World: its observers run after the playback.
  absl::StatusOr<CommandBuffer::Result> result = world.world().Playback(*commands);
  world.pages().ReleaseEmptyPages();
  return result;
}

namespace {

size_t SyncSpritesMatching(DemoWorld& world, const Filter& filter) {
  const TransformComponent& transforms = world.transforms();
  size_t synced = 0;
  ForEachMatch(
      world.pages(), filter,
      [&](Entity e, Sprite& sprite) {
        const TransformHandle t = transforms.Lookup(e);
        if (!t.is_valid()) return;
        const Vector3 p = transforms.World(t).translation();
        sprite.position.x = p.x;
        sprite.position.y = p.y;
        sprite.position.z = p.z;
        ++synced;
      },
      world.sprites().component());
  return synced;
}

}  // namespace

size_t SyncSprites(DemoWorld& world) {
  Filter filter;
  filter.Include(world.sprites().component()).Exclude(world.sparks().component());
  return SyncSpritesMatching(world, filter);
}

size_t SyncChangedSprites(DemoWorld& world, uint32_t since) {
  Filter filter;
  filter.Include(world.sprites().component())
      .Exclude(world.sparks().component())
      .Changed(world.world().has_transform(), since);
  return SyncSpritesMatching(world, filter);
}

size_t RenderSprites(DemoWorld& world, std::vector<SpriteVertex>* out) {
  Filter filter;
  filter.Include(world.sprites().component());
  // Sized once to the number of sprites (a SIMD count), then written by index: the
  // walk's body stays a few stores, with no growth check per sprite.
  out->resize(CountMatches(world.pages(), filter));
  SpriteVertex* next = out->data();
  constexpr float kMinAlpha = 1.0f / 255.0f;
  ForEachMatch(
      world.pages(), filter,
      [&next](const Sprite& s) {
        // NOTE: a vertex is laid out as a Sprite; a fixed-size memcpy is two 16-byte
        // moves (std::copy of 3 and 4 floats compiled to memmove calls: 14% of a frame).
        std::memcpy(next, &s, sizeof(SpriteVertex));
        // Invisible sprites are written and then overwritten by the next one.
        next += (s.color.w >= kMinAlpha && s.size > 0.0f) ? 1 : 0;
      },
      world.sprites().component());
  out->resize(static_cast<size_t>(next - out->data()));
  return out->size();
}

absl::StatusOr<std::vector<Entity>> SpawnSmoke(DemoWorld& world, uint32_t count, uint64_t seed) {
  std::vector<Entity> created(count);
  if (count == 0) return created;
  const std::vector<EmitterPlace> places = FindEmitters(world);
  world.entities().CreateBatch(absl::MakeSpan(created));
  ComponentBundle bundle;
  bundle.Set(world.smoke().component(), Smoke{}).Set(world.puffs().component(), Puff{});
  STRATA_RETURN_IF_ERROR(world.pages().CreateFromBundle(created, bundle));
  std::mt19937 rng(static_cast<uint32_t>(seed * 0x85EBCA6Bu + 7));
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_real_distribution<float> share(0.0f, 1.0f);
  EntityPages& pages = world.pages();
  for (uint32_t i = 0; i < count; ++i) {
    Smoke* smoke = pages.TryGet(created[i], world.smoke().component());
    Puff* puff = pages.TryGet(created[i], world.puffs().component());
    smoke->origin = places[i % places.size()].position;
    smoke->origin.y += 1.0f;  // the chimney's top
    smoke->velocity = Vector3{0.15f * unit(rng), 0.6f + 0.3f * share(rng), 0.15f * unit(rng)};
    smoke->lifetime = 3.0f + 2.0f * share(rng);
    smoke->age = smoke->lifetime * share(rng);
    puff->position.x = smoke->origin.x + smoke->velocity.x * smoke->age;
    puff->position.y = smoke->origin.y + smoke->velocity.y * smoke->age;
    puff->position.z = smoke->origin.z + smoke->velocity.z * smoke->age;
  }
  return created;
}

void DriftSmoke(DemoWorld& world, float dt, float seconds, bool parallel) {
  Filter filter;
  filter.Include(world.smoke().component()).Include(world.puffs().component());
  const float wind_x = 0.4f * std::cos(0.1f * seconds);
  const float wind_z = 0.4f * std::sin(0.1f * seconds);
  auto drift = [dt, wind_x, wind_z](Smoke& s, Puff& p) {
    s.age += dt;
    if (s.age >= s.lifetime) {
      s.age -= s.lifetime;
      p.position.x = s.origin.x;
      p.position.y = s.origin.y;
      p.position.z = s.origin.z;
    } else {
      p.position.x += (s.velocity.x + wind_x) * dt;
      p.position.y += s.velocity.y * dt;
      p.position.z += (s.velocity.z + wind_z) * dt;
    }
    const float t = s.lifetime > 0.0f ? s.age / s.lifetime : 1.0f;
    p.size = 0.2f + 1.5f * t;
    p.alpha = 1.0f - t;
  };
  if (parallel) {
    ParallelForEachMatch(world.pages(), filter, drift, world.smoke().component(),
                         world.puffs().component());
  } else {
    ForEachMatch(world.pages(), filter, drift, world.smoke().component(), world.puffs().component());
  }
}

size_t RenderSmoke(DemoWorld& world, std::vector<PuffVertex>* out) {
  Filter filter;
  filter.Include(world.puffs().component());
  out->resize(CountMatches(world.pages(), filter));
  PuffVertex* next = out->data();
  constexpr float kMinAlpha = 1.0f / 255.0f;
  ForEachMatch(
      world.pages(), filter,
      [&next](const Puff& p) {
        std::memcpy(next, &p, sizeof(PuffVertex));
        next += (p.alpha >= kMinAlpha && p.size > 0.0f) ? 1 : 0;
      },
      world.puffs().component());
  out->resize(static_cast<size_t>(next - out->data()));
  return out->size();
}

struct TransformAnimator::State {
  std::vector<TransformHandle> roots;
  std::vector<Matrix4x4> base;
  std::vector<float> phase;
  std::vector<Matrix4x4> locals;  // scratch for SetLocalBatch
  // The roots checked once (the first Step), so each frame's SetLocalBatch skips the
  // per-handle pass while the hierarchy's layout is unchanged.
  std::optional<TransformComponent::PreparedBatch> batch;
};

TransformAnimator::TransformAnimator(DemoWorld& world, absl::Span<const Entity> entities)
    : state_(std::make_unique<State>()) {
  const TransformComponent& transforms = world.transforms();
  for (Entity e : entities) {
    const TransformHandle t = transforms.Lookup(e);
    if (!t.is_valid() || transforms.Parent(t).is_valid() ||
        !transforms.FirstChild(t).is_valid()) {
      continue;
    }
    state_->roots.push_back(t);
    state_->base.push_back(transforms.Local(t));
    state_->phase.push_back(static_cast<float>(state_->roots.size()) * 0.37f);
    // Count the subtree without recursion: depth-first over first_child/next_sibling.
    TransformHandle node = t;
    while (node.is_valid()) {
      ++num_nodes_;
      TransformHandle next = transforms.FirstChild(node);
      while (!next.is_valid() && node != t) {
        next = transforms.NextSibling(node);
        if (!next.is_valid()) node = transforms.Parent(node);
      }
      node = next;
    }
  }
  state_->locals.resize(state_->roots.size());
}

TransformAnimator::~TransformAnimator() = default;

absl::Status TransformAnimator::Rest(DemoWorld& world) {
  State& s = *state_;
  if (!s.batch.has_value()) {
    STRATA_ASSIGN_OR_RETURN(s.batch, world.transforms().PrepareBatch(s.roots));
  }
  STRATA_RETURN_IF_ERROR(world.transforms().SetLocalBatch(*s.batch, s.base));
  world.UpdateTransforms();
  return absl::OkStatus();
}

size_t TransformAnimator::num_roots() const { return state_->roots.size(); }

absl::Status TransformAnimator::Step(DemoWorld& world, float seconds) {
  State& s = *state_;
  for (size_t i = 0; i < s.roots.size(); ++i) {
    const float a = seconds * 0.5f + s.phase[i];
    // A slow turn about y and a small bob: the whole subtree follows.
    const Quaternion turn = Quaternion::FromAxisAngle(Vector3{0, 1, 0}, 0.1f * std::sin(a));
    const Matrix4x4 motion =
        Matrix4x4::Compose(Vector3{0.0f, 0.05f * std::sin(2.0f * a), 0.0f}, turn,
                           Vector3{1.0f, 1.0f, 1.0f});
    s.locals[i] = motion * s.base[i];
  }
  if (!s.batch.has_value()) {
    STRATA_ASSIGN_OR_RETURN(s.batch, world.transforms().PrepareBatch(s.roots));
  }
  STRATA_RETURN_IF_ERROR(world.transforms().SetLocalBatch(*s.batch, s.locals));
  world.UpdateTransforms();
  return absl::OkStatus();
}

}  // namespace strata
