// Timing-only replay of a command buffer: each command's start and end cycle and the job's
// cycles, by exactly the scheduling rules of docs/timing.md (the same ones emu::Device
// follows), single-threaded and without data.
//
// Two users: the compiler's performance estimate (replay(): a program that cannot finish is an
// error), and the device's account of a faulted job (replay_to_fault(): the device's own checks
// are replayed, the first fault in virtual time is the job's fault and the profile is cut
// there). The threaded device stops its engines when it sees a fault on the host, which is
// racy; the replay makes a faulted job's fault, cycles and timeline a function of the program
// and the address space alone (issue 14).
//
// Pure functions; thread-safe; nothing is kept between calls.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "npu/expected.h"
#include "npu/isa/device_config.h"
#include "npu/isa/regions.h"
#include "npu_accel.h"
#include "npu_isa.h"

namespace npu::isa {

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
  /// replay_to_fault() only: the job's fault (the earliest in virtual time, then the lowest
  /// command index), raised at cycle `cycles`.
  std::optional<drm_npu_fault> fault;
};

/// Replays `cmds` (normally ending with END; a missing END is treated as one after the last
/// command). Errors: a deadlock (a SEM_WAIT never satisfied, or a full queue whose oldest
/// command can never finish), a semaphore overflow, a command on an unknown engine.
Expected<Schedule> replay(std::span<const npu_cmd> cmds, const DeviceConfig& cfg);

/// What the device checks while it runs a job, for replay_to_fault().
struct FaultModel {
  /// Parse every command when the command processor reaches it (the device does for a program
  /// submitted without validation; a validated one passes anyway).
  bool check_commands = true;
  /// The MMU: for a DRAM operand region, the faulting device address, or nullopt when the
  /// region is mapped with the access it needs. Unset: every DRAM region is mapped.
  std::function<std::optional<uint64_t>(const Region&)> dram_fault;
};

/// Replays `cmds` as the device runs them, with the device's faults: a command processor parse
/// fault (unknown engine or opcode, a malformed command, no END) at the command processor's
/// cycle; on an engine, an opcode the engine cannot run (PARSE), a semaphore out of range or
/// overflowing (SEMAPHORE), an operand past SRAM (SRAM_RANGE) or unmapped (MMU), at the cycle
/// the command starts (an overflowing SEM_SIGNAL: at its end). With a fault, the schedule is
/// cut at it: `cycles` is the fault's cycle, the timeline holds the commands that started
/// before it and ended by it, and busy/commands/stall count only those. Without one, it is
/// replay()'s schedule of the commands that could run (a program that hangs just stops).
Schedule replay_to_fault(std::span<const npu_cmd> cmds, const DeviceConfig& cfg,
                         const FaultModel& model);

}  // namespace npu::isa
