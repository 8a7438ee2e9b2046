#include "iteration/row_mask_pages.h"

#include <cassert>
#include <utility>

namespace strata {

RowMaskPages::Page* RowMaskPages::EnsurePage(uint32_t page) {
  if (page >= pages_.size()) pages_.resize(size_t{page} + 1);
  std::unique_ptr<Page>& slot = pages_[page];
  if (slot == nullptr) {
    slot = std::make_unique<Page>();
    ++allocated_pages_;
  }
  return slot.get();
}

void RowMaskPages::MarkDirty(uint32_t page) {
  Page* p = pages_[page].get();
  if (!p->dirty) {
    p->dirty = true;
    dirty_.push_back(page);
  }
}

bool RowMaskPages::Add(uint32_t index, uint32_t component) {
  assert(component < kMaxComponents);
  Page* page = EnsurePage(index / kPageSize);
  const uint64_t bit = uint64_t{1} << component;
  uint64_t& row = page->rows[index % kPageSize];
  if (row & bit) return false;
  row |= bit;
  page->bit_or |= bit;  // bit_and may now be too small: conservative, fixed when dirty
  MarkDirty(index / kPageSize);
  return true;
}

bool RowMaskPages::Remove(uint32_t index, uint32_t component) {
  assert(component < kMaxComponents);
  const uint32_t p = index / kPageSize;
  if (p >= pages_.size() || pages_[p] == nullptr) return false;
  Page* page = pages_[p].get();
  const uint64_t bit = uint64_t{1} << component;
  uint64_t& row = page->rows[index % kPageSize];
  if ((row & bit) == 0) return false;
  row &= ~bit;
  page->bit_and &= ~bit;  // bit_or may now be too large: conservative
  MarkDirty(p);
  return true;
}

bool RowMaskPages::Delete(uint32_t index) {
  const uint32_t p = index / kPageSize;
  if (p >= pages_.size() || pages_[p] == nullptr) return false;
  Page* page = pages_[p].get();
  uint64_t& row = page->rows[index % kPageSize];
  if (row == 0) return false;
  row = 0;
  page->bit_and = 0;
  MarkDirty(p);
  return true;
}

uint64_t RowMaskPages::Row(uint32_t index) const {
  const uint32_t p = index / kPageSize;
  if (p >= pages_.size() || pages_[p] == nullptr) return 0;
  return pages_[p]->rows[index % kPageSize];
}

void RowMaskPages::CreateFromBundle(absl::Span<const uint32_t> indices, uint64_t mask) {
  for (const uint32_t index : indices) {
    Page* page = EnsurePage(index / kPageSize);
    page->rows[index % kPageSize] |= mask;
    page->bit_or |= mask;
    MarkDirty(index / kPageSize);
  }
}

size_t RowMaskPages::UpdateDirtyPages() {
  size_t released = 0;
  for (const uint32_t p : dirty_) {
    Page* page = pages_[p].get();
    uint64_t bit_or = 0;
    uint64_t bit_and = ~uint64_t{0};
    for (uint32_t i = 0; i < kPageSize; ++i) {
      bit_or |= page->rows[i];
      bit_and &= page->rows[i];
    }
    if (bit_or == 0) {
      pages_[p].reset();
      --allocated_pages_;
      ++released;
      continue;
    }
    page->bit_or = bit_or;
    page->bit_and = bit_and;
    page->dirty = false;
  }
  dirty_.clear();
  return released;
}

std::pair<uint64_t, uint64_t> RowMaskPages::page_caches(size_t p) const {
  if (p >= pages_.size() || pages_[p] == nullptr) return {0, 0};
  return {pages_[p]->bit_or, pages_[p]->bit_and};
}

}  // namespace strata
