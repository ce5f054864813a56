// Context: an execution context (a job queue with a priority) on a Device.
//
// Semantics: jobs of one context run in submission order; the kernel schedules contexts by
// priority (REALTIME > HIGH > NORMAL > LOW, when DRM_NPU_CAP_PRIORITY) and round-robin within
// a priority. submit() finalizes the command buffer if needed (validating it against the
// device, see command_buffer.h), uploads it and queues it; it returns once the kernel copied
// and checked the buffer, so the CommandBuffer and the Buffers it references may be changed
// or dropped afterwards. SubmitOptions::racecheck runs the job under the device's
// synchronization checker (docs/racecheck.md; Job::hazards() reads the result, Job::races()
// what it found against other contexts' jobs). SubmitOptions::fence_out gives the job a fence
// (npu/fence.h) and SubmitOptions::after makes it wait for others, of any context or process
// (API 1.3). A job that faults (or hangs until the watchdog resets the device)
// bans its context: its queued jobs end ABORTED and later submits fail with ECANCELED;
// state() reports the ban and the fault. Create a new Context to go on.
//
// Errors: submit() names the context and the ioctl errno, e.g. "submit: ctx 3: SUBMIT
// failed: Operation canceled (context banned)"; finalize errors come through unchanged.
//
// Threading: submit() and state() may be called from several threads at once.
// Lifetime: move-only. The kernel context (CTX_DESTROY) goes away when the Context and all
// Jobs submitted on it are gone; it keeps its Device's shared state alive.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "npu/command_buffer.h"
#include "npu/device.h"
#include "npu/expected.h"
#include "npu/fence.h"
#include "npu/job.h"

namespace npu {

enum class Priority : uint32_t {
  kLow = DRM_NPU_PRIORITY_LOW,
  kNormal = DRM_NPU_PRIORITY_NORMAL,
  kHigh = DRM_NPU_PRIORITY_HIGH,
  kRealtime = DRM_NPU_PRIORITY_REALTIME,
};

/// "low", "normal", "high", "realtime".
const char* priority_name(Priority p);
/// The priority named `name` (as priority_name() spells it), or nullopt.
std::optional<Priority> parse_priority(std::string_view name);

struct SubmitOptions {
  /// DRM_NPU_SUBMIT_RACECHECK: report hazards between engines (needs DRM_NPU_CAP_RACECHECK,
  /// EOPNOTSUPP otherwise). Results and cycles are the same either way.
  bool racecheck = false;
  /// DRM_NPU_SUBMIT_FENCE_OUT: the job gets an out-fence (Job::fence()). API 1.3.
  bool fence_out = false;
  /// In-fences: the job starts once all of these signalled; one whose job did not end OK
  /// aborts it (status kAborted, fault DEPENDENCY). At most DRM_NPU_MAX_IN_FENCES. API 1.3.
  std::span<const Fence> after;
};

struct ContextState {
  bool banned = false;
  Priority priority = Priority::kNormal;
  uint32_t reset_count = 0;     // device resets this context caused
  uint64_t last_submitted = 0;  // last seqno handed out
  uint64_t last_completed = 0;  // last seqno retired
  uint64_t fault_seqno = 0;     // job that latched last_fault, 0 when none
  Fault last_fault;
};

class Context {
 public:
  static Expected<Context> create(const Device& device, Priority priority = Priority::kNormal);

  Context(Context&&) noexcept = default;
  Context& operator=(Context&&) noexcept = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context() = default;

  /// Finalizes `cmdbuf` when needed and queues it.
  Expected<Job> submit(CommandBuffer& cmdbuf, const SubmitOptions& options = {});
  Expected<ContextState> state() const;
  /// A new descriptor that becomes readable when a job of this context faults (banning it)
  /// or the device resets: an eventfd counting those events (CTX_EVENTS, API 1.3).
  Expected<UniqueFd> event_fd() const;

  uint32_t id() const;
  Priority priority() const;
  /// The Device this context belongs to.
  Device device() const;
  explicit operator bool() const { return ctx_ != nullptr; }

 private:
  explicit Context(std::shared_ptr<detail::ContextHandle> ctx) : ctx_(std::move(ctx)) {}
  std::shared_ptr<detail::ContextHandle> ctx_;
};

}  // namespace npu
