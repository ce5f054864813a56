// Vector-op lowering on a small-SRAM device: pool, eltwise with broadcasting, softmax,
// activation, (de/re)quantize, transpose, reduce, scale-shift against the reference operators.
#include <cmath>

#include "fixture.h"
#include "npu/ref/elementwise.h"
#include "npu/ref/pool.h"
#include "npu/ref/quant.h"
#include "npu/ref/reduce.h"
#include "npu/ref/softmax.h"
#include "npu/ref/transpose.h"

namespace npu::codegen::testing {
namespace {

Emitter wrap(auto fn, const auto& op) {
  return [fn, op](EmitContext& c) { return fn(op, c); };
}

TEST(VectorLowering, MaxPool3x3s2Int8) {
  std::mt19937 rng(1);
  Dram dram;
  auto x = random_vec<int8_t>(56 * 56 * 64, rng, -128, 127);
  PoolOp op;
  op.name = "maxpool";
  op.kind = NPU_POOL_MAX;
  op.input = dram.tensor(NPU_DTYPE_INT8, {1, 56, 56, 64}, x);
  op.output = dram.zeros(NPU_DTYPE_INT8, {1, 28, 28, 64});
  op.k_h = op.k_w = 3, op.stride_h = op.stride_w = 2;
  op.pad_top = op.pad_left = op.pad_bottom = op.pad_right = 1;
  auto res = run_layers(small_config(64 * 1024), dram, {wrap(emit_pool, op)});
  ref::Pool2dShape s{56, 56, 64, 28, 28, 3, 3, 2, 2, 1, 1, 1, 1, false};
  std::vector<int8_t> want(28 * 28 * 64);
  EXPECT_TRUE(ref::pool2d_int<int8_t>(NPU_POOL_MAX, s, x, want));
  EXPECT_EQ(dram.read<int8_t>(op.output), want);
  EXPECT_GT(res.layers.at(0).tiles, 1u);
}

TEST(VectorLowering, AvgPoolAndGlobalAvgPoolFp32) {
  std::mt19937 rng(2);
  Dram dram;
  auto x = random_vec<float>(56 * 56 * 64, rng, -1, 1);
  PoolOp avg;
  avg.name = "avgpool";
  avg.kind = NPU_POOL_AVG;
  avg.input = dram.tensor(NPU_DTYPE_FP32, {1, 56, 56, 64}, x);
  avg.output = dram.zeros(NPU_DTYPE_FP32, {1, 28, 28, 64});
  avg.k_h = avg.k_w = 3, avg.stride_h = avg.stride_w = 2;
  avg.pad_top = avg.pad_left = avg.pad_bottom = avg.pad_right = 1;
  PoolOp gap;
  gap.name = "gap";
  gap.kind = NPU_POOL_AVG;
  gap.global = true;
  gap.input = avg.input;
  gap.output = dram.zeros(NPU_DTYPE_FP32, {1, 1, 1, 64});
  auto res = run_layers(small_config(), dram, {wrap(emit_pool, avg), wrap(emit_pool, gap)});
  std::vector<float> want(28 * 28 * 64), want_g(64);
  EXPECT_TRUE(
      ref::pool2d_f32(NPU_POOL_AVG, {56, 56, 64, 28, 28, 3, 3, 2, 2, 1, 1, 1, 1, false}, x, want));
  EXPECT_TRUE(ref::pool2d_f32(NPU_POOL_AVG, {56, 56, 64, 1, 1, 56, 56, 1, 1, 0, 0, 0, 0, false}, x,
                              want_g));
  expect_near(dram.read<float>(avg.output), want);
  expect_near(dram.read<float>(gap.output), want_g);
  EXPECT_GT(res.layers.at(1).tiles, 1u) << "global pool of 784 KiB must slice channels";
}

TEST(VectorLowering, EltwiseAddWithBroadcast) {
  std::mt19937 rng(3);
  Dram dram;
  // [1,56,56,64] + [64] (bias row, loaded once) and [4,1,32] * [3,1] -> [4,3,32].
  auto a = random_vec<float>(56 * 56 * 64, rng, -1, 1), b = random_vec<float>(64, rng, -1, 1);
  EltwiseOp add;
  add.name = "add_bcast";
  add.a = dram.tensor(NPU_DTYPE_FP32, {1, 56, 56, 64}, a);
  add.b = dram.tensor(NPU_DTYPE_FP32, {64}, b);
  add.output = dram.zeros(NPU_DTYPE_FP32, {1, 56, 56, 64});
  auto c = random_vec<float>(4 * 32, rng, -1, 1), d = random_vec<float>(3, rng, -1, 1);
  EltwiseOp mul;
  mul.name = "mul_bcast";
  mul.op = NPU_ELTWISE_MUL;
  mul.a = dram.tensor(NPU_DTYPE_FP32, {4, 1, 32}, c);
  mul.b = dram.tensor(NPU_DTYPE_FP32, {3, 1}, d);
  mul.output = dram.zeros(NPU_DTYPE_FP32, {4, 3, 32});
  // int8 residual add (saturating), no broadcast.
  auto e = random_vec<int8_t>(28 * 28 * 128, rng, -128, 127);
  auto f = random_vec<int8_t>(28 * 28 * 128, rng, -128, 127);
  EltwiseOp res_add;
  res_add.name = "residual_i8";
  res_add.a = dram.tensor(NPU_DTYPE_INT8, {1, 28, 28, 128}, e);
  res_add.b = dram.tensor(NPU_DTYPE_INT8, {1, 28, 28, 128}, f);
  res_add.output = dram.zeros(NPU_DTYPE_INT8, {1, 28, 28, 128});
  auto res =
      run_layers(small_config(), dram,
                 {wrap(emit_eltwise, add), wrap(emit_eltwise, mul), wrap(emit_eltwise, res_add)});
  std::vector<float> want(a.size());
  for (size_t i = 0; i < a.size(); ++i) want[i] = a[i] + b[i % 64];
  expect_near(dram.read<float>(add.output), want);
  std::vector<float> want2(4 * 3 * 32);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 32; ++k) want2[(i * 3 + j) * 32 + k] = c[i * 32 + k] * d[j];
  expect_near(dram.read<float>(mul.output), want2);
  std::vector<int8_t> want3(e.size());
  for (size_t i = 0; i < e.size(); ++i) want3[i] = int8_t(std::clamp(e[i] + f[i], -128, 127));
  EXPECT_EQ(dram.read<int8_t>(res_add.output), want3);
  EXPECT_GT(res.layers.at(0).tiles, 1u);
}

TEST(VectorLowering, Softmax1000Classes) {
  std::mt19937 rng(4);
  Dram dram;
  auto x = random_vec<float>(64 * 1000, rng, -5, 5);
  SoftmaxOp op;
  op.name = "softmax";
  op.input = dram.tensor(NPU_DTYPE_FP32, {64, 1000}, x);
  op.output = dram.zeros(NPU_DTYPE_FP32, {64, 1000});
  auto res = run_layers(small_config(64 * 1024), dram, {wrap(emit_softmax, op)});
  std::vector<float> want(x.size());
  EXPECT_TRUE(ref::softmax_f32(64, 1000, x, want));
  expect_near(dram.read<float>(op.output), want);
  EXPECT_GT(res.layers.at(0).tiles, 1u);
}

TEST(VectorLowering, ActivationQuantizeRequantize) {
  std::mt19937 rng(5);
  Dram dram;
  const uint32_t n = 100000;
  auto x = random_vec<float>(n, rng, -4, 4);
  ActivationOp sig;
  sig.name = "sigmoid";
  sig.func = NPU_ACT_SIGMOID;
  sig.input = dram.tensor(NPU_DTYPE_FP32, {n}, x);
  sig.output = dram.zeros(NPU_DTYPE_FP32, {n});
  // Per-channel quantize of [1000][10][10] along channels of 10 elements each... inner = 10.
  std::vector<npu_qparam> qp(7);
  for (size_t i = 0; i < qp.size(); ++i) qp[i] = {0.02f + 0.01f * float(i), int32_t(i) - 3};
  QuantizeOp q;
  q.name = "quantize_pc";
  q.input = sig.input;
  q.output = dram.zeros(NPU_DTYPE_INT8, {n});
  q.channels = 7, q.inner = 10, q.params_va = dram.put(qp);
  QuantizeOp dq;
  dq.name = "dequantize";
  dq.dequantize = true;
  dq.input = q.output;
  dq.output = dram.zeros(NPU_DTYPE_FP32, {n});
  dq.scale = 0.05f, dq.zp = 2;
  RequantizeOp rq;
  rq.name = "requantize";
  rq.input = q.output;
  rq.output = dram.zeros(NPU_DTYPE_UINT8, {n});
  rq.multiplier = 1 << 30, rq.shift = 31, rq.in_zp = 1, rq.out_zp = 128;
  auto res = run_layers(small_config(64 * 1024), dram,
                        {wrap(emit_activation, sig), wrap(emit_quantize, q),
                         wrap(emit_quantize, dq), wrap(emit_requantize, rq)});
  std::vector<float> want(n);
  EXPECT_TRUE(ref::activation_f32(NPU_ACT_SIGMOID, 0, 0, {1, 1, 1, n},
                                  {std::span<const float>(x), {n, n, n, 1}},
                                  {std::span<float>(want), {n, n, n, 1}}));
  expect_near(dram.read<float>(sig.output), want, 1e-5, 1e-6);
  std::vector<int8_t> wq(n);
  ref::QuantParams p{1.0f, 0, 7, 10, qp};
  EXPECT_TRUE(ref::quantize_tensor<int8_t>(x, wq, p));
  EXPECT_EQ(dram.read<int8_t>(q.output), wq);
  std::vector<float> wdq(n);
  EXPECT_TRUE(ref::dequantize_tensor<int8_t>(wq, wdq, {0.05f, 2, 1, 1, {}}));
  expect_near(dram.read<float>(dq.output), wdq, 0, 0);
  std::vector<uint8_t> wrq(n);
  EXPECT_TRUE((ref::requantize_tensor<int8_t, uint8_t>(wq, wrq, {1 << 30, 31, 1, 128, 0, 255})));
  EXPECT_EQ(dram.read<uint8_t>(rq.output), wrq);
  for (const auto& l : res.layers) EXPECT_GT(l.tiles, 1u) << l.name;
}

TEST(VectorLowering, TransposeReduceScaleShift) {
  std::mt19937 rng(6);
  Dram dram;
  auto x = random_vec<float>(2 * 64 * 28 * 28, rng, -1, 1);
  TransposeOp tr;  // NCHW -> NHWC
  tr.name = "nchw_to_nhwc";
  tr.input = dram.tensor(NPU_DTYPE_FP32, {2, 64, 28, 28}, x);
  tr.output = dram.zeros(NPU_DTYPE_FP32, {2, 28, 28, 64});
  tr.perm = {0, 2, 3, 1};
  ReduceOp rd;  // mean over H, W of the NHWC tensor
  rd.name = "reduce_mean_hw";
  rd.input = tr.output;
  rd.output = dram.zeros(NPU_DTYPE_FP32, {2, 1, 1, 64});
  rd.axis_begin = 1, rd.axis_end = 3;
  auto sc = random_vec<float>(64, rng, 0.5, 2), sh = random_vec<float>(64, rng, -1, 1);
  ScaleShiftOp ss;
  ss.name = "batchnorm";
  ss.input = tr.output;
  ss.output = dram.zeros(NPU_DTYPE_FP32, {2, 28, 28, 64});
  ss.scale_va = dram.put(sc), ss.shift_va = dram.put(sh);
  auto res =
      run_layers(small_config(64 * 1024), dram,
                 {wrap(emit_transpose, tr), wrap(emit_reduce, rd), wrap(emit_scale_shift, ss)});
  std::vector<float> t(x.size());
  EXPECT_TRUE(ref::transpose4<float>({2, 64, 28, 28}, {0, 2, 3, 1}, x, t));
  expect_near(dram.read<float>(tr.output), t, 0, 0);
  std::vector<float> m(2 * 64);
  EXPECT_TRUE(ref::reduce_f32(NPU_REDUCE_MEAN, 2, 28 * 28, 64, t, m));
  expect_near(dram.read<float>(rd.output), m);
  std::vector<float> y(t.size());
  EXPECT_TRUE(ref::scale_shift_f32(uint32_t(t.size() / 64), 64, t, sc, sh, y));
  expect_near(dram.read<float>(ss.output), y);
  for (const auto& l : res.layers) EXPECT_GT(l.tiles, 1u) << l.name;
}

}  // namespace
}  // namespace npu::codegen::testing
