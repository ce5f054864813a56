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
      blocks_count_((pages_count_ + (uint64_t{1} << (kBlockShift - kPageShift)) - 1) >>
                    (kBlockShift - kPageShift)),
      pages_(std::make_unique<std::atomic<uint64_t>[]>(pages_count_)),
      blocks_(std::make_unique<Block[]>(blocks_count_)) {
  const uint64_t v = g_next_version.fetch_add(1, std::memory_order_relaxed);
  for (uint64_t p = 0; p < pages_count_; ++p) pages_[p].store(v, std::memory_order_relaxed);
  for (uint64_t b = 0; b < blocks_count_; ++b)
    blocks_[b].newest.store(v, std::memory_order_relaxed);
}

namespace {

/// a = max(a, v): two lanes writing pages of one block must not move it back.
void raise_to(std::atomic<uint64_t>& a, uint64_t v) {
  uint64_t cur = a.load(std::memory_order_relaxed);
  while (cur < v && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

}  // namespace

uint64_t SramVersions::wrote(uint64_t begin, uint64_t end) {
  if (end <= begin) return 0;
  const uint64_t v = g_next_version.fetch_add(1, std::memory_order_relaxed);
  end = std::min(end, pages_count_ << kPageShift);
  for (uint64_t b = begin >> kBlockShift; b << kBlockShift < end; ++b) {
    const uint64_t lo = std::max(begin, b << kBlockShift);
    const uint64_t hi = std::min(end, (b + 1) << kBlockShift);
    Block& blk = blocks_[b];
    if (lo == b << kBlockShift && hi == (b + 1) << kBlockShift) {
      // A write of the whole block overlaps every other write to it, so the lanes ran those
      // before or after this one, never beside it: plain stores, no read-modify-write.
      blk.whole.store(v, std::memory_order_relaxed);
      blk.newest.store(v, std::memory_order_relaxed);
      continue;
    }
    for (uint64_t p = lo >> kPageShift; p <= (hi - 1) >> kPageShift; ++p)
      pages_[p].store(v, std::memory_order_relaxed);
    raise_to(blk.newest, v);
  }
  return v;
}

uint64_t SramVersions::version(uint64_t begin, uint64_t end) const {
  uint64_t v = 0;
  if (end <= begin) return v;
  end = std::min(end, pages_count_ << kPageShift);
  for (uint64_t b = begin >> kBlockShift; b << kBlockShift < end; ++b) {
    const uint64_t lo = std::max(begin, b << kBlockShift);
    const uint64_t hi = std::min(end, (b + 1) << kBlockShift);
    const Block& blk = blocks_[b];
    if (lo == b << kBlockShift && hi == (b + 1) << kBlockShift) {
      v = std::max(v, blk.newest.load(std::memory_order_relaxed));
      continue;
    }
    v = std::max(v, blk.whole.load(std::memory_order_relaxed));
    for (uint64_t p = lo >> kPageShift; p <= (hi - 1) >> kPageShift; ++p)
      v = std::max(v, pages_[p].load(std::memory_order_relaxed));
  }
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
