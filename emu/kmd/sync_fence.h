// SyncFence: a job's out-fence (SUBMIT with DRM_NPU_SUBMIT_FENCE_OUT), the driver's side of
// the descriptor user space holds (handed out through a PeerTable, as the kernel hands out a
// sync_file). It signals once, when its job retires, whatever the job's status: the driver
// writes one byte — the DRM_NPU_JOB_* status — to its end of the socket pair and shuts it
// down, so the user's end becomes readable (POLLIN) for good: the status byte, then end of
// stream. Jobs that name the fence as an in-fence wait for it in the scheduler, and a
// dependency that did not end OK aborts them.
//
// Threading: signalled/status are written under the scheduler lock and read under it, or
// through the atomics by PeerTable::sweep() and FENCE_WAIT. Lifetime: shared by the fence
// table (while a copy of the user's descriptor is open), the job that signals it and the jobs
// that depend on it.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "npu_accel.h"

namespace npu::emu::kmd {

struct SyncFence {
  uint64_t job_id = 0;  // the device-unique id of the job that signals it
  // Ids of the jobs this fence's job waits for, directly or through their fences (the
  // synchronization checker's happens-before across jobs).
  std::vector<uint64_t> ancestors;
  int kernel_fd = -1;  // the driver's end (owned by the fence table)
  std::atomic<bool> signalled{false};
  std::atomic<uint32_t> status{DRM_NPU_JOB_OK};

  /// Signals with the job's status (once; the scheduler calls it as the job retires).
  void signal(uint32_t job_status) {
    if (signalled.load(std::memory_order_acquire)) return;
    status.store(job_status, std::memory_order_relaxed);
    const auto byte = static_cast<uint8_t>(job_status);
    // The user may have closed every copy already: nothing to tell then (no SIGPIPE).
    (void)::send(kernel_fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    ::shutdown(kernel_fd, SHUT_WR);
    signalled.store(true, std::memory_order_release);  // after the write: sweep may close
  }

  /// PeerTable: the end may be closed once the fence has signalled through it.
  bool may_release() const { return signalled.load(std::memory_order_acquire); }
};

}  // namespace npu::emu::kmd
