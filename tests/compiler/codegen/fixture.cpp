// Codegen test helpers (see fixture.h).
#include "fixture.h"

#include <cmath>
#include <cstdio>

#include "npu/isa/validate.h"

namespace npu::codegen::testing {

uint64_t Dram::alloc(uint64_t bytes) {
  const uint64_t va = next_;
  bufs_.emplace_back(std::max<uint64_t>(bytes, 1));
  vas_.push_back(va);
  EXPECT_TRUE(mmu_.map({va, bufs_.back().size(), bufs_.back().data(), isa::kRead | isa::kWrite}));
  next_ += (bytes + 0xfffff) / 0x100000 * 0x100000 + 0x100000;
  return va;
}

const std::byte* Dram::host(uint64_t va) const {
  for (size_t i = 0; i < vas_.size(); ++i)
    if (vas_[i] == va) return bufs_[i].data();
  ADD_FAILURE() << "no buffer at va " << va;
  return nullptr;
}

isa::DeviceConfig small_config(uint64_t sram) {
  isa::DeviceConfig cfg;
  cfg.sram_size = sram;
  return cfg;
}

RunResult run_layers(const isa::DeviceConfig& cfg, Dram& dram,
                     const std::vector<Emitter>& emitters) {
  RunResult res;
  isa::CommandBufferBuilder b;
  SemAllocator sems(cfg.num_semaphores);
  EmitContext ctx{b, cfg, sems};
  for (size_t i = 0; i < emitters.size(); ++i) {
    if (i) b.fence();
    auto r = emitters[i](ctx);
    if (!r) {
      ADD_FAILURE() << "emit failed: " << r.error().message;
      return res;
    }
    res.layers.push_back(*r);
  }
  auto buf = b.finish();
  auto prog = isa::validate(buf, cfg);
  if (!prog) {
    ADD_FAILURE() << "validate: " << prog.error().message;
    return res;
  }
  res.num_cmds = prog->cmds.size();
  emu::Device dev(cfg);
  emu::JobResult jr = dev.run(*prog, dram.mmu());
  EXPECT_EQ(jr.status, DRM_NPU_JOB_OK)
      << "fault kind " << jr.fault.kind << " at cmd " << jr.fault.cmd_index;
  auto s = isa::replay(prog->cmds, cfg);
  if (!s) {
    ADD_FAILURE() << "replay: " << s.error().message;
    return res;
  }
  res.device_cycles = jr.profile.cycles;
  res.replay_cycles = s->cycles;
  EXPECT_EQ(s->cycles, jr.profile.cycles);
  EXPECT_EQ(s->timeline.size(), jr.profile.timeline.size());
  size_t mismatches = 0;
  for (size_t i = 0; i < std::min(s->timeline.size(), jr.profile.timeline.size()); ++i) {
    const auto& p = s->timeline[i];
    const auto& q = jr.profile.timeline[i];
    if (p.index != q.cmd_index || p.engine != q.engine || p.start != q.start_cycle ||
        p.end != q.end_cycle) {
      if (++mismatches <= 5) {
        ADD_FAILURE() << "command " << i << ": replay [" << p.start << ", " << p.end << ") device ["
                      << q.start_cycle << ", " << q.end_cycle << ")";
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
  for (int e = 0; e < NPU_NUM_ENGINES; ++e) EXPECT_EQ(s->busy[e], jr.profile.busy_cycles[e]);
  EXPECT_EQ(s->stall, jr.profile.semaphore_stall_cycles);
  // A single layer's own estimate is the whole job's.
  if (res.layers.size() == 1) {
    EXPECT_EQ(res.layers[0].cycles, jr.profile.cycles);
  }
  return res;
}

void print_table(const std::vector<LayerReport>& layers) {
  std::printf("%s\n", format_report_header().c_str());
  for (const auto& l : layers) std::printf("%s\n", format_report_line(l).c_str());
  std::fflush(stdout);
}

void expect_near(std::span<const float> got, std::span<const float> want, double rtol,
                 double atol) {
  ASSERT_EQ(got.size(), want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::fabs(double(got[i]) - want[i]) > atol + rtol * std::fabs(double(want[i]))) {
      if (++bad <= 5) {
        ADD_FAILURE() << "element " << i << ": got " << got[i] << " want " << want[i];
      }
    }
  }
  EXPECT_EQ(bad, 0u);
}

}  // namespace npu::codegen::testing
