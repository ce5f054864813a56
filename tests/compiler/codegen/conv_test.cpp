// Conv2d lowering on a small-SRAM device: outputs match the reference operators (int8
// bit-exact, fp32 to 1e-4), the program validates, the replay equals the device's cycles, and
// compute-bound layers run within 15% of their roofline.
#include <cmath>

#include "fixture.h"
#include "npu/ref/conv.h"

namespace npu::codegen::testing {
namespace {

struct ConvCase {
  const char* name;
  uint32_t H, W, C, OC, K, stride, pad, dil, groups;
  bool fp32;
  uint64_t sram = 256 * 1024;
};

void PrintTo(const ConvCase& c, std::ostream* os) {
  *os << c.name;
}

std::vector<LayerReport>& table() {
  static std::vector<LayerReport> t;
  return t;
}

LayerReport run_conv(const ConvCase& cc) {
  std::mt19937 rng(1234);
  const isa::DeviceConfig cfg = small_config(cc.sram);
  Dram dram;
  ref::Conv2dShape s;
  s.in_h = cc.H, s.in_w = cc.W, s.in_c = cc.C, s.out_c = cc.OC, s.k_h = s.k_w = cc.K;
  s.stride_h = s.stride_w = cc.stride, s.dil_h = s.dil_w = cc.dil, s.groups = cc.groups;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = cc.pad;
  s.out_h = ref::conv_out_dim(cc.H, cc.K, cc.stride, cc.dil, cc.pad, cc.pad);
  s.out_w = ref::conv_out_dim(cc.W, cc.K, cc.stride, cc.dil, cc.pad, cc.pad);
  const uint32_t icg = cc.C / cc.groups;
  const size_t n_in = size_t(cc.H) * cc.W * cc.C, n_w = size_t(cc.OC) * cc.K * cc.K * icg;
  const size_t n_out = size_t(s.out_h) * s.out_w * cc.OC;
  Conv2dOp op;
  op.name = cc.name;
  op.stride_h = op.stride_w = cc.stride, op.dil_h = op.dil_w = cc.dil, op.groups = cc.groups;
  op.pad_top = op.pad_left = op.pad_bottom = op.pad_right = cc.pad;
  const std::vector<uint32_t> in_dims{1, cc.H, cc.W, cc.C}, w_dims{cc.OC, cc.K, cc.K, icg},
      out_dims{1, s.out_h, s.out_w, cc.OC};
  LayerReport rep;
  if (cc.fp32) {
    auto x = random_vec<float>(n_in, rng, -1, 1), w = random_vec<float>(n_w, rng, -0.5, 0.5);
    auto bias = random_vec<float>(cc.OC, rng, -1, 1);
    op.input = dram.tensor(NPU_DTYPE_FP32, in_dims, x);
    op.weights = dram.tensor(NPU_DTYPE_FP32, w_dims, w);
    op.output = dram.zeros(NPU_DTYPE_FP32, out_dims);
    op.chan_va = dram.put(bias);
    op.fclamp_min = 0.0f;  // fused relu
    auto res = run_layers(cfg, dram, {[&](EmitContext& c) { return emit_conv2d(op, c); }});
    std::vector<float> want(n_out);
    EXPECT_TRUE(ref::conv2d_f32(s, x, w, bias, 0.0f, kInf, want));
    expect_near(dram.read<float>(op.output), want);
    rep = res.layers.at(0);
  } else {
    auto x = random_vec<int8_t>(n_in, rng, -128, 127), w = random_vec<int8_t>(n_w, rng, -127, 127);
    std::vector<npu_chan_qparams> chan(cc.OC);
    const double scale = 1.0 / (std::sqrt(double(cc.K * cc.K * icg)) * 128.0);
    for (auto& q : chan) {
      const auto m =
          ref::quantize_multiplier(scale * std::uniform_real_distribution<>(0.5, 2)(rng));
      q = {std::uniform_int_distribution<int>(-2000, 2000)(rng), m.multiplier, m.shift, 0};
    }
    op.input = dram.tensor(NPU_DTYPE_INT8, in_dims, x);
    op.weights = dram.tensor(NPU_DTYPE_INT8, w_dims, w);
    op.output = dram.zeros(NPU_DTYPE_INT8, out_dims);
    op.chan_va = dram.put(chan);
    op.in_zp = 3, op.out_zp = -5;
    auto res = run_layers(cfg, dram, {[&](EmitContext& c) { return emit_conv2d(op, c); }});
    std::vector<int8_t> want(n_out);
    ref::IntOutput o{3, -5, -128, 127};
    EXPECT_TRUE((ref::conv2d_int<int8_t, int8_t, int8_t>(s, x, w, chan, o, want)));
    EXPECT_EQ(dram.read<int8_t>(op.output), want);
    rep = res.layers.at(0);
  }
  EXPECT_GT(rep.tiles, 1u) << "the case should force tiling";
  table().push_back(rep);
  return rep;
}

class ConvLowering : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvLowering, MatchesReferenceAndRoofline) {
  const LayerReport r = run_conv(GetParam());
  const bool compute_bound = r.compute_cycles >= std::max(r.dma_in_cycles, r.dma_out_cycles);
  if (compute_bound) {
    EXPECT_LE(double(r.cycles), 1.15 * double(roofline(r))) << r.name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConvLowering,
    ::testing::Values(ConvCase{"res3x3_s1_i8", 56, 56, 64, 64, 3, 1, 1, 1, 1, false},
                      ConvCase{"res3x3_s1_f32", 56, 56, 64, 64, 3, 1, 1, 1, 1, true},
                      ConvCase{"res3x3_s2_i8", 56, 56, 64, 128, 3, 2, 1, 1, 1, false},
                      ConvCase{"res1x1_i8", 56, 56, 64, 256, 1, 1, 0, 1, 1, false},
                      ConvCase{"res1x1_f32", 28, 28, 128, 64, 1, 1, 0, 1, 1, true},
                      ConvCase{"stem7x7_s2_i8", 224, 224, 3, 64, 7, 2, 3, 1, 1, false},
                      ConvCase{"stem7x7_s2_f32", 112, 112, 3, 32, 7, 2, 3, 1, 1, true},
                      ConvCase{"dw3x3_i8", 56, 56, 64, 64, 3, 1, 1, 1, 64, false},
                      ConvCase{"dw3x3_s2_f32", 56, 56, 32, 32, 3, 2, 1, 1, 32, true},
                      ConvCase{"group4_i8", 28, 28, 64, 64, 3, 1, 1, 1, 4, false},
                      ConvCase{"dilated2_i8", 28, 28, 32, 32, 3, 1, 2, 2, 1, false},
                      ConvCase{"dilated2_f32", 28, 28, 32, 32, 3, 1, 2, 2, 1, true},
                      ConvCase{"oc_slices_i8", 14, 14, 256, 256, 3, 1, 1, 1, 1, false},
                      ConvCase{"oc_slices_f32", 7, 7, 256, 256, 3, 1, 1, 1, 1, true},
                      ConvCase{"res3x3_128k_i8", 56, 56, 64, 64, 3, 1, 1, 1, 1, false, 128 * 1024}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

// Prints the efficiency table after all tests ran.
class TableEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    if (!table().empty()) print_table(table());
  }
};
const auto* const kTableEnv = ::testing::AddGlobalTestEnvironment(new TableEnvironment);

TEST(ConvLoweringErrors, RowThatDoesNotFitIsAnError) {
  isa::DeviceConfig cfg = small_config(16 * 1024);
  isa::CommandBufferBuilder b;
  SemAllocator sems(cfg.num_semaphores);
  EmitContext ctx{b, cfg, sems};
  Conv2dOp op;
  op.name = "wide";
  op.input = TensorDesc::make(0x1000, NPU_DTYPE_FP32, {1, 8, 4096, 4});
  op.weights = TensorDesc::make(0x2000, NPU_DTYPE_FP32, {4, 3, 3, 4});
  op.output = TensorDesc::make(0x3000, NPU_DTYPE_FP32, {1, 6, 4094, 4});
  auto r = emit_conv2d(op, ctx);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("conv2d wide"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("does not fit in sram"), std::string::npos);
}

}  // namespace
}  // namespace npu::codegen::testing
