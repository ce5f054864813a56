// Private to libnpuisa: the static synchronization checks of validate() (docs/isa.md,
// "Validity rules", and docs/racecheck.md). Within one command buffer every semaphore has one
// signaller engine and one waiter engine, so which signal releases which wait, whether the
// job can finish and what a semaphore counts at the end are functions of the program and the
// device's queue depth alone; these checks decide them before the job reaches the device:
//   - a wait on a semaphore no command signals;
//   - waits that need more than the buffer ever signals;
//   - a deadlock: engines blocked in SEM_WAIT whose signals sit behind other blocked waits,
//     behind a FENCE that waits for them, or behind a full engine queue;
//   - a semaphore that overflows the device's maximum whatever the timing (its signals so far
//     exceed the maximum even after every wait in the buffer);
//   - a safe point (a FENCE with NPU_FENCE_FLAG_PREEMPT, ISA 1.2) where a semaphore is not 0.
// Errors are EINVAL, one line naming the command: "command 5 (sem_wait): field sem: ...".
// Pure functions; cost O(commands), nothing at all for a buffer without semaphores.
#pragma once

#include <span>

#include "npu/expected.h"
#include "npu/isa/device_config.h"
#include "npu_isa.h"

namespace npu::isa::detail {

/// Checks the semaphores of `cmds` (structurally valid commands, END last) on `cfg`.
Expected<void> check_sync(std::span<const npu_cmd> cmds, const DeviceConfig& cfg);

}  // namespace npu::isa::detail
