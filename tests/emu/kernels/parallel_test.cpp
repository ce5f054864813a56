// parallel_for2 (emu/kernels/parallel.h): every index is covered exactly once, split or not;
// concurrent callers fall back to running serially; the worker runs under the caller's cancel
// flag. (Bit-exactness of the split GEMMs is checked by the conv/matmul cases large enough to
// split in kernels_matrix_test.cpp.)
#include "parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "cancel.h"

namespace npu::emu::kern {
namespace {

TEST(ParallelFor2, CoversEveryIndexOnce) {
  for (size_t n : {0u, 1u, 2u, 3u, 17u, 1000u}) {
    for (bool split : {false, true}) {
      std::vector<std::atomic<int>> hits(n);
      std::atomic<int> calls{0};
      parallel_for2(n, split, [&](size_t b, size_t e) {
        ++calls;
        for (size_t i = b; i < e; ++i) ++hits[i];
      });
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << n << " " << i;
      if (!split || n < 2) EXPECT_EQ(calls.load(), 1) << n;
    }
  }
}

TEST(ParallelFor2, SplitsAcrossTwoThreads) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one CPU";
  std::vector<std::thread::id> ids(2);
  parallel_for2(2, true, [&](size_t b, size_t) { ids[b] = std::this_thread::get_id(); });
  EXPECT_EQ(ids[0], std::this_thread::get_id());
  EXPECT_NE(ids[1], std::this_thread::get_id());
}

TEST(ParallelFor2, ConcurrentCallersAllFinish) {
  std::atomic<long> sum{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < 200; ++r) {
        parallel_for2(64, true, [&](size_t b, size_t e) {
          for (size_t i = b; i < e; ++i) sum += static_cast<long>(i);
        });
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(sum.load(), 4L * 200L * (63L * 64L / 2L));
}

TEST(ParallelFor2, WorkerSeesTheCallersCancelFlag) {
  const std::atomic<bool> flag{true};
  const CancelScope scope(&flag);
  std::vector<int> seen(2, -1);
  parallel_for2(2, true, [&](size_t b, size_t) { seen[b] = cancelled() ? 1 : 0; });
  EXPECT_EQ(seen[0], 1);
  EXPECT_EQ(seen[1], 1);
}

}  // namespace
}  // namespace npu::emu::kern
