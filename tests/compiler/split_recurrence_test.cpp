// split-recurrence end to end on the emulator: RNN / GRU / LSTM models compiled with the pass
// (input projections as a device MatMul, the recurrence on the host as npu.*Recurrence)
// against the same models compiled with the pass disabled (the unsplit host op), over
// directions, layouts, sequence_lens, initial states, peepholes and the cells' options; and
// the cases the pass must leave alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "emu_suite.h"
#include "model_builder.h"
#include "npu/compiler/compile.h"
#include "npu/compiler/pass_manager.h"
#include "npu/format/array_values.h"
#include "random_values.h"

namespace npu::compiler {
namespace {

using format::NpyArray;
using testing::ModelBuilder;
using testing::numel;
using testing::rnd;
using Arrays = std::map<std::string, NpyArray>;
using I64 = std::vector<int64_t>;

constexpr int64_t kSeq = 5, kBatch = 3, kInput = 6, kHidden = 4;

struct Case {
  std::string op;         // RNN, GRU, LSTM
  std::string direction;  // forward, reverse, bidirectional
  int64_t layout = 0;
  bool extras = false;  // GRU linear_before_reset, LSTM input_forget + clip, RNN Relu
  std::string label() const {
    return op + "_" + direction + "_layout" + std::to_string(layout) + (extras ? "_extras" : "");
  }
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.label();
}

int64_t gates_of(const std::string& op) {
  return op == "RNN" ? 1 : op == "GRU" ? 3 : 4;
}

/// The model of `c`: X, sequence_lens and the initial states are graph inputs, W/R/B (and P)
/// constants; `w_input` makes W a graph input too (the pass must then skip the node).
ModelBuilder recurrent_model(const Case& c, bool w_input = false) {
  const bool lstm = c.op == "LSTM";
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1, gh = gates_of(c.op) * kHidden;
  ModelBuilder b(14);
  const I64 x_dims = c.layout ? I64{kBatch, kSeq, kInput} : I64{kSeq, kBatch, kInput};
  const I64 state = c.layout ? I64{kBatch, dirs, kHidden} : I64{dirs, kBatch, kHidden};
  b.input("x", {x_dims[0], x_dims[1], x_dims[2]});
  if (w_input) {
    b.input("w", {dirs, gh, kInput});
  } else {
    b.init_f("w", {dirs, gh, kInput}, rnd(numel({dirs, gh, kInput}), 1, -0.6f, 0.6f));
  }
  b.init_f("r", {dirs, gh, kHidden}, rnd(numel({dirs, gh, kHidden}), 2, -0.6f, 0.6f));
  b.init_f("bias", {dirs, 2 * gh}, rnd(numel({dirs, 2 * gh}), 3, -0.3f, 0.3f));
  b.input("lens", {kBatch}, onnx::TensorProto::INT32);
  b.input("h0", {state[0], state[1], state[2]});
  std::vector<std::string> ins = {"x", "w", "r", "bias", "lens", "h0"};
  std::vector<std::string> outs = {"y", "y_h"};
  if (lstm) {
    b.input("c0", {state[0], state[1], state[2]});
    b.init_f("p", {dirs, 3 * kHidden}, rnd(numel({dirs, 3 * kHidden}), 4, -0.5f, 0.5f));
    ins.insert(ins.end(), {"c0", "p"});
    outs.push_back("y_c");
  }
  auto& n = b.node(c.op, ins, outs);
  ModelBuilder::attr(n, "hidden_size", kHidden);
  ModelBuilder::attr(n, "direction", c.direction);
  ModelBuilder::attr(n, "layout", c.layout);
  if (c.extras && c.op == "GRU") ModelBuilder::attr(n, "linear_before_reset", int64_t{1});
  if (c.extras && lstm) {
    ModelBuilder::attr(n, "input_forget", int64_t{1});
    ModelBuilder::attr(n, "clip", 0.8f);
  }
  if (c.extras && c.op == "RNN") {
    auto* a = n.add_attribute();
    a->set_name("activations");
    a->set_type(onnx::AttributeProto::STRINGS);
    for (int d = 0; d < dirs; ++d) a->add_strings(d == 0 ? "Relu" : "Sigmoid");
  }
  for (const std::string& o : outs) b.output(o);
  return b;
}

Arrays inputs_of(const Case& c) {
  const bool lstm = c.op == "LSTM";
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1;
  const I64 x_dims = c.layout ? I64{kBatch, kSeq, kInput} : I64{kSeq, kBatch, kInput};
  const I64 state = c.layout ? I64{kBatch, dirs, kHidden} : I64{dirs, kBatch, kHidden};
  Arrays in;
  in["x"] = NpyArray::of<float>(x_dims, rnd(numel(x_dims), 11));
  // A full sequence, a shorter one and an empty one.
  const std::vector<int32_t> lens = {kSeq, 2, 0};
  in["lens"] = NpyArray::of<int32_t>({kBatch}, lens);
  in["h0"] = NpyArray::of<float>(state, rnd(numel(state), 12, -0.5f, 0.5f));
  if (lstm) in["c0"] = NpyArray::of<float>(state, rnd(numel(state), 13, -0.5f, 0.5f));
  return in;
}

class SplitRecurrenceTest : public testing::EmuSuite<::testing::TestWithParam<Case>> {
 protected:
  /// The model compiled with split-recurrence or without it (the unsplit host op), run.
  static Run run(const ModelBuilder& b, bool split, const Arrays& inputs) {
    CompileOptions o;
    if (!split) o.passes.disable = {"split-recurrence"};
    return compile_and_run(b.bytes(), o, inputs, "rnn.onnx");
  }
};

/// The host segments' op types, in order.
std::vector<std::string> host_ops(const CompileResult& c) {
  std::vector<std::string> ops;
  for (const auto& s : c.package.metadata.segments) {
    if (s.kind == format::SegmentKind::kHost) ops.push_back(s.op_type);
  }
  return ops;
}

/// Whether a device segment holds a matmul layer.
bool device_matmul(const CompileResult& c) {
  for (const auto& s : c.package.metadata.segments) {
    if (s.kind != format::SegmentKind::kDevice) continue;
    for (const auto& l : s.layers) {
      if (l.op.find("matmul") != std::string::npos) return true;
    }
  }
  return false;
}

TEST_P(SplitRecurrenceTest, MatchesTheUnsplitHostOp) {
  const Case& c = GetParam();
  const ModelBuilder b = recurrent_model(c);
  const Arrays in = inputs_of(c);
  const Run split = run(b, true, in);
  const Run host = run(b, false, in);
  // The split really happened: the projection on the device, the recurrence on the host.
  EXPECT_EQ(host_ops(split.compiled), std::vector<std::string>{c.op + "Recurrence"})
      << split.compiled.partition_report;
  EXPECT_TRUE(device_matmul(split.compiled)) << split.compiled.partition_report;
  EXPECT_EQ(host_ops(host.compiled), std::vector<std::string>{c.op});
  ASSERT_EQ(host.out.size(), c.op == "LSTM" ? 3u : 2u);
  ASSERT_EQ(split.out.size(), host.out.size());
  for (const auto& [name, want] : host.out) {
    const NpyArray& got = split.out.at(name);
    ASSERT_EQ(got.shape, want.shape) << name;
    const auto gv = format::to_floats(got), wv = format::to_floats(want);
    double err = 0, nonzero = 0;
    for (size_t i = 0; i < gv.size(); ++i) {
      err = std::max(err, std::fabs(double(gv[i]) - double(wv[i])));
      nonzero = std::max(nonzero, std::fabs(double(wv[i])));
    }
    // Only the projections' summation order (and Wb + Rb added in two steps) differ.
    EXPECT_LE(err, 1e-5) << name;
    EXPECT_GT(nonzero, 0.05) << name << ": a trivial output compares nothing";
  }
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    for (const char* dir : {"forward", "reverse", "bidirectional"}) {
      for (int64_t layout : {0, 1}) cases.push_back({op, dir, layout, false});
    }
    cases.push_back({op, "bidirectional", 0, true});
    cases.push_back({op, "forward", 1, true});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cells, SplitRecurrenceTest, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.label(); });

Expected<Graph> import_and_split(const ModelBuilder& b) {
  auto g = import_onnx_bytes(b.bytes(), {}, "rnn.onnx");
  if (!g) return g.error();
  PassManager pm;
  pm.add(create_pass("split-recurrence"));
  NPU_TRY(pm.run(*g));
  return g;
}

TEST(SplitRecurrence, RewritesIntoMatMulAndRecurrence) {
  auto g = import_and_split(recurrent_model({"LSTM", "bidirectional", 1, false}));
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_EQ(g->nodes.size(), 2u) << to_string(*g);
  const Node& mm = g->nodes[0];
  const Node& rec = g->nodes[1];
  EXPECT_EQ(mm.op_type, "MatMul");
  ASSERT_EQ(mm.inputs.size(), 3u);  // X, W^T and the Wb bias
  const NpyArray* wt = g->constant(mm.inputs[1]);
  ASSERT_NE(wt, nullptr);
  EXPECT_EQ(wt->shape, (I64{kInput, 2 * 4 * kHidden}));
  EXPECT_EQ(g->value(mm.outputs[0]).static_dims(), (I64{kBatch, kSeq, 2 * 4 * kHidden}));
  EXPECT_EQ(rec.op_type, "LSTMRecurrence");
  EXPECT_EQ(rec.domain, "npu");
  EXPECT_EQ(rec.inputs[0], mm.outputs[0]);
  EXPECT_EQ(rec.inputs[1], kNoValue);
}

TEST(SplitRecurrence, LeavesNonConstantWeightsOnTheHost) {
  auto g = import_and_split(recurrent_model({"GRU", "forward", 0, false}, /*w_input=*/true));
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_EQ(g->nodes.size(), 1u) << to_string(*g);
  EXPECT_EQ(g->nodes[0].op_type, "GRU");
  EXPECT_TRUE(g->nodes[0].domain.empty());
}

TEST(SplitRecurrence, WeightsFedAsInputsAreParameters) {
  // npu-run and the conformance runner bind them as constants, so the split applies.
  auto g = import_onnx_bytes(recurrent_model({"LSTM", "forward", 0, false}, true).bytes(), {},
                             "rnn.onnx");
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(parameter_inputs(*g), std::vector<std::string>{"w"});  // not x, lens, h0, c0
}

TEST(SplitRecurrence, LeavesQuantizedGraphsOnTheHost) {
  ModelBuilder b = recurrent_model({"RNN", "forward", 0, false});
  b.init_f("scale", {}, {0.1f});
  b.node("QuantizeLinear", {"y_h", "scale"}, {"q"});
  b.output("q", onnx::TensorProto::UINT8);
  auto g = import_and_split(b);
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(g->nodes[0].op_type, "RNN") << to_string(*g);
}

}  // namespace
}  // namespace npu::compiler
