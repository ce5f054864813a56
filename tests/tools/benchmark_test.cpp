// Benchmark mode (issue 9): npu::benchmark() on the Fashion-MNIST classifier (sample counts,
// ordered statistics, the modeled cycles of one inference, repeat 0 refused), and
// npu-submit/npu-run --repeat N [--warmup K] end to end: the text table, the "benchmark"
// object of --json (checked with nlohmann-json), and the flag errors (one line, exit 1).
// Timings are only checked for consistency, never against a wall-clock bound.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "npu/device.h"
#include "npu/format/npy.h"
#include "npu/runtime/benchmark.h"
#include "npu/runtime/model.h"
#include "tool_runner.h"

namespace fs = std::filesystem;
using npu::tools::testing::count_lines;
using npu::tools::testing::run;
using npu::tools::testing::work_dir;

namespace {

const fs::path kModelDir = fs::path(NPU_SOURCE_DIR) / "models" / "fashion_mnist";

// Compiles the float classifier once into the test's work directory.
class Benchmark : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // ctest runs each test in its own process, two at a time: a directory per process, or
    // one process's set-up deletes the package the other is running.
    dir_ = new fs::path(work_dir("benchmark_" + std::to_string(::getpid())));
    const auto r = run({NPU_COMPILE_PATH, (kModelDir / "fashion_mnist.onnx").string(), "-o",
                        (*dir_ / "fm.npub").string()},
                       *dir_);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
    dir_ = nullptr;
  }
  static fs::path package() { return *dir_ / "fm.npub"; }
  static std::string image() { return "image=" + (kModelDir / "samples" / "image_0.npy").string(); }
  static fs::path* dir_;
};
fs::path* Benchmark::dir_ = nullptr;

TEST_F(Benchmark, LibraryCountsAndOrdersTheSamples) {
  auto dev = npu::Device::open("emu:");
  ASSERT_TRUE(dev) << dev.error().message;
  auto model = npu::Model::load(*dev, package().string());
  ASSERT_TRUE(model) << model.error().message;
  auto a = npu::format::read_npy((kModelDir / "samples" / "image_0.npy").string());
  ASSERT_TRUE(a);
  const std::map<std::string, npu::format::NpyArray> inputs{{"image", *a}};
  ASSERT_TRUE(model->run(inputs));
  const uint64_t cycles = model->last_stats().device_cycles;
  ASSERT_GT(cycles, 0u);

  npu::BenchmarkOptions o;
  o.warmup = 2;
  o.repeat = 5;
  auto b = npu::benchmark(*model, inputs, o);
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->repeat, 5u);
  EXPECT_EQ(b->warmup, 2u);
  ASSERT_EQ(b->latency_ms.size(), 5u);
  EXPECT_GT(b->min_ms, 0.0);
  EXPECT_LE(b->min_ms, b->median_ms);
  EXPECT_LE(b->median_ms, b->p90_ms);
  EXPECT_LE(b->p90_ms, b->max_ms);
  EXPECT_LE(b->min_ms, b->mean_ms);
  EXPECT_LE(b->mean_ms, b->max_ms);
  EXPECT_GT(b->throughput, 0.0);
  EXPECT_GE(b->cpu_user_s + b->cpu_sys_s, 0.0);
  EXPECT_EQ(b->device_cycles, cycles);  // virtual time does not depend on repetition
  EXPECT_NE(npu::format_benchmark(*b).find("median"), std::string::npos);
  auto j = nlohmann::json::parse(npu::benchmark_json(*b));
  EXPECT_EQ(j["latency_ms"]["samples"].size(), 5u);

  o.repeat = 0;
  auto zero = npu::benchmark(*model, inputs, o);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code, EINVAL);
  EXPECT_NE(zero.error().message.find("at least 1"), std::string::npos);
}

TEST_F(Benchmark, SubmitPrintsTheTableAndJson) {
  const fs::path dir = work_dir("benchmark_submit");
  auto r = run(
      {NPU_SUBMIT_PATH, package().string(), "--input", image(), "--repeat", "3", "--warmup", "1"},
      dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("benchmark: 3 timed inferences after 1 warm-up"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("latency ms    min"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("inferences/s"), std::string::npos) << r.out;

  r = run({NPU_SUBMIT_PATH, package().string(), "--input", image(), "--repeat", "4", "--json"},
          dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // throws (fails the test) if not one object
  ASSERT_TRUE(j.contains("benchmark")) << r.out;
  const auto& b = j["benchmark"];
  EXPECT_EQ(b["repeat"], 4);
  EXPECT_EQ(b["warmup"], 1);  // the default
  for (const char* k : {"min", "median", "p90", "mean", "max"}) {
    EXPECT_TRUE(b["latency_ms"][k].is_number()) << k;
  }
  EXPECT_EQ(b["latency_ms"]["samples"].size(), 4u);
  for (const char* k : {"throughput_per_s", "cpu_user_s", "cpu_sys_s", "device_cycles",
                        "minor_faults_per_inference", "voluntary_switches_per_inference"}) {
    EXPECT_TRUE(b[k].is_number()) << k;
  }
  EXPECT_EQ(b["device_cycles"], j["cycles"]) << r.out;
}

TEST_F(Benchmark, RunTakesTheSameFlags) {
  const fs::path dir = work_dir("benchmark_run");
  auto r = run({NPU_RUN_PATH, (kModelDir / "fashion_mnist.onnx").string(), "--input", image(),
                "--repeat", "2", "--warmup", "0", "--json"},
               dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["benchmark"]["repeat"], 2);
  EXPECT_EQ(j["benchmark"]["warmup"], 0);
}

TEST_F(Benchmark, FlagErrorsAreOneLine) {
  const fs::path dir = work_dir("benchmark_errors");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::string pkg = package().string(), in = image();
  const std::vector<Case> cases = {
      {{NPU_SUBMIT_PATH, pkg, "--input", in, "--repeat", "0"},
       "npu-submit: --repeat N: N must be at least 1 (got 0)"},
      {{NPU_SUBMIT_PATH, pkg, "--input", in, "--repeat", "-3"},
       "npu-submit: --repeat N: N must be at least 1 (got -3)"},
      {{NPU_SUBMIT_PATH, pkg, "--input", in, "--warmup", "2"},
       "npu-submit: --warmup K needs --repeat N"},
      {{NPU_SUBMIT_PATH, pkg, "--input", in, "--repeat", "2", "--warmup", "-1"},
       "npu-submit: --warmup K: K must be between 0 and 1000000000 (got -1)"},
      {{NPU_SUBMIT_PATH, pkg, "--input", in, "--repeat", "two"}, "npu-submit: "},
      {{NPU_RUN_PATH, (kModelDir / "fashion_mnist.onnx").string(), "--input", in, "--repeat", "0"},
       "npu-run: --repeat N: N must be at least 1 (got 0)"},
  };
  for (const auto& c : cases) {
    const auto r = run(c.args, dir);
    EXPECT_EQ(r.status, 1) << c.message << "\n" << r.err;
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
    EXPECT_EQ(r.err.rfind(c.message, 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // Raw command buffers have no benchmark mode.
  const fs::path bin = dir / "copy.bin";
  auto as = run({NPU_AS_PATH, (fs::path(NPU_SOURCE_DIR) / "examples/dma_copy.npuasm").string(),
                 "-o", bin.string()},
                dir);
  ASSERT_EQ(as.status, 0) << as.err;
  const auto r = run({NPU_SUBMIT_PATH, bin.string(), "--buffer", "0x100000000=size:64", "--buffer",
                      "0x100100000=size:144", "--repeat", "2"},
                     dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("for model packages"), std::string::npos) << r.err;
}

}  // namespace
