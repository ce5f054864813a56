// LoadMemo: DMA loads whose bytes are already in SRAM. A compiler's convolution slices each load
// their input band again (ResNet-18's late layers: one band, 16 output channels per slice, the
// same input loaded into the same double-buffer slot every other tile), and on the host each of
// those loads is a copy of the same bytes over themselves. A load need not run when an earlier
// load of this job was the same command (all 128 bytes) on the same host bytes, its SRAM
// destination was not written since (kern::SramVersions) and no command of the job wrote its
// DRAM source since (the job's DRAM writes, by host address, so aliases count). The device's
// timing, statistics and results do not change: the skipped copy would have written the bytes
// that are there (LoadMemo tests; every conformance package runs with it).
//
// What it assumes: during a job only the job's own commands write the DRAM it reads. A host
// thread writing a buffer while a job reads it races with the device on real hardware too
// (the result is undefined there as well); between jobs (and between the parts of a preempted
// job) the memo is cleared, so the host's writes between submissions are always seen.
//
// NPU_EMU_LOAD_MEMO=0 in the environment turns it off.
//
// Threading: skip() and ran() may be called from the device's two host lanes at once (one
// SpinMutex: a few comparisons under it, thousands of times per job). A load and every command
// it conflicts with are ordered by the lanes (lanes.h), so when a load asks, the earlier load
// it matches and the writes between them have finished and been noted. Lifetime: owned by the
// device; clear() at the start of every run().
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "lanes.h"
#include "npu/emu/spin_mutex.h"
#include "npu_isa.h"
#include "sram_versions.h"

namespace npu::emu {

class LoadMemo {
 public:
  /// Forgets every load and DRAM write: a new job, or a new part of one, begins.
  void clear();

  /// Whether `c`, with operands `regions` (SRAM offsets, DRAM host addresses), is a load whose
  /// result SRAM already holds; counted in skipped_*() when it is.
  bool skip(const npu_cmd& c, std::span<const LaneRegion> regions, const kern::SramVersions& v);

  /// After `c` ran: its DRAM writes are noted, and it is remembered when it is a load whose
  /// SRAM write got `version` (kern::SramVersions::wrote).
  void ran(const npu_cmd& c, std::span<const LaneRegion> regions, uint64_t version);

  /// Loads and bytes skipped since clear().
  uint64_t skipped_loads() const;
  uint64_t skipped_bytes() const;

 private:
  /// A load's SRAM destination and DRAM source (host addresses), or nothing.
  struct Load {
    const LaneRegion* dst = nullptr;
    const LaneRegion* src = nullptr;
  };
  static Load as_load(const npu_cmd& c, std::span<const LaneRegion> regions);

  struct Entry {
    npu_cmd cmd{};
    uint64_t src_begin = 0, src_end = 0;  // host addresses
    uint64_t dst_begin = 0, dst_end = 0;  // SRAM offsets
    uint64_t version = 0;                 // the SramVersions its write gave its pages
    size_t writes_seen = 0;               // dram_writes_ entries before it ran
    bool used = false;
  };
  /// Loads remembered: a tile pipeline's double buffer needs two per operand (input, weights,
  /// channel parameters), and twice that when the lanes split it, each in SRAM of its own
  /// (sram_banks.h; with 8, ResNet-50 fp32 skipped 5 MB per inference instead of 36 there).
  static constexpr size_t kEntries = 16;
  /// More DRAM writes than this between two loads: the later one runs (a bounded scan).
  static constexpr size_t kMaxScan = 64;

  mutable SpinMutex mu_;
  Entry entries_[kEntries];
  size_t next_ = 0;                                         // round-robin victim
  std::vector<std::pair<uint64_t, uint64_t>> dram_writes_;  // host [begin, end), in run order
  uint64_t skipped_loads_ = 0, skipped_bytes_ = 0;
};

}  // namespace npu::emu
