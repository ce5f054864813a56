#include "va_allocator.h"

#include <iterator>

namespace npu::emu::kmd {

VaAllocator::VaAllocator(uint64_t base, uint64_t end) {
  if (end > base) free_.emplace(base, end);
}

std::optional<uint64_t> VaAllocator::alloc(uint64_t size) {
  if (size == 0 || size > kEnd) return std::nullopt;
  const uint64_t need = (size + kAlign - 1) / kAlign * kAlign + kGuard;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const uint64_t start = (it->first + kAlign - 1) / kAlign * kAlign;
    const uint64_t end = it->second;
    if (start >= end || end - start < need) continue;
    const uint64_t old_start = it->first;
    free_.erase(it);
    if (old_start < start) free_.emplace(old_start, start);
    if (start + need < end) free_.emplace(start + need, end);
    used_.emplace(start, need);
    reserved_ += need;
    return start;
  }
  return std::nullopt;
}

bool VaAllocator::reserve(uint64_t va, uint64_t size) {
  if (size == 0 || va % kAlign != 0 || va < kBase || va >= kEnd) return false;
  if (size > kEnd - va) return false;
  const uint64_t len = (size + kAlign - 1) / kAlign * kAlign;
  if (len > kEnd - va) return false;
  // The free range holding va, if any, must hold the whole reservation.
  auto it = free_.upper_bound(va);
  if (it == free_.begin()) return false;
  --it;
  const uint64_t start = it->first;
  const uint64_t end = it->second;
  if (va < start || va + len > end) return false;
  free_.erase(it);
  if (start < va) free_.emplace(start, va);
  if (va + len < end) free_.emplace(va + len, end);
  used_.emplace(va, len);
  reserved_ += len;
  return true;
}

void VaAllocator::free(uint64_t va) {
  const auto u = used_.find(va);
  if (u == used_.end()) return;
  uint64_t start = va;
  uint64_t end = va + u->second;
  reserved_ -= u->second;
  used_.erase(u);
  // Coalesce with the free neighbours.
  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == end) {
    end = next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->second == start) {
      start = prev->first;
      free_.erase(prev);
    }
  }
  free_.emplace(start, end);
}

}  // namespace npu::emu::kmd
