// Device model: data movement, faults with their details, semaphores and reset.
#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>

#include "device_fixture.h"

namespace npu::emu::testing {
namespace {

TEST(Device, DmaRoundTripCopiesBytes) {
  Device dev(small_config());
  Dram dram;
  uint64_t src = dram.add(4096), dst = dram.add(4096);
  for (size_t i = 0; i < 4096; ++i) dram.at(0)[i] = std::byte(i * 7 + 3);
  auto p =
      program({dma(NPU_OP_DMA_LOAD, src, 0, 4096), sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_DMA_IN, 0),
               sem(NPU_OP_SEM_WAIT, NPU_ENGINE_DMA_OUT, 0), dma(NPU_OP_DMA_STORE, dst, 0, 4096)});
  JobResult r = dev.run(p, dram.mmu);
  ASSERT_EQ(r.status, DRM_NPU_JOB_OK) << r.fault.kind;
  EXPECT_EQ(dram.at(0), dram.at(1));
  EXPECT_EQ(r.profile.dma_bytes_in, 4096u);
  EXPECT_EQ(r.profile.dma_bytes_out, 4096u);
  EXPECT_EQ(r.profile.timeline.size(), 5u);
}

// A store placed before the load it waits for, and a second load that must wait until the
// store has read SRAM: serially (the default) and on engine threads, every command runs after
// the ones it waits for, whatever the program order, with the same profile.
TEST(Device, ExecutionFollowsSemaphoresNotProgramOrder) {
  for (const bool threads : {false, true}) {
    SCOPED_TRACE(threads ? "engine threads" : "serial");
    isa::DeviceConfig cfg = small_config();
    cfg.engine_threads = threads;
    Device dev(cfg);
    Dram dram;
    const uint64_t src1 = dram.add(4096), src2 = dram.add(4096);
    const uint64_t dst1 = dram.add(4096), dst2 = dram.add(4096);
    for (size_t i = 0; i < 4096; ++i) {
      dram.at(0)[i] = std::byte(i * 7 + 3);
      dram.at(1)[i] = std::byte(i * 5 + 1);
    }
    auto p = program(
        {sem(NPU_OP_SEM_WAIT, NPU_ENGINE_DMA_OUT, 0), dma(NPU_OP_DMA_STORE, dst1, 0, 4096),
         sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_DMA_OUT, 1), dma(NPU_OP_DMA_LOAD, src1, 0, 4096),
         sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_DMA_IN, 0), sem(NPU_OP_SEM_WAIT, NPU_ENGINE_DMA_IN, 1),
         dma(NPU_OP_DMA_LOAD, src2, 0, 4096), sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_DMA_IN, 2),
         sem(NPU_OP_SEM_WAIT, NPU_ENGINE_DMA_OUT, 2), dma(NPU_OP_DMA_STORE, dst2, 0, 4096)});
    JobResult r = dev.run(p, dram.mmu);
    ASSERT_EQ(r.status, DRM_NPU_JOB_OK) << r.fault.kind;
    EXPECT_EQ(dram.at(2), dram.at(0));
    EXPECT_EQ(dram.at(3), dram.at(1));
    EXPECT_EQ(r.profile.timeline.size(), 11u);
    EXPECT_EQ(r.profile.dma_bytes_in, 8192u);
    EXPECT_EQ(r.profile.dma_bytes_out, 8192u);
    EXPECT_GT(r.profile.semaphore_stall_cycles, 0u);
  }
}

TEST(Device, DmaStridedBoxWithPaddingAndGather) {
  Device dev(small_config());
  Dram dram;
  // DRAM: a 6x5 matrix of int16 with row pitch 16 bytes; load columns 1..3 (every element of
  // x stride 2 bytes) of rows 0..3, padded by 1 element on each side of x and y, value 0x7777.
  uint64_t src = dram.add(4096), dst = dram.add(4096);
  for (size_t i = 0; i < 4096; ++i) dram.at(0)[i] = std::byte(i & 0xff);
  npu_cmd ld = make(NPU_OP_DMA_LOAD, NPU_ENGINE_DMA_IN);
  ld.dma.dram_addr = src + 2;
  ld.dma.sram_addr = 64;
  ld.dma.elem_size = 2;
  ld.dma.size[0] = 3;
  ld.dma.size[1] = 4;
  ld.dma.size[2] = 1;
  ld.dma.dram_stride[0] = 2;
  ld.dma.dram_stride[1] = 16;
  ld.dma.dram_stride[2] = 64;
  ld.dma.sram_stride[0] = 10;  // (3 + 2 pad) * 2 bytes
  ld.dma.sram_stride[1] = 60;
  ld.dma.pad_before[0] = ld.dma.pad_after[0] = 1;
  ld.dma.pad_before[1] = ld.dma.pad_after[1] = 1;
  ld.dma.pad_value = 0x7777;
  // Store the whole padded 5x6 box contiguously to dst.
  npu_cmd st = dma(NPU_OP_DMA_STORE, dst, 64, 60);
  auto p = program({ld, sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_DMA_IN, 3),
                    sem(NPU_OP_SEM_WAIT, NPU_ENGINE_DMA_OUT, 3), st});
  JobResult r = dev.run(p, dram.mmu);
  ASSERT_EQ(r.status, DRM_NPU_JOB_OK);
  auto out = [&](int y, int x) {
    uint16_t v;
    std::memcpy(&v, dram.at(1).data() + y * 10 + x * 2, 2);
    return v;
  };
  for (int y = 0; y < 6; ++y) {
    for (int x = 0; x < 5; ++x) {
      uint16_t want = 0x7777;
      if (y >= 1 && y <= 4 && x >= 1 && x <= 3) {
        size_t off = 2 + (y - 1) * 16 + (x - 1) * 2;
        want = uint16_t(off & 0xff) | uint16_t(((off + 1) & 0xff) << 8);
      }
      EXPECT_EQ(out(y, x), want) << "y=" << y << " x=" << x;
    }
  }
}

TEST(Device, UnmappedAddressFaultsWithDetails) {
  Device dev(small_config());
  Dram dram;
  uint64_t src = dram.add(4096);
  auto p = program({dma(NPU_OP_DMA_LOAD, src + 4000, 0, 200)});  // runs 104 bytes past the end
  JobResult r = dev.run(p, dram.mmu);
  EXPECT_EQ(r.status, DRM_NPU_JOB_ERROR);
  EXPECT_EQ(r.fault.kind, DRM_NPU_FAULT_MMU);
  EXPECT_EQ(r.fault.engine, NPU_ENGINE_DMA_IN);
  EXPECT_EQ(r.fault.cmd_index, 0u);
  EXPECT_EQ(r.fault.address, src + 4096);
}

// A faulted job ends at its first fault in virtual time: however far the command processor and
// the other engines got on the host before they saw the abort, the fault, the cycles and the
// whole profile are the same on every run (issue 14: 2, 6 or 10 cycles from run to run, and a
// timeline that held whatever the other engines had finished on the host).
TEST(Device, FaultedJobProfileIsDeterministic) {
  Device dev(small_config());
  Dram dram;
  const uint64_t src = dram.add(64 * 1024);
  const uint64_t dst = dram.add(64 * 1024);
  std::vector<npu_cmd> cmds = {dma(NPU_OP_DMA_LOAD, src, 0, 16 * 1024),
                               dma(NPU_OP_DMA_LOAD, src + 4096 * 64, 0, 64)};  // unmapped
  for (int i = 0; i < 24; ++i) {  // work on the other engines around the fault
    cmds.push_back(make(NPU_OP_NOP, i % 2 ? NPU_ENGINE_VECTOR : NPU_ENGINE_MATRIX));
    // From SRAM the loads do not write: the program has no race (TSan checks the host).
    cmds.push_back(dma(NPU_OP_DMA_STORE, dst + 1024 * i, 64 * 1024, 1024));
  }
  const auto p = program(cmds);
  JobResult first = dev.run(p, dram.mmu);
  ASSERT_EQ(first.fault.kind, DRM_NPU_FAULT_MMU);
  EXPECT_EQ(first.fault.cmd_index, 1u);
  // The profile is cut at the fault: what completed before it, nothing after.
  ASSERT_FALSE(first.profile.timeline.empty());
  EXPECT_EQ(first.profile.timeline.front().cmd_index, 0u);
  for (const auto& t : first.profile.timeline) {
    EXPECT_LT(t.start_cycle, first.profile.cycles) << "command " << t.cmd_index;
    EXPECT_LE(t.end_cycle, first.profile.cycles) << "command " << t.cmd_index;
  }
  EXPECT_EQ(first.profile.commands[NPU_ENGINE_DMA_IN], 1u);
  EXPECT_EQ(first.profile.dma_bytes_in, 16u * 1024);
  for (int i = 0; i < 50; ++i) {
    JobOptions opt;
    opt.before_command = [i](uint32_t engine, uint32_t) {  // perturb the host's schedule
      if ((engine + i) % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(i * 20));
    };
    JobResult r = dev.run(p, dram.mmu, opt);
    ASSERT_EQ(r.fault.kind, DRM_NPU_FAULT_MMU);
    EXPECT_EQ(r.fault.cmd_index, first.fault.cmd_index);
    EXPECT_EQ(r.profile.cycles, first.profile.cycles) << "run " << i;
    EXPECT_EQ(r.profile.busy_cycles, first.profile.busy_cycles) << "run " << i;
    EXPECT_EQ(r.profile.commands, first.profile.commands) << "run " << i;
    EXPECT_EQ(r.profile.dma_bytes_out, first.profile.dma_bytes_out) << "run " << i;
    ASSERT_EQ(r.profile.timeline.size(), first.profile.timeline.size()) << "run " << i;
    for (size_t k = 0; k < r.profile.timeline.size(); ++k) {
      EXPECT_EQ(r.profile.timeline[k].cmd_index, first.profile.timeline[k].cmd_index);
      EXPECT_EQ(r.profile.timeline[k].start_cycle, first.profile.timeline[k].start_cycle);
      EXPECT_EQ(r.profile.timeline[k].end_cycle, first.profile.timeline[k].end_cycle);
    }
  }
}

// Of two faults, the one earlier in virtual time is the job's, even when the host reaches the
// later one first and the abort stops the other engine before it gets to its command.
TEST(Device, TheFirstFaultInVirtualTimeIsReported) {
  Device dev(small_config());
  Dram dram;
  const uint64_t src = dram.add(64 * 1024);
  // DMA_IN faults after a long load; DMA_OUT faults on its first command, much earlier.
  const auto p = program({dma(NPU_OP_DMA_LOAD, src, 0, 32 * 1024),
                          dma(NPU_OP_DMA_LOAD, src + 4096 * 64, 0, 64),
                          dma(NPU_OP_DMA_STORE, src + 4096 * 80, 64 * 1024, 64)});
  JobOptions opt;
  opt.before_command = [](uint32_t engine, uint32_t) {  // DMA_OUT comes late on the host
    if (engine == NPU_ENGINE_DMA_OUT) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  };
  for (int i = 0; i < 3; ++i) {
    JobResult r = dev.run(p, dram.mmu, opt);
    ASSERT_EQ(r.fault.kind, DRM_NPU_FAULT_MMU);
    EXPECT_EQ(r.fault.engine, NPU_ENGINE_DMA_OUT);
    EXPECT_EQ(r.fault.cmd_index, 2u);
    EXPECT_EQ(r.fault.address, src + 4096 * 80);
    EXPECT_LT(r.profile.cycles, 100u) << "the fault is at DMA_OUT's first command";
  }
}

TEST(Device, WriteToReadOnlyMappingFaults) {
  Device dev(small_config());
  Dram dram;
  uint64_t ro = dram.add(4096, isa::kRead);
  auto p = program({make(NPU_OP_NOP, NPU_ENGINE_DMA_OUT), dma(NPU_OP_DMA_STORE, ro, 0, 64)});
  JobResult r = dev.run(p, dram.mmu);
  EXPECT_EQ(r.status, DRM_NPU_JOB_ERROR);
  EXPECT_EQ(r.fault.kind, DRM_NPU_FAULT_MMU);
  EXPECT_EQ(r.fault.engine, NPU_ENGINE_DMA_OUT);
  EXPECT_EQ(r.fault.cmd_index, 1u);
  EXPECT_EQ(r.fault.address, ro);
  EXPECT_EQ(dram.at(0), std::vector<std::byte>(4096));
}

TEST(Device, SramOutOfRangeFaults) {
  auto cfg = small_config();
  Device dev(cfg);
  Dram dram;
  uint64_t src = dram.add(4096);
  auto p = program({dma(NPU_OP_DMA_LOAD, src, uint32_t(cfg.sram_size - 16), 64)});
  JobResult r = dev.run(p, dram.mmu);
  EXPECT_EQ(r.status, DRM_NPU_JOB_ERROR);
  EXPECT_EQ(r.fault.kind, DRM_NPU_FAULT_SRAM_RANGE);
  EXPECT_EQ(r.fault.engine, NPU_ENGINE_DMA_IN);
  EXPECT_EQ(r.fault.address, cfg.sram_size);
}

TEST(Device, MalformedCommandIsAParseFault) {
  Device dev(small_config());
  Dram dram;
  auto p = program({make(NPU_OP_NOP, NPU_ENGINE_VECTOR), make(0x7f, NPU_ENGINE_VECTOR)});
  JobResult r = dev.run(p, dram.mmu);
  EXPECT_EQ(r.status, DRM_NPU_JOB_ERROR);
  EXPECT_EQ(r.fault.kind, DRM_NPU_FAULT_PARSE);
  EXPECT_EQ(r.fault.engine, NPU_ENGINE_VECTOR);
  EXPECT_EQ(r.fault.cmd_index, 1u);

  auto q = program({make(NPU_OP_CONV2D, NPU_ENGINE_DMA_IN)});  // wrong engine
  r = dev.run(q, dram.mmu);
  EXPECT_EQ(r.fault.kind, DRM_NPU_FAULT_PARSE);
  EXPECT_EQ(r.fault.cmd_index, 0u);

  isa::Program no_end;  // without END: the CP reports the last command
  no_end.cmds = {make(NPU_OP_NOP, NPU_ENGINE_CP)};
  r = dev.run(no_end, dram.mmu);
  EXPECT_EQ(r.fault.kind, DRM_NPU_FAULT_PARSE);
}

TEST(Device, SemaphoreOverflowFaults) {
  auto cfg = small_config();
  cfg.semaphore_max = 3;
  Device dev(cfg);
  Dram dram;
  auto p = program({sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_VECTOR, 5, 2),
                    sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_VECTOR, 5, 2)});
  JobResult r = dev.run(p, dram.mmu);
  EXPECT_EQ(r.fault.kind, DRM_NPU_FAULT_SEMAPHORE);
  EXPECT_EQ(r.fault.cmd_index, 1u);
  EXPECT_EQ(r.fault.address, 5u);

  auto q = program({sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_VECTOR, cfg.num_semaphores, 1)});
  r = dev.run(q, dram.mmu);
  EXPECT_EQ(r.fault.kind, DRM_NPU_FAULT_SEMAPHORE);
}

TEST(Device, ResetEndsAHungJobAndTheDeviceKeepsServing) {
  Device dev(small_config());
  Dram dram;
  auto hung =
      program({make(NPU_OP_NOP, NPU_ENGINE_MATRIX), sem(NPU_OP_SEM_WAIT, NPU_ENGINE_MATRIX, 1)});
  std::atomic<bool> finished{false};
  std::thread watchdog([&] {
    while (!finished.load()) {
      dev.reset();  // ignored until the job runs
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  JobResult r = dev.run(hung, dram.mmu);
  finished = true;
  watchdog.join();
  EXPECT_EQ(r.status, DRM_NPU_JOB_ERROR);
  EXPECT_EQ(r.fault.kind, DRM_NPU_FAULT_WATCHDOG);

  uint64_t src = dram.add(4096), dst = dram.add(4096);
  dram.at(0)[10] = std::byte{42};
  auto ok =
      program({dma(NPU_OP_DMA_LOAD, src, 0, 4096), sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_DMA_IN, 0),
               sem(NPU_OP_SEM_WAIT, NPU_ENGINE_DMA_OUT, 0), dma(NPU_OP_DMA_STORE, dst, 0, 4096)});
  r = dev.run(ok, dram.mmu);
  EXPECT_EQ(r.status, DRM_NPU_JOB_OK);
  EXPECT_EQ(dram.at(1)[10], std::byte{42});
}

TEST(Device, HungWaitIsNamedByTheWatchdogFault) {
  Device dev(small_config());
  Dram dram;
  auto hung =
      program({make(NPU_OP_NOP, NPU_ENGINE_VECTOR), sem(NPU_OP_SEM_WAIT, NPU_ENGINE_VECTOR, 2)});
  std::atomic<bool> finished{false};
  std::atomic<bool> waiting{false};
  JobOptions opt;
  opt.before_command = [&](uint32_t, uint32_t index) {
    if (index == 1) waiting = true;
  };
  std::thread watchdog([&] {
    // Reset once the engine has reached its SEM_WAIT (on a loaded machine that can take
    // longer than any fixed delay), and a little after, so it is blocked in it.
    while (!waiting.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    while (!finished.load()) {
      dev.reset();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  JobResult r = dev.run(hung, dram.mmu, opt);
  finished = true;
  watchdog.join();
  EXPECT_EQ(r.fault.kind, DRM_NPU_FAULT_WATCHDOG);
  EXPECT_EQ(r.fault.engine, NPU_ENGINE_VECTOR);
  EXPECT_EQ(r.fault.cmd_index, 1u);
}

// A job that would finish but outruns the watchdog hangs on nothing: however far its engines
// got (here vector sits in a SEM_WAIT for the matrix command a hook holds), the reset blames
// the command processor.
TEST(Device, ASlowJobIsBlamedOnTheCommandProcessor) {
  Device dev(small_config());
  Dram dram;
  auto slow =
      program({make(NPU_OP_NOP, NPU_ENGINE_MATRIX), sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_MATRIX, 0),
               sem(NPU_OP_SEM_WAIT, NPU_ENGINE_VECTOR, 0)});
  std::atomic<bool> finished{false};
  std::atomic<bool> held{false};
  JobOptions opt;
  opt.before_command = [&](uint32_t, uint32_t index) {
    if (index != 0) return;
    held = true;
    while (!finished.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  std::thread watchdog([&] {
    while (!held.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // vector reaches its wait
    dev.reset();
    finished = true;
  });
  JobResult r = dev.run(slow, dram.mmu, opt);
  watchdog.join();
  EXPECT_EQ(r.fault.kind, DRM_NPU_FAULT_WATCHDOG);
  EXPECT_EQ(r.fault.engine, NPU_ENGINE_CP);
  EXPECT_EQ(r.fault.cmd_index, 0u);
}

TEST(Device, FenceRaisesInterruptAndOrdersEngines) {
  Device dev(small_config());
  Dram dram;
  uint64_t src = dram.add(65536);
  npu_cmd fence = make(NPU_OP_FENCE, NPU_ENGINE_CP);
  fence.hdr.flags = NPU_FENCE_FLAG_IRQ;
  fence.fence.value = 0xabc;
  auto p =
      program({dma(NPU_OP_DMA_LOAD, src, 0, 65536), fence, make(NPU_OP_NOP, NPU_ENGINE_VECTOR)});
  JobResult r = dev.run(p, dram.mmu);
  ASSERT_EQ(r.status, DRM_NPU_JOB_OK);
  ASSERT_EQ(r.profile.irq_values.size(), 1u);
  EXPECT_EQ(r.profile.irq_values[0], 0xabcu);
  const auto& t = r.profile.timeline;
  ASSERT_EQ(t.size(), 4u);
  EXPECT_GE(t[2].start_cycle, t[0].end_cycle);  // the NOP starts after the DMA ended
}

}  // namespace
}  // namespace npu::emu::testing

namespace npu::emu::testing {
namespace {

TEST(Device, UnvalidatedProgramsAreParsedBeforeTheEnginesSeeThem) {
  Device dev(small_config());
  Dram dram;
  // A conv whose out_h does not match its input: the engines would compute garbage or worse.
  npu_cmd conv = make(NPU_OP_CONV2D, NPU_ENGINE_MATRIX);
  conv.conv2d.in_h = conv.conv2d.in_w = 4;
  conv.conv2d.in_c = conv.conv2d.out_c = 1;
  conv.conv2d.out_h = 60000;
  conv.conv2d.out_w = 4;
  conv.conv2d.k_h = conv.conv2d.k_w = 1;
  conv.conv2d.groups = 1;
  conv.conv2d.stride_h = conv.conv2d.stride_w = conv.conv2d.dil_h = conv.conv2d.dil_w = 1;
  conv.conv2d.in_dtype = conv.conv2d.w_dtype = conv.conv2d.out_dtype = NPU_DTYPE_INT8;
  conv.conv2d.clamp_min = -128;
  conv.conv2d.clamp_max = 127;
  auto p = program({make(NPU_OP_NOP, NPU_ENGINE_MATRIX), conv});
  p.validated = false;
  JobResult r = dev.run(p, dram.mmu);
  EXPECT_EQ(r.status, DRM_NPU_JOB_ERROR);
  EXPECT_EQ(r.fault.kind, DRM_NPU_FAULT_PARSE);
  EXPECT_EQ(r.fault.engine, NPU_ENGINE_MATRIX);
  EXPECT_EQ(r.fault.cmd_index, 1u);
}

}  // namespace
}  // namespace npu::emu::testing

namespace npu::emu::testing {
namespace {

TEST(Device, ResetInterruptsALongRunningCommand) {
  isa::DeviceConfig cfg;
  cfg.sram_size = 64u << 20;
  Device dev(cfg);
  Dram dram;
  // ~5e11 MACs (several seconds even on the fastest kernel path): only cancellation ends it
  // early. Inputs are zero, so every computed output is out_zp (5); unwritten ones stay 0.
  const uint32_t side = 256, ch = 256, k = 11;
  npu_cmd conv = make(NPU_OP_CONV2D, NPU_ENGINE_MATRIX);
  auto& c = conv.conv2d;
  c.in_addr = 0;
  c.w_addr = side * side * ch;
  c.chan_addr = c.w_addr + ch * k * k * ch;
  c.out_addr = c.chan_addr + ch * sizeof(npu_chan_qparams);
  c.in_h = c.in_w = c.out_h = c.out_w = side;
  c.in_c = c.out_c = ch;
  c.k_h = c.k_w = k;
  c.groups = 1;
  c.stride_h = c.stride_w = c.dil_h = c.dil_w = 1;
  c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = k / 2;
  c.in_dtype = c.w_dtype = c.out_dtype = NPU_DTYPE_INT8;
  c.out_zp = 5;
  c.clamp_min = -128;
  c.clamp_max = 127;
  auto p = program({conv});
  std::atomic<bool> finished{false};
  std::thread watchdog([&] {
    while (!finished.load()) {
      dev.reset();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  JobResult r = dev.run(p, dram.mmu);
  finished = true;
  watchdog.join();
  EXPECT_EQ(r.fault.kind, DRM_NPU_FAULT_WATCHDOG);
  EXPECT_EQ(r.fault.engine, NPU_ENGINE_CP);
  // Run the same device again with a tiny job: it still serves.
  uint64_t src = dram.add(4096), dst = dram.add(4096);
  dram.at(0)[7] = std::byte{9};
  auto ok =
      program({dma(NPU_OP_DMA_LOAD, src, 0, 4096), sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_DMA_IN, 0),
               sem(NPU_OP_SEM_WAIT, NPU_ENGINE_DMA_OUT, 0), dma(NPU_OP_DMA_STORE, dst, 0, 4096)});
  EXPECT_EQ(dev.run(ok, dram.mmu).status, DRM_NPU_JOB_OK);
  EXPECT_EQ(dram.at(1)[7], std::byte{9});
}

}  // namespace
}  // namespace npu::emu::testing
