// Private: how a host operator's loop polls for cancellation. npu::cancelled() (npu/cancel.h)
// reads the thread's CancelScope, and with a deadline the clock, so a loop asks it once per
// block of work instead of once per element: WorkPoll counts the elements done and polls once
// every kElements of them. When it says stop, the operator returns an error and run()
// reports the deadline (ETIMEDOUT). Threading: one per loop, on the calling thread.
#pragma once

#include <cstdint>

#include "npu/cancel.h"

namespace npu::ops::detail {

class WorkPoll {
 public:
  static constexpr int64_t kElements = int64_t{1} << 16;

  /// Records `elements` more of work; true when the call was cancelled (polled once per
  /// kElements).
  bool stop(int64_t elements) {
    left_ -= elements;
    if (left_ > 0) return false;
    left_ = kElements;
    return cancelled();
  }

 private:
  int64_t left_ = 0;  // the first call polls
};

}  // namespace npu::ops::detail
