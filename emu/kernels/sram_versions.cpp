// SRAM page versions (sram_versions.h).
#include "sram_versions.h"

#include <algorithm>

namespace npu::emu::kern {

namespace {

std::atomic<uint64_t> g_next_version{1};

thread_local const SramVersions* t_current = nullptr;

}  // namespace

SramVersions::SramVersions(uint64_t sram_size)
    : pages_count_((sram_size >> kPageShift) + 1),
      pages_(std::make_unique<std::atomic<uint64_t>[]>(pages_count_)) {
  const uint64_t v = g_next_version.fetch_add(1, std::memory_order_relaxed);
  for (uint64_t p = 0; p < pages_count_; ++p) pages_[p].store(v, std::memory_order_relaxed);
}

void SramVersions::wrote(uint64_t begin, uint64_t end) {
  if (end <= begin) return;
  const uint64_t v = g_next_version.fetch_add(1, std::memory_order_relaxed);
  const uint64_t last = std::min((end - 1) >> kPageShift, pages_count_ - 1);
  for (uint64_t p = begin >> kPageShift; p <= last; ++p)
    pages_[p].store(v, std::memory_order_relaxed);
}

uint64_t SramVersions::version(uint64_t begin, uint64_t end) const {
  uint64_t v = 0;
  if (end <= begin) return v;
  const uint64_t last = std::min((end - 1) >> kPageShift, pages_count_ - 1);
  for (uint64_t p = begin >> kPageShift; p <= last; ++p)
    v = std::max(v, pages_[p].load(std::memory_order_relaxed));
  return v;
}

const SramVersions* current_sram_versions() {
  return t_current;
}

SramVersionsScope::SramVersionsScope(const SramVersions* v) : saved_(t_current) {
  t_current = v;
}

SramVersionsScope::~SramVersionsScope() {
  t_current = saved_;
}

}  // namespace npu::emu::kern
