// Concurrency: several threads submit to several contexts (in one and in separate files) at
// once; every job's result must be right. Run under TSan in CI.
#include <thread>

#include "kmd_fixture.h"

namespace npu::emu::test {
namespace {

void worker(Client& c, int id, int jobs, int* failures) {
  const uint32_t ctx = c.ctx(static_cast<uint32_t>(id % 4));
  constexpr uint32_t kBytes = 1024;
  const BoHandle src = c.bo(kBytes);
  const BoHandle dst = c.bo(kBytes);
  std::byte* in = c.map(src);
  std::byte* out = c.map(dst);
  const auto job = copy_job(src.va, dst.va, kBytes);
  const BoHandle cmd = c.upload(job);
  for (int j = 0; j < jobs; ++j) {
    const auto pattern = static_cast<uint8_t>(id * 16 + j);
    std::memset(in, pattern, kBytes);
    uint64_t seqno = 0;
    drm_npu_wait w{};
    if (c.submit(ctx, cmd, job.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kW)}, 0, &seqno) !=
            0 ||
        c.wait(ctx, seqno, deadline_ms(20000), &w) != 0 || w.status != DRM_NPU_JOB_OK) {
      ++*failures;
      return;
    }
    for (uint32_t i = 0; i < kBytes; ++i) {
      if (out[i] != std::byte{pattern}) {
        ++*failures;
        return;
      }
    }
  }
}

TEST(KmdStress, ConcurrentSubmittersGetCorrectResults) {
  Kmd kmd;
  Client shared(kmd);  // threads 0..3 share one file (one address space)
  std::vector<std::unique_ptr<Client>> own;
  constexpr int kThreads = 8;
  constexpr int kJobs = 40;
  for (int t = 4; t < kThreads; ++t) own.push_back(std::make_unique<Client>(kmd));
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    Client& c = t < 4 ? shared : *own[t - 4];
    threads.emplace_back(worker, std::ref(c), t, kJobs, &failures[t]);
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
  drm_npu_counters k{};
  ASSERT_EQ(shared.query(DRM_NPU_QUERY_COUNTERS, &k), 0);
  EXPECT_EQ(k.jobs_completed, uint64_t{kThreads} * kJobs);
}

// Many submits without waiting in between, from several threads, then wait for the last
// of each context: every job retires OK and in order.
TEST(KmdStress, PipelinedSubmits) {
  Kmd kmd;
  Client c(kmd);
  const auto empty = empty_job();
  const BoHandle e = c.upload(empty);
  constexpr int kThreads = 4;
  constexpr int kJobs = 500;
  std::vector<uint32_t> ctxs;
  for (int t = 0; t < kThreads; ++t) ctxs.push_back(c.ctx());
  std::vector<std::thread> threads;
  std::vector<int> errors(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int j = 0; j < kJobs; ++j) {
        uint64_t seqno = 0;
        if (c.submit(ctxs[t], e, empty.size(), {ref(e, kR)}, 0, &seqno) != 0 ||
            seqno != static_cast<uint64_t>(j + 1)) {
          ++errors[t];
        }
      }
      drm_npu_wait w{};
      if (c.wait(ctxs[t], kJobs, deadline_ms(20000), &w) != 0 || w.status != DRM_NPU_JOB_OK) {
        ++errors[t];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], 0);
    EXPECT_EQ(c.ctx_state(ctxs[t]).last_completed, static_cast<uint64_t>(kJobs));
  }
}

}  // namespace
}  // namespace npu::emu::test
