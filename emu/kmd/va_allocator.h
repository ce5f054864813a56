// VaAllocator: the device virtual address space of one open file, shared by all of the
// file's contexts. First fit over [kBase, kEnd) with 64 KiB alignment; every allocation is
// followed by an unmapped guard gap of kGuard bytes so that a job running past the end of a
// BO faults instead of reaching the next BO. Freed ranges are coalesced and reused.
// reserve() places a range where the user asks (BO_CREATE with FIXED_VA).
//
// Sharing one address space between a file's contexts is safe because a job's Mmu maps only
// the BOs its SUBMIT lists, never the whole address space. Not thread-safe: the file's lock
// guards it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>

namespace npu::emu::kmd {

class VaAllocator {
 public:
  static constexpr uint64_t kBase = 0x1'0000'0000ull;
  static constexpr uint64_t kEnd = 0x100'0000'0000ull;
  static constexpr uint64_t kAlign = 64 * 1024;
  static constexpr uint64_t kGuard = 64 * 1024;

  VaAllocator(uint64_t base = kBase, uint64_t end = kEnd);

  /// A kAlign-aligned VA for `size` bytes, or nullopt when the space is full.
  std::optional<uint64_t> alloc(uint64_t size);
  /// Reserves exactly [va, va + round_up(size, kAlign)) without a guard gap (user-placed
  /// BOs: the user owns the layout). False when the range is not entirely free (it overlaps
  /// a BO or the guard gap after an automatically placed BO) or leaves [kBase, kEnd);
  /// `va` must be kAlign-aligned.
  bool reserve(uint64_t va, uint64_t size);
  /// Releases an address alloc() returned; unknown addresses are ignored.
  void free(uint64_t va);

  /// Bytes currently reserved (allocations plus their guards).
  uint64_t reserved() const { return reserved_; }

 private:
  std::map<uint64_t, uint64_t> free_;            // start -> end of each free range
  std::unordered_map<uint64_t, uint64_t> used_;  // va -> reserved length (incl. guard)
  uint64_t reserved_ = 0;
};

}  // namespace npu::emu::kmd
