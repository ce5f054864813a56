// The memory footprint of one ISA command: the SRAM and DRAM byte ranges each operand reads
// or writes. One function shared by the validator (bounds and BO checks), the device (runtime
// SRAM checks) and later the synchronization checker.
#pragma once

#include <cstdint>
#include <vector>

#include "npu/expected.h"
#include "npu_isa.h"

namespace npu::isa {

enum class Space : uint8_t { Sram, Dram };

enum AccessBits : uint8_t { kRead = 1, kWrite = 2 };

/// Bytes [begin, end) of one operand; for strided views this is the bounding range. pitch != 0
/// (a DMA's DRAM side whose rows repeat at one pitch, e.g. a slice of channels of a tensor):
/// only rows of `width` bytes every `pitch` bytes from begin.
struct Region {
  Space space;
  uint8_t access;  // AccessBits
  uint64_t begin;
  uint64_t end;
  const char* field;  // the command field naming the operand, e.g. "in_addr"
  uint32_t pitch = 0, width = 0;
};

/// Appends the regions of `cmd` to `out`. Fails (EINVAL, message naming the field) when the
/// command's parameters are inconsistent or their byte arithmetic overflows 64 bits. Does not
/// check the regions against any memory size.
Expected<void> command_regions(const npu_cmd& cmd, std::vector<Region>& out);

}  // namespace npu::isa
