// Host ops of the recurrent layers (npu/ops/operators.def): RNN, GRU and LSTM, opsets 7 to 18
// (layout from 14). One implementation serves the three; they differ in their gates (RNN 1,
// GRU 3 in the order z r h, LSTM 4 in the order i o f c) and their state (LSTM adds the cell).
//
// X is [seq_length, batch, input_size] (layout 0) or [batch, seq_length, input_size] (layout
// 1); W [dirs, gates * hidden, input], R [dirs, gates * hidden, hidden], optional B
// [dirs, 2 * gates * hidden] (Wb then Rb), sequence_lens [batch], initial_h (initial_c)
// [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]), LSTM's peepholes P [dirs, 3 * hidden]
// (i o f). Outputs Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]), Y_h and
// Y_c like initial_h. The input projections X W^T of all steps are one matmul; each step
// adds H R^T (ref::matmul_f32 for float32).
//
// Choices where ONNX's text is silent, following ONNX Runtime: a batch entry's steps past its
// sequence length give zeros in Y and leave its state as it was, so Y_h / Y_c are the state at
// its last valid step; the reverse direction starts at its last valid step; an entry of length
// 0 has zero Y_h / Y_c. `clip` bounds the input of every activation (the cell state itself is
// not clipped). activation_alpha / activation_beta are consumed in order by the activations
// that take them (Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu); missing
// ones take the defaults of the ONNX operators of those names. Activation names are matched
// without regard to case. Arithmetic in X's type (float32 or float64).
//
// The compiler's split-recurrence pass computes the input projections on the device and
// leaves the recurrence to the internal ops RNNRecurrence, GRURecurrence and LSTMRecurrence
// (domain "npu"): the inputs and attributes of RNN / GRU / LSTM with X replaced by the
// precomputed gates G = X W^T + Wb, [seq_length, batch, dirs * gates * hidden] (layout 1:
// [batch, seq_length, dirs * gates * hidden]; direction d's gates at columns d * gates *
// hidden), and W omitted; B, when given, is the ONNX B, of which only Rb is added (Wb is in G).
// Both forms run the same recurrence below; they differ only in where the projections come
// from. The activation list's reading is public (npu/ops/recurrent_activations.h) for the
// compiler's unroll-recurrence pass, which builds the same cells from device operators.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attributes.h"
#include "dtype_dispatch.h"
#include "npu/ops/recurrent_activations.h"
#include "npu/ref/matmul.h"
#include "npu/ref/scalar.h"
#include "operands.h"
#include "permute.h"
#include "work_limits.h"
#include "work_poll.h"

namespace npu::ops::detail {
namespace {

enum class Cell { kRnn, kGru, kLstm };

/// One activation of the ONNX list with its alpha and beta, applied in T.
struct Activation : RecurrentActivation {
  template <typename T>
  T operator()(T x) const {
    const T a = static_cast<T>(alpha), b = static_cast<T>(beta);
    switch (kind) {
      case Kind::kRelu:
        return ref::activation_fp<T>(NPU_ACT_RELU, x, a, b);
      case Kind::kTanh:
        return ref::activation_fp<T>(NPU_ACT_TANH, x, a, b);
      case Kind::kSigmoid:
        return ref::activation_fp<T>(NPU_ACT_SIGMOID, x, a, b);
      case Kind::kAffine:
        return a * x + b;
      case Kind::kLeakyRelu:
        return ref::activation_fp<T>(NPU_ACT_LEAKY_RELU, x, a, b);
      case Kind::kThresholdedRelu:
        return x > a ? x : T{0};
      case Kind::kScaledTanh:
        return a * std::tanh(b * x);
      case Kind::kHardSigmoid:
        return ref::activation_fp<T>(NPU_ACT_HARDSIGMOID, x, a, b);
      case Kind::kElu:
        return ref::activation_fp<T>(NPU_ACT_ELU, x, a, b);
      case Kind::kSoftsign:
        return x / (T{1} + std::fabs(x));
      case Kind::kSoftplus:
        return ref::activation_fp<T>(NPU_ACT_SOFTPLUS, x, a, b);
    }
    return x;
  }
};

struct ActivationName {
  const char* name;
  Activation::Kind kind;
  int params;  // 0: none, 1: alpha, 2: alpha and beta
  double alpha, beta;
};

// The defaults are those of the ONNX operators of the same names (Affine and ScaledTanh, old
// experimental ops: alpha 1, beta 0 / alpha 1, beta 1).
constexpr ActivationName kActivations[] = {
    {"relu", Activation::Kind::kRelu, 0, 0, 0},
    {"tanh", Activation::Kind::kTanh, 0, 0, 0},
    {"sigmoid", Activation::Kind::kSigmoid, 0, 0, 0},
    {"affine", Activation::Kind::kAffine, 2, 1, 0},
    {"leakyrelu", Activation::Kind::kLeakyRelu, 1, 0.01, 0},
    {"thresholdedrelu", Activation::Kind::kThresholdedRelu, 1, 1, 0},
    {"scaledtanh", Activation::Kind::kScaledTanh, 2, 1, 1},
    {"hardsigmoid", Activation::Kind::kHardSigmoid, 2, 0.2, 0.5},
    {"elu", Activation::Kind::kElu, 1, 1, 0},
    {"softsign", Activation::Kind::kSoftsign, 0, 0, 0},
    {"softplus", Activation::Kind::kSoftplus, 0, 0, 0},
};

/// The activations of every direction, `per_dir` each (f; f g; f g h), from the attributes.
Expected<std::vector<Activation>> activations(const OpCall& c, Cell cell, int64_t dirs) {
  std::vector<std::string> names;
  switch (cell) {
    case Cell::kRnn:
      names = {"Tanh"};
      break;
    case Cell::kGru:
      names = {"Sigmoid", "Tanh"};
      break;
    case Cell::kLstm:
      names = {"Sigmoid", "Tanh", "Tanh"};
      break;
  }
  const size_t per_dir = names.size();
  if (c.attrs.contains("activations")) {
    names = c.attrs["activations"].get<std::vector<std::string>>();
    // One list per direction, or one list for both; a forward op may name the reverse
    // direction's too (RNN's schema default is "Tanh, Tanh").
    if (names.size() != per_dir && names.size() != 2 * per_dir) {
      return op_error(c, "attribute activations has " + std::to_string(names.size()) +
                             " entries; " + c.op + " takes " + std::to_string(per_dir) +
                             " per direction");
    }
  }
  std::vector<double> alphas, betas;
  if (c.attrs.contains("activation_alpha")) {
    alphas = c.attrs["activation_alpha"].get<std::vector<double>>();
  }
  if (c.attrs.contains("activation_beta")) {
    betas = c.attrs["activation_beta"].get<std::vector<double>>();
  }
  size_t ai = 0, bi = 0;
  std::vector<Activation> out;
  for (const std::string& name : names) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    const ActivationName* found = nullptr;
    for (const ActivationName& a : kActivations) {
      if (lower == a.name) found = &a;
    }
    if (found == nullptr) {
      return op_error(c, "attribute activations: unknown activation '" + name + "'");
    }
    Activation a;
    a.kind = found->kind;
    a.alpha = found->alpha;
    a.beta = found->beta;
    if (found->params >= 1 && ai < alphas.size()) a.alpha = alphas[ai++];
    if (found->params >= 2 && bi < betas.size()) a.beta = betas[bi++];
    out.push_back(a);
  }
  if (out.size() == per_dir && dirs == 2) {
    for (size_t i = 0; i < per_dir; ++i) out.push_back(out[i]);
  }
  out.resize(per_dir * static_cast<size_t>(dirs));
  return out;
}

/// The checked geometry and attributes of one call.
struct Geometry {
  Cell cell = Cell::kRnn;
  bool precomputed = false;  // input 0 is G = X W^T + Wb (the *Recurrence ops)
  int64_t gates = 1;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool reverse_only = false;  // direction "reverse"
  bool layout1 = false;
  bool linear_before_reset = false;
  bool input_forget = false;
  std::optional<double> clip;
  std::vector<Activation> acts;  // per_dir per direction
};

/// Error unless `a` (ONNX input `name`) has shape `want`; `why` says what fixes the shape.
Expected<void> need_shape(const OpCall& c, const NpyArray& a, const Shape& want, const char* name,
                          const std::string& why) {
  if (a.shape == want) return ok();
  return op_error(c, std::string(name) + " shape " + shape_text(a.shape) + " does not match " +
                         why + " (expected " + shape_text(want) + ")");
}

Expected<Geometry> geometry(const OpCall& c, Cell cell, bool precomputed) {
  Geometry g;
  g.cell = cell;
  g.precomputed = precomputed;
  g.gates = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
  const size_t max_outputs = cell == Cell::kLstm ? 3 : 2;
  if (c.num_outputs > max_outputs) {
    return op_error(c, "has at most " + std::to_string(max_outputs) + " outputs, " +
                           std::to_string(c.num_outputs) + " requested");
  }
  auto x = input(c, 0);
  if (!x) return x.error();
  const NpyArray* w = optional_input(c, 1);
  if (precomputed && w != nullptr) {
    return op_error(c, "input 1 (W) must be omitted: G holds the input projections");
  }
  if (!precomputed && w == nullptr) {
    auto missing = input(c, 1);
    if (!missing) return missing.error();
  }
  auto r = input(c, 2);
  if (!r) return r.error();
  const auto same_type = [&](const NpyArray* a, const char* name) -> Expected<void> {
    if (a == nullptr || a->dtype == (*x)->dtype) return ok();
    return op_error(c, std::string(name) + " is " + format::dtype_name(a->dtype) + " but " +
                           (precomputed ? "G" : "X") + " is " + format::dtype_name((*x)->dtype));
  };
  NPU_TRY(same_type(w, "W"));
  NPU_TRY(same_type(*r, "R"));

  auto layout = int_attr(c, "layout", 0);
  if (!layout) return layout.error();
  if (!precomputed && c.opset < 14 && c.attrs.contains("layout")) {
    return op_error(
        c, "attribute layout needs opset 14 (this is opset " + std::to_string(c.opset) + ")");
  }
  if (*layout != 0 && *layout != 1) {
    return op_error(c, "attribute layout " + std::to_string(*layout) + " is not 0 or 1");
  }
  g.layout1 = *layout == 1;
  auto direction = string_attr(c, "direction", "forward");
  if (!direction) return direction.error();
  if (*direction == "bidirectional") {
    g.dirs = 2;
  } else if (*direction == "reverse") {
    g.reverse_only = true;
  } else if (*direction != "forward") {
    return op_error(
        c, "attribute direction '" + *direction + "' is not forward, reverse or bidirectional");
  }

  const Shape& xs = (*x)->shape;
  if (xs.size() != 3) {
    const char* last = precomputed ? "dirs * gates * hidden" : "input_size";
    return op_error(c, std::string(precomputed ? "G" : "X") + " must be 3-d (" +
                           (g.layout1 ? "[batch, seq_length, " : "[seq_length, batch, ") + last +
                           "]), got " + shape_text(xs));
  }
  g.seq = g.layout1 ? xs[1] : xs[0];
  g.batch = g.layout1 ? xs[0] : xs[1];
  g.input = precomputed ? 0 : xs[2];
  const Shape& rs = (*r)->shape;
  if (rs.size() != 3) return op_error(c, "R must be 3-d, got " + shape_text(rs));
  auto hidden_attr = int_attr(c, "hidden_size", -1);
  if (!hidden_attr) return hidden_attr.error();
  g.hidden = *hidden_attr >= 0 ? *hidden_attr : rs[2];
  if (c.attrs.contains("hidden_size") && *hidden_attr < 1) {
    return op_error(c,
                    "attribute hidden_size " + std::to_string(*hidden_attr) + " is not positive");
  }
  const int64_t gh = g.gates * g.hidden;
  const std::string dirs_text = std::to_string(g.dirs) + " direction" + (g.dirs == 2 ? "s" : "");
  const std::string geom = dirs_text + ", hidden_size " + std::to_string(g.hidden);
  NPU_TRY(need_shape(c, **r, {g.dirs, gh, g.hidden}, "R", geom));
  if (precomputed) {
    const Shape want =
        g.layout1 ? Shape{g.batch, g.seq, g.dirs * gh} : Shape{g.seq, g.batch, g.dirs * gh};
    NPU_TRY(need_shape(c, **x, want, "G", geom));
  } else {
    NPU_TRY(need_shape(c, *w, {g.dirs, gh, g.input}, "W",
                       geom + ", input_size " + std::to_string(g.input)));
  }
  if (const NpyArray* b = optional_input(c, 3)) {
    NPU_TRY(same_type(b, "B"));
    NPU_TRY(need_shape(c, *b, {g.dirs, 2 * gh}, "B", geom));
  }
  if (const NpyArray* lens = optional_input(c, 4)) {
    NPU_TRY(need_dtype(c, *lens, {DType::kInt32, DType::kInt64}, "sequence_lens"));
    NPU_TRY(need_shape(c, *lens, {g.batch}, "sequence_lens", "the batch of X"));
    for (int64_t i = 0; i < g.batch; ++i) {
      const int64_t n = int_at(*lens, i);
      if (n < 0 || n > g.seq) {
        return op_error(c, "sequence_lens[" + std::to_string(i) + "] = " + std::to_string(n) +
                               " is outside [0, " + std::to_string(g.seq) + "]");
      }
    }
  }
  const Shape state =
      g.layout1 ? Shape{g.batch, g.dirs, g.hidden} : Shape{g.dirs, g.batch, g.hidden};
  const std::string state_why =
      geom + ", batch " + std::to_string(g.batch) + (g.layout1 ? ", layout 1" : "");
  if (const NpyArray* h0 = optional_input(c, 5)) {
    NPU_TRY(same_type(h0, "initial_h"));
    NPU_TRY(need_shape(c, *h0, state, "initial_h", state_why));
  }
  if (cell == Cell::kLstm) {
    if (const NpyArray* c0 = optional_input(c, 6)) {
      NPU_TRY(same_type(c0, "initial_c"));
      NPU_TRY(need_shape(c, *c0, state, "initial_c", state_why));
    }
    if (const NpyArray* p = optional_input(c, 7)) {
      NPU_TRY(same_type(p, "P"));
      NPU_TRY(need_shape(c, *p, {g.dirs, 3 * g.hidden}, "P", geom));
    }
    auto coupled = int_attr(c, "input_forget", 0);
    if (!coupled) return coupled.error();
    g.input_forget = *coupled != 0;
  }
  const size_t max_inputs = cell == Cell::kLstm ? 8 : 6;
  if (c.inputs.size() > max_inputs) {
    return op_error(c, "has at most " + std::to_string(max_inputs) + " inputs, got " +
                           std::to_string(c.inputs.size()));
  }
  if (cell == Cell::kGru) {
    auto lbr = int_attr(c, "linear_before_reset", 0);
    if (!lbr) return lbr.error();
    g.linear_before_reset = *lbr != 0;
  }
  if (c.attrs.contains("clip")) {
    auto clip = float_attr(c, "clip", 0.0f);
    if (!clip) return clip.error();
    if (!(*clip > 0.0f)) {
      return op_error(c, "attribute clip " + std::to_string(*clip) + " is not positive");
    }
    g.clip = *clip;
  }
  auto acts = activations(c, cell, g.dirs);
  if (!acts) return acts.error();
  g.acts = std::move(*acts);
  return g;
}

/// out[m][n] = a[m][k] · b[n][k] (b transposed, row-major; fp32 accumulation for float as
/// ref::matmul_f32, double for double). k = 0 gives zeros.
template <typename T>
Expected<void> matmul_nt(const OpCall& c, int64_t m, int64_t n, int64_t k, const T* a, const T* b,
                         T* out) {
  if (m == 0 || n == 0) return ok();
  if (k == 0) {
    std::fill(out, out + m * n, T{0});
    return ok();
  }
  if constexpr (std::is_same_v<T, float>) {
    constexpr int64_t kMax = std::numeric_limits<uint32_t>::max();
    if (m > kMax || n > kMax || k > kMax) return op_error(c, "matmul dimensions too large");
    ref::MatmulShape s;
    s.m = static_cast<uint32_t>(m);
    s.n = static_cast<uint32_t>(n);
    s.k = static_cast<uint32_t>(k);
    s.transpose_b = true;
    auto r =
        ref::matmul_f32(s, {a, static_cast<size_t>(m * k)}, {b, static_cast<size_t>(n * k)}, {},
                        -std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::infinity(), {out, static_cast<size_t>(m * n)});
    if (!r) return op_error(c, r.error().message);  // (a cancelled run: ETIMEDOUT from run())
    return ok();
  } else {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        T acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += a[i * k + p] * b[j * k + p];
        out[i * n + j] = acc;
      }
    }
    return ok();
  }
}

template <typename T>
HostOutputs compute(const OpCall& c, const Geometry& g) {
  const int64_t seq = g.seq, batch = g.batch, input = g.input, hid = g.hidden, dirs = g.dirs;
  const int64_t gh = g.gates * hid;
  const NpyArray& x_in = *c.inputs[0];
  const NpyArray* bias = optional_input(c, 3);
  const NpyArray* lens = optional_input(c, 4);
  const NpyArray* h0 = optional_input(c, 5);
  const NpyArray* c0 = g.cell == Cell::kLstm ? optional_input(c, 6) : nullptr;
  const NpyArray* peep = g.cell == Cell::kLstm ? optional_input(c, 7) : nullptr;

  Shape y_shape = g.layout1 ? Shape{batch, seq, dirs, hid} : Shape{seq, dirs, batch, hid};
  Shape state_shape = g.layout1 ? Shape{batch, dirs, hid} : Shape{dirs, batch, hid};
  std::vector<NpyArray> outs;
  for (size_t i = 0; i < c.num_outputs; ++i) {
    auto o = alloc_output(c, x_in.dtype, i == 0 ? y_shape : state_shape);
    if (!o) return o.error();
    outs.push_back(std::move(*o));
  }
  if (batch == 0 || hid == 0) return outs;

  // X as [seq, batch, input], contiguous.
  std::optional<NpyArray> x_seq;
  if (g.layout1) {
    auto t = permute(c, x_in, {1, 0, 2});
    if (!t) return t.error();
    x_seq = std::move(*t);
  }
  const T* xv = (x_seq ? *x_seq : x_in).template view<T>().data();
  const T* wv = g.precomputed ? nullptr : c.inputs[1]->view<T>().data();
  const T* rv = c.inputs[2]->view<T>().data();
  std::vector<int64_t> len(static_cast<size_t>(batch), seq);
  if (lens) {
    for (int64_t b = 0; b < batch; ++b) len[static_cast<size_t>(b)] = int_at(*lens, b);
  }
  const int64_t steps = *std::max_element(len.begin(), len.end());
  const size_t per_dir = g.acts.size() / static_cast<size_t>(dirs);
  const auto clip = [&](T v) -> T {
    if (!g.clip) return v;
    const T lim = static_cast<T>(*g.clip);
    return v < -lim ? -lim : (v > lim ? lim : v);
  };
  const auto state_index = [&](int64_t d, int64_t b) {
    return g.layout1 ? (b * dirs + d) * hid : (d * batch + b) * hid;
  };
  const auto y_index = [&](int64_t t, int64_t d, int64_t b) {
    return g.layout1 ? ((b * seq + t) * dirs + d) * hid : ((t * dirs + d) * batch + b) * hid;
  };

  WorkPoll poll;
  std::vector<T> xproj(static_cast<size_t>(seq * batch * gh));
  std::vector<T> hproj(static_cast<size_t>(batch * gh)), rh(static_cast<size_t>(batch * hid));
  std::vector<T> h(static_cast<size_t>(batch * hid)), cst(static_cast<size_t>(batch * hid));
  std::vector<T> scratch(static_cast<size_t>(batch * hid)), scratch2(scratch.size());
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = g.reverse_only || d == 1;
    const Activation* act = &g.acts[static_cast<size_t>(d) * per_dir];
    const T* r = rv + d * gh * hid;
    // Input projections of every step, with Wb (and Rb where it adds outside the gates).
    if (g.precomputed) {
      // G's rows are [seq, batch] (layout 0; x_seq holds layout 1 permuted), dirs * gh wide.
      for (int64_t row = 0; row < seq * batch; ++row) {
        std::copy_n(xv + (row * dirs + d) * gh, gh, xproj.data() + row * gh);
      }
    } else {
      if (poll.stop(seq * batch * gh * input)) return op_error(c, "stopped");
      NPU_TRY(matmul_nt<T>(c, seq * batch, gh, input, xv, wv + d * gh * input, xproj.data()));
    }
    std::vector<T> rb_h;  // GRU with linear_before_reset: Rbh stays inside r ⊙ (...)
    if (bias) {
      const T* bv = bias->view<T>().data() + d * 2 * gh;
      // Wb, unless G already holds it, plus Rb.
      std::vector<T> sum(static_cast<size_t>(gh), T{0});
      for (int64_t j = 0; j < gh; ++j) {
        sum[static_cast<size_t>(j)] = (g.precomputed ? T{0} : bv[j]) + bv[gh + j];
      }
      if (g.cell == Cell::kGru && g.linear_before_reset) {
        rb_h.assign(bv + gh + 2 * hid, bv + gh + 3 * hid);
        for (int64_t j = 0; j < hid; ++j) {
          sum[static_cast<size_t>(2 * hid + j)] = g.precomputed ? T{0} : bv[2 * hid + j];
        }
      }
      for (int64_t row = 0; row < seq * batch; ++row) {
        T* p = xproj.data() + row * gh;
        for (int64_t j = 0; j < gh; ++j) p[j] += sum[static_cast<size_t>(j)];
      }
    }
    const T* pv = peep ? peep->view<T>().data() + d * 3 * hid : nullptr;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t j = 0; j < hid; ++j) {
        const auto k = static_cast<size_t>(b * hid + j);
        h[k] = h0 ? h0->view<T>()[static_cast<size_t>(state_index(d, b) + j)] : T{0};
        cst[k] = c0 ? c0->view<T>()[static_cast<size_t>(state_index(d, b) + j)] : T{0};
      }
    }
    for (int64_t s = 0; s < steps; ++s) {
      if (poll.stop(batch * gh * hid)) return op_error(c, "stopped");
      // Recurrent projections H R^T (GRU without linear_before_reset: the z and r gates).
      const int64_t rec_n = g.cell == Cell::kGru && !g.linear_before_reset ? 2 * hid : gh;
      NPU_TRY(matmul_nt<T>(c, batch, rec_n, hid, h.data(), r, hproj.data() + 0));
      if (rec_n != gh) {
        // hproj rows are gh wide: spread the [batch, 2H] result.
        for (int64_t b = batch; b-- > 0;) {
          std::copy_backward(hproj.data() + b * rec_n, hproj.data() + (b + 1) * rec_n,
                             hproj.data() + b * gh + rec_n);
        }
      }
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t n = len[static_cast<size_t>(b)];
        if (s >= n) continue;
        const int64_t t = reverse ? n - 1 - s : s;
        const T* xp = xproj.data() + (t * batch + b) * gh;
        T* hp = hproj.data() + b * gh;
        T* hb = h.data() + b * hid;
        T* cb = cst.data() + b * hid;
        switch (g.cell) {
          case Cell::kRnn:
            for (int64_t j = 0; j < hid; ++j) hb[j] = act[0](clip(xp[j] + hp[j]));
            break;
          case Cell::kLstm:
            for (int64_t j = 0; j < hid; ++j) {
              const T c_prev = cb[j];
              const T pi = pv ? pv[j] : T{0}, po = pv ? pv[hid + j] : T{0},
                      pf = pv ? pv[2 * hid + j] : T{0};
              const T f = act[0](clip(xp[2 * hid + j] + hp[2 * hid + j] + pf * c_prev));
              const T i = g.input_forget ? T{1} - f : act[0](clip(xp[j] + hp[j] + pi * c_prev));
              const T cand = act[1](clip(xp[3 * hid + j] + hp[3 * hid + j]));
              const T c_new = f * c_prev + i * cand;
              const T o = act[0](clip(xp[hid + j] + hp[hid + j] + po * c_new));
              cb[j] = c_new;
              hb[j] = o * act[2](clip(c_new));
            }
            break;
          case Cell::kGru:
            // z into scratch, r over its pre-activation in hproj.
            for (int64_t j = 0; j < hid; ++j) {
              scratch[static_cast<size_t>(b * hid + j)] = act[0](clip(xp[j] + hp[j]));
              hp[hid + j] = act[0](clip(xp[hid + j] + hp[hid + j]));
            }
            break;
        }
      }
      if (g.cell == Cell::kGru) {
        if (!g.linear_before_reset) {
          for (int64_t b = 0; b < batch; ++b) {
            for (int64_t j = 0; j < hid; ++j) {
              rh[static_cast<size_t>(b * hid + j)] = hproj[static_cast<size_t>(b * gh + hid + j)] *
                                                     h[static_cast<size_t>(b * hid + j)];
            }
          }
          // (r ⊙ H) Rh^T into the h-gate slot of hproj.
          NPU_TRY(matmul_nt<T>(c, batch, hid, hid, rh.data(), r + 2 * hid * hid, scratch2.data()));
          for (int64_t b = 0; b < batch; ++b) {
            std::copy_n(scratch2.data() + b * hid, hid, hproj.data() + b * gh + 2 * hid);
          }
        }
        for (int64_t b = 0; b < batch; ++b) {
          const int64_t n = len[static_cast<size_t>(b)];
          if (s >= n) continue;
          const int64_t t = reverse ? n - 1 - s : s;
          const T* xp = xproj.data() + (t * batch + b) * gh;
          const T* hp = hproj.data() + b * gh;
          T* hb = h.data() + b * hid;
          for (int64_t j = 0; j < hid; ++j) {
            const T z = scratch[static_cast<size_t>(b * hid + j)];
            const T rgate = hp[hid + j];
            const T rec = g.linear_before_reset
                              ? rgate * (hp[2 * hid + j] +
                                         (rb_h.empty() ? T{0} : rb_h[static_cast<size_t>(j)]))
                              : hp[2 * hid + j];
            const T cand = act[1](clip(xp[2 * hid + j] + rec));
            hb[j] = (T{1} - z) * cand + z * hb[j];
          }
        }
      }
      if (!outs.empty()) {
        T* y = outs[0].view<T>().data();
        for (int64_t b = 0; b < batch; ++b) {
          const int64_t n = len[static_cast<size_t>(b)];
          if (s >= n) continue;
          const int64_t t = reverse ? n - 1 - s : s;
          std::copy_n(h.data() + b * hid, hid, y + y_index(t, d, b));
        }
      }
    }
    for (int64_t b = 0; b < batch; ++b) {
      if (len[static_cast<size_t>(b)] == 0) continue;  // zero state (as ONNX Runtime)
      if (outs.size() > 1) {
        std::copy_n(h.data() + b * hid, hid, outs[1].view<T>().data() + state_index(d, b));
      }
      if (outs.size() > 2) {
        std::copy_n(cst.data() + b * hid, hid, outs[2].view<T>().data() + state_index(d, b));
      }
    }
  }
  return outs;
}

HostOutputs recurrent(const OpCall& c, Cell cell, bool precomputed) {
  auto g = geometry(c, cell, precomputed);
  if (!g) return g.error();
  // Gate values computed (an empty input_size leaves seq_length * batch unbounded by X's size).
  const int64_t gate_values =
      count({std::max<int64_t>(g->seq, 1), g->batch, g->dirs, g->gates, g->hidden});
  if (gate_values < 0) {
    return make_error(EFBIG, c.op + ": " + shape_text((*c.inputs[0]).shape) + " with hidden_size " +
                                 std::to_string(g->hidden) + " is too large");
  }
  NPU_TRY(check_work(c, gate_values, g->input + g->hidden + 1, "multiply-accumulates"));
  return dispatch(c, *c.inputs[0], [&]<typename T>(T) -> HostOutputs {
    if constexpr (std::is_floating_point_v<T>) {
      return compute<T>(c, *g);
    } else {
      return op_error(
          c, std::string("dtype ") + format::dtype_name(c.inputs[0]->dtype) + " is not supported");
    }
  });
}

}  // namespace

HostOutputs rnn(const OpCall& c) {
  return recurrent(c, Cell::kRnn, false);
}
HostOutputs gru(const OpCall& c) {
  return recurrent(c, Cell::kGru, false);
}
HostOutputs lstm(const OpCall& c) {
  return recurrent(c, Cell::kLstm, false);
}
HostOutputs rnn_recurrence(const OpCall& c) {
  return recurrent(c, Cell::kRnn, true);
}
HostOutputs gru_recurrence(const OpCall& c) {
  return recurrent(c, Cell::kGru, true);
}
HostOutputs lstm_recurrence(const OpCall& c) {
  return recurrent(c, Cell::kLstm, true);
}

}  // namespace npu::ops::detail

namespace npu::ops {

Expected<std::vector<RecurrentActivation>> recurrent_activations(std::string_view op_type,
                                                                 std::string_view attributes,
                                                                 int64_t dirs) {
  using namespace detail;
  const std::string_view cell_name =
      op_type.ends_with("Recurrence") ? op_type.substr(0, op_type.size() - 10) : op_type;
  if (cell_name != "RNN" && cell_name != "GRU" && cell_name != "LSTM") {
    return make_error(EINVAL, std::string(op_type) + ": not a recurrent layer");
  }
  if (dirs != 1 && dirs != 2) {
    return make_error(EINVAL, std::string(op_type) + ": " + std::to_string(dirs) + " directions");
  }
  const Cell cell = cell_name == "RNN" ? Cell::kRnn : cell_name == "GRU" ? Cell::kGru : Cell::kLstm;
  std::vector<RecurrentActivation> out;
  auto done = with_call(op_type, attributes, {}, [&](const OpCall& c) -> Expected<void> {
    auto acts = activations(c, cell, dirs);
    if (!acts) return acts.error();
    out.assign(acts->begin(), acts->end());
    return ok();
  });
  if (!done) return done.error();
  return out;
}

}  // namespace npu::ops
