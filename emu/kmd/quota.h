// Quotas (API 1.4): what one open file may hold — BO memory, contexts, jobs in flight — and
// the BO memory of the whole device, so that no client of a shared device (npu-daemon) can
// promise more memory than the machine has or crowd out the others. A call that would go past
// a limit fails with EDQUOT and a message naming the limit (QUERY LAST_ERROR; logged at warn).
//
// Limits come from the device config (isa::QuotaConfig), resolved once per driver: a 0 there
// means "from the machine" (half its physical memory per file, all of it for the device).
// DeviceMemory is the device-wide account: every BoMemory charges its bytes when created and
// gives them back when its last reference goes, whichever file or job held it last.
// JobAccount counts one file's jobs in flight, shared by the file's contexts.
//
// Threading: DeviceMemory is lock-free (atomics) and shared by the driver and every BoMemory;
// JobAccount is guarded by the scheduler lock. Lifetime: shared_ptr, so memory freed after the
// driver (a job or an export outliving it) still has an account to give back to.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "npu/isa/device_config.h"

namespace npu::emu::kmd {

struct Limits {
  uint64_t bo_memory = 0;         // per file
  uint64_t device_bo_memory = 0;  // all files
  uint32_t contexts = 0;          // per file
  uint32_t jobs_in_flight = 0;    // per file
};

/// The config's quotas with "0 = from the machine" resolved against its physical memory.
Limits resolve_limits(const isa::QuotaConfig& q);

/// Bytes of physical memory of the machine (sysconf), or 0 when it cannot be told.
uint64_t physical_memory_bytes();

class DeviceMemory {
 public:
  explicit DeviceMemory(uint64_t limit) : limit_(limit) {}
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  /// Adds `bytes` unless that would pass the limit; false (and nothing charged) then.
  bool try_charge(uint64_t bytes);
  void release(uint64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  uint64_t limit() const { return limit_; }

 private:
  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
};

/// One file's jobs queued or running: changed under the scheduler lock, readable anywhere.
struct JobAccount {
  explicit JobAccount(uint32_t l) : limit(l) {}
  const uint32_t limit;
  std::atomic<uint32_t> in_flight{0};
};

/// "<what> would exceed <limit name> <limit>" — the one wording of every EDQUOT message.
std::string quota_message(const std::string& what, const char* limit_name, uint64_t limit);

}  // namespace npu::emu::kmd
