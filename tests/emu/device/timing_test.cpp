// Virtual time: cycle counts follow the documented formulas and never depend on host
// scheduling.
#include <thread>

#include "device_fixture.h"
#include "npu/isa/timing.h"

namespace npu::emu::testing {
namespace {

TEST(Timing, PipelineFollowsTheFormulas) {
  auto cfg = small_config();
  Device dev(cfg);
  Dram dram;
  uint64_t src = dram.add(8192), dst = dram.add(8192);
  npu_cmd ld = dma(NPU_OP_DMA_LOAD, src, 0, 8192);
  npu_cmd sig = sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_DMA_IN, 0);
  npu_cmd wt = sem(NPU_OP_SEM_WAIT, NPU_ENGINE_DMA_OUT, 0);
  npu_cmd st = dma(NPU_OP_DMA_STORE, dst, 0, 8192);
  auto p = program({ld, sig, wt, st});
  JobResult r = dev.run(p, dram.mmu);
  ASSERT_EQ(r.status, DRM_NPU_JOB_OK);

  const uint64_t d = cfg.cp_cycles_per_cmd;
  const uint64_t c_ld = isa::command_cost(ld, cfg).cycles;
  const uint64_t c_sig = isa::command_cost(sig, cfg).cycles;
  const uint64_t c_st = isa::command_cost(st, cfg).cycles;
  // Each command is dispatched d cycles after the previous one; engines start at
  // max(own clock, dispatch); the wait completes when the signal ends.
  const uint64_t ld_end = d + c_ld;
  const uint64_t sig_end = std::max(ld_end, 2 * d) + c_sig;
  const uint64_t wt_end = std::max(3 * d, sig_end);
  const uint64_t st_end = std::max(wt_end, 4 * d) + c_st;
  const auto& t = r.profile.timeline;
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].start_cycle, d);
  EXPECT_EQ(t[0].end_cycle, ld_end);
  EXPECT_EQ(t[1].end_cycle, sig_end);
  EXPECT_EQ(t[2].end_cycle, wt_end);
  EXPECT_EQ(t[3].end_cycle, st_end);
  EXPECT_EQ(r.profile.cycles, st_end);
  EXPECT_EQ(r.profile.semaphore_stall_cycles, wt_end - 3 * d);
  EXPECT_EQ(r.profile.busy_cycles[NPU_ENGINE_DMA_IN], c_ld + c_sig);
  EXPECT_EQ(r.profile.busy_cycles[NPU_ENGINE_DMA_OUT], c_st);
}

TEST(Timing, FullQueueStallsTheCommandProcessor) {
  auto cfg = small_config();
  cfg.queue_depth = 2;
  Device dev(cfg);
  Dram dram;
  uint64_t src = dram.add(65536);
  std::vector<npu_cmd> cmds;
  for (int i = 0; i < 4; ++i) cmds.push_back(dma(NPU_OP_DMA_LOAD, src, 0, 65536));
  cmds.push_back(make(NPU_OP_NOP, NPU_ENGINE_VECTOR));
  auto p = program(cmds);
  JobResult r = dev.run(p, dram.mmu);
  ASSERT_EQ(r.status, DRM_NPU_JOB_OK);
  const uint64_t c = isa::command_cost(cmds[0], cfg).cycles;
  const auto& t = r.profile.timeline;
  // The third load can only be queued once the first ended; the NOP behind it is dispatched
  // after the fourth load was queued (when the second ended).
  EXPECT_EQ(t[2].start_cycle, t[1].end_cycle);
  EXPECT_EQ(t[3].end_cycle, cfg.cp_cycles_per_cmd + 4 * c);
  EXPECT_EQ(t[4].start_cycle, t[1].end_cycle + cfg.cp_cycles_per_cmd);
}

TEST(Timing, CyclesAreIdenticalAcrossRunsAndHostLoad) {
  auto cfg = small_config();
  Device dev(cfg);
  Dram dram;
  uint64_t src = dram.add(1 << 16), dst = dram.add(1 << 16);
  for (size_t i = 0; i < dram.at(0).size(); ++i) dram.at(0)[i] = std::byte((i * 13) >> 3);
  // Eight tiles, double-buffered: DMA_IN loads tile i into slot i%2, DMA_OUT stores it after
  // the load signalled; the loader waits for the store of tile i-2 to free the slot.
  std::vector<npu_cmd> cmds;
  for (uint32_t i = 0; i < 8; ++i) {
    uint32_t slot = (i % 2) * 8192;
    if (i >= 2) cmds.push_back(sem(NPU_OP_SEM_WAIT, NPU_ENGINE_DMA_IN, 1));
    cmds.push_back(dma(NPU_OP_DMA_LOAD, src + i * 8192, slot, 8192));
    cmds.push_back(sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_DMA_IN, 0));
    cmds.push_back(sem(NPU_OP_SEM_WAIT, NPU_ENGINE_DMA_OUT, 0));
    cmds.push_back(dma(NPU_OP_DMA_STORE, dst + i * 8192, slot, 8192));
    cmds.push_back(sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_DMA_OUT, 1));
  }
  auto p = program(cmds);
  JobResult first = dev.run(p, dram.mmu);
  ASSERT_EQ(first.status, DRM_NPU_JOB_OK);
  std::atomic<bool> stop{false};
  std::thread noise([&] {  // host load on the other core
    volatile uint64_t x = 0;
    while (!stop.load()) x = x + 1;
  });
  for (int run = 0; run < 20; ++run) {
    JobResult r = dev.run(p, dram.mmu);
    ASSERT_EQ(r.status, DRM_NPU_JOB_OK);
    ASSERT_EQ(r.profile.cycles, first.profile.cycles);
    ASSERT_EQ(r.profile.timeline.size(), first.profile.timeline.size());
    for (size_t i = 0; i < r.profile.timeline.size(); ++i) {
      EXPECT_EQ(r.profile.timeline[i].start_cycle, first.profile.timeline[i].start_cycle);
      EXPECT_EQ(r.profile.timeline[i].end_cycle, first.profile.timeline[i].end_cycle);
    }
  }
  stop = true;
  noise.join();
  EXPECT_EQ(dram.at(0), dram.at(1));
}

}  // namespace
}  // namespace npu::emu::testing
