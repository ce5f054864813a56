// The lanes' SRAM banks (emu/device/sram_banks.h): every SRAM operand of every data command can
// be moved to a bank; a whole write goes to its lane's bank and its readers follow it; a write
// that may leave bytes as they were, or over what the command reads, stays with its bytes; a
// read over both banks leaves the stretch as it is; the copy back takes each range's last
// writer that ran; and a device's SRAM after a job on the lanes is the serial order's.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "device_fixture.h"
#include "npu/isa/builder.h"
#include "sram_banks.h"

namespace npu::emu::testing {
namespace {

using isa::CommandBufferBuilder;

constexpr uint64_t kStride = 1 << 20;  // bank 1's offset in these tests

/// A stretch as the device hands it to rename_sram: its commands, and their ISA regions as
/// LaneRegions (DRAM by device address: nothing here maps it).
struct Stretch {
  std::vector<npu_cmd> cmds;
  std::vector<LaneCommand> lcmds;
  std::vector<LaneRegion> regions;
  std::vector<isa::Region> isa_regions;  // the writes_every_byte checks

  explicit Stretch(std::span<const npu_cmd> in) {
    for (const npu_cmd& c : in) {
      if (c.hdr.opcode == NPU_OP_END) continue;
      std::vector<isa::Region> rs;
      EXPECT_TRUE(isa::command_regions(c, rs)) << int(c.hdr.opcode);
      LaneCommand lc;
      lc.first = static_cast<uint32_t>(regions.size());
      lc.count = static_cast<uint32_t>(rs.size());
      for (const isa::Region& r : rs)
        regions.push_back(
            {r.begin, r.end, r.space == isa::Space::Sram, (r.access & isa::kWrite) != 0});
      isa_regions.insert(isa_regions.end(), rs.begin(), rs.end());
      cmds.push_back(c);
      lcmds.push_back(lc);
    }
  }

  std::optional<RenamedStretch> rename(const std::vector<uint8_t>& lanes) const {
    return rename_sram(cmds, lcmds, regions, kStride, lanes);
  }
  /// The bank rename gave command i's k-th region.
  static uint8_t bank(const RenamedStretch& r, const LaneCommand& c, uint32_t k) {
    return r.bank[c.first + k];
  }
};

TEST(SramBanks, EveryAddressFieldOfEveryDataCommandIsFound) {
  CommandBufferBuilder b;
  const uint64_t dram = 0x1'0000'0000ull;
  b.dma_load({.dram = dram, .sram = 0x100, .size = {64, 1, 1}});
  b.dma_store({.dram = dram, .sram = 0x200, .size = {64, 1, 1}});
  b.conv2d({.in_addr = 0x1000,
            .w_addr = 0x2000,
            .out_addr = 0x3000,
            .chan_addr = 0x4000,
            .in_h = 2,
            .in_w = 2,
            .in_c = 4,
            .out_c = 4});
  b.matmul({.a_addr = 0x1000,
            .b_addr = 0x2000,
            .out_addr = 0x3000,
            .chan_addr = 0x4000,
            .m = 2,
            .k = 4,
            .n = 4});
  b.eltwise({.shape = {1, 1, 2, 8}, .a_addr = 0x1000, .b_addr = 0x2000, .out_addr = 0x3000});
  b.activation({.shape = {1, 1, 2, 8}, .in_addr = 0x1000, .out_addr = 0x2000});
  b.pool({.in_addr = 0x1000, .out_addr = 0x2000, .in_h = 2, .in_w = 2, .channels = 4});
  b.softmax({.in_addr = 0x1000, .out_addr = 0x2000, .rows = 2, .len = 8});
  b.scale_shift({.in_addr = 0x1000,
                 .out_addr = 0x2000,
                 .scale_addr = 0x3000,
                 .shift_addr = 0x4000,
                 .outer = 2,
                 .channels = 4});
  b.quantize({.in_addr = 0x1000,
              .out_addr = 0x2000,
              .count = 8,
              .channels = 4,
              .inner = 2,
              .params_addr = 0x3000});
  b.dequantize({.in_addr = 0x1000,
                .out_addr = 0x2000,
                .count = 8,
                .channels = 4,
                .inner = 2,
                .params_addr = 0x3000});
  b.requantize({.in_addr = 0x1000, .out_addr = 0x2000, .count = 8});
  b.transpose({.in_addr = 0x1000, .out_addr = 0x2000, .in_shape = {1, 1, 2, 8}});
  b.reduce({.in_addr = 0x1000, .out_addr = 0x2000, .outer = 2, .len = 4, .inner = 2});
  b.moments({.in_addr = 0x1000,
             .mean_addr = 0x2000,
             .sq_addr = 0x3000,
             .outer = 2,
             .len = 4,
             .inner = 2});
  std::set<uint8_t> seen;
  size_t sram_operands = 0;
  for (npu_cmd c : b.commands()) {
    std::vector<isa::Region> rs;
    ASSERT_TRUE(isa::command_regions(c, rs));
    seen.insert(c.hdr.opcode);
    for (const isa::Region& r : rs) {
      if (r.space != isa::Space::Sram) continue;
      ++sram_operands;
      uint32_t* field = sram_address_field(c, r.field);
      ASSERT_NE(field, nullptr) << "opcode " << int(c.hdr.opcode) << " field " << r.field;
      EXPECT_EQ(*field, r.begin) << "opcode " << int(c.hdr.opcode) << " field " << r.field;
    }
  }
  EXPECT_EQ(sram_operands, 38u);  // 1 + 1 + 4 + 4 + 3 + 2 + 2 + 2 + 4 + 3 + 3 + 2 + 2 + 2 + 3
  // Every data command of the opcode table is among them.
  std::set<uint8_t> data;
#define NPU_DATA(VALUE, ID, ...) data.insert(NPU_OP_##ID);
#include "npu/isa/opcodes.def"
  EXPECT_EQ(seen, data);
  npu_cmd c = b.commands()[0];
  EXPECT_EQ(sram_address_field(c, "dram_addr"), nullptr);  // 64-bit, and not SRAM
  EXPECT_EQ(sram_address_field(c, "in_addr"), nullptr);    // not a DMA field
}

TEST(SramBanks, AWholeWriteGoesToItsLanesBankAndItsReadersFollow) {
  CommandBufferBuilder b;
  const uint64_t x = 0x1'0000'0000ull, d = x + 0x10000;
  b.dma_load({.dram = x, .sram = 0, .size = {1024, 1, 1}});
  b.activation({.func = NPU_ACT_COPY,
                .dtype = NPU_DTYPE_INT8,
                .shape = {1, 1, 1, 1024},
                .in_addr = 0,
                .out_addr = 1024});
  b.dma_store({.dram = d, .sram = 1024, .size = {1024, 1, 1}});
  const Stretch s(b.commands());
  const auto r = s.rename({1, 0, 0});
  ASSERT_TRUE(r);
  // The load wrote bank 1; the copy (lane 0) reads it there and writes bank 0.
  EXPECT_EQ(Stretch::bank(*r, s.lcmds[0], 1), 1);
  EXPECT_EQ(r->cmds[0].dma.sram_addr, kStride);
  EXPECT_EQ(r->regions[s.lcmds[0].first + 1].begin, kStride);
  EXPECT_EQ(r->regions[s.lcmds[0].first + 1].end, kStride + 1024);
  EXPECT_EQ(r->cmds[0].dma.dram_addr, x);
  EXPECT_EQ(r->cmds[1].activation.in.addr, kStride);
  EXPECT_EQ(r->cmds[1].activation.out.addr, 1024u);
  EXPECT_EQ(r->cmds[2].dma.sram_addr, 1024u);
  // Nothing moves where every lane is 0.
  EXPECT_FALSE(s.rename({0, 0, 0}));
}

TEST(SramBanks, WritesThatMayLeaveBytesStayWithTheirBytes) {
  CommandBufferBuilder b;
  const uint64_t x = 0x1'0000'0000ull;
  b.dma_load({.dram = x, .sram = 0, .size = {1024, 1, 1}});  // lane 1: bank 1
  // Two rows of 256 bytes 512 apart: bytes between them keep the first load's.
  b.dma_load({.dram = x, .sram = 0, .size = {256, 2, 1}, .sram_stride = {{512, 1024}}});
  // In place: reads what it writes.
  b.activation({.func = NPU_ACT_RELU,
                .dtype = NPU_DTYPE_INT8,
                .shape = {1, 1, 1, 1024},
                .in_addr = 0,
                .out_addr = 0});
  const Stretch s(b.commands());
  EXPECT_FALSE(writes_every_byte(s.cmds[1], s.isa_regions[s.lcmds[1].first + 1]));
  EXPECT_TRUE(writes_every_byte(s.cmds[0], s.isa_regions[s.lcmds[0].first + 1]));
  const auto r = s.rename({1, 0, 0});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->cmds[1].dma.sram_addr, kStride);  // on lane 0, into bank 1
  EXPECT_EQ(r->cmds[2].activation.in.addr, kStride);
  EXPECT_EQ(r->cmds[2].activation.out.addr, kStride);
}

TEST(SramBanks, AReadOverBothBanksLeavesTheStretchAsItIs) {
  CommandBufferBuilder b;
  const uint64_t x = 0x1'0000'0000ull, d = x + 0x10000;
  b.dma_load({.dram = x, .sram = 0, .size = {512, 1, 1}});
  b.dma_load({.dram = x + 512, .sram = 512, .size = {512, 1, 1}});
  b.dma_store({.dram = d, .sram = 0, .size = {1024, 1, 1}});
  const Stretch s(b.commands());
  EXPECT_FALSE(s.rename({1, 0, 0}));
  EXPECT_TRUE(s.rename({1, 1, 0}));  // both halves in bank 1: the store reads it there
}

TEST(SramBanks, CopyBackTakesTheLastWriterOfEachRangeThatRan) {
  // Four writers: [0,100) in bank 1, then [50,150) in bank 0, [150,200) and [200,300) in
  // bank 1 (neighbours: one copy), [400,500) in bank 1 but not run.
  std::vector<LaneCommand> cmds(5);
  std::vector<LaneRegion> regions = {{0, 100, true, true},
                                     {50, 150, true, true},
                                     {150, 200, true, true},
                                     {200, 300, true, true},
                                     {400, 500, true, true}};
  for (uint32_t i = 0; i < 5; ++i) cmds[i] = {i, 1, 1};
  const std::vector<uint8_t> bank = {1, 0, 1, 1, 1};
  const std::vector<uint8_t> ran = {1, 1, 1, 1, 0};
  const std::vector<SramCopy> got = sram_copy_back(cmds, regions, bank, ran);
  const std::vector<SramCopy> want = {{0, 50}, {150, 150}};
  EXPECT_EQ(got, want);
  // A reader does not count; a DRAM write does not either.
  regions[1].write = false;
  regions[4] = {400, 500, false, true};
  const std::vector<uint8_t> every = {1, 1, 1, 1, 1};
  const std::vector<SramCopy> all = sram_copy_back(cmds, regions, bank, every);
  const std::vector<SramCopy> want_all = {{0, 100}, {150, 150}};
  EXPECT_EQ(all, want_all);
}

/// Eight independent tiles, each loaded, copied through a second slot and stored; then the
/// SRAM as a second job stores it. The lanes split the tiles between them, so the last
/// version of half the slots is written in bank 1.
TEST(SramBanks, TheSramAfterAJobOnTheLanesIsTheSerialOrders) {
  constexpr uint32_t kTile = 2048, kTiles = 8;
  auto sram_after = [&](HostLanes lanes) {
    Device dev(small_config());
    Dram dram;
    const uint64_t x = dram.add(kTile * kTiles), d = dram.add(kTile * kTiles),
                   dump = dram.add(kTile * 2 * kTiles);
    for (size_t i = 0; i < dram.at(0).size(); ++i) dram.at(0)[i] = std::byte((i * 13 + 5) & 0xff);
    std::vector<npu_cmd> job;
    for (uint32_t t = 0; t < kTiles; ++t) {
      const uint32_t in = 2 * t * kTile, out = in + kTile;
      job.push_back(dma(NPU_OP_DMA_LOAD, x + t * kTile, in, kTile));
      npu_cmd relu = make(NPU_OP_ACTIVATION, NPU_ENGINE_VECTOR);
      relu.activation.func = NPU_ACT_RELU;
      relu.activation.dtype = NPU_DTYPE_INT8;
      relu.activation.shape[0] = relu.activation.shape[1] = relu.activation.shape[2] = 1;
      relu.activation.shape[3] = kTile;
      relu.activation.in = {in, {kTile, kTile, kTile, 1}};
      relu.activation.out = {out, {kTile, kTile, kTile, 1}};
      job.push_back(relu);
      job.push_back(dma(NPU_OP_DMA_STORE, d + t * kTile, out, kTile));
    }
    JobOptions o;
    o.host_lanes = lanes;
    EXPECT_EQ(dev.run(chain(job), dram.mmu, o).status, DRM_NPU_JOB_OK);
    o.host_lanes = HostLanes::Off;
    EXPECT_EQ(
        dev.run(chain({dma(NPU_OP_DMA_STORE, dump, 0, 2 * kTile * kTiles)}), dram.mmu, o).status,
        DRM_NPU_JOB_OK);
    EXPECT_NE(dram.at(2), std::vector<std::byte>(dram.at(2).size()));
    return std::pair{dram.at(1), dram.at(2)};
  };
  const auto serial = sram_after(HostLanes::Off);
  const auto lanes = sram_after(HostLanes::On);
  EXPECT_EQ(lanes.first, serial.first);
  EXPECT_EQ(lanes.second, serial.second);
}

}  // namespace
}  // namespace npu::emu::testing
