// Fence: a job's completion as a descriptor (API 1.3: SUBMIT's out-fence), owned RAII.
//
// Semantics: the descriptor becomes readable (poll POLLIN) once the job retired, whatever its
// status, and stays so; status() then reads the job's status from it (the byte the kernel
// wrote, peeked: reading it leaves the fence as it is). A Fence can be dup()ed, sent to
// another process over a UNIX socket (adopt the received descriptor with Fence(fd)), outlive
// the Device, Context and Job it came from, and be named as a dependency of a later job on
// any context of the device, of this process or (through npu-daemon) another:
// SubmitOptions::after. wait_any()/wait_all() wait on several with one deadline by poll(2):
// no device needed. Context::submit's dependencies and the waits need DRM_NPU_CAP_FENCES.
//
// Errors: wait() and the free functions: ETIMEDOUT when the timeout passed (EBUSY for a zero
// timeout), EBADF for an empty Fence; status(): EBUSY before the fence signalled.
//
// Threading: a Fence may be waited on from several threads at once (const calls are poll()s
// and peeks). Lifetime: move-only; the destructor closes the descriptor.
#pragma once

#include <chrono>
#include <cstddef>
#include <span>

#include "npu/expected.h"
#include "npu/job.h"
#include "npu/unique_fd.h"

namespace npu {

class Fence {
 public:
  Fence() = default;
  /// Takes ownership of a fence descriptor (from Job::fence(), received from another
  /// process, ...).
  explicit Fence(UniqueFd fd) : fd_(std::move(fd)) {}

  /// A second descriptor of the same fence (dup(2), close-on-exec).
  Expected<Fence> dup() const;

  /// True once the job retired.
  bool signalled() const;
  /// Waits until the job retired or `timeout` passed (0 polls); the job's status.
  Expected<JobStatus> wait(std::chrono::nanoseconds timeout = Job::kForever) const;
  /// The retired job's status: kOk, kError or kAborted. EBUSY before it signalled.
  Expected<JobStatus> status() const;

  int fd() const { return fd_.get(); }
  /// Gives the descriptor up (the caller closes it).
  int release() { return fd_.release(); }
  explicit operator bool() const { return static_cast<bool>(fd_); }

 private:
  UniqueFd fd_;
};

/// Waits until one of `fences` signalled or `timeout` passed (0 polls): the index of the
/// lowest signalled one.
Expected<size_t> wait_any(std::span<const Fence> fences,
                          std::chrono::nanoseconds timeout = Job::kForever);
/// Waits until every one of `fences` signalled or `timeout` passed (0 polls).
Expected<void> wait_all(std::span<const Fence> fences,
                        std::chrono::nanoseconds timeout = Job::kForever);

}  // namespace npu
