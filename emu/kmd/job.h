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

namespace npu::emu::kmd {

class Context;

struct Job {
  Job() = default;
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  ~Job() { release_inputs(); }

  Context* ctx = nullptr;  // valid while queued or running (contexts drain before dying)
  uint64_t seqno = 0;

  // Inputs.
  isa::Program program;
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
  JobProfile profile;

  bool counted_in_flight = false;  // the scheduler raised jobs_in_flight of every BO in `bos`

  /// Drops the inputs (program, Mmu, BO references); the BOs' in-flight counts go down.
  void release_inputs() {
    program = {};
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
