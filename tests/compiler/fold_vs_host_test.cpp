// Constant folding and the host fallback compute the same values: one model computes integer
// Pow (3^65 wrapping, 1^-1, (-1)^-3) and float64 Exp(1.5), Log(7) twice — once on
// initializers, folded at compile time by the operator library, once on graph inputs, run
// by the runtime's host segments with the same library — and both must give NumPy's values.
// (Before the operator library the compiler had its own evaluator, which disagreed: it
// stopped integer powers after 64 multiplications, folded x^-1 to 0 and folded float64
// Exp/Log that the host refused.)
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "model_builder.h"
#include "npu/compiler/compile.h"
#include "npu/device.h"
#include "npu/runtime/model.h"

namespace npu::compiler {
namespace {

using format::NpyArray;
using testing::ModelBuilder;

// NumPy: numpy.int64(3) ** 65 (wraps modulo 2^64), 1 ** -1 and (-1) ** -3 computed as
// numpy.power on floats then cast (NumPy refuses negative integer powers), numpy.exp(1.5),
// numpy.log(7.0).
const std::vector<int64_t> kPow = {7752514261426648835, 1, -1};
constexpr double kExp = 4.4816890703380645;
constexpr double kLog = 1.9459101490553132;

/// base ^ exponent, Exp(f[0]) and Log(f[1]): on initializers (`constants`) or graph inputs.
ModelBuilder pow_exp_log(bool constants) {
  ModelBuilder b(17);
  if (constants) {
    b.init_i64("base", {3}, {3, 1, -1});
    b.init_i64("exponent", {3}, {65, -1, -3});
    auto* f = b.graph().add_initializer();
    f->set_name("f");
    f->set_data_type(onnx::TensorProto::DOUBLE);
    f->add_dims(2);
    f->add_double_data(1.5);
    f->add_double_data(7.0);
  } else {
    b.input("base", {int64_t{3}}, onnx::TensorProto::INT64);
    b.input("exponent", {int64_t{3}}, onnx::TensorProto::INT64);
    b.input("f", {int64_t{2}}, onnx::TensorProto::DOUBLE);
  }
  b.node("Pow", {"base", "exponent"}, {"p"}, "pow");
  b.node("Exp", {"f"}, {"e"}, "exp");
  b.node("Log", {"f"}, {"l"}, "log");
  b.output("p", onnx::TensorProto::INT64);
  b.output("e", onnx::TensorProto::DOUBLE);
  b.output("l", onnx::TensorProto::DOUBLE);
  return b;
}

std::map<std::string, NpyArray> compile_and_run(const ModelBuilder& b,
                                                const std::map<std::string, NpyArray>& inputs,
                                                std::vector<std::string>* host_ops) {
  auto g = b.import();
  EXPECT_TRUE(g) << g.error().message;
  if (!g) return {};
  auto r = compile_graph(std::move(*g), {}, "pow_exp_log.onnx");
  EXPECT_TRUE(r) << r.error().message;
  if (!r) return {};
  for (const auto& s : r->package.metadata.segments) host_ops->push_back(s.op_type);
  auto dev = Device::open("emu:");
  EXPECT_TRUE(dev) << dev.error().message;
  if (!dev) return {};
  auto m = Model::load(*dev, std::move(r->package), "pow_exp_log.npub");
  EXPECT_TRUE(m) << m.error().message;
  if (!m) return {};
  auto out = m->run(inputs);
  EXPECT_TRUE(out) << out.error().message;
  return out ? *out : std::map<std::string, NpyArray>{};
}

void expect_numpy_values(std::map<std::string, NpyArray>& out) {
  ASSERT_EQ(out.count("p") + out.count("e") + out.count("l"), 3u);
  EXPECT_EQ(out["p"].values<int64_t>(), kPow);
  EXPECT_EQ(out["e"].values<double>()[0], kExp);
  EXPECT_EQ(out["l"].values<double>()[1], kLog);
}

TEST(FoldVsHost, PowExpLogAgreeFoldedAndOnTheHost) {
  std::vector<std::string> folded_ops;
  auto folded = compile_and_run(pow_exp_log(true), {}, &folded_ops);
  // Folded at compile time: the package only copies constants to the outputs.
  for (const std::string& op : folded_ops) EXPECT_EQ(op, "Identity");
  expect_numpy_values(folded);

  std::vector<std::string> host_ops;
  const std::map<std::string, NpyArray> inputs = {
      {"base", NpyArray::of<int64_t>({3}, std::vector<int64_t>{3, 1, -1})},
      {"exponent", NpyArray::of<int64_t>({3}, std::vector<int64_t>{65, -1, -3})},
      {"f", NpyArray::of<double>({2}, std::vector<double>{1.5, 7.0})}};
  auto host = compile_and_run(pow_exp_log(false), inputs, &host_ops);
  EXPECT_EQ(host_ops, (std::vector<std::string>{"Pow", "Exp", "Log"}));
  expect_numpy_values(host);
  for (const char* name : {"p", "e", "l"}) EXPECT_EQ(folded[name], host[name]) << name;
}

}  // namespace
}  // namespace npu::compiler
