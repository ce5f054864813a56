// Engine-kernel throughput: 3x3 conv 56x56x64->64 (int8, fp32, fp16) and a 256^3 matmul
// (int8, fp32, fp16), each on every ISA level of the tile kernels, one thread (split:0) and
// shared with the worker thread (split:1, emu/kernels/parallel.h); square fp32/int8 matmuls
// of growing size, split:0 against split:2 (every size shared), for the split threshold.
// Reports GMAC/s over wall time. Run:
//   ./bench_kernels [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gemm.h"
#include "npu/emu/kernels.h"
#include "npu/isa/dtype.h"
#include "npu/isa/half.h"
#include "npu/ref/scalar.h"
#include "parallel.h"

namespace {

using npu::emu::kern::Isa;

void fill_random(std::vector<std::byte>& sram, size_t begin, size_t bytes, uint8_t t) {
  std::mt19937 g(1);
  std::uniform_real_distribution<float> d(-1, 1);
  if (t == NPU_DTYPE_FP32) {
    for (size_t i = 0; i < bytes / 4; ++i) {
      const float v = d(g);
      std::memcpy(sram.data() + begin + i * 4, &v, 4);
    }
  } else if (npu::isa::dtype_is_half(t)) {
    for (size_t i = 0; i < bytes / 2; ++i) {
      const uint16_t h = npu::isa::fp32_to_half(t, d(g));
      std::memcpy(sram.data() + begin + i * 2, &h, 2);
    }
  } else {
    for (size_t i = 0; i < bytes; ++i) sram[begin + i] = static_cast<std::byte>(g());
  }
}

void set_qparams(std::vector<std::byte>& sram, size_t addr, size_t n, size_t k) {
  const auto qm = npu::ref::quantize_multiplier(1.0 / (64.0 * static_cast<double>(k)));
  for (size_t i = 0; i < n; ++i) {
    const npu_chan_qparams q{static_cast<int32_t>(i), qm.multiplier, qm.shift, 3};
    std::memcpy(sram.data() + addr + i * sizeof(q), &q, sizeof(q));
  }
}

/// range(0): the ISA; range(1): 0 one thread, 1 the default split threshold, 2 split always.
void run(benchmark::State& state, const npu_cmd& cmd, std::vector<std::byte>& sram, double macs) {
  namespace kern = npu::emu::kern;
  kern::set_kernel_isa(static_cast<Isa>(state.range(0)));
  const int64_t split = state.range(1);
  kern::set_split_threshold(split == 0 ? UINT64_MAX : split == 1 ? kern::kSplitMacs : 0);
  const uint64_t worker_before = kern::worker_chunks();
  for (auto _ : state) {
    npu::emu::run_matrix(cmd, sram);
    benchmark::ClobberMemory();
  }
  state.counters["GMAC/s"] = benchmark::Counter(
      macs * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  // Blocks the worker ran per command (0: the caller did everything).
  state.counters["worker_blocks"] =
      static_cast<double>(kern::worker_chunks() - worker_before) /
      static_cast<double>(std::max<benchmark::IterationCount>(state.iterations(), 1));
  kern::set_kernel_isa(Isa::Auto);
  kern::set_split_threshold(kern::kSplitMacs);
}

void conv3x3(benchmark::State& state, uint8_t t, uint32_t H, uint32_t W, uint32_t C, uint32_t O) {
  const size_t es = npu::isa::dtype_size(t);
  const bool fp = npu::isa::dtype_is_float(t);
  std::vector<std::byte> sram(size_t{8} << 20);
  npu_cmd cmd;
  std::memset(&cmd, 0, sizeof(cmd));
  auto& c = cmd.conv2d;
  c.hdr.opcode = NPU_OP_CONV2D, c.hdr.engine = NPU_ENGINE_MATRIX;
  c.in_addr = 0, c.w_addr = 0x200000, c.chan_addr = 0x300000, c.out_addr = 0x400000;
  c.in_h = H, c.in_w = W, c.in_c = C, c.out_h = H, c.out_w = W, c.out_c = O;
  c.k_h = c.k_w = 3, c.groups = 1, c.stride_h = c.stride_w = 1, c.dil_h = c.dil_w = 1;
  c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = 1;
  c.in_dtype = c.w_dtype = c.out_dtype = t;
  c.in_zp = -3, c.out_zp = 5, c.clamp_min = -128, c.clamp_max = 127;
  c.fclamp_min = -INFINITY, c.fclamp_max = INFINITY;
  fill_random(sram, c.in_addr, H * W * C * es, t);
  fill_random(sram, c.w_addr, O * 9 * C * es, t);
  if (fp)
    fill_random(sram, c.chan_addr, O * 4, NPU_DTYPE_FP32), c.hdr.flags = NPU_MM_FLAG_BIAS;
  else
    set_qparams(sram, c.chan_addr, O, 9 * C);
  run(state, cmd, sram, double{H} * W * O * 9 * C);
}

/// A 3x3 convolution of 56 x 56 x 64 to 64 channels (an early ResNet layer in one command).
void BM_Conv3x3(benchmark::State& state, uint8_t t) {
  conv3x3(state, t, 56, 56, 64, 64);
}

/// One tile of that layer as the compiler cuts it (4 output rows, 16 output channels): what
/// a ResNet-18 inference runs about 900 times.
void BM_Conv3x3Tile(benchmark::State& state, uint8_t t) {
  conv3x3(state, t, 4, 56, 64, 16);
}

void BM_Matmul(benchmark::State& state, uint8_t t, uint32_t N) {
  const size_t es = npu::isa::dtype_size(t);
  std::vector<std::byte> sram(size_t{8} << 20);
  npu_cmd cmd;
  std::memset(&cmd, 0, sizeof(cmd));
  auto& c = cmd.matmul;
  c.hdr.opcode = NPU_OP_MATMUL, c.hdr.engine = NPU_ENGINE_MATRIX;
  c.a_addr = 0, c.b_addr = 0x100000, c.chan_addr = 0x200000, c.out_addr = 0x300000;
  c.m = c.k = c.n = N, c.batch = 1;
  c.a_dtype = c.b_dtype = c.out_dtype = t;
  c.a_zp = 1, c.out_zp = 0, c.clamp_min = -128, c.clamp_max = 127;
  c.fclamp_min = -INFINITY, c.fclamp_max = INFINITY;
  fill_random(sram, c.a_addr, N * N * es, t);
  fill_random(sram, c.b_addr, N * N * es, t);
  if (!npu::isa::dtype_is_float(t)) set_qparams(sram, c.chan_addr, N, N);
  run(state, cmd, sram, static_cast<double>(N) * N * N);
}

void BM_Matmul256(benchmark::State& state, uint8_t t) {
  BM_Matmul(state, t, 256);
}

/// range(2): N of an N^3 matmul.
void BM_MatmulN(benchmark::State& state, uint8_t t) {
  BM_Matmul(state, t, static_cast<uint32_t>(state.range(2)));
}

void isa_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"isa", "split"});
  for (Isa i : {Isa::Portable, Isa::Avx2, Isa::AvxVnni, Isa::Avx512, Isa::Amx})
    for (int64_t split : {0, 1}) b->Args({static_cast<int64_t>(i), split});
  b->Unit(benchmark::kMicrosecond)->UseRealTime();  // two threads: wall time is what counts
}

void size_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"isa", "split", "n"});
  for (int64_t n : {112, 128, 160, 192, 224})
    for (int64_t split : {0, 2}) b->Args({static_cast<int64_t>(Isa::Auto), split, n});
  b->Unit(benchmark::kMicrosecond)->UseRealTime();
}

BENCHMARK_CAPTURE(BM_Conv3x3, int8, uint8_t{NPU_DTYPE_INT8})->Apply(isa_args);
BENCHMARK_CAPTURE(BM_Conv3x3, fp32, uint8_t{NPU_DTYPE_FP32})->Apply(isa_args);
BENCHMARK_CAPTURE(BM_Conv3x3, fp16, uint8_t{NPU_DTYPE_FP16})->Apply(isa_args);
BENCHMARK_CAPTURE(BM_Conv3x3Tile, fp32, uint8_t{NPU_DTYPE_FP32})
    ->ArgNames({"isa", "split"})
    ->Args({static_cast<int64_t>(Isa::Auto), 0})
    ->Args({static_cast<int64_t>(Isa::Auto), 2});
BENCHMARK_CAPTURE(BM_Conv3x3Tile, int8, uint8_t{NPU_DTYPE_INT8})
    ->ArgNames({"isa", "split"})
    ->Args({static_cast<int64_t>(Isa::Avx512), 0})
    ->Args({static_cast<int64_t>(Isa::Amx), 0});
BENCHMARK_CAPTURE(BM_Conv3x3Tile, fp16, uint8_t{NPU_DTYPE_FP16})
    ->ArgNames({"isa", "split"})
    ->Args({static_cast<int64_t>(Isa::Auto), 0});
BENCHMARK_CAPTURE(BM_Conv3x3Tile, bf16, uint8_t{NPU_DTYPE_BF16})
    ->ArgNames({"isa", "split"})
    ->Args({static_cast<int64_t>(Isa::Avx512), 0})
    ->Args({static_cast<int64_t>(Isa::Amx), 0});
BENCHMARK_CAPTURE(BM_Matmul256, int8, uint8_t{NPU_DTYPE_INT8})->Apply(isa_args);
BENCHMARK_CAPTURE(BM_Matmul256, fp32, uint8_t{NPU_DTYPE_FP32})->Apply(isa_args);
BENCHMARK_CAPTURE(BM_Matmul256, fp16, uint8_t{NPU_DTYPE_FP16})->Apply(isa_args);
BENCHMARK_CAPTURE(BM_MatmulN, fp32, uint8_t{NPU_DTYPE_FP32})->Apply(size_args);
BENCHMARK_CAPTURE(BM_MatmulN, int8, uint8_t{NPU_DTYPE_INT8})->Apply(size_args);

}  // namespace

BENCHMARK_MAIN();
