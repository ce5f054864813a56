// The per-thread free lists of Scratch<T> (scratch.h).
#include "scratch.h"

#include <algorithm>
#include <vector>

namespace npu::emu::kern::detail {
namespace {

struct FreeList {
  std::vector<ScratchBlock> blocks;
  size_t bytes = 0;  // sum of blocks[i].size
};

FreeList& free_list() {
  thread_local FreeList list;
  return list;
}

}  // namespace

ScratchBlock take_scratch(size_t bytes) {
  bytes = std::max<size_t>(bytes, 64);
  FreeList& fl = free_list();
  // The smallest free block that fits; of equal ones the last given back (warm in cache).
  auto best = fl.blocks.end();
  for (auto it = fl.blocks.begin(); it != fl.blocks.end(); ++it)
    if (it->size >= bytes && (best == fl.blocks.end() || it->size <= best->size)) best = it;
  if (best != fl.blocks.end()) {
    ScratchBlock b = std::move(*best);
    fl.blocks.erase(best);
    fl.bytes -= b.size;
    return b;
  }
  // None fits: a new block, and the largest free one (too small) goes, so the list does not
  // collect blocks that no longer fit anything.
  if (!fl.blocks.empty()) {
    auto largest = std::max_element(fl.blocks.begin(), fl.blocks.end(),
                                    [](const auto& a, const auto& b) { return a.size < b.size; });
    fl.bytes -= largest->size;
    fl.blocks.erase(largest);
  }
  return {std::make_unique_for_overwrite<std::byte[]>(bytes), bytes};
}

void give_scratch(ScratchBlock block) {
  if (!block.data || block.size > kScratchMaxBlockBytes) return;
  FreeList& fl = free_list();
  if (fl.bytes + block.size > kScratchKeptBytes) return;
  fl.bytes += block.size;
  fl.blocks.push_back(std::move(block));
}

}  // namespace npu::emu::kern::detail

namespace npu::emu::kern {

size_t scratch_kept_bytes() {
  return detail::free_list().bytes;
}

}  // namespace npu::emu::kern
