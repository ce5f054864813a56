// replay_to_fault(): the device's faults replayed in virtual time. The first fault in virtual
// time is the job's; the schedule is cut there. (replay() itself is checked against the
// device's timeline in tests/compiler/codegen/schedule_test.cpp.)
#include "npu/isa/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "npu/isa/timing.h"
#include "raw_commands.h"

namespace npu::isa {
namespace {

using npu::testing::make;
using npu::testing::sem;

npu_cmd dma(uint8_t op, uint64_t dram, uint32_t bytes) {
  return npu::testing::dma(op, dram, 0, bytes);
}

std::vector<npu_cmd> with_end(std::vector<npu_cmd> cmds) {
  cmds.push_back(make(NPU_OP_END, NPU_ENGINE_CP));
  return cmds;
}

/// DRAM below 1 MiB is mapped; anything else faults at its first byte.
FaultModel low_mapped() {
  FaultModel m;
  m.dram_fault = [](const Region& r) -> std::optional<uint64_t> {
    if (r.end <= (1u << 20)) return std::nullopt;
    return std::max<uint64_t>(r.begin, 1u << 20);
  };
  return m;
}

TEST(ReplayToFault, WithoutAFaultIsTheReplay) {
  const DeviceConfig cfg;
  const auto cmds = with_end({dma(NPU_OP_DMA_LOAD, 0, 4096), sem(NPU_OP_SEM_SIGNAL, 1, 0),
                              sem(NPU_OP_SEM_WAIT, 2, 0), dma(NPU_OP_DMA_STORE, 4096, 4096)});
  auto plain = replay(cmds, cfg);
  ASSERT_TRUE(plain) << plain.error().message;
  const Schedule s = replay_to_fault(cmds, cfg, low_mapped());
  EXPECT_FALSE(s.fault);
  EXPECT_EQ(s.cycles, plain->cycles);
  EXPECT_EQ(s.busy, plain->busy);
  EXPECT_EQ(s.commands, plain->commands);
  EXPECT_EQ(s.timeline.size(), plain->timeline.size());
}

TEST(ReplayToFault, AnUnmappedOperandFaultsWhereItsCommandStarts) {
  const DeviceConfig cfg;
  const auto cmds = with_end({dma(NPU_OP_DMA_LOAD, 0, 8192), dma(NPU_OP_DMA_LOAD, 2u << 20, 64),
                              make(NPU_OP_NOP, NPU_ENGINE_VECTOR)});
  const Schedule s = replay_to_fault(cmds, cfg, low_mapped());
  ASSERT_TRUE(s.fault);
  EXPECT_EQ(s.fault->kind, DRM_NPU_FAULT_MMU);
  EXPECT_EQ(s.fault->engine, NPU_ENGINE_DMA_IN);
  EXPECT_EQ(s.fault->cmd_index, 1u);
  EXPECT_EQ(s.fault->address, 2u << 20);
  // The second load starts when the first ends.
  const uint64_t first_end = cfg.cp_cycles_per_cmd + command_cost(cmds[0], cfg).cycles;
  EXPECT_EQ(s.cycles, first_end);
  // Kept: the first load and the vector NOP (dispatched at 6 cycles, short); not the fault.
  ASSERT_EQ(s.timeline.size(), 3u);  // load, NOP, END (the CP reached it before the fault)
  EXPECT_EQ(s.timeline[0].index, 0u);
  EXPECT_EQ(s.timeline[0].end, first_end);
  EXPECT_EQ(s.commands[NPU_ENGINE_DMA_IN], 1u);
  EXPECT_EQ(s.busy[NPU_ENGINE_DMA_IN], command_cost(cmds[0], cfg).cycles);
  EXPECT_EQ(s.busy[NPU_ENGINE_CP], 4u * cfg.cp_cycles_per_cmd);
}

TEST(ReplayToFault, TheEarliestFaultInVirtualTimeWinsNotTheLowestIndex) {
  const DeviceConfig cfg;
  const auto cmds = with_end({dma(NPU_OP_DMA_LOAD, 0, 64 * 1024),
                              dma(NPU_OP_DMA_LOAD, 4u << 20, 64),  // after a long load
                              dma(NPU_OP_DMA_STORE, 8u << 20, 64)});
  const Schedule s = replay_to_fault(cmds, cfg, low_mapped());
  ASSERT_TRUE(s.fault);
  EXPECT_EQ(s.fault->engine, NPU_ENGINE_DMA_OUT);
  EXPECT_EQ(s.fault->cmd_index, 2u);
  EXPECT_EQ(s.cycles, 3u * cfg.cp_cycles_per_cmd);  // DMA_OUT starts when it is dispatched
  EXPECT_EQ(s.commands[NPU_ENGINE_DMA_IN], 0u) << "the long load is still running at the fault";
}

TEST(ReplayToFault, CommandProcessorFaults) {
  DeviceConfig cfg;
  FaultModel m;
  // A command on an engine that does not exist: the CP stops at it.
  npu_cmd bad = make(NPU_OP_NOP, 200);
  Schedule s = replay_to_fault(with_end({make(NPU_OP_NOP, NPU_ENGINE_VECTOR), bad}), cfg, m);
  ASSERT_TRUE(s.fault);
  EXPECT_EQ(s.fault->kind, DRM_NPU_FAULT_PARSE);
  EXPECT_EQ(s.fault->engine, NPU_ENGINE_CP);
  EXPECT_EQ(s.fault->cmd_index, 1u);
  EXPECT_EQ(s.cycles, 2u * cfg.cp_cycles_per_cmd);
  // No END (only possible without validation): a parse fault on the last command.
  s = replay_to_fault(std::vector<npu_cmd>{make(NPU_OP_NOP, NPU_ENGINE_VECTOR)}, cfg, m);
  ASSERT_TRUE(s.fault);
  EXPECT_EQ(s.fault->kind, DRM_NPU_FAULT_PARSE);
  EXPECT_EQ(s.fault->cmd_index, 0u);
  // An opcode the engine cannot run faults on that engine when it starts.
  FaultModel unchecked;
  unchecked.check_commands = false;  // as for a validated program: the engine finds it
  s = replay_to_fault(with_end({make(NPU_OP_DMA_LOAD, NPU_ENGINE_VECTOR)}), cfg, unchecked);
  ASSERT_TRUE(s.fault);
  EXPECT_EQ(s.fault->kind, DRM_NPU_FAULT_PARSE);
  EXPECT_EQ(s.fault->engine, NPU_ENGINE_VECTOR);
}

TEST(ReplayToFault, SemaphoreOverflowFaultsAtTheSignalsEnd) {
  DeviceConfig cfg;
  cfg.semaphore_max = 1;
  const auto cmds = with_end(
      {sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_VECTOR, 0), sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_VECTOR, 0)});
  const Schedule s = replay_to_fault(cmds, cfg, FaultModel{});
  ASSERT_TRUE(s.fault);
  EXPECT_EQ(s.fault->kind, DRM_NPU_FAULT_SEMAPHORE);
  EXPECT_EQ(s.fault->cmd_index, 1u);
  ASSERT_GE(s.timeline.size(), 1u);
  // The second signal starts when the first ends or when it is dispatched, whichever is later.
  const uint64_t start = std::max<uint64_t>(s.timeline[0].end, 2u * cfg.cp_cycles_per_cmd);
  EXPECT_EQ(s.cycles, start + command_cost(cmds[1], cfg).cycles);
  EXPECT_FALSE(replay(cmds, cfg)) << "replay() reports the overflow as an error";
}

TEST(ReplayToFault, AHangIsNoFaultAndNoError) {
  const DeviceConfig cfg;
  const auto cmds = with_end({make(NPU_OP_NOP, NPU_ENGINE_VECTOR), sem(NPU_OP_SEM_WAIT, 3, 2)});
  EXPECT_FALSE(replay(cmds, cfg));
  const Schedule s = replay_to_fault(cmds, cfg, FaultModel{});
  EXPECT_FALSE(s.fault);
  EXPECT_EQ(s.commands[NPU_ENGINE_VECTOR], 1u);
}

}  // namespace
}  // namespace npu::isa
