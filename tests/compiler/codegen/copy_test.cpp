// Copy and Pad lowering on the emulator: contiguous and strided copies (Concat into sub-views,
// a permuted NCHW view of an NHWC tensor, a zero-stride broadcast, 5-D views), copies bigger
// than SRAM, constant padding (fp32 H/W, channel axis with tiles wholly in the padding, int8
// with a non-zero fill) against bytes computed here, and the errors.
#include <gmock/gmock.h>

#include <bit>

#include "fixture.h"

namespace npu::codegen::testing {
namespace {

using ::testing::HasSubstr;

/// A strided sub-view of contiguous `full`: offset `at` along `axis`, dims `dims`.
TensorDesc sub_view(const TensorDesc& full, size_t axis, uint32_t at, std::vector<uint32_t> dims) {
  TensorDesc v = full;
  v.strides.clear();
  for (size_t i = 0; i < full.rank(); ++i) v.strides.push_back(full.stride(i));
  v.va = full.va + at * full.stride(axis);
  v.dims = std::move(dims);
  return v;
}

/// Row-major index of `idx` in `dims`.
size_t flat(const std::vector<uint32_t>& dims, const std::vector<uint32_t>& idx) {
  size_t f = 0;
  for (size_t i = 0; i < dims.size(); ++i) f = f * dims[i] + idx[i];
  return f;
}

/// Calls fn(index) for every index of `dims` in row-major order.
void for_each_index(const std::vector<uint32_t>& dims,
                    const std::function<void(const std::vector<uint32_t>&)>& fn) {
  std::vector<uint32_t> idx(dims.size(), 0);
  uint64_t count = 1;
  for (uint32_t d : dims) count *= d;
  for (uint64_t n = 0; n < count; ++n) {
    fn(idx);
    for (size_t i = dims.size(); i-- > 0;) {
      if (++idx[i] < dims[i]) break;
      idx[i] = 0;
    }
  }
}

Emitter copy(const CopyOp& op, bool search = true) {
  return [op, search](EmitContext& c) {
    c.search = search;
    auto r = emit_copy(op, c);
    c.search = true;
    return r;
  };
}

Emitter pad(const PadOp& op, bool search = true) {
  return [op, search](EmitContext& c) {
    c.search = search;
    auto r = emit_pad(op, c);
    c.search = true;
    return r;
  };
}

/// Expected output of a constant pad of contiguous `x` (dims `in`) to `out`.
template <typename T>
std::vector<T> padded(const std::vector<T>& x, const std::vector<uint32_t>& in,
                      const std::vector<uint32_t>& out, const std::vector<uint32_t>& before,
                      T fill) {
  uint64_t count = 1;
  for (uint32_t d : out) count *= d;
  std::vector<T> y(count, fill);
  for_each_index(in, [&](const std::vector<uint32_t>& i) {
    std::vector<uint32_t> o(i.size());
    for (size_t k = 0; k < i.size(); ++k) o[k] = i[k] + before[k];
    y[flat(out, o)] = x[flat(in, i)];
  });
  return y;
}

TEST(CopyLowering, ContiguousFp32AndInt8) {
  std::mt19937 rng(11);
  Dram dram;
  auto x = random_vec<float>(2 * 3 * 5 * 7, rng, -1, 1);
  auto y = random_vec<int8_t>(1000, rng, -128, 127);
  CopyOp a;
  a.name = "copy_f32";
  a.input = dram.tensor(NPU_DTYPE_FP32, {2, 3, 5, 7}, x);
  a.output = dram.zeros(NPU_DTYPE_FP32, {2, 3, 5, 7});
  CopyOp b;
  b.name = "copy_i8";
  b.input = dram.tensor(NPU_DTYPE_INT8, {1000}, y);
  b.output = dram.zeros(NPU_DTYPE_INT8, {1000});
  auto res = run_layers(small_config(), dram, {copy(a), copy(b)});
  EXPECT_EQ(dram.read<float>(a.output), x);
  EXPECT_EQ(dram.read<int8_t>(b.output), y);
  ASSERT_EQ(res.layers.size(), 2u);
  EXPECT_EQ(res.layers[0].op, "copy");
  EXPECT_EQ(res.layers[0].bytes_in, x.size() * 4);
  EXPECT_EQ(res.layers[0].bytes_out, x.size() * 4);
  EXPECT_EQ(res.layers[0].engine, NPU_ENGINE_DMA_OUT);
  EXPECT_EQ(res.layers[0].compute_cycles, 0u);
}

TEST(CopyLowering, ConcatMiddleAxisFp32) {
  std::mt19937 rng(12);
  Dram dram;
  auto p = random_vec<float>(2 * 3 * 4 * 5, rng, -1, 1);
  auto q = random_vec<float>(2 * 2 * 4 * 5, rng, -1, 1);
  const TensorDesc out = dram.zeros(NPU_DTYPE_FP32, {2, 5, 4, 5});
  CopyOp a, b;
  a.name = "concat_0", b.name = "concat_1";
  a.input = dram.tensor(NPU_DTYPE_FP32, {2, 3, 4, 5}, p);
  b.input = dram.tensor(NPU_DTYPE_FP32, {2, 2, 4, 5}, q);
  a.output = sub_view(out, 1, 0, {2, 3, 4, 5});
  b.output = sub_view(out, 1, 3, {2, 2, 4, 5});
  auto res = run_layers(small_config(), dram, {copy(a), copy(b)});
  std::vector<float> want(2 * 5 * 4 * 5);
  for_each_index({2, 5, 4, 5}, [&](const std::vector<uint32_t>& i) {
    const uint32_t c = i[1];
    want[flat({2, 5, 4, 5}, i)] = c < 3 ? p[flat({2, 3, 4, 5}, {i[0], c, i[2], i[3]})]
                                        : q[flat({2, 2, 4, 5}, {i[0], c - 3, i[2], i[3]})];
  });
  EXPECT_EQ(dram.read<float>(out), want);
  EXPECT_EQ(res.layers.size(), 2u);
}

TEST(CopyLowering, ConcatLastAxisInt8) {
  std::mt19937 rng(13);
  Dram dram;
  auto p = random_vec<int8_t>(2 * 6 * 7 * 3, rng, -128, 127);
  auto q = random_vec<int8_t>(2 * 6 * 7 * 5, rng, -128, 127);
  const TensorDesc out = dram.zeros(NPU_DTYPE_INT8, {2, 6, 7, 8});
  CopyOp a, b;
  a.name = "concat_c0", b.name = "concat_c1";
  a.input = dram.tensor(NPU_DTYPE_INT8, {2, 6, 7, 3}, p);
  b.input = dram.tensor(NPU_DTYPE_INT8, {2, 6, 7, 5}, q);
  a.output = sub_view(out, 3, 0, {2, 6, 7, 3});
  b.output = sub_view(out, 3, 3, {2, 6, 7, 5});
  run_layers(small_config(), dram, {copy(a), copy(b)});
  std::vector<int8_t> want(2 * 6 * 7 * 8);
  for (size_t r = 0; r < 2 * 6 * 7; ++r)
    for (size_t c = 0; c < 8; ++c) want[r * 8 + c] = c < 3 ? p[r * 3 + c] : q[r * 5 + c - 3];
  EXPECT_EQ(dram.read<int8_t>(out), want);
}

// The NCHW view of an NHWC tensor copied to a contiguous NCHW tensor (a layout change), with
// the search (the transposed path should win) and without it (the plain strided path).
template <typename T>
void permuted_copy(uint8_t dtype, uint32_t N, uint32_t H, uint32_t W, uint32_t C, uint64_t sram,
                   bool search) {
  std::mt19937 rng(14);
  Dram dram;
  auto x = random_vec<T>(size_t(N) * H * W * C, rng, -100, 100);
  const TensorDesc nhwc = dram.tensor(dtype, {N, H, W, C}, x);
  const uint64_t e = sizeof(T);
  CopyOp op;
  op.name = "nhwc_to_nchw";
  op.input = nhwc;
  op.input.dims = {N, C, H, W};
  op.input.strides = {H * W * C * e, e, W * C * e, C * e};
  op.output = dram.zeros(dtype, {N, C, H, W});
  auto res = run_layers(small_config(sram), dram, {copy(op, search)});
  std::vector<T> want(x.size());
  for_each_index({N, H, W, C}, [&](const std::vector<uint32_t>& i) {
    want[flat({N, C, H, W}, {i[0], i[3], i[1], i[2]})] = x[flat({N, H, W, C}, i)];
  });
  EXPECT_EQ(dram.read<T>(op.output), want);
  ASSERT_EQ(res.layers.size(), 1u);
  if (search) {
    EXPECT_THAT(res.layers[0].tiling, HasSubstr("transposed"));
    EXPECT_EQ(res.layers[0].engine, NPU_ENGINE_VECTOR);
  } else {
    EXPECT_EQ(res.layers[0].engine, NPU_ENGINE_DMA_OUT);
  }
}

TEST(CopyLowering, PermutedSourceFp32) {
  permuted_copy<float>(NPU_DTYPE_FP32, 2, 6, 5, 16, 256 * 1024, true);
  permuted_copy<float>(NPU_DTYPE_FP32, 2, 6, 5, 16, 256 * 1024, false);
}

TEST(CopyLowering, PermutedSourceInt8Tiled) {
  // 56x56x64 int8 (196 KiB) through 32 KiB of SRAM.
  permuted_copy<int8_t>(NPU_DTYPE_INT8, 1, 56, 56, 64, 32 * 1024, true);
  permuted_copy<int8_t>(NPU_DTYPE_INT8, 1, 56, 56, 64, 32 * 1024, false);
}

TEST(CopyLowering, TransposedPathIsFaster) {
  std::mt19937 rng(15);
  Dram dram;
  auto x = random_vec<float>(28 * 28 * 32, rng, -1, 1);
  CopyOp op;
  op.name = "nhwc_to_nchw";
  op.input = dram.tensor(NPU_DTYPE_FP32, {28, 28, 32}, x);
  op.input.dims = {32, 28, 28};
  op.input.strides = {4, 28 * 32 * 4, 32 * 4};
  op.output = dram.zeros(NPU_DTYPE_FP32, {32, 28, 28});
  auto fast = run_layers(small_config(), dram, {copy(op, true)});
  auto plain = run_layers(small_config(), dram, {copy(op, false)});
  ASSERT_EQ(fast.layers.size(), 1u);
  ASSERT_EQ(plain.layers.size(), 1u);
  // One element per DMA run costs a cycle per element; contiguous runs move 32 bytes.
  EXPECT_LT(fast.layers[0].cycles * 3, plain.layers[0].cycles);
}

TEST(CopyLowering, BiggerThanSramAndStridedSubView) {
  std::mt19937 rng(16);
  Dram dram;
  auto x = random_vec<float>(256 * 1024, rng, -1, 1);  // 1 MiB
  CopyOp a;
  a.name = "big";
  a.input = dram.tensor(NPU_DTYPE_FP32, {256, 1024}, x);
  a.output = dram.zeros(NPU_DTYPE_FP32, {256, 1024});
  const TensorDesc wide = dram.zeros(NPU_DTYPE_FP32, {256, 1536});
  CopyOp b;
  b.name = "big_into_cols";
  b.input = a.input;
  b.output = sub_view(wide, 1, 512, {256, 1024});
  auto res = run_layers(small_config(64 * 1024), dram, {copy(a), copy(b)});
  EXPECT_EQ(dram.read<float>(a.output), x);
  std::vector<float> want(256 * 1536, 0.0f);
  for (size_t r = 0; r < 256; ++r)
    for (size_t c = 0; c < 1024; ++c) want[r * 1536 + 512 + c] = x[r * 1024 + c];
  EXPECT_EQ(dram.read<float>(wide), want);
  ASSERT_EQ(res.layers.size(), 2u);
  for (const auto& l : res.layers) {
    EXPECT_GE(l.tiles, 16u) << l.name;  // 1 MiB through two 32 KiB slots at most
    // A plain copy is DMA-bound: within 10% of max(dma_in, dma_out).
    EXPECT_LT(roofline_ratio(l), 1.10) << l.name;
  }
  print_table(res.layers);
}

TEST(CopyLowering, BroadcastAndFiveDims) {
  std::mt19937 rng(17);
  Dram dram;
  auto row = random_vec<int32_t>(16, rng, -1000, 1000);
  CopyOp expand;  // [16] -> [8, 16] through a zero stride
  expand.name = "expand";
  expand.input = dram.tensor(NPU_DTYPE_INT32, {16}, row);
  expand.input.dims = {8, 16};
  expand.input.strides = {0, 4};
  expand.output = dram.zeros(NPU_DTYPE_INT32, {8, 16});
  // A 5-D permuted view: out[a][b][c][d][f] = x[b][a][f][c][d], nothing merges.
  const std::vector<uint32_t> xd{3, 2, 5, 4, 6}, od{2, 3, 4, 6, 5};
  auto x = random_vec<float>(2 * 3 * 4 * 5 * 6, rng, -1, 1);
  CopyOp five;
  five.name = "five_d";
  five.input = dram.tensor(NPU_DTYPE_FP32, xd, x);
  const TensorDesc xt = five.input;
  five.input.dims = od;
  five.input.strides = {xt.stride(1), xt.stride(0), xt.stride(3), xt.stride(4), xt.stride(2)};
  five.output = dram.zeros(NPU_DTYPE_FP32, od);
  run_layers(small_config(), dram, {copy(expand), copy(five)});
  std::vector<int32_t> want(8 * 16);
  for (size_t i = 0; i < want.size(); ++i) want[i] = row[i % 16];
  EXPECT_EQ(dram.read<int32_t>(expand.output), want);
  std::vector<float> want5(x.size());
  for_each_index(od, [&](const std::vector<uint32_t>& i) {
    want5[flat(od, i)] = x[flat(xd, {i[1], i[0], i[4], i[2], i[3]})];
  });
  EXPECT_EQ(dram.read<float>(five.output), want5);
}

TEST(PadLowering, Fp32NchwHeightWidth) {
  std::mt19937 rng(18);
  Dram dram;
  const std::vector<uint32_t> in{2, 3, 10, 12}, out{2, 3, 13, 15}, before{0, 0, 1, 3};
  auto x = random_vec<float>(2 * 3 * 10 * 12, rng, -1, 1);
  PadOp zero;
  zero.name = "pad_hw";
  zero.input = dram.tensor(NPU_DTYPE_FP32, in, x);
  zero.output = dram.zeros(NPU_DTYPE_FP32, out);
  zero.pad_before = before;
  PadOp ones = zero;
  ones.name = "pad_hw_ones";
  ones.output = dram.zeros(NPU_DTYPE_FP32, out);
  ones.fill_bits = std::bit_cast<uint32_t>(1.5f);
  auto res = run_layers(small_config(), dram, {pad(zero), pad(ones)});
  EXPECT_EQ(dram.read<float>(zero.output), padded<float>(x, in, out, before, 0.0f));
  EXPECT_EQ(dram.read<float>(ones.output), padded<float>(x, in, out, before, 1.5f));
  ASSERT_EQ(res.layers.size(), 2u);
  EXPECT_EQ(res.layers[0].op, "pad");
  EXPECT_EQ(res.layers[0].bytes_out, 2u * 3 * 13 * 15 * 4);
}

// Padding the channel axis of a tensor bigger than SRAM: tiles fix channels, and the ones in
// the padding are stored from the fill row (the first candidate, without search, has some).
TEST(PadLowering, ChannelAxisTiled) {
  std::mt19937 rng(19);
  Dram dram;
  const std::vector<uint32_t> in{2, 40, 32, 32}, out{2, 48, 32, 32}, before{0, 3, 0, 0};
  auto x = random_vec<float>(2 * 40 * 32 * 32, rng, -1, 1);
  PadOp a;
  a.name = "pad_c";
  a.input = dram.tensor(NPU_DTYPE_FP32, in, x);
  a.output = dram.zeros(NPU_DTYPE_FP32, out);
  a.pad_before = before;
  a.fill_bits = std::bit_cast<uint32_t>(-2.0f);
  PadOp b = a;
  b.name = "pad_c_search";
  b.output = dram.zeros(NPU_DTYPE_FP32, out);
  auto res = run_layers(small_config(64 * 1024), dram, {pad(a, false), pad(b, true)});
  const auto want = padded<float>(x, in, out, before, -2.0f);
  EXPECT_EQ(dram.read<float>(a.output), want);
  EXPECT_EQ(dram.read<float>(b.output), want);
  ASSERT_EQ(res.layers.size(), 2u);
  for (const auto& l : res.layers) EXPECT_GT(l.tiles, 1u) << l.name;
}

TEST(PadLowering, Int8NonZeroFill) {
  std::mt19937 rng(20);
  Dram dram;
  const std::vector<uint32_t> in{1, 7, 9, 4}, out{1, 10, 11, 6}, before{0, 2, 1, 1};
  auto x = random_vec<int8_t>(7 * 9 * 4, rng, -128, 127);
  PadOp op;
  op.name = "pad_i8";
  op.input = dram.tensor(NPU_DTYPE_INT8, in, x);
  op.output = dram.zeros(NPU_DTYPE_INT8, out);
  op.pad_before = before;
  op.fill_bits = uint32_t(int32_t(-7));
  PadOp u = op;  // uint8 fill 200, 1-D
  u.name = "pad_u8";
  auto xu = random_vec<uint8_t>(100, rng, 0, 255);
  u.input = dram.tensor(NPU_DTYPE_UINT8, {100}, xu);
  u.output = dram.zeros(NPU_DTYPE_UINT8, {131});
  u.pad_before = {30};
  u.fill_bits = 200;
  run_layers(small_config(), dram, {pad(op), pad(u)});
  EXPECT_EQ(dram.read<int8_t>(op.output), padded<int8_t>(x, in, out, before, int8_t(-7)));
  EXPECT_EQ(dram.read<uint8_t>(u.output), padded<uint8_t>(xu, {100}, {131}, {30}, uint8_t(200)));
}

// Tiled copies and pads (plain, transposed, fill-row tiles) under queue depths down to 1 and
// varied DMA and dispatch costs: right bytes, and the replay equals the device (fixture).
TEST(CopyLowering, QueueDepthsAndConfigs) {
  std::mt19937 rng(21);
  for (int iter = 0; iter < 8; ++iter) {
    SCOPED_TRACE("iteration " + std::to_string(iter));
    isa::DeviceConfig cfg = small_config(32 * 1024);
    cfg.queue_depth = std::array<uint32_t, 4>{1, 2, 3, 64}[iter % 4];
    cfg.cp_cycles_per_cmd = std::uniform_int_distribution<uint32_t>(0, 6)(rng);
    cfg.dma.bytes_per_cycle = std::array<uint32_t, 2>{8, 64}[iter % 2];
    cfg.dma.latency = std::uniform_int_distribution<uint32_t>(1, 200)(rng);
    Dram dram;
    const uint32_t H = 20 + iter, W = 24, C = 16;
    auto x = random_vec<float>(size_t(H) * W * C, rng, -1, 1);
    CopyOp t;
    t.name = "to_nchw";
    t.input = dram.tensor(NPU_DTYPE_FP32, {H, W, C}, x);
    t.input.dims = {C, H, W};
    t.input.strides = {4, uint64_t(W) * C * 4, uint64_t(C) * 4};
    t.output = dram.zeros(NPU_DTYPE_FP32, {C, H, W});
    PadOp p;
    p.name = "pad";
    p.input = t.output;
    p.output = dram.zeros(NPU_DTYPE_FP32, {C + 7, H, W + 2});
    p.pad_before = {4, 0, 1};
    p.fill_bits = std::bit_cast<uint32_t>(3.0f);
    auto res = run_layers(cfg, dram, {copy(t), pad(p, iter % 2 == 0)});
    std::vector<float> nchw(x.size());
    for_each_index({H, W, C}, [&](const std::vector<uint32_t>& i) {
      nchw[flat({C, H, W}, {i[2], i[0], i[1]})] = x[flat({H, W, C}, i)];
    });
    EXPECT_EQ(dram.read<float>(t.output), nchw);
    EXPECT_EQ(dram.read<float>(p.output),
              padded<float>(nchw, {C, H, W}, {C + 7, H, W + 2}, {4, 0, 1}, 3.0f));
    for (const auto& l : res.layers) EXPECT_GT(l.tiles, 1u) << l.name;
  }
}

TEST(CopyLowering, Errors) {
  isa::DeviceConfig cfg = small_config();
  isa::CommandBufferBuilder b;
  SemAllocator sems(cfg.num_semaphores);
  EmitContext ctx{b, cfg, sems};
  CopyOp c;
  c.name = "bad";
  c.input = TensorDesc::make(0x1000, NPU_DTYPE_FP32, {2, 3});
  c.output = TensorDesc::make(0x2000, NPU_DTYPE_FP32, {3, 2});
  auto r = emit_copy(c, ctx);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("copy bad: output [3, 2] fp32 does not match input"));
  c.output = TensorDesc::make(0x2000, NPU_DTYPE_INT8, {2, 3});
  EXPECT_FALSE(emit_copy(c, ctx));
  c.output = TensorDesc::make(0x2000, NPU_DTYPE_FP32, {2, 3});
  c.output.strides = {0, 4};
  r = emit_copy(c, ctx);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("output dim 0 has stride 0"));
  c.output.strides = {4};
  EXPECT_FALSE(emit_copy(c, ctx));

  PadOp p;
  p.name = "badpad";
  p.input = TensorDesc::make(0x1000, NPU_DTYPE_FP32, {2, 3});
  p.output = TensorDesc::make(0x2000, NPU_DTYPE_FP32, {4, 4});
  p.pad_before = {1};
  auto q = emit_pad(p, ctx);
  ASSERT_FALSE(q);
  EXPECT_THAT(q.error().message, HasSubstr("pad badpad: needs"));
  p.pad_before = {1, 2};  // 3 + 2 > 4
  q = emit_pad(p, ctx);
  ASSERT_FALSE(q);
  EXPECT_THAT(q.error().message,
              HasSubstr("smaller than input [2, 3] fp32 plus pad_before on dim 1"));
  p.pad_before = {0, 70000};
  p.output = TensorDesc::make(0x2000, NPU_DTYPE_FP32, {2, 70003});
  q = emit_pad(p, ctx);
  ASSERT_FALSE(q);
  EXPECT_THAT(q.error().message, HasSubstr("pad badpad: pad of 70000 elements on dim 1 exceeds"));
  // A copy whose smallest tile does not fit: one row of 64 KiB int8 in 16 KiB of SRAM
  // cannot happen (rows are chunked), so check the budget with a tiny SRAM instead.
  EmitContext tiny{b, cfg, sems, 0, 64};
  c.output = TensorDesc::make(0x2000, NPU_DTYPE_FP32, {2, 3});
  r = emit_copy(c, tiny);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("copy bad: one element does not fit in sram"));
  EXPECT_EQ(b.size(), 0u) << "failed emitters must not append commands";
}

}  // namespace
}  // namespace npu::codegen::testing
