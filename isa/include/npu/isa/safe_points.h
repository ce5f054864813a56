// Safe points (ISA 1.2): the FENCEs flagged NPU_FENCE_FLAG_PREEMPT, where a command stream
// promises that nothing live stays in SRAM and every semaphore is 0 (the validator checks the
// semaphores), so a device may stop the job there, run another one and resume this one from
// the next command with the same results (docs/isa.md section 10). The compiler puts one
// between every two layers; raw buffers have them only where their author wrote them.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "npu_isa.h"

namespace npu::isa {

/// Whether `c` is a safe point (a FENCE with NPU_FENCE_FLAG_PREEMPT).
inline bool is_safe_point(const npu_cmd& c) {
  return c.hdr.opcode == NPU_OP_FENCE && (c.hdr.flags & NPU_FENCE_FLAG_PREEMPT) != 0;
}

/// The indices of the safe points in `cmds`, ascending.
std::vector<uint32_t> safe_points(std::span<const npu_cmd> cmds);

}  // namespace npu::isa
