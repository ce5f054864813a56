// Command-buffer checks of SUBMIT that are the driver's own business, beside the shared
// validator (npu::isa::validate): the structural parse used with SKIP_VALIDATION, and the
// check that every DRAM range of a validated program lies inside a BO the job referenced,
// with the access it was referenced for.
#pragma once

#include <cstddef>
#include <span>

#include "npu/emu/mmu.h"
#include "npu/expected.h"
#include "npu/isa/validate.h"

namespace npu::emu::kmd {

/// SKIP_VALIDATION: checks only the header (magic, major version, size, command count) and
/// that the buffer holds whole commands, then copies the commands unchecked so the device's
/// own fault reporting gets exercised. EINVAL with a message naming the field. The header is
/// read once and each command copied once, so `buffer` may be one its submitter can write.
Expected<isa::Program> parse_unvalidated(std::span<const std::byte> buffer);

/// Every Program::dram range must lie inside one mapping of `mmu` allowing its access.
/// EFAULT with a message naming the command, its opcode and field.
Expected<void> check_dram_ranges(const isa::Program& program, const Mmu& mmu);

}  // namespace npu::emu::kmd
