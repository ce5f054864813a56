// Real models from Debian's libonnx-testdata: they import, ONNX shape inference gives the
// shape of the reference output (test_data_set_0/output_0.pb), and they go through the
// default pipeline and the partition. Skipped when the test data is not installed.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "npu/compiler/onnx_import.h"
#include "npu/compiler/op_set.h"
#include "npu/compiler/pass_manager.h"
#include "npu/compiler/support.h"

namespace npu::compiler {
namespace {

namespace fs = std::filesystem;

fs::path test_dir(const std::string& rel) {
  return fs::path(NPUC_ONNX_TESTDATA_DIR) / rel;
}

// Dims of the reference output_0.pb, or {-1} if unreadable.
std::vector<int64_t> reference_output_dims(const fs::path& dir) {
  std::ifstream f(dir / "test_data_set_0" / "output_0.pb", std::ios::binary);
  onnx::TensorProto t;
  if (!f || !t.ParseFromIstream(&f)) return {-1};
  return {t.dims().begin(), t.dims().end()};
}

// Imports, checks the first output's shape, runs the pipeline and partitions; "" on success.
// Adds the partition's op counts to *device / *host when given.
std::string check_model(const fs::path& dir, size_t* device = nullptr, size_t* host = nullptr) {
  auto g = import_onnx((dir / "model.onnx").string());
  if (!g) return g.error().message;
  if (g->outputs.empty()) return "no outputs";
  const Value& out = g->value(g->outputs[0]);
  const auto want = reference_output_dims(dir);
  const auto got = out.static_dims().value_or(std::vector<int64_t>{-1});
  if (got != want) {
    return "output '" + out.name + "' inferred " + shape_to_string(make_shape(got)) +
           ", reference " + shape_to_string(make_shape(want));
  }
  if (auto r = PassManager::default_pipeline().run(*g); !r) return r.error().message;
  auto p = partition(*g);
  if (!p) return p.error().message;
  if (p->device_ops + p->host_ops != g->nodes.size()) return "partition lost nodes";
  if (std::getenv("NPUC_SWEEP_VERBOSE") && p->host_ops) {
    std::cout << dir.filename().string() << ": " << partition_report(*g, *p);
  }
  if (device) *device += p->device_ops;
  if (host) *host += p->host_ops;
  return {};
}

class OnnxTestData : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxTestData, ImportsShapeInfersAndPartitions) {
  const fs::path dir = test_dir(GetParam());
  if (!fs::exists(dir / "model.onnx")) GTEST_SKIP() << "missing " << dir;
  EXPECT_EQ(check_model(dir), "");
}

std::string case_name(const ::testing::TestParamInfo<const char*>& param_info) {
  std::string n = fs::path(param_info.param).filename().string().substr(5);  // drop "test_"
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(
    Node, OnnxTestData,
    ::testing::Values("node/test_conv_with_strides_padding", "node/test_relu",
                      "node/test_gemm_default_matrix_bias", "node/test_gemm_default_no_bias",
                      "node/test_batchnorm_example", "node/test_maxpool_2d_pads",
                      "node/test_reshape_reordered_all_dims", "node/test_softmax_axis_1"),
    case_name);

INSTANTIATE_TEST_SUITE_P(PytorchConverted, OnnxTestData,
                         ::testing::Values("pytorch-converted/test_Conv2d",
                                           "pytorch-converted/test_Conv2d_depthwise_strided",
                                           "pytorch-operator/test_operator_flatten"),
                         case_name);

TEST(OnnxTestData, PytorchConvertedConvRunsOnTheDevice) {
  const fs::path path = test_dir("pytorch-converted/test_Conv2d") / "model.onnx";
  if (!fs::exists(path)) GTEST_SKIP() << "missing " << path;
  auto g = import_onnx(path.string());
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_TRUE(PassManager::default_pipeline().run(*g));
  auto p = partition(*g);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->host_ops, 0u) << partition_report(*g, *p);
  EXPECT_EQ(p->device_ops, 1u);
}

// Truncated and corrupted files never crash the importer: a model or a one-line error.
TEST(OnnxTestData, CorruptedModelsFailCleanly) {
  const fs::path path = test_dir("pytorch-converted/test_Conv2d") / "model.onnx";
  if (!fs::exists(path)) GTEST_SKIP() << "missing " << path;
  std::ifstream f(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty());
  for (size_t len = 0; len < bytes.size(); len += 7) {
    auto g = import_onnx_bytes(std::string_view(bytes).substr(0, len), {}, "cut.onnx");
    if (!g) {
      EXPECT_EQ(g.error().message.find('\n'), std::string::npos);
    }
  }
  uint32_t state = 12345;
  for (int round = 0; round < 200; ++round) {
    std::string mutated = bytes;
    for (int k = 0; k < 4; ++k) {
      state = state * 1664525u + 1013904223u;
      mutated[state % mutated.size()] = static_cast<char>(state >> 24);
    }
    auto g = import_onnx_bytes(mutated, {}, "mutated.onnx");
    if (!g) {
      EXPECT_EQ(g.error().message.find('\n'), std::string::npos) << g.error().message;
      continue;
    }
    if (auto r = PassManager::default_pipeline().run(*g); r) (void)partition(*g);
  }
}

// Every model of the suites whose operators are all in the supported set: the count is
// printed; failures are listed (the conformance suite of the next session builds on this).
TEST(OnnxTestData, SupportedModelsSweep) {
  if (!fs::exists(test_dir("node"))) GTEST_SKIP() << "no test data";
  size_t passed = 0, tried = 0, rejected = 0, device = 0, host = 0;
  std::vector<std::string> failures;
  for (const char* suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    if (!fs::exists(test_dir(suite))) continue;
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(test_dir(suite))) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path& dir : dirs) {
      std::ifstream f(dir / "model.onnx", std::ios::binary);
      onnx::ModelProto m;
      if (!f || !m.ParseFromIstream(&f)) continue;
      bool supported = true;
      for (const auto& n : m.graph().node()) {
        supported = supported && (n.domain().empty() || n.domain() == "ai.onnx") &&
                    (n.op_type() == "Constant" || find_op(n.op_type()));
      }
      if (!supported) continue;
      ++tried;
      if (auto why = check_model(dir, &device, &host); why.empty()) {
        ++passed;
      } else if (why.find("unsupported element type") != std::string::npos ||
                 why.find("only tensor types are supported") != std::string::npos) {
        ++rejected;  // float16, strings, sequences...: outside the IR's types, by design
      } else {
        failures.push_back(std::string(suite) + "/" + dir.filename().string() + ": " + why);
      }
    }
  }
  std::cout << "[ sweep    ] " << passed << " of " << tried
            << " supported-op models import, shape-infer and partition; " << rejected
            << " rejected for element types outside the IR; " << device << " ops on the NPU, "
            << host << " on the host\n";
  for (const auto& f : failures) std::cout << "[ failed   ] " << f << "\n";
  EXPECT_GT(passed, 100u);
  EXPECT_TRUE(failures.empty());
}

}  // namespace
}  // namespace npu::compiler
