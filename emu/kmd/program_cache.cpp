// Validated programs by their bytes (program_cache.h).
#include "program_cache.h"

#include <atomic>
#include <cstring>

namespace npu::emu::kmd {

namespace {

/// Program ids: unique in the process, so two drivers' programs never share one.
std::atomic<uint64_t> g_next_id{1};

}  // namespace

bool ProgramCache::same(const isa::Program& p, std::span<const std::byte> bytes) {
  constexpr size_t kHeader = sizeof(npu_cmdbuf_header);
  return bytes.size() == p.header.size && std::memcmp(bytes.data(), &p.header, kHeader) == 0 &&
         std::memcmp(bytes.data() + kHeader, p.cmds.data(), p.cmds.size() * NPU_CMD_SIZE) == 0;
}

std::shared_ptr<const isa::Program> ProgramCache::find_locked(std::span<const std::byte> bytes) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (!same(**it, bytes)) continue;
    entries_.splice(entries_.begin(), entries_, it);
    return entries_.front();
  }
  return nullptr;
}

std::shared_ptr<const isa::Program> ProgramCache::find(std::span<const std::byte> bytes) {
  std::lock_guard lk(mu_);
  return find_locked(bytes);
}

Expected<std::shared_ptr<const isa::Program>> ProgramCache::validate(
    std::span<const std::byte> bytes, const isa::DeviceConfig& cfg) {
  {
    std::lock_guard lk(mu_);
    if (auto kept = find_locked(bytes)) return kept;
    ++validated_;
  }
  auto checked = isa::validate(bytes, cfg);
  if (!checked) return checked.error();
  auto program = std::make_shared<isa::Program>(std::move(*checked));
  program->id = g_next_id.fetch_add(1, std::memory_order_relaxed);
  const size_t size = program->header.size;  // validated: the buffer's size
  if (size > kMaxBytes) return std::shared_ptr<const isa::Program>(std::move(program));

  std::lock_guard lk(mu_);
  entries_.push_front(program);
  bytes_ += size;
  while (entries_.size() > kEntries || bytes_ > kMaxBytes) {
    bytes_ -= entries_.back()->header.size;
    entries_.pop_back();
  }
  return std::shared_ptr<const isa::Program>(std::move(program));
}

uint64_t ProgramCache::validated() const {
  std::lock_guard lk(mu_);
  return validated_;
}

}  // namespace npu::emu::kmd
