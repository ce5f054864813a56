// The schedule replay equals the device's virtual-time timeline exactly (every command's
// start and end, job cycles, busy and stall cycles) on emitted multi-layer programs under
// varied device configs, and reports deadlocks instead of hanging.
#include "fixture.h"
#include "npu/isa/validate.h"

namespace npu::codegen::testing {
namespace {

// A small conv -> pool -> eltwise -> softmax network with random shapes.
std::vector<Emitter> random_network(Dram& dram, std::mt19937& rng) {
  auto pick = [&](uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  const uint32_t H = pick(8, 40), W = pick(8, 40), C = pick(1, 24), OC = pick(1, 40);
  const uint32_t K = pick(0, 1) ? 3 : 1, S = pick(1, 2), P = K / 2;
  const uint32_t OH = (H + 2 * P - K) / S + 1, OW = (W + 2 * P - K) / S + 1;
  auto conv = std::make_shared<Conv2dOp>();
  conv->name = "conv";
  conv->input = dram.tensor(NPU_DTYPE_FP32, {1, H, W, C}, random_vec<float>(H * W * C, rng, -1, 1));
  conv->weights =
      dram.tensor(NPU_DTYPE_FP32, {OC, K, K, C}, random_vec<float>(OC * K * K * C, rng, -1, 1));
  conv->output = dram.zeros(NPU_DTYPE_FP32, {1, OH, OW, OC});
  conv->stride_h = conv->stride_w = S;
  conv->pad_top = conv->pad_left = conv->pad_bottom = conv->pad_right = P;
  auto pool = std::make_shared<PoolOp>();
  pool->name = "pool";
  pool->input = conv->output;
  pool->k_h = pool->k_w = 2, pool->stride_h = pool->stride_w = 2;
  pool->output = dram.zeros(NPU_DTYPE_FP32, {1, OH / 2, OW / 2, OC});
  auto add = std::make_shared<EltwiseOp>();
  add->name = "add";
  add->a = pool->output;
  add->b = dram.tensor(NPU_DTYPE_FP32, {OC}, random_vec<float>(OC, rng, -1, 1));
  add->output = dram.zeros(NPU_DTYPE_FP32, {1, OH / 2, OW / 2, OC});
  auto sm = std::make_shared<SoftmaxOp>();
  sm->name = "softmax";
  sm->input = add->output;
  sm->output = dram.zeros(NPU_DTYPE_FP32, {1, OH / 2, OW / 2, OC});
  std::vector<Emitter> out{[conv](EmitContext& c) { return emit_conv2d(*conv, c); }};
  if (OH >= 2 && OW >= 2) {
    out.push_back([pool](EmitContext& c) { return emit_pool(*pool, c); });
    out.push_back([add](EmitContext& c) { return emit_eltwise(*add, c); });
    out.push_back([sm](EmitContext& c) { return emit_softmax(*sm, c); });
  }
  return out;
}

TEST(ScheduleReplay, EqualsDeviceOnRandomProgramsAndConfigs) {
  std::mt19937 rng(2024);
  for (int iter = 0; iter < 24; ++iter) {
    isa::DeviceConfig cfg =
        small_config(std::uniform_int_distribution<uint64_t>(24, 96)(rng) * 1024);
    cfg.queue_depth = std::array<uint32_t, 6>{1, 2, 3, 5, 16, 64}[iter % 6];
    cfg.cp_cycles_per_cmd = std::uniform_int_distribution<uint32_t>(0, 6)(rng);
    cfg.dma.bytes_per_cycle = std::array<uint32_t, 3>{8, 32, 64}[iter % 3];
    cfg.dma.latency = std::uniform_int_distribution<uint32_t>(1, 200)(rng);
    cfg.matrix.fill_latency = std::uniform_int_distribution<uint32_t>(0, 100)(rng);
    Dram dram;
    SCOPED_TRACE("iteration " + std::to_string(iter));
    auto res = run_layers(cfg, dram, random_network(dram, rng));
    EXPECT_GT(res.device_cycles, 0u);
    EXPECT_EQ(res.replay_cycles, res.device_cycles);
  }
}

TEST(ScheduleReplay, MarkersNopsAndFences) {
  isa::DeviceConfig cfg = small_config();
  isa::CommandBufferBuilder b;
  b.marker(NPU_ENGINE_CP, 1);
  b.nop(NPU_ENGINE_VECTOR);
  b.sem_signal(NPU_ENGINE_VECTOR, 0, 3);
  b.sem_wait(NPU_ENGINE_MATRIX, 0, 2);
  b.nop(NPU_ENGINE_CP);
  b.fence(true, 9);
  b.sem_wait(NPU_ENGINE_MATRIX, 0, 1);
  b.marker(NPU_ENGINE_DMA_OUT, 2);
  auto buf = b.finish();
  auto prog = isa::validate(buf, cfg);
  ASSERT_TRUE(prog) << prog.error().message;
  emu::Device dev(cfg);
  Dram dram;
  auto jr = dev.run(*prog, dram.mmu());
  ASSERT_EQ(jr.status, DRM_NPU_JOB_OK);
  auto s = isa::replay(prog->cmds, cfg);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->cycles, jr.profile.cycles);
  ASSERT_EQ(s->timeline.size(), jr.profile.timeline.size());
  for (size_t i = 0; i < s->timeline.size(); ++i) {
    EXPECT_EQ(s->timeline[i].start, jr.profile.timeline[i].start_cycle) << i;
    EXPECT_EQ(s->timeline[i].end, jr.profile.timeline[i].end_cycle) << i;
  }
}

TEST(ScheduleReplay, ReportsDeadlocks) {
  isa::DeviceConfig cfg = small_config();
  isa::CommandBufferBuilder b;
  b.sem_wait(NPU_ENGINE_MATRIX, 0, 1);  // never signalled
  b.end();
  auto s = isa::replay(b.commands(), cfg);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, EDEADLK);
  // A wait whose signal comes after a full queue: queue depth 1.
  cfg.queue_depth = 1;
  isa::CommandBufferBuilder q;
  q.sem_wait(NPU_ENGINE_MATRIX, 0, 1);
  q.nop(NPU_ENGINE_MATRIX);
  q.sem_signal(NPU_ENGINE_VECTOR, 0, 1);
  q.end();
  auto s2 = isa::replay(q.commands(), cfg);
  ASSERT_FALSE(s2);
  EXPECT_NE(s2.error().message.find("full queue"), std::string::npos) << s2.error().message;
}

TEST(ScheduleReplay, SemaphoresAreSharedAcrossLayersWithinTheOneSignallerRule) {
  isa::DeviceConfig cfg = small_config();
  SemAllocator sems(cfg.num_semaphores);
  auto a = sems.get(NPU_ENGINE_DMA_IN, NPU_ENGINE_MATRIX);
  auto b2 = sems.get(NPU_ENGINE_DMA_IN, NPU_ENGINE_VECTOR);
  auto c = sems.get(NPU_ENGINE_DMA_IN, NPU_ENGINE_MATRIX);
  ASSERT_TRUE(a && b2 && c);
  EXPECT_NE(*a, *b2);
  EXPECT_EQ(*a, *c);
  SemAllocator tiny(1);
  ASSERT_TRUE(tiny.get(1, 3));
  EXPECT_FALSE(tiny.get(3, 1));
}

}  // namespace
}  // namespace npu::codegen::testing
