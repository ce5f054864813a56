// Timing-only replay of a command buffer: each command's start and end cycle and the job's
// cycles, by exactly the scheduling rules of docs/timing.md (the same ones emu::Device
// follows), single-threaded and without data. This is the compiler's performance estimate.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "npu/expected.h"
#include "npu/isa/device_config.h"
#include "npu_isa.h"

namespace npu::codegen {

/// One executed command, as in the device's timeline (drm_npu_cmd_profile).
struct CommandTime {
  uint32_t index = 0;
  uint8_t engine = 0;
  uint8_t opcode = 0;
  uint64_t start = 0;
  uint64_t end = 0;
};

struct Schedule {
  uint64_t cycles = 0;                // job cycles: max end over engines and the command processor
  std::vector<CommandTime> timeline;  // one per executed command, by index
  std::array<uint64_t, NPU_NUM_ENGINES> busy{};  // command cycles per engine (waits excluded)
  std::array<uint64_t, NPU_NUM_ENGINES> commands{};
  uint64_t stall = 0;  // cycles engines spent in SEM_WAIT
};

/// Replays `cmds` (normally ending with END; a missing END is treated as one after the last
/// command). Errors: a deadlock (a SEM_WAIT never satisfied, or a full queue whose oldest
/// command can never finish), a semaphore overflow, a command on an unknown engine.
Expected<Schedule> replay(std::span<const npu_cmd> cmds, const isa::DeviceConfig& cfg);

}  // namespace npu::codegen
