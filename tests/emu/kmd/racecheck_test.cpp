// The synchronization checker through the driver: SUBMIT's RACECHECK flag (and the device
// config's racecheck), QUERY JOB_HAZARDS with its size negotiation, and a deadlocked command
// buffer rejected at SUBMIT with EINVAL and a log line naming the command.
#include <spdlog/sinks/ringbuffer_sink.h>

#include "kmd_fixture.h"
#include "log.h"

namespace npu::emu::test {
namespace {

/// DRAM src -> SRAM -> DRAM dst, `n` bytes, with DMA_OUT's wait on DMA_IN dropped: a RAW on
/// SRAM [0, n) between command 0 (dma_load) and command 2 (dma_store).
std::vector<std::byte> racy_copy_job(uint64_t src, uint64_t dst, uint32_t n) {
  isa::CommandBufferBuilder b;
  b.dma_load({.dram = src, .sram = 0, .elem_size = 1, .size = {n, 1, 1}});
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  b.dma_store({.dram = dst, .sram = 0, .elem_size = 1, .size = {n, 1, 1}});
  b.sem_wait(NPU_ENGINE_DMA_OUT, 0);
  return b.finish();
}

struct Hazards {
  drm_npu_job_hazards header{};
  std::vector<drm_npu_hazard> entries;
  uint32_t size = 0;  // bytes the driver has
};

/// QUERY JOB_HAZARDS: the size, then everything.
Hazards query_hazards(Client& c, uint32_t ctx, uint64_t seqno) {
  Hazards h;
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_JOB_HAZARDS;
  q.arg0 = ctx;
  q.arg1 = seqno;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  h.size = q.size;
  std::vector<std::byte> raw(q.size);
  q.data = reinterpret_cast<uintptr_t>(raw.data());
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  EXPECT_GE(raw.size(), sizeof(h.header));
  if (raw.size() < sizeof(h.header)) return h;
  std::memcpy(&h.header, raw.data(), sizeof(h.header));
  h.entries.resize(h.header.num_hazards);
  if (!h.entries.empty()) {  // memcpy of nothing still wants non-null pointers (UBSan)
    std::memcpy(h.entries.data(), raw.data() + sizeof(h.header),
                h.entries.size() * sizeof(drm_npu_hazard));
  }
  return h;
}

class KmdRacecheck : public ::testing::Test {
 protected:
  explicit KmdRacecheck(isa::DeviceConfig cfg = {}) : kmd(std::move(cfg)), c(kmd) {
    ctx = c.ctx();
    src = c.bo(4096);
    dst = c.bo(4096);
  }
  uint64_t run(const std::vector<std::byte>& job, uint32_t flags) {
    const BoHandle cmd = c.upload(job);
    uint64_t seqno = 0;
    EXPECT_EQ(
        c.submit(ctx, cmd, job.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kW)}, flags, &seqno),
        0);
    drm_npu_wait w{};
    EXPECT_EQ(c.wait(ctx, seqno, deadline_ms(10000), &w), 0);
    EXPECT_EQ(w.status, DRM_NPU_JOB_OK);
    return seqno;
  }

  Kmd kmd;
  Client c;
  uint32_t ctx = 0;
  BoHandle src, dst;
};

TEST_F(KmdRacecheck, CapabilityIsAdvertised) {
  drm_npu_get_param p{};
  p.param = DRM_NPU_PARAM_CAPABILITIES;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, &p), 0);
  EXPECT_NE(p.value & DRM_NPU_CAP_RACECHECK, 0u);
}

TEST_F(KmdRacecheck, FlaggedJobReportsItsHazard) {
  const uint64_t seqno = run(racy_copy_job(src.va, dst.va, 256), DRM_NPU_SUBMIT_RACECHECK);
  const Hazards h = query_hazards(c, ctx, seqno);
  EXPECT_EQ(h.size, sizeof(drm_npu_job_hazards) + sizeof(drm_npu_hazard));
  EXPECT_EQ(h.header.seqno, seqno);
  EXPECT_EQ(h.header.flags, uint32_t{DRM_NPU_HAZARDS_CHECKED});
  EXPECT_EQ(h.header.total, 1u);
  ASSERT_EQ(h.entries.size(), 1u);
  const drm_npu_hazard& z = h.entries[0];
  EXPECT_EQ(z.kind, uint32_t{DRM_NPU_HAZARD_RAW});
  EXPECT_EQ(z.space, uint32_t{DRM_NPU_HAZARD_SPACE_SRAM});
  EXPECT_EQ(z.begin, 0u);
  EXPECT_EQ(z.end, 256u);
  EXPECT_EQ(z.first.cmd_index, 0u);
  EXPECT_EQ(z.first.engine, NPU_ENGINE_DMA_IN);
  EXPECT_EQ(z.first.opcode, NPU_OP_DMA_LOAD);
  EXPECT_EQ(z.second.cmd_index, 2u);
  EXPECT_EQ(z.second.engine, NPU_ENGINE_DMA_OUT);
  EXPECT_EQ(z.second.opcode, NPU_OP_DMA_STORE);

  // An older caller that knows only the header gets the header and the full size.
  drm_npu_job_hazards header{};
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_JOB_HAZARDS;
  q.size = sizeof(header);
  q.arg0 = ctx;
  q.arg1 = seqno;
  q.data = reinterpret_cast<uintptr_t>(&header);
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  EXPECT_EQ(q.size, h.size);
  EXPECT_EQ(header.num_hazards, 1u);
}

TEST_F(KmdRacecheck, UnflaggedJobIsNotChecked) {
  const uint64_t seqno = run(copy_job(src.va, dst.va, 256), 0);
  const Hazards h = query_hazards(c, ctx, seqno);
  EXPECT_EQ(h.header.flags, 0u);
  EXPECT_EQ(h.header.total, 0u);
  EXPECT_TRUE(h.entries.empty());
}

TEST_F(KmdRacecheck, SynchronizedJobHasNoHazards) {
  const uint64_t seqno = run(copy_job(src.va, dst.va, 256), DRM_NPU_SUBMIT_RACECHECK);
  const Hazards h = query_hazards(c, ctx, seqno);
  EXPECT_EQ(h.header.flags, uint32_t{DRM_NPU_HAZARDS_CHECKED});
  EXPECT_EQ(h.header.total, 0u);
  EXPECT_EQ(h.size, sizeof(drm_npu_job_hazards));
}

TEST_F(KmdRacecheck, QueryErrors) {
  drm_npu_job_hazards h{};
  EXPECT_EQ(c.query(DRM_NPU_QUERY_JOB_HAZARDS, &h, ctx, 1), ENOENT);      // never submitted
  EXPECT_EQ(c.query(DRM_NPU_QUERY_JOB_HAZARDS, &h, ctx + 7, 1), ENOENT);  // unknown context
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_JOB_HAZARDS;
  q.flags = 1;
  q.arg0 = ctx;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), EINVAL);
}

// A deadlock is refused before the job reaches the device: EINVAL, and the log line names the
// command, its opcode and the field (instead of a watchdog reset two seconds later).
TEST_F(KmdRacecheck, DeadlockIsRejectedAtSubmit) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(8);
  kmd::log().sinks().push_back(sink);
  const auto level = kmd::log().level();
  kmd::log().set_level(spdlog::level::warn);  // rejected buffers are warnings (default: error)
  isa::CommandBufferBuilder b;
  b.sem_wait(NPU_ENGINE_MATRIX, 0);
  b.sem_signal(NPU_ENGINE_MATRIX, 1);
  b.sem_wait(NPU_ENGINE_VECTOR, 1);
  b.sem_signal(NPU_ENGINE_VECTOR, 0);
  const auto job = b.finish();
  const BoHandle cmd = c.upload(job);
  EXPECT_EQ(c.submit(ctx, cmd, job.size(), {ref(cmd, kR)}), EINVAL);
  const auto lines = sink->last_formatted();
  kmd::log().sinks().pop_back();
  kmd::log().set_level(level);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("submit: command 0 (sem_wait): field sem: deadlock: semaphore 0 "
                              "holds 0 of the 1 this wait needs"),
            std::string::npos)
      << lines.back();
  EXPECT_EQ(c.ctx_state(ctx).last_submitted, 0u);  // nothing was queued
}

class KmdRacecheckConfig : public KmdRacecheck {
 protected:
  static isa::DeviceConfig config() {
    isa::DeviceConfig cfg;
    cfg.racecheck = true;
    return cfg;
  }
  KmdRacecheckConfig() : KmdRacecheck(config()) {}
};

TEST_F(KmdRacecheckConfig, EveryJobIsChecked) {
  const uint64_t seqno = run(racy_copy_job(src.va, dst.va, 256), 0);
  const Hazards h = query_hazards(c, ctx, seqno);
  EXPECT_EQ(h.header.flags, uint32_t{DRM_NPU_HAZARDS_CHECKED});
  EXPECT_EQ(h.header.total, 1u);
}

}  // namespace
}  // namespace npu::emu::test
