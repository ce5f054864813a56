// MatMul/Gemm lowering: M tiles and N slices on a small-SRAM device, int8 bit-exact and fp32
// to 1e-4, replay == device cycles.
#include <cmath>

#include "fixture.h"
#include "npu/ref/matmul.h"

namespace npu::codegen::testing {
namespace {

TEST(MatMulLowering, Int8Gemm256x512x1000) {
  std::mt19937 rng(7);
  const uint32_t M = 256, K = 512, N = 1000;
  Dram dram;
  auto a = random_vec<int8_t>(size_t(M) * K, rng, -128, 127);
  auto bw = random_vec<int8_t>(size_t(K) * N, rng, -127, 127);
  std::vector<npu_chan_qparams> chan(N);
  for (auto& q : chan) {
    const auto m = ref::quantize_multiplier(1.0 / 2900.0);
    q = {std::uniform_int_distribution<int>(-500, 500)(rng), m.multiplier, m.shift, 0};
  }
  MatMulOp op;
  op.name = "fc_i8";
  op.a = dram.tensor(NPU_DTYPE_INT8, {M, K}, a);
  op.b = dram.tensor(NPU_DTYPE_INT8, {K, N}, bw);
  op.output = dram.zeros(NPU_DTYPE_INT8, {M, N});
  op.chan_va = dram.put(chan);
  op.a_zp = -2, op.out_zp = 1;
  auto res = run_layers(small_config(), dram, {[&](EmitContext& c) { return emit_matmul(op, c); }});
  ref::MatmulShape s{M, K, N, 1, 0, 0, 0, false};
  std::vector<int8_t> want(size_t(M) * N);
  EXPECT_TRUE((ref::matmul_int<int8_t, int8_t, int8_t>(s, a, bw, chan, {-2, 1, -128, 127}, want)));
  EXPECT_EQ(dram.read<int8_t>(op.output), want);
  ASSERT_EQ(res.layers.size(), 1u);
  EXPECT_GT(res.layers[0].tiles, 1u);
  EXPECT_LE(double(res.layers[0].cycles), 1.15 * double(roofline(res.layers[0])));
  print_table(res.layers);
}

TEST(MatMulLowering, Fp32Gemm256x512x1000TransposedB) {
  std::mt19937 rng(8);
  const uint32_t M = 256, K = 512, N = 1000;
  Dram dram;
  auto a = random_vec<float>(size_t(M) * K, rng, -1, 1);
  auto bw = random_vec<float>(size_t(N) * K, rng, -1, 1);
  auto bias = random_vec<float>(N, rng, -1, 1);
  MatMulOp op;
  op.name = "fc_f32";
  op.a = dram.tensor(NPU_DTYPE_FP32, {M, K}, a);
  op.b = dram.tensor(NPU_DTYPE_FP32, {N, K}, bw);
  op.transpose_b = true;
  op.output = dram.zeros(NPU_DTYPE_FP32, {M, N});
  op.chan_va = dram.put(bias);
  auto res = run_layers(small_config(), dram, {[&](EmitContext& c) { return emit_matmul(op, c); }});
  ref::MatmulShape s{M, K, N, 1, 0, 0, 0, true};
  std::vector<float> want(size_t(M) * N);
  EXPECT_TRUE(ref::matmul_f32(s, a, bw, bias, -kInf, kInf, want));
  expect_near(dram.read<float>(op.output), want);
  ASSERT_EQ(res.layers.size(), 1u);
  EXPECT_GT(res.layers[0].tiles, 1u);
  EXPECT_LE(double(res.layers[0].cycles), 1.15 * double(roofline(res.layers[0])));
  print_table(res.layers);
}

TEST(MatMulLowering, BatchedFp32WithPerBatchB) {
  std::mt19937 rng(9);
  const uint32_t B = 3, M = 200, K = 96, N = 80;
  Dram dram;
  auto a = random_vec<float>(size_t(B) * M * K, rng, -1, 1);
  auto bw = random_vec<float>(size_t(B) * K * N, rng, -1, 1);
  MatMulOp op;
  op.name = "bmm";
  op.a = dram.tensor(NPU_DTYPE_FP32, {B, M, K}, a);
  op.b = dram.tensor(NPU_DTYPE_FP32, {B, K, N}, bw);
  op.output = dram.zeros(NPU_DTYPE_FP32, {B, M, N});
  auto res = run_layers(small_config(64 * 1024), dram,
                        {[&](EmitContext& c) { return emit_matmul(op, c); }});
  ref::MatmulShape s{M, K, N, B, uint64_t(M) * K, uint64_t(K) * N, uint64_t(M) * N, false};
  std::vector<float> want(size_t(B) * M * N);
  EXPECT_TRUE(ref::matmul_f32(s, a, bw, {}, -kInf, kInf, want));
  expect_near(dram.read<float>(op.output), want);
  ASSERT_EQ(res.layers.size(), 1u);
  EXPECT_GE(res.layers[0].tiles, 3u);
}

TEST(MatMulLowering, KThatDoesNotFitIsAnError) {
  isa::DeviceConfig cfg = small_config(16 * 1024);
  isa::CommandBufferBuilder b;
  SemAllocator sems(cfg.num_semaphores);
  EmitContext ctx{b, cfg, sems};
  MatMulOp op;
  op.name = "huge_k";
  op.a = TensorDesc::make(0x1000, NPU_DTYPE_FP32, {4, 8192});
  op.b = TensorDesc::make(0x2000, NPU_DTYPE_FP32, {8192, 4});
  op.output = TensorDesc::make(0x3000, NPU_DTYPE_FP32, {4, 4});
  auto r = emit_matmul(op, ctx);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("matmul huge_k: k=8192"), std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace npu::codegen::testing
