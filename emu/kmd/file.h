// File: the state of one open() of the device node, as the kernel's drm_file. It owns the BO
// handle table (handles from 1, never 0), the fake mmap offsets, the file's device address
// space (VaAllocator, shared by its contexts) and the context table (ids from 1). It also
// holds what the driver decided about its opener at open(): the quota limits it is held to
// (quota.h: BO memory and contexts checked here, jobs in flight by the scheduler through the
// JobAccount its contexts share) and whether it may create REALTIME contexts.
//
// Threading: `mu` guards everything here; methods named *_locked expect it held. Jobs never
// point at a File: they hold the BOs' memory and their Context directly, so a File can go
// away once its contexts are drained.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "bo.h"
#include "context.h"
#include "npu/expected.h"
#include "program_cache.h"
#include "quota.h"
#include "va_allocator.h"

namespace npu::emu::kmd {

class File {
 public:
  static constexpr uint32_t kMaxContexts = 1024;
  /// First fake mmap offset (as DRM_FILE_PAGE_OFFSET_START, past any real file offset).
  static constexpr uint64_t kMmapOffsetBase = 0x1'0000'0000ull;

  /// What the driver decided about the file's opener at open().
  struct Policy {
    Limits limits;
    std::shared_ptr<DeviceMemory> memory;  // the device's BO memory account
    bool realtime = false;                 // may create REALTIME contexts
  };

  File(int fd, Policy policy)
      : fd_(fd),
        policy_(std::move(policy)),
        jobs_(std::make_shared<JobAccount>(policy_.limits.jobs_in_flight)) {}
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  int fd() const { return fd_; }
  const Policy& policy() const { return policy_; }

  std::mutex mu;
  bool closed = false;  // set by close(); later ioctls on a stale reference fail with EBADF

  /// Creates a BO of `size` (page rounded) with `flags`: memory, VA (at `fixed_va` when
  /// flags has DRM_NPU_BO_FIXED_VA; EINVAL misaligned or outside the range, EEXIST taken),
  /// handle and mmap offset. EDQUOT past the file's or the device's BO memory limit, ENOMEM
  /// when memory or address space runs out.
  Expected<std::shared_ptr<Bo>> create_bo_locked(uint64_t size, uint32_t flags, uint64_t fixed_va);
  /// BO_IMPORT: a Bo of this file for `mem` (another file's, or this one's): the existing one
  /// when the file has one already, else a new handle and VA (FIXED_VA rules as
  /// create_bo_locked; EDQUOT past the file's BO memory limit).
  Expected<std::shared_ptr<Bo>> import_bo_locked(std::shared_ptr<BoMemory> mem, uint32_t flags,
                                                 uint64_t fixed_va, bool& existed);
  std::shared_ptr<Bo> find_bo_locked(uint32_t handle) const;
  std::shared_ptr<Bo> find_bo_by_offset_locked(uint64_t offset) const;
  /// Drops a handle and its VA; false when unknown.
  bool close_bo_locked(uint32_t handle);

  /// New context: EPERM for REALTIME without the privilege, EDQUOT past the file's context
  /// limit (at most kMaxContexts).
  Expected<std::shared_ptr<Context>> create_context_locked(uint32_t priority);
  std::shared_ptr<Context> find_context_locked(uint32_t id) const;
  /// Removes a context from the table (the caller drains it).
  std::shared_ptr<Context> take_context_locked(uint32_t id);
  /// Marks the file closed and empties its context table; returns the contexts to drain.
  std::vector<std::shared_ptr<Context>> close_locked();
  /// Drops every BO handle and the address space (after the contexts are drained).
  void release_bos_locked();

  struct Usage {
    uint32_t bos = 0;
    uint32_t contexts = 0;
    uint64_t bo_bytes = 0;
    uint32_t jobs_in_flight = 0;
  };
  /// The BO handles, their bytes, the contexts and the jobs in flight the file holds.
  Usage usage_locked() const;

  /// Message of the last failed ioctl on this file (for logs and debugging).
  std::string last_error;
  // The validated programs of the command buffers submitted last (its own mutex, not `mu`).
  ProgramCache programs;

 private:
  /// A device VA for `size` bytes: at `fixed_va` with DRM_NPU_BO_FIXED_VA, else allocated.
  Expected<uint64_t> place_locked(uint64_t size, uint32_t flags, uint64_t fixed_va,
                                  const char* who);
  /// Registers a new Bo of `mem` at `va` under a fresh handle and mmap offset.
  std::shared_ptr<Bo> add_bo_locked(std::shared_ptr<BoMemory> mem, uint32_t flags, uint64_t va);

  /// EDQUOT unless `bytes` more of BO memory fit the file's limit.
  Expected<void> check_bo_quota_locked(uint64_t bytes, const char* who) const;

  const int fd_;
  const Policy policy_;
  const std::shared_ptr<JobAccount> jobs_;  // shared with the file's contexts
  uint64_t bo_bytes_ = 0;                   // bytes of the handles in bos_
  VaAllocator va_;
  std::unordered_map<uint32_t, std::shared_ptr<Bo>> bos_;
  std::unordered_map<uint64_t, uint32_t> mmap_offsets_;  // offset -> handle
  uint32_t next_handle_ = 1;
  uint64_t next_mmap_offset_ = kMmapOffsetBase;
  std::unordered_map<uint32_t, std::shared_ptr<Context>> contexts_;
  uint32_t next_ctx_ = 1;
};

}  // namespace npu::emu::kmd
