// npu-compile and npu-run on TVM BYOC JSON graphs (BRIEF §3): the tutorial's MatmulReLU in both
// encodings with its weights given as --input (bound as a constant), in an .npz (stored and
// deflated) or a directory of .npy files; outputs named output_<k> in head order; --stats
// cycles and a --trace; the package npu-compile writes runs through the runtime; and every
// failure is one line on stderr with exit status 1.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../compiler/tvm_graph.h"
#include "npu/device.h"
#include "npu/format/npy.h"
#include "npu/format/npz.h"
#include "npu/runtime/model.h"

namespace fs = std::filesystem;

namespace npu::tools {
namespace {

using compiler::testing::TvmGraph;
using format::NpyArray;

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Ran {
  int status = -1;
  std::string out, err;
};

/// Runs `tool args` in `dir`, capturing stdout and stderr.
Ran run(const fs::path& dir, const std::string& tool, const std::string& args) {
  const std::string cmd =
      "cd '" + dir.string() + "' && '" + tool + "' " + args + " >out.txt 2>err.txt";
  const int raw = std::system(cmd.c_str());
  Ran r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(dir / "out.txt");
  r.err = slurp(dir / "err.txt");
  return r;
}

class TvmTools : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(NPU_TEST_WORK_DIR) / "tvm" / info->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // The tutorial's MatmulReLU (x: [2, 4], w: [4, 8]) plus a second head: relu's input.
    TvmGraph t;
    const int x = t.input("x", {2, 4}), w = t.input("w", {4, 8});
    const int mm = t.kernel1("example_npu.matmul", {{x, 0}, {w, 0}}, {2, 8});
    t.head(t.kernel1("example_npu.relu", {{mm, 0}}, {2, 8}));
    t.head(mm);
    write(dir_ / "native.json", t.native());
    write(dir_ / "legacy.json", t.legacy());
    for (size_t i = 0; i < x_.size(); ++i) x_[i] = std::sin(static_cast<float>(i) + 0.5f);
    for (size_t i = 0; i < w_.size(); ++i) w_[i] = std::cos(static_cast<float>(i) * 0.7f);
    ASSERT_TRUE(format::write_npy((dir_ / "x.npy").string(), NpyArray::of<float>({2, 4}, x_)));
    ASSERT_TRUE(format::write_npy((dir_ / "w.npy").string(), NpyArray::of<float>({4, 8}, w_)));
  }

  static void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

  /// output_0 (relu) and output_1 (the product) of a run into `out`.
  void expect_outputs(const fs::path& out) const {
    auto y0 = format::read_npy((out / "output_0.npy").string());
    auto y1 = format::read_npy((out / "output_1.npy").string());
    ASSERT_TRUE(y0) << y0.error().message;
    ASSERT_TRUE(y1) << y1.error().message;
    ASSERT_EQ(y0->shape, (std::vector<int64_t>{2, 8}));
    for (size_t i = 0; i < 2; ++i) {
      for (size_t j = 0; j < 8; ++j) {
        float acc = 0;
        for (size_t k = 0; k < 4; ++k) acc += x_[i * 4 + k] * w_[k * 8 + j];
        EXPECT_NEAR(y1->view<float>()[i * 8 + j], acc, 1e-5f);
        EXPECT_NEAR(y0->view<float>()[i * 8 + j], std::max(acc, 0.0f), 1e-5f);
      }
    }
  }

  fs::path dir_;
  std::vector<float> x_ = std::vector<float>(8), w_ = std::vector<float>(32);
};

TEST_F(TvmTools, NpuRunBothEncodingsWithStatsAndTrace) {
  for (const char* graph : {"native.json", "legacy.json"}) {
    const std::string out = std::string("out_") + graph;
    Ran r = run(dir_, NPU_RUN_PATH,
                std::string(graph) + " --input x=x.npy --input w=w.npy --output-dir " + out +
                    " --stats --trace trace.json --report");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("2 ops on the NPU, 0 on the host"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("job ok: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" cycles"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("wrote " + out + "/output_0.npy (float32 [2, 8])"), std::string::npos);
    EXPECT_NE(r.out.find("wrote " + out + "/output_1.npy (float32 [2, 8])"), std::string::npos);
    EXPECT_NE(slurp(dir_ / "trace.json").find("\"traceEvents\""), std::string::npos);
    expect_outputs(dir_ / out);
  }
}

TEST_F(TvmTools, ParamsFromNpzAndDirectory) {
  const std::map<std::string, NpyArray> params = {{"w", NpyArray::of<float>({4, 8}, w_)}};
  ASSERT_TRUE(format::write_npz((dir_ / "stored.npz").string(), params));
  ASSERT_TRUE(format::write_npz((dir_ / "deflated.npz").string(), params, /*compress=*/true));
  fs::create_directories(dir_ / "pdir");
  fs::copy_file(dir_ / "w.npy", dir_ / "pdir" / "w.npy");
  for (const char* p : {"stored.npz", "deflated.npz", "pdir"}) {
    const std::string out = std::string("out_") + p;
    Ran r = run(dir_, NPU_RUN_PATH,
                std::string("legacy.json --input x=x.npy --params ") + p + " --output-dir " + out);
    ASSERT_EQ(r.status, 0) << p << ": " << r.err;
    expect_outputs(dir_ / out);
  }
  // npu-compile packs the weight; the package runs with x alone.
  Ran c = run(dir_, NPU_COMPILE_PATH, "native.json -o m.npub --params deflated.npz");
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(c.out, "wrote m.npub (2 ops on the NPU, 0 on the host)\n");
  auto dev = Device::open("emu:");
  ASSERT_TRUE(dev) << dev.error().message;
  auto model = Model::load(*dev, (dir_ / "m.npub").string());
  ASSERT_TRUE(model) << model.error().message;
  ASSERT_EQ(model->inputs().size(), 1u);
  EXPECT_EQ(model->inputs()[0].name, "x");
  ASSERT_EQ(model->outputs().size(), 2u);
  EXPECT_EQ(model->outputs()[0].name, "output_0");
  EXPECT_EQ(model->outputs()[1].name, "output_1");
}

TEST_F(TvmTools, FailuresAreOneLine) {
  TvmGraph t;
  const int x = t.input("x", {2, 4}), w = t.constant("w", {4, 8});
  t.head(t.kernel1("example_npu.matmul", {{x, 0}, {w, 0}}, {2, 8}));
  write(dir_ / "const.json", t.native());
  write(dir_ / "bad.npz", "PK but not really a zip archive at all");
  struct Case {
    const char* tool;
    std::string args, err;
  };
  for (const Case& c : std::vector<Case>{
           {NPU_COMPILE_PATH, "const.json -o m.npub",
            "npu-compile: const.json: const node 1 'w' has no value in the params\n"},
           {NPU_COMPILE_PATH, "const.json -o m.npub --params w.npy",
            "npu-compile: --params w.npy: expected an .npz file or a directory of NAME.npy "
            "files\n"},
           {NPU_COMPILE_PATH, "const.json -o m.npub --params bad.npz",
            "npu-compile: --params bad.npz: not an .npz file (no ZIP end of central directory "
            "record)\n"},
           {NPU_COMPILE_PATH, "const.json -o m.npub --params missing.npz",
            "npu-compile: --params missing.npz: cannot open: No such file or directory\n"},
           {NPU_RUN_PATH, "native.json --input x=x.npy --input w=w.npy --params pdir",
            "npu-run: 'w' is given by both --params and --input\n"},
           {NPU_RUN_PATH, "native.json --input x=x.npy",
            "npu-run: missing --input w=FILE.npy (native.json)\n"},
       }) {
    fs::create_directories(dir_ / "pdir");
    std::ofstream(dir_ / "pdir" / "w.npy", std::ios::binary) << slurp(dir_ / "w.npy");
    Ran r = run(dir_, c.tool, c.args);
    EXPECT_EQ(r.status, 1) << c.args;
    EXPECT_EQ(r.err, c.err) << c.args;
  }
}

}  // namespace
}  // namespace npu::tools
