// WaitWord: a 32-bit atomic counter that threads park on (a Linux futex), whose notify makes a
// system call only when a thread is parked on this very word.
//
// Why not std::atomic<uint32_t>::wait/notify: libstdc++ counts parked threads in a table of
// 16 slots picked by bits 2-5 of the word's address, so every 64-byte-aligned word shares the
// first slot, and notify_one() on any such word makes a FUTEX_WAKE system call while any thread
// of the process is parked on any other. The kernels' worker (parallel.h) parks on one for
// as long as the lanes run a job, and then each lane hand-off paid a system call: ResNet-50
// int8 made about 1,700 FUTEX_WAKEs per inference, 3-5 µs each on a paravirtualized guest.
//
// Protocol (as with std::atomic::wait): whoever changes what a parked thread waits for changes
// the word with a read-modify-write (fetch_add, exchange) and then calls notify_one() or
// notify_all(). A waiter adds itself to the word's count of parked threads before it compares
// the word, and a notify reads that count by a read-modify-write after the caller's one on the
// word: the two count updates are ordered, so either the notify sees the waiter (and wakes
// it) or the waiter's update synchronizes with the notify's, and its compare (and the
// kernel's) sees the new value. The count sits next to the word, whose cache line the
// notifier has just written, so a notify with nobody parked costs one uncontended
// read-modify-write.
//
// Threading: every method may be called from any thread. Lifetime: a parked thread must be
// woken (or time out of its wait) before the word is destroyed.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

namespace npu::emu {

class WaitWord {
 public:
  WaitWord() = default;
  WaitWord(const WaitWord&) = delete;
  WaitWord& operator=(const WaitWord&) = delete;

  uint32_t load(std::memory_order o = std::memory_order_seq_cst) const { return value_.load(o); }
  void store(uint32_t v, std::memory_order o = std::memory_order_seq_cst) { value_.store(v, o); }
  uint32_t fetch_add(uint32_t n, std::memory_order o = std::memory_order_seq_cst) {
    return value_.fetch_add(n, o);
  }
  uint32_t exchange(uint32_t v, std::memory_order o = std::memory_order_seq_cst) {
    return value_.exchange(v, o);
  }

  /// Parks the calling thread while the word holds `seen`. It may return early (a signal, a
  /// wake meant for another waiter): callers re-check their condition.
  void wait(uint32_t seen) const {
    parked_.fetch_add(1, std::memory_order_acq_rel);
    if (value_.load(std::memory_order_acquire) == seen)
      futex(FUTEX_WAIT_PRIVATE, static_cast<int>(seen));
    parked_.fetch_sub(1, std::memory_order_relaxed);
  }

  /// Wakes one / every thread parked on the word, if any is (after a read-modify-write).
  void notify_one() const { notify(1); }
  void notify_all() const { notify(INT_MAX); }

  /// FUTEX_WAKE system calls made by every WaitWord of the process (tests).
  static uint64_t wake_calls() { return wake_calls_.load(std::memory_order_relaxed); }

 private:
  void notify(int n) const {
    if (parked_.fetch_add(0, std::memory_order_acq_rel) == 0) return;
    wake_calls_.fetch_add(1, std::memory_order_relaxed);
    futex(FUTEX_WAKE_PRIVATE, n);
  }
  void futex(int op, int val) const {
    // The kernel reads the word itself: std::atomic<uint32_t> is a plain 32-bit word here.
    static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
    syscall(SYS_futex, reinterpret_cast<const uint32_t*>(&value_), op, val, nullptr, nullptr, 0);
  }

  std::atomic<uint32_t> value_{0};
  mutable std::atomic<uint32_t> parked_{0};  // threads in wait(), next to the word it guards
  static inline std::atomic<uint64_t> wake_calls_{0};
};

}  // namespace npu::emu
