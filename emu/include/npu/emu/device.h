// Device: the device model. A command processor (running on the thread that calls run())
// dispatches the commands of a validated program, in order, to four engines (DMA in, DMA out,
// matrix, vector) that synchronise through counting semaphores and share SRAM. On the host a
// job runs either serially on run()'s thread, every command after the ones it waits for (the
// default: no thread hand-offs), or on one thread per engine fed through lock-free rings
// (DeviceConfig::engine_threads, and always under the synchronization checker); results,
// cycles and timelines are the same either way. Time is virtual: every
// command's start and end cycle follow from the timing model and the semaphore/fence edges
// alone (docs/timing.md), so a job's cycle count never depends on host scheduling. On request
// a job runs under the synchronization checker (emu/device/racecheck.h), which reports the
// pairs of commands that touch the same bytes without a semaphore or fence ordering them.
//
// A job may also run in parts: JobOptions::yield stops it at a safe point (ISA 1.2) and a
// later run() with JobOptions::begin resumes it there (the kernel driver's preemption).
//
// Threading: run() executes one job at a time (callers are serialised) and is the command
// processor while it runs; reset() may be called from any thread (the kernel driver's
// watchdog) and makes the running job stop promptly.
// Lifetime: the engine threads start with the first job that needs them and live as long as
// the Device.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "npu/emu/mmu.h"
#include "npu/emu/profile_timeline.h"
#include "npu/isa/device_config.h"
#include "npu/isa/validate.h"
#include "npu_accel.h"

namespace npu::emu {

/// The synchronization checker's result for one job (docs/racecheck.md).
struct RaceReport {
  bool checked = false;  // the job ran under the checker
  bool partial = false;  // the job did not complete: only the commands that ran were checked
  uint64_t total = 0;    // hazards found; `hazards` keeps the first DRM_NPU_MAX_HAZARDS
  std::vector<drm_npu_hazard> hazards;  // sorted by (first, second command, kind, space)
};

/// What a job did: cycles, per-engine statistics, its command timeline and, when it ran under
/// the synchronization checker, the hazards found.
struct JobProfile {
  uint64_t cycles = 0;
  std::array<uint64_t, DRM_NPU_MAX_ENGINES> busy_cycles{};
  std::array<uint64_t, DRM_NPU_MAX_ENGINES> commands{};
  uint64_t dma_bytes_in = 0;
  uint64_t dma_bytes_out = 0;
  uint64_t macs = 0;
  uint64_t vector_elements = 0;
  uint64_t semaphore_stall_cycles = 0;
  ProfileTimeline timeline;          // one entry per executed command, by index
  std::vector<uint32_t> irq_values;  // FENCE interrupts, in order
  RaceReport race;
  // A job the kernel driver ran in parts (preempted at safe points): the switches, each also a
  // DRM_NPU_PROFILE_PREEMPT entry of the timeline; their cycles are part of `cycles`.
  uint32_t preemptions = 0;
  uint64_t preempt_cycles = 0;
};

/// How to run one job.
/// Whether a job that runs serially (emu/device/serial_runner.cpp) uses two host threads
/// (emu/device/lanes.h).
enum class HostLanes : uint8_t {
  Auto,  // by the job's size; NPU_EMU_LANES=0/1 and NPU_EMU_THREADS=1 in the environment decide
  Off,   // one thread
  On,    // two lanes whatever the size (tests)
};

struct JobOptions {
  bool racecheck = false;  // track happens-before and report hazards (docs/racecheck.md)
  HostLanes host_lanes = HostLanes::Auto;
  /// For tests: called on the engine's thread before it starts each command, to perturb how
  /// the host schedules the engine threads (results and cycles must not change).
  std::function<void(uint32_t engine, uint32_t cmd_index)> before_command;
  /// Preemption at safe points (ISA 1.2, npu/isa/safe_points.h). run() executes the program
  /// from command `begin` on: 0, or the command after the safe point where an earlier run()
  /// of the same job stopped (JobResult::resume_at). The device starts drained at cycle 0, as
  /// it is after any safe point, so the cycles and timeline of the rest are those of an
  /// uninterrupted run shifted by the safe point's cycle.
  uint32_t begin = 0;
  /// Asked once at each safe point the run reaches (not one that END follows), with the
  /// virtual cycle (from `begin`) at which it completes; true stops the job there. Unset: the
  /// job runs to its end, as does a program without safe points. Called on a device thread
  /// (the runner or a host lane), one call at a time; it must not call back into the Device.
  std::function<bool(uint64_t cycle)> yield;
};

/// Outcome of one job.
struct JobResult {
  uint32_t status = DRM_NPU_JOB_OK;  // OK, ERROR (fault set) or ABORTED (reset)
  drm_npu_fault fault{};
  JobProfile profile;
  /// Non-zero: the job stopped at the safe point before this command (JobOptions::yield);
  /// run() again with JobOptions::begin = resume_at to finish it. `profile` then covers the
  /// commands from `begin` up to and including the safe point, and `cycles` ends there.
  uint32_t resume_at = 0;
  /// Host work the emulator saved, not the device's behaviour: DMA loads of a serial job that
  /// were not copied because SRAM already held their bytes (emu/device/load_memo.h).
  uint64_t loads_skipped = 0;
  uint64_t load_bytes_skipped = 0;
  /// The job ran serially on the schedule kept from an earlier job of the same program
  /// (isa::Program::id, emu/device/serial_plan.h) instead of replaying it.
  bool plan_reused = false;
  /// Data commands of the job ran on two host lanes (emu/device/lanes.h).
  bool on_lanes = false;
};

class Device {
 public:
  explicit Device(isa::DeviceConfig cfg);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  /// Runs a validated program against `mmu` and blocks until it ends. Faults end the job
  /// with status ERROR and the fault that happened first in virtual time. With
  /// `options.racecheck` the job runs under the synchronization checker
  /// (JobProfile::race); its results and cycles are the same either way.
  JobResult run(const isa::Program& program, const Mmu& mmu, const JobOptions& options = {});

  /// Resets the device: the running job (if any) stops and run() returns status ERROR with a
  /// WATCHDOG fault. The fault names the oldest SEM_WAIT that the program never satisfies, or
  /// the command processor at command 0 when nothing hangs (a slow job): a function of the
  /// program, not of where the threads were. SRAM contents are undefined afterwards. Safe from
  /// any thread.
  void reset();

  /// Overwrites all of SRAM with a pattern derived from `seed`, as another job running
  /// between two parts of a preempted one would (the kernel driver's preemption stress mode,
  /// DeviceConfig::preempt_every_safe_point). Call between jobs (serialised with run()).
  void scramble_sram(uint64_t seed);

  const isa::DeviceConfig& config() const { return cfg_; }

 private:
  struct Impl;
  isa::DeviceConfig cfg_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace npu::emu
