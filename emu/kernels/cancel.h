// Cancellation of a running command: a device reset must stop an engine mid-command, as a
// hardware watchdog does, so long loops poll cancelled() between blocks of work and stop
// early, leaving their output partly written (the job is failed anyway).
#pragma once

#include <atomic>

namespace npu::emu::kern {

/// True once the flag installed for this thread by a CancelScope is set.
bool cancelled();

/// Installs a cancel flag for the calling thread for one command.
class CancelScope {
 public:
  explicit CancelScope(const std::atomic<bool>* flag);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const std::atomic<bool>* previous_;
};

}  // namespace npu::emu::kern
