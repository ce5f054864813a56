// Validation of a whole command buffer against a device: the single checker shared by the
// kernel driver (at SUBMIT), the compiler (after emission) and tools. After it succeeds the
// device may trust the structure of every command.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "npu/expected.h"
#include "npu/isa/device_config.h"
#include "npu/isa/opcodes.h"  // opcode_name(), engine_name(), opcode_allows_engine()
#include "npu/isa/regions.h"
#include "npu_isa.h"

namespace npu::isa {

/// A DRAM range a validated command touches, for the driver's BO/access check.
struct DramAccess {
  uint32_t cmd_index;
  uint8_t access;  // AccessBits
  uint64_t begin;
  uint64_t end;
  const char* field;
};

/// A command buffer that passed validation.
struct Program {
  std::vector<npu_cmd> cmds;  // copies of the commands, END last
  /// The buffer's header as it was read (with cmds, the buffer's bytes as they were checked;
  /// header.required_features: the NPU_FEATURE_* bits it declares).
  npu_cmdbuf_header header{};
  std::vector<DramAccess> dram;  // every DRAM range, in command order
  /// False for a program that skipped validate() (SUBMIT's SKIP_VALIDATION): the device then
  /// checks each command with check_command() before executing it.
  bool validated = true;
  /// Nonzero: this exact program, immutable, as the kernel driver's program cache hands it out
  /// for the same command-buffer bytes (emu/kmd/program_cache.h); the device keeps the
  /// schedule of a program with an id. 0: a program made any other way (validate() itself).
  uint64_t id = 0;
};

/// Checks header (magic, version, size, features), every command (known opcode, allowed
/// engine, must-be-zero reserved fields and flags, enum values, shapes, SRAM ranges inside
/// cfg.sram_size, semaphore ids and the one-signaller/one-waiter rule), END exactly once and
/// last, and the semaphores as a whole: a wait that no signal can pay, a deadlock between
/// engines (waits behind waits, behind a FENCE or a full engine queue) and a count that
/// overflows cfg.semaphore_max whatever the timing are rejected (docs/racecheck.md). Errors
/// are EINVAL with a message like "command 3 (conv2d): field out_h: expected 14, got 15" or
/// "command 5 (sem_wait): field sem: semaphore 1 is never signalled: this wait can never be
/// satisfied". The header is read once and each command copied once, and the checks look only
/// at those copies (Program::header, Program::cmds): a kernel driver may validate a buffer its
/// submitter can still write, and run what was checked.
Expected<Program> validate(std::span<const std::byte> buffer, const DeviceConfig& cfg);

/// The `count` commands of 128 bytes at `bytes` (no alignment needed), each copied once: the
/// vector is not zero-filled first (4 MiB of commands for a ResNet-50, on fresh pages).
std::vector<npu_cmd> copy_commands(const std::byte* bytes, size_t count);

/// Checks one command on its own: its structure as validate() checks it (opcode, engine,
/// reserved fields, flags, enums, shapes, features, operand arithmetic), but neither SRAM
/// bounds (the device checks those at run time and faults) nor the rules that span the buffer
/// (END placement, semaphore ownership). Errors as validate()'s.
Expected<void> check_command(const npu_cmd& cmd, uint32_t index, const DeviceConfig& cfg);

/// NPU_FEATURE_* bits the device must implement to run `cmd` (int8/fp32 datapaths,
/// transcendental functions). validate() rejects commands needing a feature cfg lacks;
/// CommandBufferBuilder::finish() ORs these into header.required_features.
uint64_t command_features(const npu_cmd& cmd);

/// The union of command_features() over `cmds`: the header's required_features.
uint64_t program_features(std::span<const npu_cmd> cmds);

/// Lowercase name of a DRM_NPU_FAULT_* kind ("none", "parse", "mmu", "sram_range",
/// "semaphore", "watchdog") or "unknown".
const char* fault_kind_name(uint32_t kind);

/// Name of a DRM_NPU_HAZARD_* kind ("RAW", "WAR", "WAW") or "?".
const char* hazard_kind_name(uint32_t kind);

}  // namespace npu::isa
