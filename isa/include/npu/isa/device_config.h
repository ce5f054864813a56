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

  /// Parses JSON text; unknown keys and out-of-range values are errors naming the key.
  static Expected<DeviceConfig> from_json(std::string_view json_text);
  /// Reads and parses a file; errors name the file.
  static Expected<DeviceConfig> load(const std::string& path);
  /// The config as JSON (round-trips through from_json).
  std::string to_json() const;
};

}  // namespace npu::isa
