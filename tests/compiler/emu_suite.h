// Test helper: a googletest suite base that opens the in-process emulator ("emu:") once per
// suite, and compiles ONNX model bytes and runs them on it through the runtime (npu::Model).
// The device lives from SetUpTestSuite to TearDownTestSuite; tests of one suite run on one
// thread, so the static device needs no locking. `Base` is ::testing::Test or a
// ::testing::TestWithParam<T>.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "npu/compiler/compile.h"
#include "npu/compiler/onnx_import.h"
#include "npu/device.h"
#include "npu/runtime/model.h"

namespace npu::compiler::testing {

template <typename Base = ::testing::Test>
class EmuSuite : public Base {
 protected:
  using Arrays = std::map<std::string, format::NpyArray>;

  static void SetUpTestSuite() {
    auto d = Device::open("emu:");
    if (d) device_.emplace(std::move(*d));
  }
  static void TearDownTestSuite() { device_.reset(); }
  void SetUp() override { ASSERT_TRUE(device_.has_value()) << "cannot open emu:"; }

  /// A compiled package and its outputs (empty after a failure, which the call reports).
  struct Run {
    CompileResult compiled;
    Arrays out;
  };

  /// Imports the ONNX model `bytes` (named `name` in errors), compiles it for the emulator
  /// with `o` and runs it on `inputs`.
  static Run compile_and_run(const std::string& bytes, CompileOptions o, const Arrays& inputs,
                             const std::string& name) {
    Run r;
    o.device = device_->config();
    auto g = import_onnx_bytes(bytes, {}, name);
    EXPECT_TRUE(g) << g.error().message;
    if (!g) return r;
    auto c = compile_graph(std::move(*g), o, name);
    EXPECT_TRUE(c) << c.error().message;
    if (!c) return r;
    r.compiled = std::move(*c);
    auto m = Model::load(*device_, r.compiled.package, name);
    EXPECT_TRUE(m) << m.error().message;
    if (!m) return r;
    auto out = m->run(inputs);
    EXPECT_TRUE(out) << out.error().message;
    if (out) r.out = std::move(*out);
    return r;
  }

  static inline std::optional<Device> device_;
};

}  // namespace npu::compiler::testing
