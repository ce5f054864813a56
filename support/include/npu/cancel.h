// Cooperative cancellation of long loops, shared by the emulator's engine kernels and the
// host's reference operators: a loop that may run long polls npu::cancelled() between blocks
// of work (an output row, a tile) and stops early when it returns true, leaving its output
// partly written; its caller then reports the cancellation (a device reset, a run's time limit)
// instead of a result.
//
// A CancelScope installs, for the calling thread and until it is destroyed, a flag another
// thread may set (the device's reset) and/or a deadline on the steady clock (a run's
// --timeout-ms); scopes nest, the inner one replacing the outer until it ends. With no scope
// cancelled() is false. Threading: the state is thread-local; the flag is read with relaxed
// loads (cancellation is advisory: it stops work, it does not order memory).
#pragma once

#include <atomic>
#include <chrono>

namespace npu {

/// True once the flag of this thread's innermost CancelScope is set or its deadline passed.
bool cancelled();

class CancelScope {
 public:
  using Clock = std::chrono::steady_clock;

  /// Cancelled when `*flag` becomes true (a null flag never cancels).
  explicit CancelScope(const std::atomic<bool>* flag);
  /// Cancelled once Clock::now() passes `deadline`.
  explicit CancelScope(Clock::time_point deadline);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

  struct State {
    const std::atomic<bool>* flag = nullptr;
    Clock::time_point deadline = Clock::time_point::max();
  };

  /// The calling thread's state (flag and deadline of its innermost scope), to hand to another
  /// thread that works on the same job.
  static State current();
  /// Installs `state` (taken from current() on another thread) for the calling thread.
  explicit CancelScope(const State& state);

 private:
  State previous_;
};

}  // namespace npu
