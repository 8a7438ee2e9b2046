// A Schedule (schedule/schedule.h) over a World: sync points play commands back through
// World::Playback, so the World's observers and entity index hear of them, and systems
// whose access comes from a page query's callback, as World::Each's components do.
//
//   std::unique_ptr<Schedule> frame = MakeSchedule(world, {.threads = 0});
//   frame->Add(EachSystem(world, "move", [dt](Position& p, const Velocity& v) {
//     p.x += v.x * dt;                      // writes position, reads velocity: declared
//   }));
//   frame->Add(EachSystem(world, "expire", [](CommandBuffer& out, Entity e, Age& a) {
//     if (++a.frames > 100) out.Destroy(e);
//   }).Commands(world.Pages<Position>().component(), world.Pages<Age>().component()));
//   STRATA_RETURN_IF_ERROR(frame->Run());
//
// WorldResource<T>(world): the key by which a system declares a world resource
// (World::Resource<T>, a type declared with ComponentStorage::kResource) read or
// written; two systems conflict on it as on a component, and World::Resource<T> and its
// siblings check the running system's declaration:
//
//   frame->Add(System("clock", [&](SystemContext&) { world.Resource<FrameClock>().frame++; })
//                  .Writes(WorldResource<FrameClock>(world)));
//
// EachSystem(world, name, [With<...>, Without<...>,] fn): a system that walks the
// entities `fn` matches, as World::Each, declaring `T&` and `T*` parameters written and
// `const T&` and `const T*` read. A first parameter `CommandBuffer&` gives the walk the
// system's command buffers (declare what they change with Commands). When the schedule
// has workers, the walk is split across them (ParallelForEachMatch); `fn` must then be
// safe to call concurrently for different entities.
#ifndef STRATA_ENGINE_WORLD_SCHEDULE_H_
#define STRATA_ENGINE_WORLD_SCHEDULE_H_

#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "engine/world.h"
#include "iteration/command_buffer.h"
#include "iteration/filter.h"
#include "iteration/parallel_query.h"
#include "schedule/schedule.h"

namespace strata {

// MakeSchedule: a Schedule over `world`'s page store whose sync points call
// World::Playback and whose frames end with World::Flush. `world` must outlive it.
std::unique_ptr<Schedule> MakeSchedule(World& world, ScheduleOptions options = {});

template <typename T>
Resource WorldResource(const World& world) {
  return Resource(std::string(world.ResourceName<T>()));
}

namespace world_schedule_internal {

template <typename P>
using Bare = std::remove_cv_t<std::remove_pointer_t<std::remove_reference_t<P>>>;

template <typename P>
inline constexpr bool kIsCommands = std::is_same_v<Bare<P>, CommandBuffer>;
template <typename P>
inline constexpr bool kIsEntity = std::is_same_v<Bare<P>, Entity>;

// Declares one parameter's component on `system` and returns what the walk takes.
template <typename P>
auto Declare(const World& world, System& system) {
  using T = Bare<P>;
  static_assert(!std::is_empty_v<T>, "EachSystem: a tag has no data to hand over: require it with With<Tag>()");
  const Component<T> c = world.Pages<T>().component();
  if constexpr (iteration_internal::kWritesParam<P>) {
    system.Writes(c);
  } else {
    system.Reads(c);
  }
  if constexpr (std::is_pointer_v<P>) {
    return Optional(c);
  } else {
    return c;
  }
}

template <typename T>
void IncludeIfRequired(Filter& filter, Component<T> c) {
  filter.Include(c);
}
template <typename T>
void IncludeIfRequired(Filter&, OptionalComponent<T>) {}

}  // namespace world_schedule_internal

template <typename... Required, typename... Excluded, typename Fn>
System EachSystem(const World& world, std::string name, With<Required...>, Without<Excluded...>,
                  Fn fn) {
  using Params = typename iteration_internal::CallbackParams<Fn>::type;
  static_assert(iteration_internal::CallbackParams<Fn>::kKnown,
                "EachSystem: the callback's parameters must be known (no auto parameters)");
  System system(name, [](SystemContext&) {});
  Filter filter;
  (filter.Include(world.Pages<Required>().component()), ...);
  (filter.Exclude(world.Pages<Excluded>().component()), ...);
  // Split the parameters: [CommandBuffer&] [Entity] components...
  constexpr size_t kSize = std::tuple_size_v<Params>;
  constexpr bool kCommands = kSize > 0 && world_schedule_internal::kIsCommands<std::tuple_element_t<0, Params>>;
  constexpr size_t kAfterCommands = kCommands ? 1 : 0;
  constexpr bool kEntity =
      kSize > kAfterCommands &&
      world_schedule_internal::kIsEntity<std::tuple_element_t<kAfterCommands, Params>>;
  constexpr size_t kFirst = kAfterCommands + (kEntity ? 1 : 0);
  auto components = [&]<size_t... I>(std::index_sequence<I...>) {
    return std::make_tuple(
        world_schedule_internal::Declare<std::tuple_element_t<kFirst + I, Params>>(world, system)...);
  }(std::make_index_sequence<kSize - kFirst>());
  std::apply([&](auto... c) { (world_schedule_internal::IncludeIfRequired(filter, c), ...); },
             components);
  const EntityPages* pages = &world.pages();
  system.set_function([pages, filter = std::move(filter), fn = std::move(fn),
                components](SystemContext& ctx) mutable -> absl::Status {
    std::apply(
        [&](auto... c) {
          if constexpr (kCommands) {
            if (ctx.parallel()) {
              ParallelForEachMatchWithCommands(*pages, filter, ctx.commands(), fn, c...);
            } else {
              CommandBuffer& out = ctx.command_buffer();
              ForEachMatch(*pages, filter, iteration_internal::WithBuffer<Fn>{&fn, &out}, c...);
            }
          } else if (ctx.parallel()) {
            ParallelForEachMatch(*pages, filter, fn, c...);
          } else {
            ForEachMatch(*pages, filter, fn, c...);
          }
        },
        components);
    return absl::OkStatus();
  });
  return system;
}

template <typename Fn>
System EachSystem(const World& world, std::string name, Fn fn) {
  return EachSystem(world, std::move(name), With<>(), Without<>(), std::move(fn));
}
template <typename... Required, typename Fn>
System EachSystem(const World& world, std::string name, With<Required...> with, Fn fn) {
  return EachSystem(world, std::move(name), with, Without<>(), std::move(fn));
}
template <typename... Excluded, typename Fn>
System EachSystem(const World& world, std::string name, Without<Excluded...> without, Fn fn) {
  return EachSystem(world, std::move(name), With<>(), without, std::move(fn));
}

}  // namespace strata

#endif  // STRATA_ENGINE_WORLD_SCHEDULE_H_
