// FlatDram: the reference interpreter's DRAM, host byte ranges keyed by device VA.
#include <iterator>
#include <string>

#include "npu/ref/interp.h"

namespace npu::ref {

Expected<void> FlatDram::map(uint64_t va, std::span<std::byte> mem) {
  if (mem.empty()) return make_error(EINVAL, "dram map: empty range at va " + std::to_string(va));
  const uint64_t size = mem.size();
  const uint64_t last = va + (size - 1);
  if (last < va)
    return make_error(EINVAL, "dram map: range at va " + std::to_string(va) + " wraps around");
  // The first mapping starting after va, and the one before it.
  auto next = ranges_.upper_bound(va);
  if (next != ranges_.end() && next->first <= last) {
    return make_error(EINVAL, "dram map: range at va " + std::to_string(va) + " overlaps va " +
                                  std::to_string(next->first));
  }
  if (next != ranges_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + (prev->second.size() - 1) >= va) {
      return make_error(EINVAL, "dram map: range at va " + std::to_string(va) + " overlaps va " +
                                    std::to_string(prev->first));
    }
  }
  ranges_.emplace(va, mem);
  return ok();
}

bool FlatDram::unmap(uint64_t va) {
  return ranges_.erase(va) != 0;
}

Expected<std::span<std::byte>> FlatDram::lookup(uint64_t va, uint64_t size) const {
  auto fail = [&] {
    return make_error(EFAULT, "dram: range [" + std::to_string(va) + ", +" + std::to_string(size) +
                                  ") is not mapped");
  };
  auto next = ranges_.upper_bound(va);
  if (next == ranges_.begin()) return fail();
  const auto& [start, mem] = *std::prev(next);
  const uint64_t offset = va - start;  // va >= start
  if (offset >= mem.size() || size > mem.size() - offset) return fail();
  return mem.subspan(offset, size);
}
}  // namespace npu::ref
