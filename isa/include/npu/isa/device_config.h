// DeviceConfig: the parameters of one NPU model (SRAM, engines, clock, timing). Loaded from a
// device-config JSON (docs/device-config.md); every field has a default, so "{}" is the
// default device. The compiler's estimates and the emulator's timing both read this struct.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "npu/expected.h"

namespace npu::isa {

/// DMA engine timing: cycles = latency + sum over contiguous runs of ceil(run / bytes_per_cycle).
struct DmaConfig {
  uint32_t bytes_per_cycle = 32;
  uint32_t latency = 64;
};

/// Matrix engine: a rows x cols MAC array per datatype plus a pipeline fill latency.
struct MatrixConfig {
  uint32_t int8_rows = 32;  // reduction (K) lanes
  uint32_t int8_cols = 32;  // output-channel lanes
  uint32_t fp32_rows = 16;
  uint32_t fp32_cols = 16;
  uint32_t fp16_rows = 32;  // fp16 and bf16 share this array (since ISA 1.1)
  uint32_t fp16_cols = 16;
  uint32_t fill_latency = 32;
};

/// Vector engine: elements per cycle per datatype, a fixed latency, and a cost multiplier for
/// transcendental functions.
struct VectorConfig {
  uint32_t int8_lanes = 64;
  uint32_t fp32_lanes = 16;
  uint32_t latency = 8;
  uint32_t transcendental_cost = 4;
};

/// How the kernel driver shares the one device between jobs of several contexts (files,
/// processes): preemption at safe points (ISA 1.2) and time slices (docs/device-config.md).
struct SchedulingConfig {
  /// At a safe point, stop the running job when a job of higher priority is ready (or, past
  /// time_slice_cycles, one of the same priority in another context) and resume it later from
  /// the next command. false: a job runs to its end once started (strict priority between
  /// jobs only).
  bool preemption = true;
  /// Virtual cycles a switch costs the preempted job: saving its command-processor state at
  /// the safe point and restoring it when it resumes (SRAM needs no saving: nothing in it is
  /// live at a safe point). Counted in the job's cycles.
  uint32_t preempt_cycles = 5000;
  /// At a safe point, a job that has run this many cycles since it got the device yields to a
  /// ready job of its own priority (round-robin by time); 0: never (equal priorities take
  /// turns by whole jobs).
  uint64_t time_slice_cycles = 1'000'000;
  /// Emulator test mode: stop every job at every safe point and scramble SRAM before it
  /// resumes, so a command stream that keeps anything live in SRAM across a safe point gives
  /// different results. to_json() writes the key only when true.
  bool preempt_every_safe_point = false;
};

/// Limits per open file of the kernel driver (a process in-process, a client of npu-daemon):
/// a call that would exceed one fails with EDQUOT and says which (docs/uapi.md, ABI 1.4).
struct QuotaConfig {
  /// Bytes of BO memory one file may hold (the BOs it created or imported); 0: half of the
  /// machine's physical memory.
  uint64_t bo_memory = 0;
  /// Bytes of BO memory alive on the device, all files together; 0: the machine's physical
  /// memory (nobody may promise more memory than there is).
  uint64_t device_bo_memory = 0;
  /// Contexts one file may hold.
  uint32_t contexts = 64;
  /// Jobs one file may have queued or running, all its contexts together.
  uint32_t jobs_in_flight = 4096;
};

struct DeviceConfig {
  std::string name = "npu-emu";
  uint32_t device_id = 0x1ee7;
  uint32_t revision = 1;
  uint64_t clock_hz = 1'000'000'000;
  uint64_t sram_size = 2u << 20;  // 2 MiB
  uint32_t sram_banks = 16;
  uint32_t num_semaphores = 32;
  uint32_t semaphore_max = 65535;  // a signal beyond this value faults (overflow)
  uint32_t cp_cycles_per_cmd = 2;  // command-processor dispatch cost per command
  uint32_t queue_depth = 64;       // commands each engine queue holds
  uint32_t watchdog_ms = 2000;
  uint64_t features = 0xf;  // NPU_FEATURE_* implemented (default: all)
  uint64_t max_bo_size = 1ull << 30;
  /// Emulator: run every job under the synchronization checker, as if SUBMIT carried
  /// DRM_NPU_SUBMIT_RACECHECK (docs/racecheck.md; NPU_RACECHECK=1 sets it for "emu:" devices).
  bool racecheck = false;
  /// Emulator: run each job's engines on threads of their own (one per engine) instead of in
  /// causal order on the command processor's thread (docs/device-config.md; results and cycles
  /// are the same; NPU_EMU_ENGINE_THREADS=1 sets it for "emu:" devices).
  bool engine_threads = false;
  DmaConfig dma;
  MatrixConfig matrix;
  VectorConfig vector;
  SchedulingConfig scheduling;
  QuotaConfig quota;

  /// Parses JSON text; unknown keys and out-of-range values are errors naming the key.
  static Expected<DeviceConfig> from_json(std::string_view json_text);
  /// Reads and parses a file; errors name the file.
  static Expected<DeviceConfig> load(const std::string& path);
  /// The config as JSON (round-trips through from_json).
  std::string to_json() const;
};

}  // namespace npu::isa
