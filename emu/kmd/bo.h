// Buffer objects. BoMemory is the backing store: a memfd (shared memory, so a daemon can hand
// the same pages to another process later) plus the driver's own MAP_SHARED mapping of it,
// through which the device reads and writes (the Mmu maps these host pointers). It is
// reference counted: the file's handle table holds one reference and every queued or running
// job that lists the BO holds another, so closing a handle never pulls memory from under a
// job. User mappings made with Kmd::mmap() are separate mappings of the same memfd and keep
// the pages alive on their own (that is how MAP_SHARED works).
//
// Bo is the per-file view: handle, flags, device VA and fake mmap offset. Several files may
// have a Bo of one BoMemory (BO_EXPORT / BO_IMPORT, API 1.3): each its own handle and VA.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "npu/expected.h"
#include "quota.h"

namespace npu::emu::kmd {

inline constexpr uint64_t kPageSize = 4096;

inline constexpr uint64_t round_up(uint64_t v, uint64_t align) {
  return (v + align - 1) / align * align;
}

/// BOs (and user mappings) up to this size are pre-faulted with MAP_POPULATE.
inline constexpr uint64_t kPopulateLimit = 256ull << 20;

class BoMemory {
 public:
  /// Allocates `size` zero-filled bytes (size already page rounded), charged to `account`
  /// (the device's BO memory) until the last reference goes. EDQUOT when the account's limit
  /// would be passed, ENOMEM on failure.
  static Expected<std::shared_ptr<BoMemory>> create(uint64_t size,
                                                    std::shared_ptr<DeviceMemory> account);
  ~BoMemory();
  BoMemory(const BoMemory&) = delete;
  BoMemory& operator=(const BoMemory&) = delete;

  std::byte* host() const { return host_; }
  /// Unique among every BoMemory of the process (the cross-job race checker names memory by
  /// it: a BO imported into another file is the same memory at another device address).
  uint64_t id() const { return id_; }
  /// PeerTable (an exported BO): the descriptor's end may go once user space closed it.
  bool may_release() const { return true; }
  uint64_t size() const { return size_; }
  /// The memfd, for mapping the pages again (Kmd::mmap, a daemon). Sealed against shrinking
  /// and growing: whoever maps it cannot change the size under the device.
  int fd() const { return fd_; }
  /// Bytes of all BoMemory alive in the process.
  static uint64_t live_bytes();

  /// Jobs that list this memory and have been queued but not yet released their inputs
  /// (BO_WAIT). Raised by the scheduler when it accepts a job, lowered when the job drops its
  /// inputs (the device is done with them, or the job was aborted).
  std::atomic<uint32_t> jobs_in_flight{0};

 private:
  BoMemory(int fd, std::byte* host, uint64_t size, std::shared_ptr<DeviceMemory> account);
  const uint64_t id_;
  std::shared_ptr<DeviceMemory> account_;
  int fd_;
  std::byte* host_;
  uint64_t size_;
};

struct Bo {
  uint32_t handle = 0;
  uint32_t flags = 0;  // DRM_NPU_BO_*
  uint64_t size = 0;   // page rounded
  uint64_t va = 0;     // device VA in the file's address space
  uint64_t mmap_offset = 0;
  std::shared_ptr<BoMemory> mem;
};

}  // namespace npu::emu::kmd
