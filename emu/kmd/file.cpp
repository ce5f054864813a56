#include "file.h"

#include <algorithm>
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
  bo_bytes_ += bo->size;
  bos_.emplace(handle, bo);
  mmap_offsets_.emplace(bo->mmap_offset, handle);
  return bo;
}

Expected<std::shared_ptr<Bo>> File::create_bo_locked(uint64_t size, uint32_t flags,
                                                     uint64_t fixed_va) {
  const uint64_t rounded = round_up(size, kPageSize);
  NPU_TRY(check_bo_quota_locked(rounded, "bo_create"));
  auto va = place_locked(rounded, flags, fixed_va, "bo_create");
  if (!va) return va.error();
  auto mem = BoMemory::create(rounded, policy_.memory);
  if (!mem) {
    va_.free(*va);
    if (mem.error().code == EDQUOT) return make_error(EDQUOT, "bo_create: " + mem.error().message);
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
  NPU_TRY(check_bo_quota_locked(mem->size(), "bo_import"));
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
  bo_bytes_ -= it->second->size;
  mmap_offsets_.erase(it->second->mmap_offset);
  bos_.erase(it);
  return true;
}

Expected<std::shared_ptr<Context>> File::create_context_locked(uint32_t priority) {
  if (priority == DRM_NPU_PRIORITY_REALTIME && !policy_.realtime) {
    return make_error(EPERM,
                      "ctx_create: priority realtime needs CAP_SYS_NICE (or the driver's "
                      "allow-list); the process that opened this file has neither");
  }
  const uint32_t limit = std::min<uint32_t>(policy_.limits.contexts, kMaxContexts);
  if (contexts_.size() >= limit) {
    return make_error(EDQUOT, quota_message(fmt::format("context {}", contexts_.size() + 1),
                                            "the file's context limit", limit));
  }
  uint32_t id = next_ctx_++;
  while (id == 0 || contexts_.count(id) != 0) id = next_ctx_++;
  auto ctx = std::make_shared<Context>(id, priority, this, jobs_);
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
  u.bo_bytes = bo_bytes_;
  u.jobs_in_flight = jobs_->in_flight.load(std::memory_order_relaxed);
  return u;
}

Expected<void> File::check_bo_quota_locked(uint64_t bytes, const char* who) const {
  const uint64_t limit = policy_.limits.bo_memory;
  if (bytes <= limit && bo_bytes_ <= limit - bytes) return ok();
  return make_error(
      EDQUOT,
      fmt::format("{}: {}", who,
                  quota_message(fmt::format("{} bytes on top of the file's {}", bytes, bo_bytes_),
                                "the file's bo memory limit", limit)));
}

void File::release_bos_locked() {
  bos_.clear();
  bo_bytes_ = 0;
  mmap_offsets_.clear();
  va_ = VaAllocator();
}

}  // namespace npu::emu::kmd
