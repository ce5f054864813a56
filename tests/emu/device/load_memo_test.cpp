// The device skips a DMA load whose bytes SRAM already holds (emu/device/load_memo.h) and never
// one whose SRAM destination or DRAM source changed since: by another command of the job,
// through an alias of its DRAM, or by the host between jobs. Each case runs serially and on
// two host lanes; on the engine threads nothing is skipped.
#include <numeric>

#include "device_fixture.h"

namespace npu::emu::testing {
namespace {

npu_cmd load(uint64_t va, uint32_t sram, uint32_t bytes = 4096) {
  return dma(NPU_OP_DMA_LOAD, va, sram, bytes);
}
npu_cmd store(uint64_t va, uint32_t sram, uint32_t bytes = 4096) {
  return dma(NPU_OP_DMA_STORE, va, sram, bytes);
}

void fill(std::vector<std::byte>& b, unsigned seed) {
  for (size_t i = 0; i < b.size(); ++i) b[i] = std::byte((i * 7 + seed) & 0xff);
}

/// Buffers X and Y filled with different bytes, and D for a result.
struct Xyd {
  Dram dram;
  uint64_t x = dram.add(4096), y = dram.add(4096), d = dram.add(4096);
  Xyd() {
    fill(dram.at(0), 3);
    fill(dram.at(1), 101);
  }
};

class LoadMemo : public ::testing::TestWithParam<HostLanes> {
 protected:
  JobResult run(Device& dev, const isa::Program& p, const Mmu& mmu) {
    JobOptions o;
    o.host_lanes = GetParam();
    JobResult r = dev.run(p, mmu, o);
    EXPECT_EQ(r.status, DRM_NPU_JOB_OK) << r.fault.kind;
    return r;
  }
};

TEST_P(LoadMemo, TheSameLoadIntoUnchangedSramIsSkipped) {
  Device dev(small_config());
  Dram dram;
  const uint64_t x = dram.add(4096), d1 = dram.add(4096), d2 = dram.add(4096);
  fill(dram.at(0), 3);
  const auto p = chain({load(x, 0), store(d1, 0), load(x, 0), store(d2, 0)});
  const JobResult r = run(dev, p, dram.mmu);
  EXPECT_EQ(r.loads_skipped, 1u);
  EXPECT_EQ(r.load_bytes_skipped, 4096u);
  EXPECT_EQ(dram.at(1), dram.at(0));
  EXPECT_EQ(dram.at(2), dram.at(0));
  // The device did what it models: two loads' bytes in, cycles of the program.
  EXPECT_EQ(r.profile.dma_bytes_in, 8192u);
}

/// Two rows of 512 bytes of Y into SRAM 1024 bytes apart from `sram` on: a load that leaves
/// bytes of its range as they were, so that the lanes write it where the range's bytes are
/// (sram_banks.h) and not in SRAM of their own.
npu_cmd strided_load(uint64_t va, uint32_t sram) {
  npu_cmd c = load(va, sram, 512);
  c.dma.size[1] = 2;
  c.dma.dram_stride[1] = 512;
  c.dma.sram_stride[0] = 1024;
  c.dma.sram_stride[1] = 2048;
  return c;
}

TEST_P(LoadMemo, ALoadRunsWhenItsSramWasWrittenSince) {
  Device dev(small_config());
  Xyd b;
  Dram& dram = b.dram;
  // Y overwrites parts of X's slot, then X is loaded again: it must be X's bytes.
  const auto p = chain({load(b.x, 0), strided_load(b.y, 2048), load(b.x, 0), store(b.d, 0)});
  const JobResult r = run(dev, p, dram.mmu);
  EXPECT_EQ(r.loads_skipped, 0u);
  EXPECT_EQ(dram.at(2), dram.at(0));
}

TEST_P(LoadMemo, ALoadRunsWhenItsDramWasWrittenSince) {
  Device dev(small_config());
  Xyd b;
  Dram& dram = b.dram;
  const std::vector<std::byte> y_bytes = dram.at(1);
  // Y goes to another slot and from there over the middle of X; X is loaded again.
  const auto p = chain({load(b.x, 0), load(b.y, 8192), store(b.x + 1024, 8192 + 1024, 64),
                        load(b.x, 0), store(b.d, 0)});
  const JobResult r = run(dev, p, dram.mmu);
  EXPECT_EQ(r.loads_skipped, 0u);
  EXPECT_EQ(dram.at(2), dram.at(0));
  EXPECT_EQ(dram.at(2)[1024], y_bytes[1024]);
}

TEST_P(LoadMemo, AWriteThroughAnAliasCounts) {
  Device dev(small_config());
  Xyd b;
  Dram& dram = b.dram;
  // A second device address for X's bytes, as a BO mapped twice.
  const uint64_t alias = Dram::kBase + 0x4000'0000ull;
  ASSERT_TRUE(dram.mmu.map({alias, 4096, dram.at(0).data(), isa::kRead | isa::kWrite}));
  const auto p =
      chain({load(b.x, 0), load(b.y, 8192), store(alias, 8192), load(b.x, 0), store(b.d, 0)});
  const JobResult r = run(dev, p, dram.mmu);
  EXPECT_EQ(r.loads_skipped, 0u);
  EXPECT_EQ(dram.at(2), dram.at(1));
}

TEST_P(LoadMemo, TheHostsWritesBetweenJobsAreSeen) {
  Device dev(small_config());
  Dram dram;
  const uint64_t x = dram.add(4096), d = dram.add(4096);
  const auto p = chain({load(x, 0), store(d, 0)});
  for (unsigned job = 0; job < 3; ++job) {
    fill(dram.at(0), job * 11 + 1);
    const JobResult r = run(dev, p, dram.mmu);
    EXPECT_EQ(r.loads_skipped, 0u);
    EXPECT_EQ(dram.at(1), dram.at(0)) << "job " << job;
  }
}

// A load that differs in any field (here: the padding value) is another load.
TEST_P(LoadMemo, OnlyTheSameCommandMatches) {
  Device dev(small_config());
  Dram dram;
  const uint64_t x = dram.add(4096), d = dram.add(4096);
  fill(dram.at(0), 3);
  npu_cmd a = load(x, 0, 64), b = a;
  a.dma.pad_after[0] = b.dma.pad_after[0] = 4;
  a.dma.sram_stride[0] = a.dma.sram_stride[1] = b.dma.sram_stride[0] = b.dma.sram_stride[1] = 68;
  b.dma.pad_value = 0x5a5a5a5a;
  const auto p = chain({a, b, store(d, 0, 68)});
  const JobResult r = run(dev, p, dram.mmu);
  EXPECT_EQ(r.loads_skipped, 0u);
  EXPECT_EQ(dram.at(1)[64], std::byte{0x5a});
}

INSTANTIATE_TEST_SUITE_P(Ways, LoadMemo, ::testing::Values(HostLanes::Off, HostLanes::On),
                         [](const ::testing::TestParamInfo<HostLanes>& p) {
                           return p.param == HostLanes::Off ? "serial" : "lanes";
                         });

TEST(LoadMemoEngineThreads, EveryLoadRuns) {
  isa::DeviceConfig cfg = small_config();
  cfg.engine_threads = true;
  Device dev(cfg);
  Dram dram;
  const uint64_t x = dram.add(4096), d1 = dram.add(4096), d2 = dram.add(4096);
  fill(dram.at(0), 3);
  const JobResult r =
      dev.run(chain({load(x, 0), store(d1, 0), load(x, 0), store(d2, 0)}), dram.mmu);
  ASSERT_EQ(r.status, DRM_NPU_JOB_OK);
  EXPECT_EQ(r.loads_skipped, 0u);
  EXPECT_EQ(dram.at(2), dram.at(0));
}

}  // namespace
}  // namespace npu::emu::testing
