// WaitWord (npu/emu/wait_word.h) and SpinMutex (npu/emu/spin_mutex.h): the hand-off words and
// the lock of the device's host lanes.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "npu/emu/spin_mutex.h"
#include "npu/emu/spin_wait.h"
#include "npu/emu/wait_word.h"

namespace npu::emu {
namespace {

// What the lanes saw with std::atomic::wait: a thread parked on one 64-byte-aligned word made
// every notify on another one a FUTEX_WAKE system call. A notify here calls the kernel only
// for a thread parked on its own word.
TEST(WaitWord, NotifyCallsTheKernelOnlyForAThreadParkedOnThatWord) {
  struct alignas(64) Words {
    WaitWord parked_on;
    alignas(64) WaitWord other;
  } w;
  std::thread sleeper(
      [&] { spin_then_wait(w.parked_on, [&] { return w.parked_on.load() != 0; }); });
  // Let it park (the spin is 20 µs); the test holds whether or not it has.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const uint64_t before = WaitWord::wake_calls();
  for (int i = 0; i < 10'000; ++i) {
    w.other.fetch_add(1, std::memory_order_acq_rel);
    w.other.notify_one();
    w.other.notify_all();
  }
  EXPECT_EQ(WaitWord::wake_calls(), before);
  w.parked_on.fetch_add(1, std::memory_order_acq_rel);
  w.parked_on.notify_one();
  sleeper.join();  // hangs (ctest's timeout) if the wake was lost
}

// Two threads hand a token back and forth, each parking (no spin) until it is its turn: a lost
// wake-up hangs the test.
TEST(WaitWord, PingPongWithParkingLosesNoWakeUp) {
  WaitWord turn;
  constexpr uint32_t kRounds = 20'000;
  auto player = [&](uint32_t parity) {
    for (uint32_t i = parity; i < 2 * kRounds; i += 2) {
      for (;;) {
        const uint32_t seen = turn.load(std::memory_order_acquire);
        if (seen == i) break;
        turn.wait(seen);
      }
      turn.fetch_add(1, std::memory_order_acq_rel);
      turn.notify_all();
    }
  };
  std::thread a(player, 0), b(player, 1);
  a.join();
  b.join();
  EXPECT_EQ(turn.load(), 2 * kRounds);
}

TEST(SpinMutex, ExcludesAndPublishes) {
  SpinMutex mu;
  uint64_t count = 0;  // plain: the lock orders every access (TSan checks)
  std::vector<uint64_t> log;
  auto work = [&] {
    for (int i = 0; i < 100'000; ++i) {
      const std::lock_guard lk(mu);
      ++count;
      if (i % 1000 == 0) log.push_back(count);
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  EXPECT_EQ(count, 200'000u);
  EXPECT_EQ(log.size(), 200u);
  EXPECT_TRUE(mu.try_lock());
  EXPECT_FALSE(mu.try_lock());
  mu.unlock();
}

}  // namespace
}  // namespace npu::emu
