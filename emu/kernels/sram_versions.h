// SramVersions: which bytes of a device's SRAM changed. The device numbers every write a data
// command makes to an SRAM page of 64 bytes (its write regions, npu/isa/regions.h) from one
// process-wide counter, so a kernel can tell that an SRAM range it read before still holds the same
// bytes: the matrix kernels keep the packed panels of the last weights they packed while the SRAM
// they came from is unchanged (a compiler's convolution slice runs as several row-band tiles
// on the same weights).
//
// Pages come in blocks of 4 KiB: a write that covers a whole block stamps the block, not its 64
// pages, and a read of a whole block takes the block's newest version, so a command's cost here
// grows with the blocks it touches rather than its pages (a ResNet-18 inference wrote and
// checked tens of megabytes of pages one by one: 7% of its host time).
//
// Threading: wrote() and version() may be called from several threads at once (the device's
// two host lanes); pages and blocks are atomics, and a block's versions only grow. Two writes
// to pages of one block may run at once on the two lanes, so a partial write raises the
// block's newest version with a compare-and-swap; a write of the whole block overlaps every
// other command that writes it, which the lanes never run beside it (nor do the engine threads
// in a program without races), so it stores (the locked read-modify-writes were 4.5% of a
// two-lane ResNet-50 int8 run). Even a racing program's lost store leaves a version of one of
// the racing writes, newer than any read before them. A version read for a range no running
// command writes is exact.
//
// Lifetime: owned by the device; current_sram_versions() is what the calling thread's command
// runs on (SramVersionsScope), nullptr outside a device (kernel tests): then nothing is reused.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace npu::emu::kern {

class SramVersions {
 public:
  /// Every page starts at a fresh version, newer than any of an earlier device at the same
  /// host address.
  explicit SramVersions(uint64_t sram_size);

  /// A command wrote bytes [begin, end): their pages get a new version, which is returned (0
  /// for an empty range).
  uint64_t wrote(uint64_t begin, uint64_t end);
  /// The newest version of the pages of [begin, end) (equal versions: unchanged bytes).
  uint64_t version(uint64_t begin, uint64_t end) const;

 private:
  /// 64-byte pages: the compiler aligns SRAM slots to 64 bytes, and a coarser page would
  /// count a tile loaded next to the weights as a write to the weights.
  static constexpr unsigned kPageShift = 6;
  static constexpr unsigned kBlockShift = 12;  // 64 pages
  /// A page's version is the newer of its own and its block's `whole`.
  struct Block {
    std::atomic<uint64_t> newest{0};  // the newest version of any of its pages
    std::atomic<uint64_t> whole{0};   // of the last write that covered the whole block
  };
  uint64_t pages_count_;
  uint64_t blocks_count_;
  std::unique_ptr<std::atomic<uint64_t>[]> pages_;
  std::unique_ptr<Block[]> blocks_;
};

/// The SRAM versions of the command the calling thread runs, or nullptr.
const SramVersions* current_sram_versions();

/// Sets current_sram_versions() for the calling thread while alive.
class SramVersionsScope {
 public:
  explicit SramVersionsScope(const SramVersions* v);
  ~SramVersionsScope();
  SramVersionsScope(const SramVersionsScope&) = delete;
  SramVersionsScope& operator=(const SramVersionsScope&) = delete;

 private:
  const SramVersions* saved_;
};

}  // namespace npu::emu::kern
