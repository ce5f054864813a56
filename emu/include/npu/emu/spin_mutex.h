// SpinMutex: a lock for critical sections of a few dozen instructions that two busy threads
// (the device's host lanes) take thousands of times per job. A contended std::mutex puts the
// waiter to sleep in the kernel and makes the holder wake it, two system calls for a wait of
// nanoseconds (LoadMemo on the lanes: about 390 futex calls per ResNet-50 int8 inference). A
// waiter here polls as spin_until() does (pause, then sched_yield between polls), so a holder
// that lost its CPU on a loaded machine gets it back.
//
// Threading: BasicLockable and Lockable (std::lock_guard, std::scoped_lock); not recursive.
// Lifetime: must be unlocked when destroyed.
#pragma once

#include <atomic>

#include "npu/emu/spin_wait.h"

namespace npu::emu {

class SpinMutex {
 public:
  void lock() {
    // spin_until's polls: pause, then sched_yield between polls, for as long as it is held.
    while (locked_.exchange(true, std::memory_order_acquire))
      spin_until([&] { return !locked_.load(std::memory_order_relaxed); });
  }
  bool try_lock() {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace npu::emu
