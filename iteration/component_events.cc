#include "iteration/component_events.h"

#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "entity/entity.h"

namespace strata {

void ComponentEvents::Subscription::Reset() {
  if (events_ != nullptr) std::exchange(events_, nullptr)->Unsubscribe(id_);
}

ComponentEvents::ComponentEvents(EntityManager& manager, EntityPages& pages)
    : manager_(&manager), pages_(&pages), next_(pages.structure_listener()), commands_(pages) {
  for (std::vector<uint32_t>& counts : counts_) counts.assign(kMaxTypes, 0);
  UpdateWantsRemoving();
  pages.set_structure_listener(this);
}

ComponentEvents::~ComponentEvents() { pages_->set_structure_listener(next_); }

ComponentEvents::Subscription ComponentEvents::On(Event event, ComponentId c, Observer observer) {
  STRATA_CHECK(c < pages_->num_component_types(),
               "ComponentEvents: the observed component is not registered in the store");
  STRATA_CHECK(observer != nullptr, "ComponentEvents: a null observer");
  const uint64_t id = next_id_++;
  subscribers_.push_back(Subscriber{id, event, c, std::move(observer), true});
  ++counts_[static_cast<size_t>(event)][c];
  UpdateWantsRemoving();
  return Subscription(this, id);
}

void ComponentEvents::Unsubscribe(uint64_t id) {
  for (size_t i = 0; i < subscribers_.size(); ++i) {
    Subscriber& s = subscribers_[i];
    if (s.id != id || !s.active) continue;
    s.active = false;
    --counts_[static_cast<size_t>(s.event)][s.component];
    // During a flush the list is being walked: the entry goes after it.
    if (!flushing_) subscribers_.erase(subscribers_.begin() + static_cast<std::ptrdiff_t>(i));
    break;
  }
  UpdateWantsRemoving();
}

size_t ComponentEvents::observers() const {
  size_t n = 0;
  for (const Subscriber& s : subscribers_) n += s.active ? 1 : 0;
  return n;
}

void ComponentEvents::UpdateWantsRemoving() {
  bool wants = next_ != nullptr && next_->wants_removing();
  for (uint32_t count : counts_[static_cast<size_t>(Event::kRemove)]) wants = wants || count != 0;
  set_wants_removing(wants);
}

size_t ComponentEvents::pending() const {
  size_t n = 0;
  for (const Batch& r : records_) n += r.count;
  return n;
}

bool ComponentEvents::Lent(absl::Span<const Entity> entities) const {
  for (const CommandBuffer* buffer : lenders_) {
    if (buffer->HoldsPlayed(entities)) return true;
  }
  return false;
}

void ComponentEvents::Record(Event event, ComponentId c, absl::Span<const Entity> entities,
                             bool with_values) {
  const size_t size = with_values ? pages_->component_size(c) : 0;
  const Entity* const lent = Lent(entities) ? entities.data() : nullptr;
  // The last batch grows when it is of the same kind and its entities continue: at the
  // end of entities_, or right after it in the same lent array.
  const Batch* last = records_.empty() ? nullptr : &records_.back();
  const bool extend = last != nullptr && last->event == event && last->component == c &&
                      (lent == nullptr ? last->lent == nullptr
                                       : last->lent != nullptr && last->lent + last->count == lent);
  if (!extend) {
    // A new batch starts its values on an aligned offset (see kValueAlignment).
    const size_t aligned = (values_.size() + kValueAlignment - 1) / kValueAlignment * kValueAlignment;
    values_.resize(aligned);
    records_.push_back(Batch{event, c, entities_.size(), 0, values_.size(), lent});
  }
  records_.back().count += entities.size();
  if (lent == nullptr) entities_.insert(entities_.end(), entities.begin(), entities.end());
  if (size == 0) return;
  size_t at = values_.size();
  values_.resize(at + entities.size() * size);
  for (Entity e : entities) {
    const void* value = static_cast<const EntityPages*>(pages_)->TryGet(e, c);
    // Present by the store's contract (OnRemoving: before the removal; OnSet: just
    // written); zeros rather than a crash if a caller's NotifySet named one without.
    if (value != nullptr) {
      std::memcpy(values_.data() + at, value, size);
    } else {
      std::memset(values_.data() + at, 0, size);
    }
    at += size;
  }
}

void ComponentEvents::OnAdded(ComponentId c, absl::Span<const Entity> entities) {
  if (Observed(Event::kAdd, c)) Record(Event::kAdd, c, entities, /*with_values=*/false);
  if (next_ != nullptr) next_->OnAdded(c, entities);
}

void ComponentEvents::OnRemoved(ComponentId c, absl::Span<const Entity> entities) {
  // Recorded by OnRemoving, with the values; here only passed on.
  if (next_ != nullptr) next_->OnRemoved(c, entities);
}

void ComponentEvents::OnRemoving(ComponentId c, absl::Span<const Entity> entities) {
  if (Observed(Event::kRemove, c)) Record(Event::kRemove, c, entities, /*with_values=*/true);
  if (next_ != nullptr && next_->wants_removing()) next_->OnRemoving(c, entities);
}

void ComponentEvents::OnSet(ComponentId c, absl::Span<const Entity> entities) {
  if (Observed(Event::kSet, c)) Record(Event::kSet, c, entities, /*with_values=*/true);
  if (next_ != nullptr) next_->OnSet(c, entities);
}

CommandBuffer::Result ComponentEvents::PlayLending(CommandBuffer& buffer) {
  lenders_.push_back(&buffer);
  const CommandBuffer::Result result = buffer.Playback(*manager_, *pages_);
  lenders_.pop_back();
  if (!buffer.lent_) {
    buffer.lent_ = true;
    lent_.push_back(&buffer);
  }
  return result;
}

void ComponentEvents::ReleaseLent() {
  for (CommandBuffer* buffer : lent_) buffer->lent_ = false;
  lent_.clear();
}

absl::StatusOr<CommandBuffer::Result> ComponentEvents::Playback(
    absl::Span<CommandBuffer> buffers) {
  STRATA_CHECK(!flushing_, "ComponentEvents::Playback called by an observer");
  CommandBuffer::Result total;
  for (CommandBuffer& buffer : buffers) {
    const CommandBuffer::Result r = PlayLending(buffer);
    total.applied += r.applied;
    total.skipped_dead += r.skipped_dead;
    total.skipped_conflict += r.skipped_conflict;
  }
  const absl::Status flushed = Flush();
  // Flush's first round delivered every batch naming `buffers` (and released them);
  // when it gave up, the last round's events may still name the observers' buffer.
  if (records_.empty()) ReleaseLent();
  if (!flushed.ok()) return flushed;
  return total;
}

absl::Status ComponentEvents::Flush() {
  STRATA_CHECK(!flushing_, "ComponentEvents::Flush called by an observer");
  flushing_ = true;
  int round = 0;
  for (; round < kMaxRounds && !records_.empty(); ++round) {
    // This round's events move aside; what the observers' commands raise is recorded
    // afresh for the next round.
    std::swap(records_, delivering_records_);
    std::swap(entities_, delivering_entities_);
    std::swap(values_, delivering_values_);
    {
      const EntityPages::WalkScope no_structural_changes(*pages_);
      for (const Batch& r : delivering_records_) {
        const absl::Span<const Entity> entities =
            r.lent != nullptr ? absl::MakeConstSpan(r.lent, r.count)
                              : absl::MakeConstSpan(delivering_entities_).subspan(r.first, r.count);
        const size_t size = r.event == Event::kAdd ? 0 : pages_->component_size(r.component);
        const absl::Span<const std::byte> values =
            absl::MakeConstSpan(delivering_values_).subspan(r.value_offset, r.count * size);
        // By index: an observer may subscribe another (appended, told from the next
        // batch on) or unsubscribe one (marked inactive).
        for (size_t i = 0; i < subscribers_.size(); ++i) {
          Subscriber& s = subscribers_[i];
          if (s.active && s.event == r.event && s.component == r.component) {
            s.observer(entities, values, commands_);
          }
        }
      }
    }
    delivering_records_.clear();
    delivering_entities_.clear();
    delivering_values_.clear();
    // Every batch that named a lent array was in this round.
    ReleaseLent();
    PlayLending(commands_);
  }
  flushing_ = false;
  std::erase_if(subscribers_, [](const Subscriber& s) { return !s.active; });
  if (!records_.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ComponentEvents::Flush: observers still raised events after ", kMaxRounds,
        " rounds (", entities_.size(), " entities' events left pending): an observer "
        "feeds itself through its commands"));
  }
  return absl::OkStatus();
}

}  // namespace strata
