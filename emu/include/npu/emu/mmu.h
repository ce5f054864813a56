// Mmu: the address space one job sees. It maps exactly the BOs the job's SUBMIT referenced,
// each with the access it was referenced for; everything else faults. Built by the kernel
// driver per job, read-only while the job runs (so engines translate without locks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace npu::emu {

/// One mapping: device VA range -> host memory, with the allowed access (isa::AccessBits).
struct Mapping {
  uint64_t va = 0;
  uint64_t size = 0;
  std::byte* host = nullptr;
  uint8_t access = 0;
  friend bool operator==(const Mapping&, const Mapping&) = default;
};

class Mmu {
 public:
  /// Adds a mapping. Mappings must not overlap (the VA allocator guarantees it); returns
  /// false when it would.
  bool map(const Mapping& m);

  /// Host pointer for [va, va + len) when the whole range lies in one mapping that allows
  /// `access`; nullptr otherwise (the caller reports an MMU fault at `va`).
  std::byte* translate(uint64_t va, uint64_t len, uint8_t access) const;

  /// First byte of [va, va + len) that translate() would reject for `access` (for fault
  /// reporting), or va when the range start itself is unmapped.
  uint64_t fault_address(uint64_t va, uint64_t len, uint8_t access) const;

  const std::vector<Mapping>& mappings() const { return maps_; }

 private:
  std::vector<Mapping> maps_;  // sorted by va
};

}  // namespace npu::emu
