// Loads whose bytes are already in SRAM (load_memo.h).
#include "load_memo.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>

namespace npu::emu {

namespace {

/// NPU_EMU_LOAD_MEMO=0 runs every load (to compare host times, or to rule the memo out).
bool memo_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("NPU_EMU_LOAD_MEMO");
    return v == nullptr || std::string_view(v) != "0";
  }();
  return on;
}

}  // namespace

void LoadMemo::clear() {
  std::lock_guard lk(mu_);
  for (Entry& e : entries_) e.used = false;
  next_ = 0;
  dram_writes_.clear();
  skipped_loads_ = skipped_bytes_ = 0;
}

LoadMemo::Load LoadMemo::as_load(const npu_cmd& c, std::span<const LaneRegion> regions) {
  Load l;
  if (c.hdr.opcode != NPU_OP_DMA_LOAD || regions.size() != 2) return l;
  for (const LaneRegion& r : regions) {
    if (r.sram && r.write) l.dst = &r;
    if (!r.sram && !r.write) l.src = &r;
  }
  if (l.dst == nullptr || l.src == nullptr) return {};
  return l;
}

bool LoadMemo::skip(const npu_cmd& c, std::span<const LaneRegion> regions,
                    const kern::SramVersions& v) {
  const Load l = as_load(c, regions);
  if (l.dst == nullptr || !memo_enabled()) return false;
  std::lock_guard lk(mu_);
  for (const Entry& e : entries_) {
    if (!e.used || e.dst_begin != l.dst->begin || e.src_begin != l.src->begin ||
        std::memcmp(&e.cmd, &c, sizeof c) != 0)
      continue;
    if (v.version(e.dst_begin, e.dst_end) != e.version) return false;  // SRAM written since
    if (dram_writes_.size() - e.writes_seen > kMaxScan) return false;
    for (size_t i = e.writes_seen; i < dram_writes_.size(); ++i)
      if (dram_writes_[i].first < e.src_end && e.src_begin < dram_writes_[i].second)
        return false;  // its source was written since
    ++skipped_loads_;
    skipped_bytes_ += e.dst_end - e.dst_begin;
    return true;
  }
  return false;
}

void LoadMemo::ran(const npu_cmd& c, std::span<const LaneRegion> regions, uint64_t version) {
  const Load l = as_load(c, regions);
  if (!memo_enabled()) return;
  bool writes_dram = false;
  for (const LaneRegion& r : regions) writes_dram |= !r.sram && r.write;
  if (l.dst == nullptr && !writes_dram) return;  // most commands: nothing to note, no lock
  std::lock_guard lk(mu_);
  for (const LaneRegion& r : regions)
    if (!r.sram && r.write) dram_writes_.emplace_back(r.begin, r.end);
  if (l.dst == nullptr) return;
  // The slot this load takes: the entry of the same destination (it is stale now), else the
  // next one round the ring.
  Entry* slot = nullptr;
  for (Entry& e : entries_)
    if (e.used && e.dst_begin == l.dst->begin) slot = &e;
  if (slot == nullptr) {
    slot = &entries_[next_];
    next_ = (next_ + 1) % kEntries;
  }
  std::memcpy(&slot->cmd, &c, sizeof c);
  slot->src_begin = l.src->begin;
  slot->src_end = l.src->end;
  slot->dst_begin = l.dst->begin;
  slot->dst_end = l.dst->end;
  slot->version = version;
  slot->writes_seen = dram_writes_.size();
  slot->used = true;
}

uint64_t LoadMemo::skipped_loads() const {
  std::lock_guard lk(mu_);
  return skipped_loads_;
}

uint64_t LoadMemo::skipped_bytes() const {
  std::lock_guard lk(mu_);
  return skipped_bytes_;
}

}  // namespace npu::emu
