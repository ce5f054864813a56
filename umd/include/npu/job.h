// Job: one submitted command buffer, and the fence that says when it is done.
//
// Semantics: a Job is the (context, sequence number) pair SUBMIT returned; sequence numbers
// of a context start at 1 and grow by one, so a Job is also a point on its context's
// timeline (the fence: once seqno N retired, every earlier job of the context has too).
// wait() blocks until the job retired or the timeout passed and reports how the job ended:
// a job that faulted is not a wait error — wait() succeeds with status kError and the fault
// (kind, engine, command index, address). Wait errors: ETIMEDOUT when the timeout passed
// (the job is still pending and may be waited on again), EBUSY for a zero-timeout poll of an
// unfinished job, ENOENT when the kernel no longer retains the job. A successful result is
// cached, so later wait() calls return it without an ioctl. profile() reads the job's
// statistics and per-command timeline (QUERY JOB_PROFILE, needs DRM_NPU_CAP_JOB_PROFILE);
// hazards() what the synchronization checker found in a job submitted with
// SubmitOptions::racecheck (QUERY JOB_HAZARDS, needs DRM_NPU_CAP_RACECHECK; a job submitted
// without it reports checked = false).
//
// Threading: wait(), profile() and hazards() may be called from several threads at once.
// Lifetime: copyable handle. A Job keeps its context alive (the context is destroyed when
// the Context object and all its Jobs are gone), so it can always be waited on.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "npu/expected.h"
#include "npu/hazard.h"
#include "npu_accel.h"

namespace npu {

namespace detail {
struct ContextHandle;
struct JobCache;
}  // namespace detail

class Fence;

enum class JobStatus : uint32_t {
  kOk = DRM_NPU_JOB_OK,
  kError = DRM_NPU_JOB_ERROR,      // faulted: see JobResult::fault
  kAborted = DRM_NPU_JOB_ABORTED,  // never ran or was stopped (banned, destroyed, reset)
  kTimeout = DRM_NPU_JOB_TIMEOUT,
};

/// Lowercase name: "ok", "error", "aborted", "timeout".
const char* to_string(JobStatus status);

/// The first fault a job met.
struct Fault {
  uint32_t kind = DRM_NPU_FAULT_NONE;  // DRM_NPU_FAULT_*
  uint32_t engine = 0;                 // NPU_ENGINE_*
  uint32_t cmd_index = 0;
  uint64_t address = 0;  // VA (MMU), SRAM offset (SRAM_RANGE), semaphore id (SEMAPHORE)
};

/// Lowercase fault kind name: "none", "parse", "mmu", "sram_range", "semaphore", "watchdog".
const char* fault_kind_name(uint32_t kind);

struct JobResult {
  JobStatus status = JobStatus::kOk;
  Fault fault;
  uint64_t submit_ns = 0, start_ns = 0, end_ns = 0;  // CLOCK_MONOTONIC host times
  uint64_t cycles = 0;                               // modeled device cycles

  bool ok() const { return status == JobStatus::kOk; }
};

/// One executed command in the job's timeline, in cycles from the job's start.
struct CommandTiming {
  uint32_t cmd_index = 0;
  uint16_t engine = 0;  // NPU_ENGINE_*
  uint16_t opcode = 0;  // NPU_OP_*
  uint64_t start_cycle = 0, end_cycle = 0;
};

/// A race the cross-job checker found (drm_npu_job_race): this job and an earlier, unordered
/// job of another context touch the same bytes of one BO, one of them writing.
struct JobRace {
  uint32_t kind = 0;            // DRM_NPU_HAZARD_RAW / _WAR / _WAW, from the earlier job
  bool other_file = false;      // the earlier job is another file's (ctx and seqno unknown)
  uint32_t other_ctx = 0;       // its context in this file
  uint64_t other_seqno = 0;     // its seqno
  uint32_t bo_handle = 0;       // this file's handle of the memory
  uint64_t begin = 0, end = 0;  // offsets in the BO
  uint32_t other_cmd = 0;       // the earlier job's command (0xffffffff: unknown)
  uint32_t this_cmd = 0;        // this job's command (0xffffffff: unknown)
};

/// "RAW on bo 3 [0x0, 0x100): ctx 2 seqno 5 command 3 -> command 7".
std::string describe_race(const JobRace& race);

struct JobProfile {
  uint64_t seqno = 0;
  uint64_t cycles = 0;
  std::array<uint64_t, DRM_NPU_MAX_ENGINES> busy_cycles{};  // per NPU_ENGINE_*
  uint64_t dma_bytes_in = 0, dma_bytes_out = 0;
  uint64_t macs = 0;
  uint64_t vector_elements = 0;
  uint64_t semaphore_stall_cycles = 0;
  /// One entry per executed command; a job preempted at safe points (API 1.4) also has one
  /// DRM_NPU_PROFILE_PREEMPT entry per switch (the safe point's index, the switch's cycles).
  std::vector<CommandTiming> timeline;
  uint32_t preemptions = 0;     // times the job was stopped at a safe point and resumed
  uint64_t preempt_cycles = 0;  // cycles those switches cost (part of `cycles`)

  /// Entries of `timeline` that are commands (not preemptions).
  size_t commands_executed() const;
};

class Job {
 public:
  /// Waits without a deadline.
  static constexpr std::chrono::nanoseconds kForever = std::chrono::nanoseconds::max();

  /// Waits up to `timeout` (0 polls). See the header comment for the errors.
  Expected<JobResult> wait(std::chrono::nanoseconds timeout = kForever) const;
  /// Waits until the absolute CLOCK_MONOTONIC deadline `deadline_ns` (0 polls).
  Expected<JobResult> wait_until(int64_t deadline_ns) const;
  /// Statistics and timeline of a retired job.
  Expected<JobProfile> profile() const;
  /// The synchronization checker's hazards in a retired job.
  Expected<HazardReport> hazards() const;
  /// What the checker found between this job and unordered jobs of other contexts on the
  /// same memory (QUERY JOB_RACES, API 1.3; the job must have been submitted with racecheck).
  Expected<std::vector<JobRace>> races() const;
  /// A descriptor of the job's out-fence (a new one each call), when it was submitted with
  /// SubmitOptions::fence_out; ENOENT otherwise.
  Expected<Fence> fence() const;

  uint32_t context_id() const;
  uint64_t seqno() const { return seqno_; }

 private:
  friend class Context;
  Job(std::shared_ptr<detail::ContextHandle> ctx, uint64_t seqno);

  std::shared_ptr<detail::ContextHandle> ctx_;
  uint64_t seqno_ = 0;
  std::shared_ptr<detail::JobCache> cache_;
  std::shared_ptr<const Fence> fence_;  // the out-fence, when asked for
};

/// CLOCK_MONOTONIC now, in ns (the clock of deadlines and JobResult times).
int64_t monotonic_ns();

}  // namespace npu
