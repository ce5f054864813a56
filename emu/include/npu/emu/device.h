// Device: the threaded device model. A command-processor thread dispatches the commands of a
// validated program, in order, to one thread per engine (DMA in, DMA out, matrix, vector);
// engines synchronise through counting semaphores; SRAM is shared. Time is virtual: every
// command's start and end cycle follow from the timing model and the semaphore/fence edges
// alone (docs/timing.md), so a job's cycle count never depends on host scheduling.
//
// Threading: run() executes one job at a time (callers are serialised); reset() may be called
// from any thread (the kernel driver's watchdog) and makes the running job stop promptly.
// Lifetime: the engine threads live as long as the Device.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "npu/emu/mmu.h"
#include "npu/isa/device_config.h"
#include "npu/isa/validate.h"
#include "npu_accel.h"

namespace npu::emu {

/// What a job did: cycles, per-engine statistics and its command timeline.
struct JobProfile {
  uint64_t cycles = 0;
  std::array<uint64_t, DRM_NPU_MAX_ENGINES> busy_cycles{};
  std::array<uint64_t, DRM_NPU_MAX_ENGINES> commands{};
  uint64_t dma_bytes_in = 0;
  uint64_t dma_bytes_out = 0;
  uint64_t macs = 0;
  uint64_t vector_elements = 0;
  uint64_t semaphore_stall_cycles = 0;
  std::vector<drm_npu_cmd_profile> timeline;  // one entry per executed command, by index
  std::vector<uint32_t> irq_values;           // FENCE interrupts, in order
};

/// Outcome of one job.
struct JobResult {
  uint32_t status = DRM_NPU_JOB_OK;  // OK, ERROR (fault set) or ABORTED (reset)
  drm_npu_fault fault{};
  JobProfile profile;
};

class Device {
 public:
  explicit Device(isa::DeviceConfig cfg);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  /// Runs a validated program against `mmu` and blocks until it ends. Faults end the job
  /// with status ERROR and the fault that happened first in virtual time.
  JobResult run(const isa::Program& program, const Mmu& mmu);

  /// Resets the device: the running job (if any) stops and run() returns status ERROR with a
  /// WATCHDOG fault. SRAM contents are undefined afterwards. Safe from any thread.
  void reset();

  const isa::DeviceConfig& config() const { return cfg_; }

 private:
  struct Impl;
  isa::DeviceConfig cfg_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace npu::emu
