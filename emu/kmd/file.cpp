#include "file.h"

#include <optional>
#include <utility>

#include <fmt/format.h>

#include "npu_accel.h"

namespace npu::emu::kmd {

Expected<uint64_t> File::place_locked(uint64_t size, uint32_t flags, uint64_t fixed_va,
                                      const char* who) {
  if (flags & DRM_NPU_BO_FIXED_VA) {
    if (fixed_va % VaAllocator::kAlign != 0 || fixed_va < VaAllocator::kBase ||
        fixed_va >= VaAllocator::kEnd || size > VaAllocator::kEnd - fixed_va) {
      return make_error(EINVAL,
                        fmt::format("{}: fixed va {:#x} (+{:#x}) misaligned or "
                                    "outside [{:#x}, {:#x})",
                                    who, fixed_va, size, VaAllocator::kBase, VaAllocator::kEnd));
    }
    if (!va_.reserve(fixed_va, size)) {
      return make_error(EEXIST, fmt::format("{}: fixed va range [{:#x}, {:#x}) overlaps a "
                                            "bo or its guard gap",
                                            who, fixed_va, fixed_va + size));
    }
    return fixed_va;
  }
  const auto va = va_.alloc(size);
  if (!va)
    return make_error(ENOMEM, fmt::format("{}: device address space of the file is full", who));
  return *va;
}

std::shared_ptr<Bo> File::add_bo_locked(std::shared_ptr<BoMemory> mem, uint32_t flags,
                                        uint64_t va) {
  // Handles count up and are not reused while the file lives; 0 is never handed out.
  uint32_t handle = next_handle_++;
  while (handle == 0 || bos_.count(handle) != 0) handle = next_handle_++;
  auto bo = std::make_shared<Bo>();
  bo->handle = handle;
  bo->flags = flags;
  bo->size = mem->size();
  bo->va = va;
  bo->mmap_offset = next_mmap_offset_;
  bo->mem = std::move(mem);
  next_mmap_offset_ += bo->size;
  bos_.emplace(handle, bo);
  mmap_offsets_.emplace(bo->mmap_offset, handle);
  return bo;
}

Expected<std::shared_ptr<Bo>> File::create_bo_locked(uint64_t size, uint32_t flags,
                                                     uint64_t fixed_va) {
  const uint64_t rounded = round_up(size, kPageSize);
  auto va = place_locked(rounded, flags, fixed_va, "bo_create");
  if (!va) return va.error();
  auto mem = BoMemory::create(rounded);
  if (!mem) {
    va_.free(*va);
    return mem.error();
  }
  return add_bo_locked(std::move(*mem), flags, *va);
}

Expected<std::shared_ptr<Bo>> File::import_bo_locked(std::shared_ptr<BoMemory> mem, uint32_t flags,
                                                     uint64_t fixed_va, bool& existed) {
  existed = false;
  for (const auto& [handle, bo] : bos_) {
    if (bo->mem == mem) {  // as PRIME: the file's existing handle
      existed = true;
      return bo;
    }
  }
  auto va = place_locked(mem->size(), flags, fixed_va, "bo_import");
  if (!va) return va.error();
  return add_bo_locked(std::move(mem), flags, *va);
}

std::shared_ptr<Bo> File::find_bo_locked(uint32_t handle) const {
  const auto it = bos_.find(handle);
  return it == bos_.end() ? nullptr : it->second;
}

std::shared_ptr<Bo> File::find_bo_by_offset_locked(uint64_t offset) const {
  const auto it = mmap_offsets_.find(offset);
  return it == mmap_offsets_.end() ? nullptr : find_bo_locked(it->second);
}

bool File::close_bo_locked(uint32_t handle) {
  const auto it = bos_.find(handle);
  if (it == bos_.end()) return false;
  // A job still using the memory holds its own reference; the VA may be reused at once
  // because every job has its own Mmu built at SUBMIT.
  va_.free(it->second->va);
  mmap_offsets_.erase(it->second->mmap_offset);
  bos_.erase(it);
  return true;
}

std::shared_ptr<Context> File::create_context_locked(uint32_t priority) {
  if (contexts_.size() >= kMaxContexts) return nullptr;
  uint32_t id = next_ctx_++;
  while (id == 0 || contexts_.count(id) != 0) id = next_ctx_++;
  auto ctx = std::make_shared<Context>(id, priority, this);
  contexts_.emplace(id, ctx);
  return ctx;
}

std::shared_ptr<Context> File::find_context_locked(uint32_t id) const {
  const auto it = contexts_.find(id);
  return it == contexts_.end() ? nullptr : it->second;
}

std::shared_ptr<Context> File::take_context_locked(uint32_t id) {
  const auto it = contexts_.find(id);
  if (it == contexts_.end()) return nullptr;
  auto ctx = std::move(it->second);
  contexts_.erase(it);
  return ctx;
}

std::vector<std::shared_ptr<Context>> File::close_locked() {
  closed = true;
  std::vector<std::shared_ptr<Context>> out;
  out.reserve(contexts_.size());
  for (auto& [id, ctx] : contexts_) out.push_back(std::move(ctx));
  contexts_.clear();
  return out;
}

File::Usage File::usage_locked() const {
  Usage u;
  u.bos = static_cast<uint32_t>(bos_.size());
  u.contexts = static_cast<uint32_t>(contexts_.size());
  for (const auto& [handle, bo] : bos_) u.bo_bytes += bo->size;
  return u;
}

void File::release_bos_locked() {
  bos_.clear();
  mmap_offsets_.clear();
  va_ = VaAllocator();
}

}  // namespace npu::emu::kmd
