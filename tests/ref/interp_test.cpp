// Tests of the reference interpreter: the flat DRAM map, strided and padded DMA, a small
// program (DMA in, compute, DMA out) and bounds errors that name the command.
#include "npu/ref/interp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace npu::ref {
namespace {

template <typename T>
std::span<std::byte> bytes_of(std::vector<T>& v) {
  return std::as_writable_bytes(std::span(v));
}

template <typename T>
std::vector<T> read_at(const std::vector<std::byte>& mem, size_t offset, size_t count) {
  std::vector<T> v(count);
  std::memcpy(v.data(), mem.data() + offset, count * sizeof(T));
  return v;
}

template <typename T>
void write_at(std::vector<std::byte>& mem, size_t offset, const std::vector<T>& v) {
  std::memcpy(mem.data() + offset, v.data(), v.size() * sizeof(T));
}

npu_cmd make(uint8_t opcode, uint8_t engine) {
  npu_cmd c;
  std::memset(&c, 0, sizeof c);
  c.hdr.opcode = opcode;
  c.hdr.engine = engine;
  return c;
}

npu_cmd dma(uint8_t opcode, uint64_t dram, uint32_t sram, uint32_t es, uint32_t x, uint32_t y,
            uint32_t z) {
  npu_cmd c = make(opcode, opcode == NPU_OP_DMA_LOAD ? NPU_ENGINE_DMA_IN : NPU_ENGINE_DMA_OUT);
  c.dma.dram_addr = dram;
  c.dma.sram_addr = sram;
  c.dma.elem_size = es;
  c.dma.size[0] = x, c.dma.size[1] = y, c.dma.size[2] = z;
  c.dma.dram_stride[0] = es, c.dma.dram_stride[1] = es * x, c.dma.dram_stride[2] = es * x * y;
  c.dma.sram_stride[0] = es * x, c.dma.sram_stride[1] = es * x * y;
  return c;
}

TEST(FlatDram, MapLookupAndOverlap) {
  std::vector<std::byte> a(100), b(50);
  FlatDram dram;
  ASSERT_TRUE(dram.map(0x1000, a));
  ASSERT_TRUE(dram.map(0x2000, b));
  EXPECT_FALSE(dram.map(0x1050, b));  // overlaps a
  EXPECT_FALSE(dram.map(0x0fd0, b));  // runs into a
  EXPECT_FALSE(dram.map(0x3000, {}));
  EXPECT_FALSE(dram.map(~uint64_t{0} - 10, b));  // wraps
  auto r = dram.lookup(0x1010, 16);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->data(), a.data() + 16);
  EXPECT_TRUE(dram.lookup(0x1000, 100));
  auto bad = dram.lookup(0x1000, 101);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, EFAULT);
  EXPECT_FALSE(dram.lookup(0x0fff, 1));
  EXPECT_FALSE(dram.lookup(0x2032, 1));
  EXPECT_FALSE(dram.lookup(~uint64_t{0}, 2));
  EXPECT_TRUE(dram.unmap(0x2000));
  EXPECT_FALSE(dram.lookup(0x2000, 1));
}

TEST(Interp, DmaLoadWithPaddingAndBroadcast) {
  std::vector<uint16_t> src{1, 2, 3, 4};  // 2x2 of u16
  FlatDram dram;
  ASSERT_TRUE(dram.map(0x10000, bytes_of(src)));
  std::vector<std::byte> sram(64, std::byte{0xee});
  npu_cmd c = dma(NPU_OP_DMA_LOAD, 0x10000, 0, 2, 2, 2, 1);
  c.dma.pad_before[0] = 1, c.dma.pad_after[0] = 1, c.dma.pad_before[1] = 1;
  c.dma.pad_value = 0xabcd1234u;  // low 2 bytes: 0x1234
  c.dma.sram_stride[0] = 8;       // rows of 4 elements
  c.dma.sram_stride[1] = 24;
  ASSERT_TRUE(execute(c, sram, dram));
  const auto got = read_at<uint16_t>(sram, 0, 12);
  const uint16_t p = 0x1234;
  EXPECT_EQ(got, (std::vector<uint16_t>{p, p, p, p, p, 1, 2, p, p, 3, 4, p}));
  EXPECT_EQ(sram[24], std::byte{0xee});  // untouched

  // x stride 0 broadcasts the first element of each row.
  npu_cmd b = dma(NPU_OP_DMA_LOAD, 0x10000, 32, 2, 3, 2, 1);
  b.dma.dram_stride[0] = 0, b.dma.dram_stride[1] = 4;
  ASSERT_TRUE(execute(b, sram, dram));
  EXPECT_EQ(read_at<uint16_t>(sram, 32, 6), (std::vector<uint16_t>{1, 1, 1, 3, 3, 3}));
}

TEST(Interp, ProgramDmaMatmulReluStore) {
  // out = relu(A x B) for A 2x3, B 3x2, fp32, all through SRAM.
  std::vector<float> a{1, 2, 3, 4, 5, 6};
  std::vector<float> b{7, -8, 9, -10, 11, -12};
  std::vector<float> out(4, -99.0f);
  FlatDram dram;
  ASSERT_TRUE(dram.map(0x1000, bytes_of(a)));
  ASSERT_TRUE(dram.map(0x2000, bytes_of(b)));
  ASSERT_TRUE(dram.map(0x3000, bytes_of(out)));
  std::vector<std::byte> sram(256);

  std::vector<npu_cmd> prog;
  prog.push_back(dma(NPU_OP_DMA_LOAD, 0x1000, 0, 4, 3, 2, 1));
  prog.push_back(dma(NPU_OP_DMA_LOAD, 0x2000, 32, 4, 2, 3, 1));
  npu_cmd sig = make(NPU_OP_SEM_SIGNAL, NPU_ENGINE_DMA_IN);
  sig.sem.count = 1;
  prog.push_back(sig);
  npu_cmd mm = make(NPU_OP_MATMUL, NPU_ENGINE_MATRIX);
  mm.matmul.a_addr = 0, mm.matmul.b_addr = 32, mm.matmul.out_addr = 64;
  mm.matmul.m = 2, mm.matmul.k = 3, mm.matmul.n = 2, mm.matmul.batch = 1;
  mm.matmul.a_dtype = mm.matmul.b_dtype = mm.matmul.out_dtype = NPU_DTYPE_FP32;
  mm.matmul.fclamp_min = -INFINITY, mm.matmul.fclamp_max = INFINITY;
  prog.push_back(mm);
  npu_cmd act = make(NPU_OP_ACTIVATION, NPU_ENGINE_VECTOR);
  act.activation.func = NPU_ACT_RELU;
  act.activation.dtype = NPU_DTYPE_FP32;
  act.activation.shape[0] = act.activation.shape[1] = 1;
  act.activation.shape[2] = 2, act.activation.shape[3] = 2;
  act.activation.in = {64, {4, 4, 2, 1}};
  act.activation.out = {64, {4, 4, 2, 1}};
  prog.push_back(act);
  prog.push_back(make(NPU_OP_FENCE, NPU_ENGINE_CP));
  prog.push_back(dma(NPU_OP_DMA_STORE, 0x3000, 64, 4, 2, 2, 1));
  prog.push_back(make(NPU_OP_END, NPU_ENGINE_CP));
  prog.push_back(dma(NPU_OP_DMA_STORE, 0x9999, 64, 4, 2, 2, 1));  // after END: not run

  ASSERT_TRUE(run_program(prog, sram, dram));
  // [1 2 3] x [[7 -8] [9 -10] [11 -12]] = [58, -64]; [4 5 6] -> [139, -154].
  EXPECT_EQ(out, (std::vector<float>{58, 0, 139, 0}));
}

TEST(Interp, Int8ConvProgram) {
  // 1x1 conv on a 1x2x2 int8 tile with requantization, via SRAM only.
  std::vector<std::byte> sram(128);
  write_at<int8_t>(sram, 0, {3, 5, 7, 9});  // in [1][2][2]
  write_at<int8_t>(sram, 8, {1, 1});        // w [1][1][1][2]
  write_at<npu_chan_qparams>(sram, 16, {{1, 1 << 30, 31, 0}});
  npu_cmd c = make(NPU_OP_CONV2D, NPU_ENGINE_MATRIX);
  c.conv2d.in_addr = 0, c.conv2d.w_addr = 8, c.conv2d.out_addr = 48, c.conv2d.chan_addr = 16;
  c.conv2d.in_h = 1, c.conv2d.in_w = 2, c.conv2d.in_c = 2;
  c.conv2d.out_h = 1, c.conv2d.out_w = 2, c.conv2d.out_c = 1;
  c.conv2d.k_h = c.conv2d.k_w = 1, c.conv2d.groups = 1;
  c.conv2d.stride_h = c.conv2d.stride_w = c.conv2d.dil_h = c.conv2d.dil_w = 1;
  c.conv2d.in_dtype = c.conv2d.w_dtype = c.conv2d.out_dtype = NPU_DTYPE_INT8;
  c.conv2d.clamp_min = -128, c.conv2d.clamp_max = 127;
  FlatDram dram;
  ASSERT_TRUE(execute(c, sram, dram));
  // (3 + 5 + 1) / 2 = 4.5 -> 4; (7 + 9 + 1) / 2 = 8.5 -> 8.
  EXPECT_EQ(read_at<int8_t>(sram, 48, 2), (std::vector<int8_t>{4, 8}));
}

// ---- ISA 1.1: half matrix modes and converting DMAs ----

npu_cmd half_conv_1x1(uint8_t dt, uint8_t out_dt) {
  npu_cmd c = make(NPU_OP_CONV2D, NPU_ENGINE_MATRIX);
  c.conv2d.in_addr = 0, c.conv2d.w_addr = 16, c.conv2d.out_addr = 48, c.conv2d.chan_addr = 32;
  c.conv2d.in_h = 1, c.conv2d.in_w = 2, c.conv2d.in_c = 2;
  c.conv2d.out_h = 1, c.conv2d.out_w = 2, c.conv2d.out_c = 1;
  c.conv2d.k_h = c.conv2d.k_w = 1, c.conv2d.groups = 1;
  c.conv2d.stride_h = c.conv2d.stride_w = c.conv2d.dil_h = c.conv2d.dil_w = 1;
  c.conv2d.in_dtype = c.conv2d.w_dtype = dt;
  c.conv2d.out_dtype = out_dt;
  c.conv2d.fclamp_min = -INFINITY, c.conv2d.fclamp_max = INFINITY;
  return c;
}

TEST(Interp, Fp16ConvAccumulatesInFp32AndRoundsOnce) {
  std::vector<std::byte> sram(128);
  // Pixel 0: 2048 * 1 + 1 * 1 = 2049, exact in fp32; fp16 spacing at 2048 is 2, so the tie
  // rounds to even (2048). Pixel 1: (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20, exact in fp32.
  write_at<uint16_t>(sram, 0, {0x6800, 0x3c00, 0x3c01, 0x0000});  // in [1][2][2]
  write_at<uint16_t>(sram, 16, {0x3c00, 0x3c00});                 // w: 1, 1
  FlatDram dram;
  npu_cmd c = half_conv_1x1(NPU_DTYPE_FP16, NPU_DTYPE_FP16);
  ASSERT_TRUE(execute(c, sram, dram));
  EXPECT_EQ(read_at<uint16_t>(sram, 48, 2), (std::vector<uint16_t>{0x6800, 0x3c01}));
  // fp32 output keeps the exact sums.
  c.conv2d.out_dtype = NPU_DTYPE_FP32;
  write_at<uint16_t>(sram, 16, {0x3c00, 0x3c01});  // w: 1, 1 + 2^-10
  ASSERT_TRUE(execute(c, sram, dram));
  EXPECT_EQ(read_at<float>(sram, 48, 2),
            (std::vector<float>{2048.0f + 1.0f + 0x1p-10f, 1.0f + 0x1p-10f}));
  // fp32 bias (1.0: 2050 is representable) and clamp (max 2000) apply before the rounding.
  write_at<uint16_t>(sram, 16, {0x3c00, 0x3c00});
  write_at<float>(sram, 32, {1.0f});
  c.conv2d.out_dtype = NPU_DTYPE_FP16;
  c.hdr.flags = NPU_MM_FLAG_BIAS;
  ASSERT_TRUE(execute(c, sram, dram));
  EXPECT_EQ(read_at<uint16_t>(sram, 48, 2), (std::vector<uint16_t>{0x6801, 0x4000}));
  c.conv2d.fclamp_max = 2000.0f;
  ASSERT_TRUE(execute(c, sram, dram));
  EXPECT_EQ(read_at<uint16_t>(sram, 48, 1)[0], 0x67d0);  // 2000
  // Mixed modes are refused.
  c.conv2d.w_dtype = NPU_DTYPE_BF16;
  auto r = execute(c, sram, dram);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("fp16 mode needs w_dtype fp16"), std::string::npos)
      << r.error().message;
}

TEST(Interp, Bf16MatmulTiesToEven) {
  std::vector<std::byte> sram(256);
  // A [2][2] = {256, 1; 256, 3}, B [2][1] = {1; 1}: 257 (tie -> 256), 259 (tie -> 260).
  write_at<uint16_t>(sram, 0, {0x4380, 0x3f80, 0x4380, 0x4040});
  write_at<uint16_t>(sram, 16, {0x3f80, 0x3f80});
  npu_cmd c = make(NPU_OP_MATMUL, NPU_ENGINE_MATRIX);
  c.matmul.a_addr = 0, c.matmul.b_addr = 16, c.matmul.out_addr = 64;
  c.matmul.m = 2, c.matmul.k = 2, c.matmul.n = 1, c.matmul.batch = 1;
  c.matmul.a_dtype = c.matmul.b_dtype = c.matmul.out_dtype = NPU_DTYPE_BF16;
  c.matmul.fclamp_min = -INFINITY, c.matmul.fclamp_max = INFINITY;
  FlatDram dram;
  ASSERT_TRUE(execute(c, sram, dram));
  EXPECT_EQ(read_at<uint16_t>(sram, 64, 2), (std::vector<uint16_t>{0x4380, 0x4382}));
}

TEST(Interp, ConvertingDmaLoadAndStore) {
  std::vector<float> src = {1.0f, 65520.0f, -0.0f, 0x1p-25f, 0x1.8p-24f, NAN};
  std::vector<uint16_t> dst(8, 0xffff);
  FlatDram dram;
  ASSERT_TRUE(dram.map(0x1000, bytes_of(src)));
  ASSERT_TRUE(dram.map(0x2000, bytes_of(dst)));
  std::vector<std::byte> sram(64);
  npu_cmd load = dma(NPU_OP_DMA_LOAD, 0x1000, 0, 2, 6, 1, 1);
  load.dma.dram_dtype = NPU_DTYPE_FP32, load.dma.sram_dtype = NPU_DTYPE_FP16;
  load.dma.dram_stride[0] = 4, load.dma.dram_stride[1] = 24, load.dma.dram_stride[2] = 24;
  load.dma.pad_after[0] = 2, load.dma.pad_value = 0x3800;  // 0.5
  load.dma.sram_stride[0] = load.dma.sram_stride[1] = 16;
  ASSERT_TRUE(execute(load, sram, dram));
  EXPECT_EQ(read_at<uint16_t>(sram, 0, 8), (std::vector<uint16_t>{0x3c00, 0x7c00, 0x8000, 0x0000,
                                                                  0x0002, 0x7e00, 0x3800, 0x3800}));
  // Back to DRAM as bf16, every other element (x stride 4 bytes).
  npu_cmd store = dma(NPU_OP_DMA_STORE, 0x2000, 0, 2, 4, 1, 1);
  store.dma.dram_dtype = NPU_DTYPE_BF16, store.dma.sram_dtype = NPU_DTYPE_FP16;
  store.dma.dram_stride[0] = 4;
  ASSERT_TRUE(execute(store, sram, dram));
  EXPECT_EQ(
      dst, (std::vector<uint16_t>{0x3f80, 0xffff, 0x7f80, 0xffff, 0x8000, 0xffff, 0x0000, 0xffff}));
  // elem_size must be sram_dtype's size.
  load.dma.elem_size = 4;
  auto r = execute(load, sram, dram);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("elem_size"), std::string::npos) << r.error().message;
}

TEST(Interp, ErrorsNameTheCommandAndField) {
  std::vector<std::byte> sram(64);
  std::vector<float> src(4);
  FlatDram dram;
  ASSERT_TRUE(dram.map(0x1000, bytes_of(src)));
  std::vector<npu_cmd> prog;
  prog.push_back(dma(NPU_OP_DMA_LOAD, 0x1000, 0, 4, 4, 1, 1));
  prog.push_back(dma(NPU_OP_DMA_LOAD, 0x1000, 60, 4, 4, 1, 1));  // past SRAM end
  prog.push_back(make(NPU_OP_END, NPU_ENGINE_CP));
  auto r = run_program(prog, sram, dram);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("command 1"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("sram_addr"), std::string::npos) << r.error().message;

  prog[1] = dma(NPU_OP_DMA_LOAD, 0x1004, 0, 4, 4, 1, 1);  // past DRAM mapping end
  r = run_program(prog, sram, dram);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("dram_addr"), std::string::npos) << r.error().message;

  prog.pop_back();
  r = run_program(prog, sram, dram);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no end"), std::string::npos);

  // SRAM rows written twice (y stride 0) and a huge zero-stride box are refused, not looped.
  npu_cmd ov = dma(NPU_OP_DMA_LOAD, 0x1000, 0, 4, 4, 1, 1);
  ov.dma.size[1] = 0xffffffffu, ov.dma.size[2] = 0xffffffffu;
  ov.dma.dram_stride[1] = ov.dma.dram_stride[2] = 0;
  ov.dma.sram_stride[0] = ov.dma.sram_stride[1] = 0;
  auto ovr = execute(ov, sram, dram);
  ASSERT_FALSE(ovr);
  EXPECT_NE(ovr.error().message.find("overlap"), std::string::npos) << ovr.error().message;
  npu_cmd st = dma(NPU_OP_DMA_STORE, 0x1000, 0, 4, 4, 1, 1);
  st.dma.pad_after[0] = 1;
  EXPECT_FALSE(execute(st, sram, dram));

  npu_cmd bad = make(0x7f, NPU_ENGINE_CP);
  EXPECT_FALSE(execute(bad, sram, dram));

  npu_cmd sm = make(NPU_OP_SOFTMAX, NPU_ENGINE_VECTOR);
  sm.softmax.rows = 0xffffffffu, sm.softmax.len = 0xffffffffu;  // huge: no allocation, error
  EXPECT_FALSE(execute(sm, sram, dram));

  npu_cmd mm = make(NPU_OP_MATMUL, NPU_ENGINE_MATRIX);
  mm.matmul.m = mm.matmul.k = mm.matmul.n = mm.matmul.batch = 0xffffffffu;
  mm.matmul.a_batch_stride = 0xffffffffu;
  mm.matmul.a_dtype = mm.matmul.b_dtype = mm.matmul.out_dtype = NPU_DTYPE_INT8;
  EXPECT_FALSE(execute(mm, sram, dram));
}

TEST(Interp, VectorOpsThroughSram) {
  std::vector<std::byte> sram(256);
  FlatDram dram;
  // Quantize 4 floats to int8, then dequantize back.
  write_at<float>(sram, 0, {0.5f, 1.5f, -2.5f, 300.0f});
  npu_cmd q = make(NPU_OP_QUANTIZE, NPU_ENGINE_VECTOR);
  q.quant.in_addr = 0, q.quant.out_addr = 16, q.quant.count = 4, q.quant.channels = 1;
  q.quant.inner = 1, q.quant.scale = 1.0f, q.quant.zp = 0;
  q.quant.in_dtype = NPU_DTYPE_FP32, q.quant.out_dtype = NPU_DTYPE_INT8;
  ASSERT_TRUE(execute(q, sram, dram));
  EXPECT_EQ(read_at<int8_t>(sram, 16, 4), (std::vector<int8_t>{0, 2, -2, 127}));
  npu_cmd d = q;
  d.hdr.opcode = NPU_OP_DEQUANTIZE;
  d.quant.in_addr = 16, d.quant.out_addr = 32;
  d.quant.in_dtype = NPU_DTYPE_INT8, d.quant.out_dtype = NPU_DTYPE_FP32;
  ASSERT_TRUE(execute(d, sram, dram));
  EXPECT_EQ(read_at<float>(sram, 32, 4), (std::vector<float>{0, 2, -2, 127}));

  // Transpose a 2x3 int16 matrix (elem_size 2).
  write_at<int16_t>(sram, 64, {1, 2, 3, 4, 5, 6});
  npu_cmd t = make(NPU_OP_TRANSPOSE, NPU_ENGINE_VECTOR);
  t.transpose.in_addr = 64, t.transpose.out_addr = 80, t.transpose.elem_size = 2;
  t.transpose.in_shape[0] = t.transpose.in_shape[1] = 1;
  t.transpose.in_shape[2] = 2, t.transpose.in_shape[3] = 3;
  t.transpose.perm[0] = 0, t.transpose.perm[1] = 1, t.transpose.perm[2] = 3;
  t.transpose.perm[3] = 2;
  ASSERT_TRUE(execute(t, sram, dram));
  EXPECT_EQ(read_at<int16_t>(sram, 80, 6), (std::vector<int16_t>{1, 4, 2, 5, 3, 6}));

  // Int8 average pool 1x2 -> 1x1 with half-even rounding.
  write_at<int8_t>(sram, 96, {3, 2});
  npu_cmd p = make(NPU_OP_POOL, NPU_ENGINE_VECTOR);
  p.pool.kind = NPU_POOL_AVG, p.pool.dtype = NPU_DTYPE_INT8;
  p.pool.in_addr = 96, p.pool.out_addr = 100;
  p.pool.in_h = 1, p.pool.in_w = 2, p.pool.channels = 1, p.pool.out_h = p.pool.out_w = 1;
  p.pool.k_h = 1, p.pool.k_w = 2, p.pool.stride_h = p.pool.stride_w = 1;
  ASSERT_TRUE(execute(p, sram, dram));
  EXPECT_EQ(read_at<int8_t>(sram, 100, 1)[0], 2);

  // Reduce mean over len 2.
  write_at<float>(sram, 128, {1, 2, 3, 4});
  npu_cmd r = make(NPU_OP_REDUCE, NPU_ENGINE_VECTOR);
  r.reduce.kind = NPU_REDUCE_MEAN, r.reduce.in_addr = 128, r.reduce.out_addr = 144;
  r.reduce.outer = 1, r.reduce.len = 2, r.reduce.inner = 2;
  ASSERT_TRUE(execute(r, sram, dram));
  EXPECT_EQ(read_at<float>(sram, 144, 2), (std::vector<float>{2, 3}));

  // Moments over len 2 of the same input: mean and mean of squares.
  npu_cmd m = make(NPU_OP_MOMENTS, NPU_ENGINE_VECTOR);
  m.moments.in_addr = 128, m.moments.mean_addr = 144, m.moments.sq_addr = 152;
  m.moments.outer = 1, m.moments.len = 2, m.moments.inner = 2;
  ASSERT_TRUE(execute(m, sram, dram));
  EXPECT_EQ(read_at<float>(sram, 144, 2), (std::vector<float>{2, 3}));
  EXPECT_EQ(read_at<float>(sram, 152, 2), (std::vector<float>{5, 10}));  // (1+9)/2, (4+16)/2

  // Eltwise int32 add with a broadcast scalar b.
  write_at<int32_t>(sram, 160, {1, 2, 3, 2147483647});
  write_at<int32_t>(sram, 176, {1});
  npu_cmd e = make(NPU_OP_ELTWISE, NPU_ENGINE_VECTOR);
  e.eltwise.op = NPU_ELTWISE_ADD, e.eltwise.dtype = NPU_DTYPE_INT32;
  e.eltwise.shape[0] = e.eltwise.shape[1] = e.eltwise.shape[2] = 1, e.eltwise.shape[3] = 4;
  e.eltwise.a = {160, {4, 4, 4, 1}};
  e.eltwise.b = {176, {0, 0, 0, 0}};
  e.eltwise.out = {192, {4, 4, 4, 1}};
  ASSERT_TRUE(execute(e, sram, dram));
  EXPECT_EQ(read_at<int32_t>(sram, 192, 4),
            (std::vector<int32_t>{2, 3, 4, static_cast<int32_t>(0x80000000u)}));
}

}  // namespace
}  // namespace npu::ref
