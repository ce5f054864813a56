// parallel_for (emu/kernels/parallel.h): every index is handed out exactly once, split or
// not; chunks go to whoever claims them, so a caller never waits for chunks the worker has not
// claimed; a caller that finds the worker busy runs its range alone; the worker honours the
// caller's cancellation. (Bit-exactness of split GEMMs: kernels_matrix_test.cpp.)
#include "parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "cancel.h"

namespace npu::emu::kern {
namespace {

using namespace std::chrono_literals;

bool two_cpus() {
  return std::thread::hardware_concurrency() >= 2;
}

/// Polls until `cond` or a generous timeout (a loaded machine, TSan); returns cond().
template <class Cond>
bool eventually(Cond&& cond) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(ParallelFor, CoversEveryIndexOnce) {
  for (size_t n : {0u, 1u, 2u, 3u, 17u, 1000u, 70000u}) {
    for (bool split : {false, true}) {
      std::vector<std::atomic<int>> hits(n);
      std::atomic<size_t> widest{0};
      parallel_for(n, split, [&](Claims& claims) {
        for (size_t first = 0, last = 0; claims.next(first, last);) {
          EXPECT_LT(first, last);
          size_t w = widest.load();
          while (last - first > w && !widest.compare_exchange_weak(w, last - first)) {
          }
          for (size_t i = first; i < last; ++i) ++hits[i];
        }
      });
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << i;
      // One index per chunk; a shared range of more than 65535 indices in chunks of a few.
      if (n > 0) {
        EXPECT_EQ(widest.load(), split && n > 0xFFFF ? 2u : 1u) << n;
      }
    }
  }
}

TEST(ParallelFor, WithoutSplitOnlyTheCallerRuns) {
  const auto me = std::this_thread::get_id();
  const uint64_t before = worker_chunks();
  size_t count = 0;
  parallel_for(100, false, [&](Claims& claims) {
    EXPECT_EQ(std::this_thread::get_id(), me);
    for (size_t first = 0, last = 0; claims.next(first, last);) count += last - first;
  });
  EXPECT_EQ(count, 100u);
  EXPECT_EQ(worker_chunks(), before);
}

// The worker takes one chunk and then stalls (as a descheduled thread would): the caller runs
// every other chunk itself and waits only for that one.
TEST(ParallelFor, CallerRunsWhatTheWorkerHasNotClaimed) {
  if (!two_cpus()) GTEST_SKIP() << "one CPU";
  const auto me = std::this_thread::get_id();
  constexpr size_t kN = 200;
  std::vector<std::atomic<int>> by_worker(kN), by_caller(kN);
  std::atomic<bool> worker_in{false}, caller_done{false};
  bool worker_came = true;
  const uint64_t before = worker_chunks();
  parallel_for(kN, true, [&](Claims& claims) {
    const bool caller = std::this_thread::get_id() == me;
    if (caller) worker_came = eventually([&] { return worker_in.load(); });
    for (size_t first = 0, last = 0; claims.next(first, last);) {
      for (size_t i = first; i < last; ++i) ++(caller ? by_caller : by_worker)[i];
      if (!caller) {
        worker_in = true;
        EXPECT_TRUE(eventually([&] { return caller_done.load(); }));
      }
    }
    if (caller) caller_done = true;
  });
  ASSERT_TRUE(worker_came) << "the worker never ran";
  size_t worker_total = 0, caller_total = 0;
  for (size_t i = 0; i < kN; ++i) {
    EXPECT_EQ(by_worker[i] + by_caller[i], 1) << i;
    worker_total += static_cast<size_t>(by_worker[i].load());
    caller_total += static_cast<size_t>(by_caller[i].load());
  }
  EXPECT_EQ(worker_total, 1u);
  EXPECT_EQ(caller_total, kN - 1);
  EXPECT_EQ(worker_chunks() - before, 1u);
}

// While the worker is held inside one caller's range, another caller runs alone and does not
// wait for it.
TEST(ParallelFor, BusyWorkerMeansTheCallerRunsAlone) {
  if (!two_cpus()) GTEST_SKIP() << "one CPU";
  std::atomic<bool> worker_in{false}, release{false};
  std::atomic<int> first_total{0};
  std::atomic<bool> worker_came{true};
  std::thread first([&] {
    const auto me = std::this_thread::get_id();
    parallel_for(4, true, [&](Claims& claims) {
      const bool caller = std::this_thread::get_id() == me;
      if (caller) worker_came = eventually([&] { return worker_in.load(); });
      for (size_t b = 0, e = 0; claims.next(b, e);) {
        first_total += static_cast<int>(e - b);
        if (!caller) {
          worker_in = true;
          EXPECT_TRUE(eventually([&] { return release.load(); }));
        }
      }
    });
  });
  ASSERT_TRUE(eventually([&] { return worker_in.load() || !worker_came; }));
  if (worker_in) {
    const auto me = std::this_thread::get_id();
    std::vector<int> hits(50);
    parallel_for(hits.size(), true, [&](Claims& claims) {
      EXPECT_EQ(std::this_thread::get_id(), me);
      for (size_t b = 0, e = 0; claims.next(b, e);)
        for (size_t i = b; i < e; ++i) ++hits[i];
    });
    for (int h : hits) EXPECT_EQ(h, 1);
  }
  release = true;
  first.join();
  ASSERT_TRUE(worker_came) << "the worker never ran";
  EXPECT_EQ(first_total.load(), 4);
}

TEST(ParallelFor, ConcurrentCallersAllFinish) {
  std::atomic<long> sum{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < 200; ++r) {
        parallel_for(64, true, [&](Claims& claims) {
          for (size_t b = 0, e = 0; claims.next(b, e);)
            for (size_t i = b; i < e; ++i) sum += static_cast<long>(i);
        });
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(sum.load(), 4L * 200L * (63L * 64L / 2L));
}

// The caller's flag is set while the worker holds a chunk: the worker sees it (cancelled())
// and claims nothing more; the caller claims nothing more either.
TEST(ParallelFor, WorkerHonoursTheCallersCancelFlag) {
  if (!two_cpus()) GTEST_SKIP() << "one CPU";
  std::atomic<bool> flag{false};
  const CancelScope scope(&flag);
  const auto me = std::this_thread::get_id();
  constexpr size_t kN = 1000;
  std::vector<std::atomic<int>> hits(kN);
  std::atomic<bool> worker_in{false};
  std::atomic<int> worker_saw_before{-1}, worker_saw_after{-1}, worker_more{0}, caller_more{0};
  bool worker_came = true;
  parallel_for(kN, true, [&](Claims& claims) {
    size_t b = 0, e = 0;
    if (std::this_thread::get_id() == me) {
      worker_came = eventually([&] { return worker_in.load(); });
      flag = true;
      while (claims.next(b, e)) ++caller_more;
      return;
    }
    ASSERT_TRUE(claims.next(b, e));
    for (size_t i = b; i < e; ++i) ++hits[i];
    worker_saw_before = cancelled() ? 1 : 0;
    worker_in = true;
    EXPECT_TRUE(eventually([&] { return flag.load(); }));
    while (claims.next(b, e)) ++worker_more;
    worker_saw_after = cancelled() ? 1 : 0;
  });
  ASSERT_TRUE(worker_came) << "the worker never ran";
  EXPECT_EQ(worker_saw_before.load(), 0);
  EXPECT_EQ(worker_saw_after.load(), 1);
  EXPECT_EQ(worker_more.load(), 0);
  EXPECT_EQ(caller_more.load(), 0);
  int total = 0;
  for (auto& h : hits) total += h.load();
  EXPECT_EQ(total, 1);
}

TEST(ParallelFor, PassedDeadlineRunsNothing) {
  const CancelScope scope(CancelScope::Clock::now() - 1s);
  std::atomic<int> ran{0};
  parallel_for(100, true, [&](Claims& claims) {
    for (size_t b = 0, e = 0; claims.next(b, e);) ++ran;
  });
  EXPECT_EQ(ran.load(), 0);
}

TEST(ParallelFor, ThresholdSetting) {
  const uint64_t saved = split_threshold();
  set_split_threshold(1000);
  EXPECT_FALSE(worth_splitting(10, 10, 10));  // narrower than kSplitMinN
  EXPECT_TRUE(worth_splitting(1, kSplitMinN, 1000 / kSplitMinN + 1));
  EXPECT_FALSE(worth_splitting(1, kSplitMinN, 1000 / kSplitMinN - 1));
  EXPECT_FALSE(worth_splitting(1000, kSplitMinN - 1, 1000));
  set_split_threshold(0);  // tests: every GEMM, whatever its width
  EXPECT_TRUE(worth_splitting(2, 1, 1));
  set_split_threshold(saved);
  EXPECT_TRUE(ranges_overlap(0, 10, 9, 1));
  EXPECT_FALSE(ranges_overlap(0, 10, 10, 5));
}

}  // namespace
}  // namespace npu::emu::kern
