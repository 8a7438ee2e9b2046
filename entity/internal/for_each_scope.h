// ForEachScope: marks a store's ForEach pass in the store's `iterating` flag for the
// length of a scope, so that the store's mutators can refuse to run inside the pass
// (STRATA_CHECK). At the end of the scope the flag gets back its value from before, so
// a nested pass leaves the outer one marked, and a callback that throws leaves the
// store usable.
//
//   void ForEach(F&& fn) {
//     const entity_internal::ForEachScope scope(iterating_);
//     ...
//   }
#ifndef STRATA_ENTITY_INTERNAL_FOR_EACH_SCOPE_H_
#define STRATA_ENTITY_INTERNAL_FOR_EACH_SCOPE_H_

namespace strata::entity_internal {

class ForEachScope {
 public:
  explicit ForEachScope(bool& iterating) : iterating_(iterating), outer_(iterating) {
    iterating = true;
  }
  ~ForEachScope() { iterating_ = outer_; }

  ForEachScope(const ForEachScope&) = delete;
  ForEachScope& operator=(const ForEachScope&) = delete;

 private:
  bool& iterating_;
  const bool outer_;
};

}  // namespace strata::entity_internal

#endif  // STRATA_ENTITY_INTERNAL_FOR_EACH_SCOPE_H_
