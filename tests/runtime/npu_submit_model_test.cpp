// npu-submit in model mode end to end: a package from test_packages.h, its outputs, stats and
// trace, and the one-line error for an unknown input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "npu/format/npy.h"
#include "npu/format/package.h"
#include "test_packages.h"

namespace {

using namespace npu::runtime_test;

#ifdef NPU_SUBMIT_PATH
TEST(NpuSubmitModel, WritesOutputsStatsAndTrace) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("npu_model_test_submit_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string pkg = (dir / "m.npub").string();
  ASSERT_TRUE(npu::format::write_package(pkg, relu_softmax_package(8, "prob:0")));
  const std::vector<float> x = {-1, 0.5f, 2, -3, 1, 0, 4, -0.25f};
  const std::string xin = (dir / "x.npy").string();
  ASSERT_TRUE(npu::format::write_npy(xin, NpyArray::of<float>({1, 8}, x)));
  const std::string out_dir = (dir / "out" / "sub").string();
  const std::string trace = (dir / "trace.json").string();
  const std::string log = (dir / "log.txt").string();
  const std::string cmd = std::string(NPU_SUBMIT_PATH) + " " + pkg + " --input x=" + xin +
                          " --output-dir " + out_dir + " --stats --trace " + trace + " > " + log +
                          " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto y = npu::format::read_npy(out_dir + "/prob_0.npy");
  ASSERT_TRUE(y) << y.error().message;
  std::vector<float> relu = x;
  for (float& v : relu) v = std::max(v, 0.0f);
  const auto want = softmax(relu);
  auto got = y->values<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f);
  EXPECT_TRUE(std::filesystem::exists(trace));

  // Unknown and missing inputs fail with a one-line error.
  const std::string bad = std::string(NPU_SUBMIT_PATH) + " " + pkg + " --input q=" + xin +
                          " --output-dir " + out_dir + " > " + log + " 2>&1";
  EXPECT_NE(std::system(bad.c_str()), 0);
  std::ifstream in(log);
  std::string line;
  std::getline(in, line);
  EXPECT_NE(line.find("unknown input 'q'"), std::string::npos) << line;
  std::filesystem::remove_all(dir);
}
#endif

}  // namespace
