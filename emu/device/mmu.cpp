// Mmu: a sorted, non-overlapping list of mappings; lookups by binary search.
#include "npu/emu/mmu.h"

#include <algorithm>

namespace npu::emu {

bool Mmu::map(const Mapping& m) {
  if (m.size == 0 || m.va + m.size < m.va) return false;
  auto it = std::lower_bound(maps_.begin(), maps_.end(), m.va,
                             [](const Mapping& a, uint64_t va) { return a.va < va; });
  if (it != maps_.end() && it->va < m.va + m.size) return false;
  if (it != maps_.begin() && std::prev(it)->va + std::prev(it)->size > m.va) return false;
  maps_.insert(it, m);
  return true;
}

namespace {
const Mapping* find(const std::vector<Mapping>& maps, uint64_t va) {
  auto it = std::upper_bound(maps.begin(), maps.end(), va,
                             [](uint64_t v, const Mapping& a) { return v < a.va; });
  if (it == maps.begin()) return nullptr;
  const Mapping& m = *std::prev(it);
  return va - m.va < m.size ? &m : nullptr;
}
}  // namespace

std::byte* Mmu::translate(uint64_t va, uint64_t len, uint8_t access) const {
  const Mapping* m = find(maps_, va);
  if (!m || (m->access & access) != access) return nullptr;
  uint64_t off = va - m->va;
  if (len > m->size - off) return nullptr;
  return m->host + off;
}

uint64_t Mmu::fault_address(uint64_t va, uint64_t len, uint8_t access) const {
  const Mapping* m = find(maps_, va);
  if (!m || (m->access & access) != access) return va;
  uint64_t off = va - m->va;
  if (len > m->size - off) return m->va + m->size;  // first byte past the mapping
  return va;
}

}  // namespace npu::emu
