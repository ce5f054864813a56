// unroll-recurrence end to end on the emulator: RNN / GRU / LSTM models compiled with the
// whole pipeline (the recurrence unrolled into device ops) against the same models compiled
// with split-recurrence and unroll-recurrence disabled (the ONNX op on the host), over the
// cells, directions, layouts, initial states (graph inputs, constants, absent), peepholes,
// the cells' options, activations and subsets of Y / Y_h / Y_c; and the nodes the pass must
// leave on the host, each with the reason the report gives.
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

constexpr int64_t kUnrollSeq = 4, kUnrollBatch = 3, kUnrollInput = 5, kUnrollHidden = 4;

/// How the initial states reach the node.
enum class StateSource { kInputs, kConstants, kAbsent };

struct UnrollCase {
  std::string op;         // RNN, GRU, LSTM
  std::string direction;  // forward, reverse, bidirectional
  int64_t layout = 0;
  std::string variant;  // "" or one of the variations recurrent_case_model() knows
  std::string label() const {
    return op + "_" + direction + "_layout" + std::to_string(layout) +
           (variant.empty() ? "" : "_" + variant);
  }
};

void PrintTo(const UnrollCase& c, std::ostream* os) {
  *os << c.label();
}

int64_t unroll_gates(const std::string& op) {
  return op == "RNN" ? 1 : op == "GRU" ? 3 : 4;
}

int64_t unroll_dirs(const UnrollCase& c) {
  return c.direction == "bidirectional" ? 2 : 1;
}

I64 unroll_state_dims(const UnrollCase& c) {
  return c.layout ? I64{kUnrollBatch, unroll_dirs(c), kUnrollHidden}
                  : I64{unroll_dirs(c), kUnrollBatch, kUnrollHidden};
}

/// An int32 initializer (sequence_lens is int32 in ONNX).
void init_i32(ModelBuilder& b, const std::string& name, const std::vector<int32_t>& v) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT32);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (int32_t x : v) t->add_int32_data(x);
}

void strings_attr(onnx::NodeProto& n, const std::string& key, const std::vector<std::string>& v) {
  auto* a = n.add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const std::string& s : v) a->add_strings(s);
}

/// The model of `c`. X is a graph input, W/R/B/P constants. Variants:
///   ""             B; initial states as graph inputs; LSTM peepholes; every output
///   lbr            GRU linear_before_reset
///   forget_clip    LSTM input_forget and clip (with peepholes)
///   clip           clip 0.7 (LSTM without peepholes: one Clip over all gates)
///   forget         LSTM input_forget without peepholes
///   acts           activations with alpha/beta (Affine, ScaledTanh, Softsign, HardSigmoid,
///                  LeakyRelu, Elu, Softplus, Relu)
///   const_states   constant initial states, no B
///   no_states      no initial states; sequence_lens a constant equal to seq_length
///   y_only, yh_only, yc_only   only that output is named
ModelBuilder recurrent_case_model(const UnrollCase& c) {
  const bool lstm = c.op == "LSTM";
  const int64_t dirs = unroll_dirs(c), gh = unroll_gates(c.op) * kUnrollHidden;
  const I64 state = unroll_state_dims(c);
  ModelBuilder b(14);
  const I64 x = c.layout ? I64{kUnrollBatch, kUnrollSeq, kUnrollInput}
                         : I64{kUnrollSeq, kUnrollBatch, kUnrollInput};
  b.input("x", {x[0], x[1], x[2]});
  b.init_f("w", {dirs, gh, kUnrollInput}, rnd(numel({dirs, gh, kUnrollInput}), 1, -0.6f, 0.6f));
  b.init_f("r", {dirs, gh, kUnrollHidden}, rnd(numel({dirs, gh, kUnrollHidden}), 2, -0.6f, 0.6f));
  const StateSource states = c.variant == "const_states" ? StateSource::kConstants
                             : c.variant == "no_states"  ? StateSource::kAbsent
                                                         : StateSource::kInputs;
  std::vector<std::string> ins = {"x", "w", "r", "", "", "", ""};
  if (c.variant != "const_states") {
    b.init_f("bias", {dirs, 2 * gh}, rnd(numel({dirs, 2 * gh}), 3, -0.3f, 0.3f));
    ins[3] = "bias";
  }
  if (c.variant == "no_states") {
    init_i32(b, "lens", std::vector<int32_t>(kUnrollBatch, kUnrollSeq));
    ins[4] = "lens";
  }
  for (const char* s : {"h0", "c0"}) {
    if (std::string(s) == "c0" && !lstm) continue;
    const size_t slot = s[0] == 'h' ? 5 : 6;
    const uint32_t seed = s[0] == 'h' ? 12 : 13;
    if (states == StateSource::kInputs) {
      b.input(s, {state[0], state[1], state[2]});
      ins[slot] = s;
    } else if (states == StateSource::kConstants) {
      b.init_f(s, state, rnd(numel(state), seed, -0.5f, 0.5f));
      ins[slot] = s;
    }
  }
  const bool peepholes = lstm && c.variant != "clip" && c.variant != "forget";
  if (peepholes) {
    b.init_f("p", {dirs, 3 * kUnrollHidden}, rnd(numel({dirs, 3 * kUnrollHidden}), 4, -0.5f, 0.5f));
    ins.push_back("p");
  }
  while (!ins.empty() && ins.back().empty()) ins.pop_back();
  std::vector<std::string> outs = {"y", "y_h"};
  if (lstm) outs.push_back("y_c");
  if (c.variant == "y_only") outs = {"y"};
  if (c.variant == "yh_only") outs = {"", "y_h"};
  if (c.variant == "yc_only") outs = {"", "", "y_c"};
  auto& n = b.node(c.op, ins, outs, "cell");
  ModelBuilder::attr(n, "hidden_size", kUnrollHidden);
  ModelBuilder::attr(n, "direction", c.direction);
  ModelBuilder::attr(n, "layout", c.layout);
  if (c.variant == "lbr") ModelBuilder::attr(n, "linear_before_reset", int64_t{1});
  if (c.variant == "forget_clip" || c.variant == "forget")
    ModelBuilder::attr(n, "input_forget", int64_t{1});
  if (c.variant == "forget_clip" || c.variant == "clip") ModelBuilder::attr(n, "clip", 0.7f);
  if (c.variant == "acts") {
    // Per direction: RNN f; GRU f g; LSTM f g h. alpha/beta are consumed in list order.
    std::vector<std::string> acts;
    if (c.op == "RNN") acts = {"Affine", "ScaledTanh"};
    if (c.op == "GRU") acts = {"HardSigmoid", "Softsign", "Sigmoid", "Elu"};
    if (lstm) acts = {"HardSigmoid", "LeakyRelu", "Softplus", "Sigmoid", "Relu", "Tanh"};
    acts.resize(acts.size() / 2 * static_cast<size_t>(dirs));
    strings_attr(n, "activations", acts);
    ModelBuilder::attr(n, "activation_alpha", std::vector<float>{0.6f, 0.3f, 1.5f});
    ModelBuilder::attr(n, "activation_beta", std::vector<float>{0.1f, 0.8f});
  }
  for (const std::string& o : outs) {
    if (!o.empty()) b.output(o);
  }
  return b;
}

Arrays recurrent_case_inputs(const UnrollCase& c) {
  const I64 x = c.layout ? I64{kUnrollBatch, kUnrollSeq, kUnrollInput}
                         : I64{kUnrollSeq, kUnrollBatch, kUnrollInput};
  const I64 state = unroll_state_dims(c);
  Arrays in;
  in["x"] = NpyArray::of<float>(x, rnd(numel(x), 11));
  if (c.variant != "const_states" && c.variant != "no_states") {
    in["h0"] = NpyArray::of<float>(state, rnd(numel(state), 12, -0.5f, 0.5f));
    if (c.op == "LSTM") in["c0"] = NpyArray::of<float>(state, rnd(numel(state), 13, -0.5f, 0.5f));
  }
  return in;
}

/// The op types of a package's host segments, in order.
std::vector<std::string> host_segment_ops(const CompileResult& c) {
  std::vector<std::string> ops;
  for (const auto& s : c.package.metadata.segments) {
    if (s.kind == format::SegmentKind::kHost) ops.push_back(s.op_type);
  }
  return ops;
}

/// How many device layers have op `op`.
size_t device_layer_count(const CompileResult& c, const std::string& op) {
  size_t n = 0;
  for (const auto& s : c.package.metadata.segments) {
    for (const auto& l : s.layers) n += l.op == op;
  }
  return n;
}

/// The largest |got - want| over all elements, and the largest |want|.
std::pair<double, double> max_abs_diff(const NpyArray& got, const NpyArray& want) {
  const auto gv = format::to_floats(got), wv = format::to_floats(want);
  double err = 0, scale = 0;
  for (size_t i = 0; i < gv.size() && i < wv.size(); ++i) {
    err = std::max(err, std::fabs(double(gv[i]) - double(wv[i])));
    scale = std::max(scale, std::fabs(double(wv[i])));
  }
  return {err, scale};
}

class UnrollRecurrenceTest : public testing::EmuSuite<::testing::TestWithParam<UnrollCase>> {
 protected:
  /// The model compiled with the default pipeline, or with the ONNX op left on the host.
  static Run run(const ModelBuilder& b, bool unroll, const Arrays& inputs) {
    CompileOptions o;
    if (!unroll) o.passes.disable = {"split-recurrence", "unroll-recurrence"};
    return compile_and_run(b.bytes(), o, inputs, "unroll.onnx");
  }
};

TEST_P(UnrollRecurrenceTest, MatchesTheHostOp) {
  const UnrollCase& c = GetParam();
  const ModelBuilder b = recurrent_case_model(c);
  const Arrays in = recurrent_case_inputs(c);
  const Run device = run(b, true, in);
  const Run host = run(b, false, in);
  // The whole recurrence ran on the device: one recurrent MatMul per step and direction,
  // plus the input projection (GRU without linear_before_reset: two per step).
  EXPECT_EQ(host_segment_ops(device.compiled), std::vector<std::string>{})
      << device.compiled.partition_report;
  const size_t per_step = c.op == "GRU" ? 2 : 1;
  EXPECT_EQ(device_layer_count(device.compiled, "matmul"),
            1 + per_step * kUnrollSeq * static_cast<size_t>(unroll_dirs(c)))
      << device.compiled.partition_report;
  EXPECT_EQ(host_segment_ops(host.compiled), std::vector<std::string>{c.op});
  ASSERT_FALSE(host.out.empty());
  ASSERT_EQ(device.out.size(), host.out.size());
  for (const auto& [name, want] : host.out) {
    const NpyArray& got = device.out.at(name);
    ASSERT_EQ(got.shape, want.shape) << name;
    const auto [err, scale] = max_abs_diff(got, want);
    // Only the summation order of the products (and where Rb is added) differ.
    EXPECT_LE(err, 1e-5) << name;
    EXPECT_GT(scale, 0.05) << name << ": a trivial output compares nothing";
  }
}

std::vector<UnrollCase> all_unroll_cases() {
  std::vector<UnrollCase> cases;
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    for (const char* dir : {"forward", "reverse", "bidirectional"}) {
      for (int64_t layout : {0, 1}) cases.push_back({op, dir, layout, ""});
    }
    for (const char* v : {"acts", "const_states", "no_states", "y_only", "yh_only"}) {
      cases.push_back({op, "bidirectional", 1, v});
      cases.push_back({op, "reverse", 0, v});
    }
    cases.push_back({op, "forward", 0, "clip"});
  }
  for (int64_t layout : {0, 1}) {
    cases.push_back({"GRU", "bidirectional", layout, "lbr"});
    cases.push_back({"GRU", "reverse", layout, "lbr"});
    cases.push_back({"LSTM", "bidirectional", layout, "forget_clip"});
    cases.push_back({"LSTM", "bidirectional", layout, "yc_only"});
    cases.push_back({"LSTM", "reverse", layout, "forget"});
  }
  cases.push_back({"LSTM", "bidirectional", 1, "clip"});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cells, UnrollRecurrenceTest, ::testing::ValuesIn(all_unroll_cases()),
                         [](const ::testing::TestParamInfo<UnrollCase>& i) {
                           return i.param.label();
                         });

/// The graph after import and the passes up to check-support (placements set).
Expected<Graph> placed_graph(const ModelBuilder& b) {
  auto g = import_onnx_bytes(b.bytes(), {}, "unroll.onnx");
  if (!g) return g.error();
  PassManager pm;
  for (const char* p : {"split-recurrence", "unroll-recurrence", "check-support"})
    pm.add(create_pass(p));
  NPU_TRY(pm.run(*g));
  return g;
}

TEST(UnrollRecurrence, WritesOneBatchedGateProductPerStep) {
  auto g = placed_graph(recurrent_case_model({"LSTM", "bidirectional", 1, ""}));
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(testing::count_ops(*g, "LSTMRecurrence"), 0u) << to_string(*g);
  // The input projection and one MatMul by R^T [4, hidden, hidden] per step and direction.
  EXPECT_EQ(testing::count_ops(*g, "MatMul"), size_t{1 + 2 * kUnrollSeq});
  size_t batched = 0;
  for (const Node& n : g->nodes) {
    const NpyArray* r = n.op_type == "MatMul" ? g->constant(n.input(1)) : nullptr;
    batched += r && r->shape == I64{4, kUnrollHidden, kUnrollHidden};
    EXPECT_EQ(n.placement.target, Target::kDevice) << n.label() << ": " << n.placement.reason;
  }
  EXPECT_EQ(batched, size_t{2 * kUnrollSeq});
  EXPECT_EQ(testing::dims_of(*g, "y"), (I64{kUnrollBatch, kUnrollSeq, 2, kUnrollHidden}));
  EXPECT_EQ(testing::dims_of(*g, "y_c"), (I64{kUnrollBatch, 2, kUnrollHidden}));
}

TEST(UnrollRecurrence, CanBeDisabled) {
  const ModelBuilder b = recurrent_case_model({"GRU", "forward", 0, ""});
  auto g = import_onnx_bytes(b.bytes(), {}, "unroll.onnx");
  ASSERT_TRUE(g) << g.error().message;
  PassOptions o;
  o.disable = {"unroll-recurrence"};
  ASSERT_TRUE(PassManager::default_pipeline().run(*g, o));
  ASSERT_EQ(testing::count_ops(*g, "GRURecurrence"), 1u) << to_string(*g);
  for (const Node& n : g->nodes) {
    if (n.op_type != "GRURecurrence") continue;
    EXPECT_EQ(n.placement.target, Target::kHost);
    EXPECT_NE(n.placement.reason.find("unroll-recurrence did not run"), std::string::npos)
        << n.placement.reason;
  }
}

TEST(UnrollRecurrence, DropsARecurrenceNothingReads) {
  // The LSTM's Y is not a graph output and nothing reads it: no steps are written, and its
  // input projection goes with it.
  ModelBuilder b(14);
  b.input("x", {kUnrollSeq, kUnrollBatch, kUnrollInput});
  b.init_f("w", {1, 16, kUnrollInput}, rnd(numel({1, 16, kUnrollInput}), 1));
  b.init_f("r", {1, 16, kUnrollHidden}, rnd(numel({1, 16, kUnrollHidden}), 2));
  auto& n = b.node("LSTM", {"x", "w", "r"}, {"unused"}, "cell");
  ModelBuilder::attr(n, "hidden_size", kUnrollHidden);
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  auto imported = import_onnx_bytes(b.bytes(), {}, "unroll.onnx");
  ASSERT_TRUE(imported) << imported.error().message;
  ASSERT_EQ(testing::count_ops(*imported, "LSTM"), 1u) << to_string(*imported);
  auto g = placed_graph(b);
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(g->nodes.size(), 1u) << to_string(*g);
  EXPECT_EQ(testing::count_ops(*g, "Relu"), 1u) << to_string(*g);
}

/// A node the pass leaves on the host and the reason the report must give.
struct KeptCase {
  std::string name, reason;
  ModelBuilder model;
};

std::vector<KeptCase> kept_cases() {
  std::vector<KeptCase> cases;
  {
    // sequence_lens a graph input: its values are only known at run time.
    ModelBuilder b(14);
    b.input("x", {kUnrollSeq, kUnrollBatch, kUnrollInput});
    b.input("lens", {kUnrollBatch}, onnx::TensorProto::INT32);
    b.init_f("w", {1, 12, kUnrollInput}, rnd(numel({1, 12, kUnrollInput}), 1));
    b.init_f("r", {1, 12, kUnrollHidden}, rnd(numel({1, 12, kUnrollHidden}), 2));
    auto& n = b.node("GRU", {"x", "w", "r", "", "lens"}, {"y"}, "cell");
    ModelBuilder::attr(n, "hidden_size", kUnrollHidden);
    b.output("y");
    cases.push_back({"lens_input", "sequence_lens is not constant", std::move(b)});
  }
  {
    // A constant sequence_lens with a shorter entry.
    ModelBuilder b(14);
    b.input("x", {kUnrollSeq, kUnrollBatch, kUnrollInput});
    init_i32(b, "lens", {kUnrollSeq, 2, kUnrollSeq});
    b.init_f("w", {1, 4, kUnrollInput}, rnd(numel({1, 4, kUnrollInput}), 1));
    b.init_f("r", {1, 4, kUnrollHidden}, rnd(numel({1, 4, kUnrollHidden}), 2));
    auto& n = b.node("RNN", {"x", "w", "r", "", "lens"}, {"y"}, "cell");
    ModelBuilder::attr(n, "hidden_size", kUnrollHidden);
    b.output("y");
    cases.push_back({"short_lens",
                     "sequence_lens [4, 2, 4] is not seq_length 4 for every batch entry",
                     std::move(b)});
  }
  {
    // ThresholdedRelu: no device form.
    ModelBuilder b(14);
    b.input("x", {kUnrollSeq, kUnrollBatch, kUnrollInput});
    b.init_f("w", {1, 4, kUnrollInput}, rnd(numel({1, 4, kUnrollInput}), 1));
    b.init_f("r", {1, 4, kUnrollHidden}, rnd(numel({1, 4, kUnrollHidden}), 2));
    auto& n = b.node("RNN", {"x", "w", "r"}, {"y"}, "cell");
    ModelBuilder::attr(n, "hidden_size", kUnrollHidden);
    strings_attr(n, "activations", {"ThresholdedRelu"});
    b.output("y");
    cases.push_back({"thresholded_relu", "activation ThresholdedRelu", std::move(b)});
  }
  {
    // Longer than the unroll limit.
    const int64_t seq = 513;
    ModelBuilder b(14);
    b.input("x", {seq, 1, 2});
    b.init_f("w", {1, 2, 2}, rnd(4, 1));
    b.init_f("r", {1, 2, 2}, rnd(4, 2));
    auto& n = b.node("RNN", {"x", "w", "r"}, {"y"}, "cell");
    ModelBuilder::attr(n, "hidden_size", int64_t{2});
    b.output("y");
    cases.push_back(
        {"long", "seq_length 513 is above the unroll limit of 512 steps", std::move(b)});
  }
  {
    // A batch known only at run time.
    ModelBuilder b(14);
    b.input("x", {kUnrollSeq, std::string("N"), kUnrollInput});
    b.init_f("w", {1, 16, kUnrollInput}, rnd(numel({1, 16, kUnrollInput}), 1));
    b.init_f("r", {1, 16, kUnrollHidden}, rnd(numel({1, 16, kUnrollHidden}), 2));
    auto& n = b.node("LSTM", {"x", "w", "r"}, {"y"}, "cell");
    ModelBuilder::attr(n, "hidden_size", kUnrollHidden);
    b.output("y");
    cases.push_back({"dynamic_batch", "gates of dynamic shape", std::move(b)});
  }
  {
    // R a graph input (W constant, so split-recurrence applies).
    ModelBuilder b(14);
    b.input("x", {kUnrollSeq, kUnrollBatch, kUnrollInput});
    b.input("r", {1, 4, kUnrollHidden});
    b.init_f("w", {1, 4, kUnrollInput}, rnd(numel({1, 4, kUnrollInput}), 1));
    auto& n = b.node("RNN", {"x", "w", "r"}, {"y"}, "cell");
    ModelBuilder::attr(n, "hidden_size", kUnrollHidden);
    b.output("y");
    cases.push_back({"r_input", "R is not a float32 constant", std::move(b)});
  }
  return cases;
}

TEST(UnrollRecurrence, LeavesWhatItCannotUnrollOnTheHostWithTheReason) {
  for (const KeptCase& k : kept_cases()) {
    SCOPED_TRACE(k.name);
    auto g = placed_graph(k.model);
    ASSERT_TRUE(g) << g.error().message;
    size_t kept = 0;
    for (const Node& n : g->nodes) {
      if (n.domain != "npu") continue;
      ++kept;
      EXPECT_EQ(n.placement.target, Target::kHost);
      EXPECT_NE(n.placement.reason.find("not unrolled: " + k.reason), std::string::npos)
          << n.placement.reason;
    }
    EXPECT_EQ(kept, 1u) << to_string(*g);
  }
}

class UnrollRecurrenceKept : public testing::EmuSuite<> {};

TEST_F(UnrollRecurrenceKept, ShortSequencesStillMatchTheHostOp) {
  // The kept recurrence computes what the ONNX op does: the report names it, the results
  // are the host op's.
  const KeptCase k = kept_cases()[1];
  Arrays in;
  in["x"] = NpyArray::of<float>({kUnrollSeq, kUnrollBatch, kUnrollInput},
                                rnd(numel({kUnrollSeq, kUnrollBatch, kUnrollInput}), 21));
  const Run kept = compile_and_run(k.model.bytes(), {}, in, "kept.onnx");
  CompileOptions host_only;
  host_only.passes.disable = {"split-recurrence"};
  const Run host = compile_and_run(k.model.bytes(), host_only, in, "host.onnx");
  EXPECT_NE(kept.compiled.partition_report.find(k.reason), std::string::npos)
      << kept.compiled.partition_report;
  ASSERT_EQ(kept.out.count("y"), 1u);
  ASSERT_EQ(host.out.count("y"), 1u);
  EXPECT_LE(max_abs_diff(kept.out.at("y"), host.out.at("y")).first, 1e-5);
}

}  // namespace
}  // namespace npu::compiler
