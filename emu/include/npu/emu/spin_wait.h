// Brief spinning before parking, for the hand-offs of the emulated device and kernel driver
// (the command processor and its engines, the scheduler's runner and WAIT): a thread that is
// about to sleep first polls its condition for a few microseconds, because a wake-up from a
// futex on an idle CPU costs tens of microseconds while the condition usually turns true
// within a few. The spin pauses the CPU and then yields it, so a spinning thread gives way to
// runnable work on a busy machine.
//
// Threading: the functions only read through `ready`; callers bring their own memory order
// (ready() should load with acquire). Header-only, no state.
#pragma once

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include "npu/emu/wait_word.h"

namespace npu::emu {

/// How long a thread polls before it parks.
inline constexpr std::chrono::microseconds kSpinBudget{20};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// Polls ready() for up to `budget`: 64 pause instructions, then sched_yield() between polls.
/// Returns whether ready() became true.
template <typename Ready>
bool spin_until(Ready&& ready, std::chrono::microseconds budget = kSpinBudget) {
  for (int i = 0; i < 64; ++i) {
    if (ready()) return true;
    cpu_relax();
  }
  const auto deadline = std::chrono::steady_clock::now() + budget;
  do {
    for (int i = 0; i < 16; ++i) {
      if (ready()) return true;
      cpu_relax();
    }
    sched_yield();
  } while (std::chrono::steady_clock::now() < deadline);
  return ready();
}

/// Waits until ready(): spins (spin_until), then parks on `word` (WaitWord::wait), re-checking
/// each time `word` changes. Whoever makes ready() true must afterwards change `word` by a
/// read-modify-write (fetch_add, exchange) and call word.notify_all() (or notify_one when one
/// thread waits on it); see wait_word.h.
template <typename Ready>
void spin_then_wait(const WaitWord& word, Ready&& ready,
                    std::chrono::microseconds budget = kSpinBudget) {
  if (spin_until(ready, budget)) return;
  for (;;) {
    const uint32_t seen = word.load(std::memory_order_acquire);
    if (ready()) return;
    word.wait(seen);
  }
}

}  // namespace npu::emu
