// The timing model in virtual cycles (docs/timing.md): the cost of each command on its engine,
// from the device config alone. The emulator charges exactly these cycles and the compiler
// estimates with the same function, so prediction and measurement share one formula.
#pragma once

#include <cstdint>

#include "npu/isa/device_config.h"
#include "npu_isa.h"

namespace npu::isa {

/// Work a command does on its engine.
struct CommandCost {
  uint64_t cycles = 0;    // busy cycles on the executing engine
  uint64_t macs = 0;      // multiply-accumulates (matrix)
  uint64_t bytes = 0;     // bytes moved (DMA)
  uint64_t elements = 0;  // elements produced (vector)
};

/// Cost of a validated command. SEM_WAIT's stall and FENCE's barrier are not included: they
/// depend on other engines and are resolved by the device's scheduler of virtual time.
CommandCost command_cost(const npu_cmd& cmd, const DeviceConfig& cfg);

}  // namespace npu::isa
