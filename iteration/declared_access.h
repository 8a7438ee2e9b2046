// DeclaredAccess: the page components a running system declared it reads and writes,
// checked by every walk (ForEachMatch and its forms) that runs on the system's thread.
//
//   DeclaredAccess access(pages, "move");
//   access.AllowWrite(spark.id);
//   access.AllowRead(sprite.id);
//   {
//     const DeclaredAccess::Scope scope(access);   // this thread runs "move" now
//     ForEachMatch(pages, f, [](Spark& s, const Sprite&) {...}, spark, sprite);  // fine
//     ForEachMatch(pages, f, [](Sprite&) {...}, sprite);  // aborts: sprite not writable
//   }
//
// A scheduler (schedule/schedule.h) opens a Scope around each system it runs. A walk
// over `pages` inside it checks, once per walk and in every build mode, that each
// component its callback takes is declared: readable for `const T&` / `const T*`,
// writable for `T&` / `T*` (a generic callback counts as writing), and aborts with a
// message naming the system and the component otherwise. Cost: one thread-local load
// per walk when no scope is open; a bit test per listed component inside one.
//
// World resources (engine/world.h: World::Resource<T>) are checked the same way, by
// name: AllowResourceRead / AllowResourceWrite, CheckResource.
//
// Not checked: TryGet and the stores' own accessors (random access is a load per call;
// a check there would cost every access), and walks over another store. Scopes nest
// on a thread (a worker that runs another system while it waits inside a parallel walk
// restores the outer one after it).
#ifndef STRATA_ITERATION_DECLARED_ACCESS_H_
#define STRATA_ITERATION_DECLARED_ACCESS_H_

#include <bitset>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

#include "iteration/components.h"

namespace strata {

class EntityPages;

class DeclaredAccess {
 public:
  static constexpr size_t kMaxTypes = 257;  // EntityPages::kMaxComponentTypes + 1

  DeclaredAccess(const EntityPages& pages, std::string system)
      : pages_(&pages), system_(std::move(system)) {}

  void AllowRead(ComponentId c) {
    if (c < kMaxTypes) readable_.set(c);
  }
  void AllowWrite(ComponentId c) {
    if (c < kMaxTypes) {
      readable_.set(c);
      writable_.set(c);
    }
  }
  // AllowResourceRead / AllowResourceWrite: the world resource named `name` (its type
  // name) may be read / read and written.
  void AllowResourceRead(std::string name) { resources_.emplace_back(std::move(name), false); }
  void AllowResourceWrite(std::string name) { resources_.emplace_back(std::move(name), true); }
  bool CanReadResource(absl::string_view name) const {
    for (const std::pair<std::string, bool>& entry : resources_) {
      if (entry.first == name) return true;
    }
    return false;
  }
  bool CanWriteResource(absl::string_view name) const {
    for (const std::pair<std::string, bool>& entry : resources_) {
      if (entry.second && entry.first == name) return true;
    }
    return false;
  }
  bool CanRead(ComponentId c) const { return c < kMaxTypes && readable_.test(c); }
  bool CanWrite(ComponentId c) const { return c < kMaxTypes && writable_.test(c); }
  const EntityPages& pages() const { return *pages_; }
  const std::string& system() const { return system_; }

  // Current: the access of the system running on this thread, or null.
  static const DeclaredAccess* Current() { return current_; }

  // Scope: makes `access` this thread's current access for its lifetime.
  class Scope {
   public:
    explicit Scope(const DeclaredAccess& access) : previous_(current_) { current_ = &access; }
    // Scope(pointer): `access` may be null (no system: nothing is checked), so a task
    // a worker runs for a system's parallel walk carries that system's access, not
    // whatever the worker ran before.
    explicit Scope(const DeclaredAccess* access) : previous_(current_) { current_ = access; }
    ~Scope() { current_ = previous_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    const DeclaredAccess* previous_;
  };

  // Check: aborts with a message unless `c` is declared readable (or, with `write`,
  // writable). `what` names the caller ("ForEachMatch").
  void Check(ComponentId c, bool write, const char* what) const {
    if (!(write ? CanWrite(c) : CanRead(c))) [[unlikely]] Violation(c, write, what);
  }
  // CheckResource: the same for the world resource named `name`.
  void CheckResource(absl::string_view name, bool write, const char* what) const {
    if (!(write ? CanWriteResource(name) : CanReadResource(name))) [[unlikely]] {
      ResourceViolation(name, write, what);
    }
  }

 private:
  [[noreturn]] void Violation(ComponentId c, bool write, const char* what) const;
  [[noreturn]] void ResourceViolation(absl::string_view name, bool write, const char* what) const;

  static inline thread_local const DeclaredAccess* current_ = nullptr;
  const EntityPages* pages_;
  std::string system_;
  std::bitset<kMaxTypes> readable_;
  std::bitset<kMaxTypes> writable_;
  // (resource name, writable): few per system, searched linearly.
  std::vector<std::pair<std::string, bool>> resources_;
};

}  // namespace strata

#endif  // STRATA_ITERATION_DECLARED_ACCESS_H_
