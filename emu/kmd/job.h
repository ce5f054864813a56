// Job: one SUBMIT on its way through the scheduler. The submit path fills the inputs
// (validated program, Mmu of exactly the referenced BOs, references that keep those BOs'
// memory alive); once queued, only the scheduler's runner touches the inputs and drops them
// as soon as the device is done. The results are guarded by the scheduler lock and stay
// readable (WAIT, QUERY JOB_PROFILE) while the job is in its context's retention window.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "bo.h"
#include "npu/emu/device.h"
#include "npu/emu/mmu.h"
#include "npu/isa/validate.h"
#include "npu_accel.h"
#include "sync_fence.h"

namespace npu::emu::kmd {

class Context;

struct Job {
  /// A BO the job lists, for the cross-job race checker: which memory, how, under which
  /// handle of the submitting file.
  struct BoUse {
    uint64_t mem_id = 0;
    uint64_t size = 0;
    uint32_t handle = 0;
    uint8_t access = 0;
  };
  /// Bytes one command touches in one BO's memory (offsets in it), for the checker.
  struct Touch {
    uint64_t mem_id = 0;
    uint64_t begin = 0;
    uint64_t end = 0;
    uint8_t access = 0;
    drm_npu_hazard_cmd cmd{};
  };

  Job() = default;
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  ~Job() { release_inputs(); }

  Context* ctx = nullptr;  // valid while queued or running (contexts drain before dying)
  uint64_t seqno = 0;
  uint64_t id = 0;  // unique on the device (the scheduler's count of accepted jobs)

  // API 1.3 fences (scheduler lock once queued): the in-fences the job waits for, and its own
  // out-fence, signalled as it retires.
  std::vector<std::shared_ptr<SyncFence>> deps;
  std::shared_ptr<SyncFence> out_fence;
  // Ids of the jobs ordered before this one through fences (directly or transitively).
  std::vector<uint64_t> ancestors;
  // Footprint for the cross-job checker, fixed at SUBMIT: every listed BO, and (jobs under
  // the checker) every command's bytes.
  std::vector<BoUse> bo_uses;
  std::vector<Touch> touches;
  // What the cross-job checker found at SUBMIT (QUERY JOB_RACES).
  std::vector<drm_npu_job_race> races;
  uint64_t races_total = 0;

  // Inputs.
  std::shared_ptr<const isa::Program> program;  // never null once submitted
  Mmu mmu;
  std::vector<std::shared_ptr<BoMemory>> bos;
  bool racecheck = false;    // SUBMIT's RACECHECK flag or the device config's racecheck
  bool log_hazards = false;  // checked for the config (NPU_RACECHECK), not at the caller's request

  // Results (scheduler lock).
  bool retired = false;
  uint32_t status = DRM_NPU_JOB_OK;
  drm_npu_fault fault{};
  uint64_t submit_ns = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  JobProfile profile;  // with preemption, the parts that ran so far until it retires

  bool counted_in_flight = false;  // the scheduler raised jobs_in_flight of every BO in `bos`

  // Preemption (scheduler lock): the command the next part starts at (0: the job has not run
  // yet), and why the running part was asked to stop (set by the yield decision).
  uint32_t resume_at = 0;
  enum class Yield : uint8_t { kNone, kHigherPriority, kTimeSlice, kStress };
  Yield yield_reason = Yield::kNone;

  /// Drops the inputs (program, Mmu, BO references); the BOs' in-flight counts go down.
  void release_inputs() {
    program.reset();
    mmu = {};
    if (counted_in_flight) {
      for (const auto& m : bos) m->jobs_in_flight.fetch_sub(1, std::memory_order_release);
      counted_in_flight = false;
    }
    bos.clear();
    bos.shrink_to_fit();
  }
};

}  // namespace npu::emu::kmd
