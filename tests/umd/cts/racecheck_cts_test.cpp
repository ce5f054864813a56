// Conformance: the synchronization checker through libnpu — SubmitOptions::racecheck,
// Job::hazards(), the report's text and JSON, and a deadlock refused at finalize.
#include <gmock/gmock.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "cts.h"
#include "npu/hazard.h"
#include "npu/job_report.h"
#include "npu/trace.h"

namespace npu::cts {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

class RacecheckCts : public ContextCtsTest {
 protected:
  /// record_relu() with the vector engine's wait for the load moved after the relu when
  /// `racy`: then the relu (command 4) may read the tile before dma_in (command 1) wrote it.
  void record(CommandBuffer& cb, const Buffer& src, const Buffer& dst, bool racy) {
    constexpr uint32_t n = 64;
    cb.marker(NPU_ENGINE_DMA_IN, 7);
    cb.dma_load(src, 0, {.sram = 0, .elem_size = 4, .size = {n, 1, 1}});
    cb.sem_signal(NPU_ENGINE_DMA_IN, 0);
    if (!racy) cb.sem_wait(NPU_ENGINE_VECTOR, 0);
    cb.marker(NPU_ENGINE_VECTOR, 8);
    cb.activation({.func = NPU_ACT_RELU,
                   .dtype = NPU_DTYPE_FP32,
                   .shape = {1, 1, 1, n},
                   .in_addr = 0,
                   .out_addr = 4096});
    if (racy) cb.sem_wait(NPU_ENGINE_VECTOR, 0);
    cb.sem_signal(NPU_ENGINE_VECTOR, 1);
    cb.sem_wait(NPU_ENGINE_DMA_OUT, 1);
    cb.dma_store(dst, 0, {.sram = 4096, .elem_size = 4, .size = {n, 1, 1}});
  }

  Expected<HazardReport> run(bool racy, bool racecheck) {
    Buffer src = floats(std::vector<float>(64, 1.0f));
    Buffer dst = floats(std::vector<float>(64));
    CommandBuffer cb(*device_);
    record(cb, src, dst, racy);
    auto job = ctx_->submit(cb, {.racecheck = racecheck});
    if (!job) return job.error();
    auto r = job->wait(5s);
    if (!r) return r.error();
    EXPECT_TRUE(r->ok());
    return job->hazards();
  }
};
NPU_CTS_INSTANTIATE(RacecheckCts);

TEST_P(RacecheckCts, DeviceAdvertisesTheChecker) {
  EXPECT_TRUE(device_->params().has(DRM_NPU_CAP_RACECHECK));
}

TEST_P(RacecheckCts, RacyJobReportsTheHazard) {
  auto h = run(true, true);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_TRUE(h->checked);
  EXPECT_FALSE(h->partial);
  EXPECT_EQ(h->total, 1u);
  ASSERT_EQ(h->hazards.size(), 1u);
  const Hazard want{HazardKind::kRaw,
                    MemorySpace::kSram,
                    0,
                    256,
                    {1, NPU_ENGINE_DMA_IN, NPU_OP_DMA_LOAD},
                    {4, NPU_ENGINE_VECTOR, NPU_OP_ACTIVATION}};
  EXPECT_EQ(h->hazards[0], want);
}

TEST_P(RacecheckCts, SynchronizedJobIsClean) {
  auto h = run(false, true);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_TRUE(h->checked);
  EXPECT_EQ(h->total, 0u);
  EXPECT_TRUE(h->hazards.empty());
}

TEST_P(RacecheckCts, JobWithoutRacecheckIsNotChecked) {
  auto h = run(false, false);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_FALSE(h->checked);
  EXPECT_TRUE(h->hazards.empty());
}

TEST_P(RacecheckCts, ReportNamesTheCommandsByMarker) {
  Buffer src = floats(std::vector<float>(64, 1.0f));
  Buffer dst = floats(std::vector<float>(64));
  CommandBuffer cb(*device_);
  record(cb, src, dst, true);
  ASSERT_TRUE(cb.finalize());
  auto job = ctx_->submit(cb, {.racecheck = true});
  ASSERT_TRUE(job) << job.error().message;
  ASSERT_TRUE(job->wait(5s));
  auto h = job->hazards();
  ASSERT_TRUE(h) << h.error().message;
  const std::vector<npu_cmd> cmds = split_commands(cb.bytes());
  JobReport report;
  report.commands = cmds;
  report.hazards = *h;
  const std::string line =
      "RAW sram [0x0, 0x100): command 1 (dma_load on dma_in, marker 7) writes, command 4 "
      "(activation on vector, marker 8) reads; no semaphore or fence orders them";
  EXPECT_THAT(format_job_report(report, false), HasSubstr("racecheck: 1 hazard\n  " + line + "\n"));
  const auto json = nlohmann::json::parse(job_report_json(report));
  EXPECT_EQ(json["racecheck"]["total"], 1);
  EXPECT_EQ(json["racecheck"]["hazards"][0]["text"], line);
  EXPECT_EQ(json["racecheck"]["hazards"][0]["second"]["label"], "marker 8");
}

TEST_P(RacecheckCts, DeadlockIsRefusedAtFinalize) {
  CommandBuffer cb(*device_);
  cb.sem_wait(NPU_ENGINE_MATRIX, 3);
  cb.fence();
  cb.sem_signal(NPU_ENGINE_DMA_IN, 3);
  auto job = ctx_->submit(cb);
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().code, EINVAL);
  EXPECT_THAT(job.error().message,
              HasSubstr("finalize: command 0 (sem_wait): field sem: deadlock: semaphore 3"));
}

}  // namespace
}  // namespace npu::cts
