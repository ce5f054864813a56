// Quota limits and accounts (quota.h).
#include "quota.h"

#include <unistd.h>

#include <fmt/format.h>

namespace npu::emu::kmd {

uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

Limits resolve_limits(const isa::QuotaConfig& q) {
  const uint64_t machine = physical_memory_bytes();
  const uint64_t unknown = uint64_t{1} << 48;  // no way to tell: effectively unlimited
  Limits l;
  l.device_bo_memory = q.device_bo_memory != 0 ? q.device_bo_memory : machine ? machine : unknown;
  l.bo_memory = q.bo_memory != 0 ? q.bo_memory : machine ? machine / 2 : unknown;
  l.contexts = q.contexts;
  l.jobs_in_flight = q.jobs_in_flight;
  return l;
}

bool DeviceMemory::try_charge(uint64_t bytes) {
  uint64_t used = used_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ || used > limit_ - bytes) return false;
  } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  return true;
}

std::string quota_message(const std::string& what, const char* limit_name, uint64_t limit) {
  return fmt::format("over quota: {} would exceed {} {}", what, limit_name, limit);
}

}  // namespace npu::emu::kmd
