// unroll-recurrence: split-recurrence puts the input projections of RNN/GRU/LSTM on the device
// and leaves the sequential part to a host op (npu.*Recurrence): per time step and direction
// the product H R^T and the gate arithmetic. With static shapes every step is known when
// compiling, so this pass writes the steps out as ordinary operators the device runs, the
// cell exactly as ONNX defines it (gates G = X W^T + Wb from split-recurrence, Rb added to G
// once):
//   RNN   H = f(G + H R^T)
//   GRU   z, r = f(G_zr + H R_zr^T);  h~ = g(G_h + (r ⊙ H) R_h^T), or with linear_before_reset
//         g(G_h + r ⊙ (H R_h^T + Rb_h));  H = (1 - z) ⊙ h~ + z ⊙ H
//   LSTM  i, o, f = f(G_iof + H R_iof^T [+ P_if ⊙ C]);  c~ = g(G_c + H R_c^T);
//         C = f ⊙ C + i ⊙ c~;  H = o ⊙ h(C)   (o's peephole reads the new C; input_forget:
//         i = 1 - f)
// clip bounds the input of every activation (a Clip before it); the activations are those
// the node names, read by the host op's own rule (npu::ops::recurrent_activations), Affine,
// ScaledTanh and Softsign written as Mul/Add/Tanh/Abs/Div. Per step and direction: one MatMul
// by the constant R^T of that direction's gates (batched, [gates, hidden, hidden]; a
// broadcast A), an Add of the step's gates, the activations and the elementwise update.
// G is laid out gate-major once, [seq * dirs * gates, batch, hidden] (Reshape, Transpose,
// Reshape: one relayout copy when batch > 1), so a step's gates and each single gate are
// Slices the device takes as views, not copies. Y, Y_h and Y_c, those that are read, are
// Concats of the steps' states. Reverse directions run from the last step; bidirectional
// nodes unroll each direction in turn. Float32 results differ from the host op's only in the
// summation order of the H R^T products (and, with linear_before_reset, where Rb_h is added).
//
// Left on the host, unchanged (unroll_recurrence_reason() says why and the support check
// reports it): gates of another dtype or of dynamic shape, R, B or P not constant,
// sequence_lens not a constant equal to seq_length for every batch entry (shorter entries
// need per-entry masking), the ThresholdedRelu activation (no device form), more than
// kMaxUnrolledSteps steps, an empty sequence or batch, and nodes whose shapes or attributes
// do not agree (the host op then reports them).
#include "unroll_recurrence.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <vector>

#include "npu/compiler/pass.h"
#include "npu/format/shape.h"
#include "npu/ops/recurrent_activations.h"
#include "op_attributes.h"

namespace npu::compiler {

namespace {

using CellActivation = ops::RecurrentActivation;
using Dims = std::vector<int64_t>;

enum class CellKind { kRnn, kGru, kLstm };

/// The checked geometry of a recurrence node, or the reason it stays on the host.
struct UnrollPlan {
  std::string reason;
  CellKind cell = CellKind::kRnn;
  int64_t gates = 1, seq = 0, batch = 0, hidden = 0, dirs = 1;
  bool reverse_only = false, layout1 = false, linear_before_reset = false, input_forget = false;
  std::optional<float> clip;
  std::vector<CellActivation> acts;  // 1, 2 or 3 per direction
  const NpyArray* r = nullptr;
  const NpyArray* b = nullptr;  // optional
  const NpyArray* p = nullptr;  // optional (LSTM peepholes)
};

/// The float32 constant of `v` with shape `want`, or nullptr.
const NpyArray* cell_constant(const Graph& g, ValueId v, const Dims& want) {
  const NpyArray* c = g.constant(v);
  return c && c->dtype == DType::kFloat32 && c->shape == want ? c : nullptr;
}

UnrollPlan plan_unroll(const Graph& g, const Node& n) {
  UnrollPlan p;
  auto refuse = [&](std::string why) {
    p.reason = std::move(why);
    return std::move(p);
  };
  if (n.domain != "npu") return refuse("not a recurrence");
  if (n.op_type == "RNNRecurrence") {
    p.cell = CellKind::kRnn, p.gates = 1;
  } else if (n.op_type == "GRURecurrence") {
    p.cell = CellKind::kGru, p.gates = 3;
  } else if (n.op_type == "LSTMRecurrence") {
    p.cell = CellKind::kLstm, p.gates = 4;
  } else {
    return refuse("not a recurrence");
  }
  const bool lstm = p.cell == CellKind::kLstm;
  if (n.inputs.size() > (lstm ? 8u : 6u) || n.outputs.size() > (lstm ? 3u : 2u) || n.input(0) < 0 ||
      n.input(1) >= 0 || n.input(2) < 0 || n.activation) {
    return refuse("inputs or outputs do not match the recurrence");
  }
  const Value& gates = g.value(n.input(0));
  if (gates.dtype != DType::kFloat32)
    return refuse(std::string("gates are ") + dtype_name(gates.dtype) + " (float32 only)");
  const auto gd = gates.static_dims();
  if (!gd || gd->size() != 3) {
    return refuse("gates of dynamic shape " +
                  (gates.shape ? shape_to_string(*gates.shape) : std::string("[*]")));
  }
  const int64_t layout = n.attr_int("layout", 0);
  if (layout != 0 && layout != 1) return refuse("layout " + std::to_string(layout));
  p.layout1 = layout == 1;
  const std::string direction = n.attr_string("direction", "forward");
  if (direction == "bidirectional") {
    p.dirs = 2;
  } else if (direction == "reverse") {
    p.reverse_only = true;
  } else if (direction != "forward") {
    return refuse("direction '" + direction + "'");
  }
  p.seq = (*gd)[p.layout1 ? 1 : 0];
  p.batch = (*gd)[p.layout1 ? 0 : 1];
  const auto rd = g.value(n.input(2)).static_dims();
  if (!rd || rd->size() != 3) return refuse("R is not 3-D with a static shape");
  p.hidden = n.has_attr("hidden_size") ? n.attr_int("hidden_size", 0) : (*rd)[2];
  const int64_t gh = p.gates * p.hidden;
  if (p.hidden < 1 || *rd != Dims{p.dirs, gh, p.hidden} || (*gd)[2] != p.dirs * gh) {
    return refuse("gates " + format::shape_text(*gd) + " and R " + format::shape_text(*rd) +
                  " do not match hidden_size and direction");
  }
  p.r = cell_constant(g, n.input(2), *rd);
  if (!p.r) return refuse("R is not a float32 constant");
  if (p.seq == 0 || p.batch == 0) return refuse("empty sequence or batch");
  if (p.seq > kMaxUnrolledSteps) {
    return refuse("seq_length " + std::to_string(p.seq) + " is above the unroll limit of " +
                  std::to_string(kMaxUnrolledSteps) + " steps");
  }
  if (n.input(3) >= 0) {
    p.b = cell_constant(g, n.input(3), {p.dirs, 2 * gh});
    if (!p.b) return refuse("B is not a float32 constant [dirs, 2 * gates * hidden]");
  }
  if (n.input(4) >= 0) {
    const NpyArray* lens = g.constant(n.input(4));
    if (!lens) return refuse("sequence_lens is not constant");
    const Dims v = format::to_ints(*lens);
    if (static_cast<int64_t>(v.size()) != p.batch ||
        std::any_of(v.begin(), v.end(), [&](int64_t l) { return l != p.seq; })) {
      return refuse("sequence_lens " + format::shape_text(v) + " is not seq_length " +
                    std::to_string(p.seq) + " for every batch entry");
    }
  }
  const Dims state = p.layout1 ? Dims{p.batch, p.dirs, p.hidden} : Dims{p.dirs, p.batch, p.hidden};
  for (size_t i : {size_t{5}, size_t{6}}) {
    if (n.input(i) < 0) continue;
    const Value& s = g.value(n.input(i));
    if (s.dtype != DType::kFloat32 || s.static_dims() != state) {
      return refuse(std::string(i == 5 ? "initial_h" : "initial_c") + " is not float32 of shape " +
                    format::shape_text(state));
    }
  }
  if (lstm && n.input(7) >= 0) {
    p.p = cell_constant(g, n.input(7), {p.dirs, 3 * p.hidden});
    if (!p.p) return refuse("P is not a float32 constant [dirs, 3 * hidden]");
  }
  p.linear_before_reset = p.cell == CellKind::kGru && n.attr_int("linear_before_reset", 0) != 0;
  p.input_forget = lstm && n.attr_int("input_forget", 0) != 0;
  if (n.has_attr("clip")) {
    const float clip = n.attr_float("clip", 0.0f);
    if (!(clip > 0.0f)) return refuse("clip " + std::to_string(clip) + " is not positive");
    p.clip = clip;
  }
  auto acts = ops::recurrent_activations(n.op_type, detail::op_attributes(n), p.dirs);
  if (!acts) return refuse(acts.error().message);
  for (const CellActivation& a : *acts) {
    if (a.kind == CellActivation::Kind::kThresholdedRelu)
      return refuse("activation ThresholdedRelu (the device has no compare-and-select)");
  }
  p.acts = std::move(*acts);
  const Dims y =
      p.layout1 ? Dims{p.batch, p.seq, p.dirs, p.hidden} : Dims{p.seq, p.dirs, p.batch, p.hidden};
  for (size_t o = 0; o < n.outputs.size(); ++o) {
    if (n.outputs[o] < 0) continue;
    const auto od = g.value(n.outputs[o]).static_dims();
    if (od && *od != (o == 0 ? y : state)) return refuse("output shapes do not match the gates");
  }
  return p;
}

/// The state of one direction after a step: H (and C for the LSTM), each [batch, hidden].
struct StepState {
  ValueId h = kNoValue, c = kNoValue;
};

/// Writes the unrolled graph of one planned node into `out` (its nodes in order).
class Unroller {
 public:
  Unroller(Graph& g, const Node& n, const UnrollPlan& p, std::vector<Node>& out)
      : g_(g), n_(n), p_(p), out_(out), bh_{p.batch, p.hidden} {
    base_ = n.name;
    for (ValueId o : n.outputs) {
      if (base_.empty() && o >= 0) base_ = g.value(o).name;
    }
  }

  /// Emits the steps and the outputs in `used` (Y, Y_h, Y_c).
  void run(const std::vector<bool>& used) {
    lay_out_gates();
    std::vector<std::vector<ValueId>> ys(static_cast<size_t>(p_.dirs));
    std::vector<StepState> last(static_cast<size_t>(p_.dirs));
    for (int64_t d = 0; d < p_.dirs; ++d) {
      const bool reverse = p_.reverse_only || d == 1;
      std::vector<ValueId>& y = ys[static_cast<size_t>(d)];
      y.assign(static_cast<size_t>(p_.seq), kNoValue);
      StepState s = initial_state(d);
      for (int64_t k = 0; k < p_.seq; ++k) {
        const int64_t t = reverse ? p_.seq - 1 - k : k;
        prefix_ = "d" + std::to_string(d) + "/t" + std::to_string(t) + "/";
        s = p_.cell == CellKind::kRnn   ? rnn_step(d, t, s)
            : p_.cell == CellKind::kGru ? gru_step(d, t, s)
                                        : lstm_step(d, t, s);
        y[static_cast<size_t>(t)] = s.h;
      }
      last[static_cast<size_t>(d)] = s;
    }
    prefix_.clear();
    if (used[0]) emit_y(ys);
    std::vector<ValueId> hs, cs;
    for (const StepState& s : last) hs.push_back(s.h), cs.push_back(s.c);
    if (used.size() > 1 && used[1]) emit_state(hs, n_.outputs[1], "Y_h");
    if (used.size() > 2 && used[2]) emit_state(cs, n_.outputs[2], "Y_c");
  }

 private:
  // ---- graph building ----

  /// A node `op` writing `y` (a new float32 value named after `hint` when kNoValue) of dims.
  ValueId add(const std::string& op, std::vector<ValueId> ins, const Dims& dims,
              const std::string& hint, std::map<std::string, AttrValue> attrs = {},
              ValueId y = kNoValue) {
    if (y == kNoValue) {
      Value v;
      v.name = g_.unique_name(base_ + "/" + prefix_ + hint);
      y = g_.add_value(std::move(v));
    }
    Value& v = g_.value(y);
    v.dtype = DType::kFloat32;
    v.shape = make_shape(dims);
    Node m;
    m.name = v.name;
    m.op_type = op;
    m.opset = 13;  // the input forms of Slice, Reshape and Clip
    m.inputs = std::move(ins);
    m.outputs = {y};
    m.attrs = std::move(attrs);
    out_.push_back(std::move(m));
    return y;
  }

  ValueId constant(const std::string& hint, NpyArray a) {
    return g_.add_constant(base_ + "/" + hint, std::move(a));
  }

  /// A float32 scalar constant (one value per number).
  ValueId scalar(float x) {
    auto [it, fresh] = scalars_.try_emplace(x, kNoValue);
    if (fresh) it->second = constant("scalar", NpyArray::of<float>({}, std::vector<float>{x}));
    return it->second;
  }

  /// An int64 vector constant (Slice bounds, Reshape shapes; one value per list).
  ValueId ints(const Dims& v) {
    auto [it, fresh] = ints_.try_emplace(v, kNoValue);
    if (fresh) {
      it->second = constant("ints", NpyArray::of<int64_t>({static_cast<int64_t>(v.size())}, v));
    }
    return it->second;
  }

  ValueId reshape(ValueId x, const Dims& dims, const std::string& hint, ValueId y = kNoValue) {
    return add("Reshape", {x, ints(dims)}, dims, hint, {}, y);
  }

  /// Elements [start, start + count) of axis `axis` of x (dims `xd`).
  ValueId slice(ValueId x, Dims xd, int64_t axis, int64_t start, int64_t count,
                const std::string& hint) {
    xd[static_cast<size_t>(axis)] = count;
    return add("Slice", {x, ints({start}), ints({start + count}), ints({axis})}, xd, hint);
  }

  /// Gate `k` of a [gates, batch, hidden] value, as [batch, hidden].
  ValueId gate(ValueId x, int64_t gates, int64_t k, const std::string& hint) {
    return reshape(slice(x, {gates, p_.batch, p_.hidden}, 0, k, 1, hint + "_3d"), bh_, hint);
  }

  /// The activation `a` of x (dims `dims`), after the node's clip when `clipped` is false.
  ValueId activate(ValueId x, const CellActivation& a, const Dims& dims, const std::string& hint,
                   bool clipped = false) {
    if (p_.clip && !clipped) {
      x = add("Clip", {x, scalar(-*p_.clip), scalar(*p_.clip)}, dims, hint + "_clip");
    }
    const auto alpha = static_cast<float>(a.alpha), beta = static_cast<float>(a.beta);
    using K = CellActivation::Kind;
    switch (a.kind) {
      case K::kRelu:
        return add("Relu", {x}, dims, hint);
      case K::kTanh:
        return add("Tanh", {x}, dims, hint);
      case K::kSigmoid:
        return add("Sigmoid", {x}, dims, hint);
      case K::kSoftplus:
        return add("Softplus", {x}, dims, hint);
      case K::kLeakyRelu:
        return add("LeakyRelu", {x}, dims, hint, {{"alpha", alpha}});
      case K::kElu:
        return add("Elu", {x}, dims, hint, {{"alpha", alpha}});
      case K::kHardSigmoid:
        return add("HardSigmoid", {x}, dims, hint, {{"alpha", alpha}, {"beta", beta}});
      case K::kAffine:  // alpha * x + beta
        return add("Add", {add("Mul", {x, scalar(alpha)}, dims, hint + "_ax"), scalar(beta)}, dims,
                   hint);
      case K::kScaledTanh: {  // alpha * tanh(beta * x)
        const ValueId bx = add("Mul", {x, scalar(beta)}, dims, hint + "_bx");
        return add("Mul", {add("Tanh", {bx}, dims, hint + "_tanh"), scalar(alpha)}, dims, hint);
      }
      case K::kSoftsign: {  // x / (1 + |x|)
        const ValueId ax = add("Abs", {x}, dims, hint + "_abs");
        return add("Div", {x, add("Add", {scalar(1.0f), ax}, dims, hint + "_den")}, dims, hint);
      }
      case K::kThresholdedRelu:  // refused by plan_unroll()
        break;
    }
    return x;
  }

  // ---- the constants and the gates ----

  /// R^T of gates [first, first + count) of direction d: [count, hidden, hidden] ([hidden,
  /// hidden] for one gate), element [k][i][j] = R[d][(first + k) * hidden + j][i].
  ValueId r_transposed(int64_t d, int64_t first, int64_t count, const std::string& hint) {
    const int64_t h = p_.hidden;
    const Dims dims = count == 1 ? Dims{h, h} : Dims{count, h, h};
    NpyArray t = NpyArray::zeros(DType::kFloat32, dims);
    const float* r = p_.r->view<float>().data() + d * p_.gates * h * h;
    float* out = t.view<float>().data();
    for (int64_t k = 0; k < count; ++k) {
      for (int64_t j = 0; j < h; ++j) {
        for (int64_t i = 0; i < h; ++i) out[(k * h + i) * h + j] = r[((first + k) * h + j) * h + i];
      }
    }
    return constant("d" + std::to_string(d) + "/" + hint, std::move(t));
  }

  /// `count` values of row d of constant `a` ([dirs, n]) from column `first`, as a [count]
  /// constant.
  ValueId row_part(const NpyArray& a, int64_t d, int64_t first, int64_t count,
                   const std::string& hint) {
    const float* src = a.view<float>().data() + d * a.shape[1] + first;
    return constant("d" + std::to_string(d) + "/" + hint,
                    NpyArray::of<float>({count}, std::vector<float>(src, src + count)));
  }

  /// G + Rb as [seq * dirs * gates, batch, hidden] (gflat_), and the R^T constants.
  void lay_out_gates() {
    const int64_t seq = p_.seq, batch = p_.batch, h = p_.hidden, dg = p_.dirs * p_.gates;
    const Dims gd = p_.layout1 ? Dims{batch, seq, dg * h} : Dims{seq, batch, dg * h};
    ValueId gates = n_.input(0);
    if (p_.b) {
      // Rb of every gate except GRU's h gate with linear_before_reset (added to H R_h^T).
      std::vector<float> rb(static_cast<size_t>(dg * h), 0.0f);
      const float* bv = p_.b->view<float>().data();
      bool any = false;
      for (int64_t d = 0; d < p_.dirs; ++d) {
        for (int64_t k = 0; k < p_.gates; ++k) {
          if (p_.linear_before_reset && k == 2) continue;
          for (int64_t j = 0; j < h; ++j) {
            const float v = bv[(d * 2 + 1) * p_.gates * h + k * h + j];
            rb[static_cast<size_t>((d * p_.gates + k) * h + j)] = v;
            any = any || v != 0.0f;
          }
        }
      }
      if (any) {
        gates =
            add("Add", {gates, constant("Rb", NpyArray::of<float>({dg * h}, rb))}, gd, "gates_rb");
      }
    }
    const Dims g4 = p_.layout1 ? Dims{batch, seq, dg, h} : Dims{seq, batch, dg, h};
    const ValueId split = reshape(gates, g4, "gates_4d");
    const ValueId major =
        add("Transpose", {split}, {seq, dg, batch, h}, "gates_major",
            {{"perm", p_.layout1 ? std::vector<int64_t>{1, 2, 0, 3} : Dims{0, 2, 1, 3}}});
    gflat_ = reshape(major, {seq * dg, batch, h}, "gates_rows");
    for (int64_t d = 0; d < p_.dirs; ++d) {
      switch (p_.cell) {
        case CellKind::kRnn:
        case CellKind::kLstm:
          rt_.push_back(r_transposed(d, 0, p_.gates, "R_t"));
          break;
        case CellKind::kGru:
          rt_.push_back(r_transposed(d, 0, 2, "R_zr_t"));
          rt_h_.push_back(r_transposed(d, 2, 1, "R_h_t"));
          if (p_.linear_before_reset && p_.b) rb_h_.push_back(row_part(*p_.b, d, 5 * h, h, "Rb_h"));
          break;
      }
      if (p_.p) {
        peep_.push_back({row_part(*p_.p, d, 0, h, "P_i"), row_part(*p_.p, d, h, h, "P_o"),
                         row_part(*p_.p, d, 2 * h, h, "P_f")});
      }
    }
  }

  /// Gates [first, first + count) of direction d at time t: [count, batch, hidden], or
  /// [batch, hidden] for one gate.
  ValueId gates_at(int64_t d, int64_t t, int64_t first, int64_t count, const std::string& hint) {
    const int64_t row = (t * p_.dirs + d) * p_.gates + first;
    const Dims rows{p_.seq * p_.dirs * p_.gates, p_.batch, p_.hidden};
    const ValueId v = slice(gflat_, rows, 0, row, count, count == 1 ? hint + "_3d" : hint);
    return count == 1 ? reshape(v, bh_, hint) : v;
  }

  /// initial_h / initial_c (input `i`) of direction d as [batch, hidden]; zeros when absent.
  ValueId initial(size_t i, int64_t d, const std::string& hint) {
    const ValueId v = n_.input(i);
    const std::string name = "d" + std::to_string(d) + "/" + hint;
    if (v < 0) return constant(name, NpyArray::zeros(DType::kFloat32, bh_));
    const Dims state =
        p_.layout1 ? Dims{p_.batch, p_.dirs, p_.hidden} : Dims{p_.dirs, p_.batch, p_.hidden};
    if (const NpyArray* c = g_.constant(v)) {
      NpyArray part = NpyArray::zeros(DType::kFloat32, bh_);
      const float* src = c->view<float>().data();
      float* dst = part.view<float>().data();
      for (int64_t b = 0; b < p_.batch; ++b) {
        const int64_t from = p_.layout1 ? b * p_.dirs + d : d * p_.batch + b;
        std::copy_n(src + from * p_.hidden, p_.hidden, dst + b * p_.hidden);
      }
      return constant(name, std::move(part));
    }
    const ValueId one = p_.dirs == 1 ? v : slice(v, state, p_.layout1 ? 1 : 0, d, 1, name + "_3d");
    return reshape(one, bh_, name);
  }

  StepState initial_state(int64_t d) {
    StepState s;
    s.h = initial(5, d, "initial_h");
    if (p_.cell == CellKind::kLstm) s.c = initial(6, d, "initial_c");
    return s;
  }

  const CellActivation& act(int64_t d, size_t k) const {
    return p_.acts[static_cast<size_t>(d) * p_.acts.size() / static_cast<size_t>(p_.dirs) + k];
  }

  // ---- the cells ----

  StepState rnn_step(int64_t d, int64_t t, StepState s) {
    const ValueId hr = add("MatMul", {s.h, rt_[static_cast<size_t>(d)]}, bh_, "hr");
    const ValueId pre = add("Add", {gates_at(d, t, 0, 1, "gates"), hr}, bh_, "pre");
    s.h = activate(pre, act(d, 0), bh_, "h");
    return s;
  }

  StepState gru_step(int64_t d, int64_t t, StepState s) {
    const auto du = static_cast<size_t>(d);
    const Dims zr_dims{2, p_.batch, p_.hidden};
    const ValueId hr = add("MatMul", {s.h, rt_[du]}, zr_dims, "hr_zr");
    const ValueId pre = add("Add", {gates_at(d, t, 0, 2, "gates_zr"), hr}, zr_dims, "pre_zr");
    const ValueId zr = activate(pre, act(d, 0), zr_dims, "zr");
    const ValueId z = gate(zr, 2, 0, "z"), r = gate(zr, 2, 1, "r");
    ValueId rec;
    if (p_.linear_before_reset) {
      std::vector<ValueId> ins = {s.h, rt_h_[du]};
      if (!rb_h_.empty()) ins.push_back(rb_h_[du]);
      rec = add("Mul", {r, add("MatMul", std::move(ins), bh_, "hr_h")}, bh_, "r_hr_h");
    } else {
      rec = add("MatMul", {add("Mul", {r, s.h}, bh_, "r_h"), rt_h_[du]}, bh_, "r_h_r");
    }
    const ValueId cand = activate(add("Add", {gates_at(d, t, 2, 1, "gates_h"), rec}, bh_, "pre_h"),
                                  act(d, 1), bh_, "h_cand");
    const ValueId keep = add("Sub", {scalar(1.0f), z}, bh_, "one_minus_z");
    s.h = add("Add",
              {add("Mul", {keep, cand}, bh_, "new_part"), add("Mul", {z, s.h}, bh_, "old_part")},
              bh_, "h");
    return s;
  }

  StepState lstm_step(int64_t d, int64_t t, StepState s) {
    const auto du = static_cast<size_t>(d);
    const Dims all{4, p_.batch, p_.hidden};
    const ValueId hr = add("MatMul", {s.h, rt_[du]}, all, "hr");
    ValueId pre = add("Add", {gates_at(d, t, 0, 4, "gates"), hr}, all, "pre");
    const CellActivation& f_act = act(d, 0);
    ValueId i, o = kNoValue, f;
    bool clipped = false;
    if (!p_.p) {
      // No peepholes: i, o, f (or o, f) through one activation, the clip applied once.
      if (p_.clip) {
        pre = add("Clip", {pre, scalar(-*p_.clip), scalar(*p_.clip)}, all, "pre_clip");
        clipped = true;
      }
      const int64_t first = p_.input_forget ? 1 : 0;
      const Dims dims{3 - first, p_.batch, p_.hidden};
      const ValueId sig =
          activate(slice(pre, all, 0, first, 3 - first, "pre_iof"), f_act, dims, "iof", clipped);
      o = gate(sig, 3 - first, 1 - first, "o");
      f = gate(sig, 3 - first, 2 - first, "f");
      i = p_.input_forget ? kNoValue : gate(sig, 3, 0, "i");
    } else {
      const std::array<ValueId, 3>& pv = peep_[du];
      auto peephole = [&](int64_t k, ValueId p, ValueId c, const std::string& name) {
        const ValueId pc = add("Mul", {p, c}, bh_, name + "_peep");
        return activate(add("Add", {gate(pre, 4, k, "pre_" + name), pc}, bh_, "pre_" + name + "_p"),
                        f_act, bh_, name);
      };
      f = peephole(2, pv[2], s.c, "f");
      i = p_.input_forget ? kNoValue : peephole(0, pv[0], s.c, "i");
    }
    if (p_.input_forget) i = add("Sub", {scalar(1.0f), f}, bh_, "i");
    const ValueId cand = activate(gate(pre, 4, 3, "pre_c"), act(d, 1), bh_, "c_cand", clipped);
    s.c = add("Add", {add("Mul", {f, s.c}, bh_, "kept"), add("Mul", {i, cand}, bh_, "added")}, bh_,
              "c");
    if (p_.p) {
      const ValueId pc = add("Mul", {peep_[du][1], s.c}, bh_, "o_peep");
      o = activate(add("Add", {gate(pre, 4, 1, "pre_o"), pc}, bh_, "pre_o_p"), f_act, bh_, "o");
    }
    s.h = add("Mul", {o, activate(s.c, act(d, 2), bh_, "c_act")}, bh_, "h");
    return s;
  }

  // ---- the outputs ----

  /// Y: the steps' H in order, [seq, dirs, batch, hidden] (layout 1 [batch, seq, dirs,
  /// hidden]), through one Concat of all (time, direction) pieces.
  void emit_y(const std::vector<std::vector<ValueId>>& ys) {
    const int64_t seq = p_.seq, dirs = p_.dirs, batch = p_.batch, h = p_.hidden;
    const Dims piece = p_.layout1 ? Dims{batch, 1, h} : Dims{1, batch, h};
    const Dims y = p_.layout1 ? Dims{batch, seq, dirs, h} : Dims{seq, dirs, batch, h};
    if (seq * dirs == 1) {
      reshape(ys[0][0], y, "Y", n_.outputs[0]);
      return;
    }
    std::vector<ValueId> pieces;
    for (int64_t t = 0; t < seq; ++t) {
      for (int64_t d = 0; d < dirs; ++d) {
        prefix_ = "d" + std::to_string(d) + "/t" + std::to_string(t) + "/";
        pieces.push_back(reshape(ys[static_cast<size_t>(d)][static_cast<size_t>(t)], piece, "y"));
      }
    }
    prefix_.clear();
    const Dims all = p_.layout1 ? Dims{batch, seq * dirs, h} : Dims{seq * dirs, batch, h};
    const ValueId cat =
        add("Concat", std::move(pieces), all, "Y_steps", {{"axis", int64_t{p_.layout1 ? 1 : 0}}});
    reshape(cat, y, "Y", n_.outputs[0]);
  }

  /// Y_h or Y_c: the last states, [dirs, batch, hidden] (layout 1 [batch, dirs, hidden]).
  void emit_state(const std::vector<ValueId>& last, ValueId out, const std::string& hint) {
    const Dims piece = p_.layout1 ? Dims{p_.batch, 1, p_.hidden} : Dims{1, p_.batch, p_.hidden};
    if (p_.dirs == 1) {
      reshape(last[0], piece, hint, out);
      return;
    }
    std::vector<ValueId> pieces;
    for (size_t d = 0; d < last.size(); ++d)
      pieces.push_back(reshape(last[d], piece, hint + "_d" + std::to_string(d)));
    const Dims all =
        p_.layout1 ? Dims{p_.batch, p_.dirs, p_.hidden} : Dims{p_.dirs, p_.batch, p_.hidden};
    add("Concat", std::move(pieces), all, hint, {{"axis", int64_t{p_.layout1 ? 1 : 0}}}, out);
  }

  Graph& g_;
  const Node& n_;
  const UnrollPlan& p_;
  std::vector<Node>& out_;
  const Dims bh_;
  std::string base_, prefix_;
  ValueId gflat_ = kNoValue;
  std::vector<ValueId> rt_, rt_h_, rb_h_;
  std::vector<std::array<ValueId, 3>> peep_;  // P_i, P_o, P_f per direction
  std::map<float, ValueId> scalars_;
  std::map<Dims, ValueId> ints_;
};

class UnrollRecurrencePass final : public Pass {
 public:
  std::string_view name() const override { return "unroll-recurrence"; }

  Expected<bool> run(Graph& g) override {
    const auto readers = g.consumers();
    auto used = [&](ValueId v) {
      return v >= 0 && (!readers[static_cast<size_t>(v)].empty() || g.is_graph_output(v));
    };
    bool changed = false, dropped = false;
    std::vector<Node> nodes;
    nodes.reserve(g.nodes.size());
    for (Node& n : g.nodes) {
      if (n.domain != "npu") {
        nodes.push_back(std::move(n));
        continue;
      }
      const UnrollPlan p = plan_unroll(g, n);
      if (!p.reason.empty()) {
        nodes.push_back(std::move(n));
        continue;
      }
      std::vector<bool> outs;
      for (ValueId v : n.outputs) outs.push_back(used(v));
      if (std::find(outs.begin(), outs.end(), true) != outs.end()) {
        Unroller(g, n, p, nodes).run(outs);
      } else {
        dropped = true;  // nothing reads it: its gates' projection is dead too
      }
      changed = true;
    }
    g.nodes = std::move(nodes);
    if (dropped) g.remove_dead_nodes();
    return changed;
  }
};

}  // namespace

std::string unroll_recurrence_reason(const Graph& g, const Node& n) {
  return plan_unroll(g, n).reason;
}

std::unique_ptr<Pass> create_UnrollRecurrencePass() {
  return std::make_unique<UnrollRecurrencePass>();
}

}  // namespace npu::compiler
