// Device node lowering: each ONNX node (after the passes) onto npu/codegen op descriptors.
// Tensors are placed by lower.cpp; here each node picks the storage order it needs
// (channels-last for convolutions, pools and batch norm; identity for matmuls, softmax,
// reductions and reshapes; whatever the input has for elementwise ops).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <type_traits>

#include "lower/lower.h"
#include "npu/ref/scalar.h"

namespace npu::compiler::detail {

namespace {

using codegen::TensorDesc;

int64_t product(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) p *= d[i];
  return p;
}

/// Per-element values of a (small) constant, broadcast from 1 element to n when needed:
/// floats (scales, bounds, biases) or integers (zero points, int32 biases; an omitted
/// optional input gives zeros).
template <typename T>
Expected<std::vector<T>> values_n(const Graph& g, ValueId v, size_t n, const char* what) {
  if (std::is_integral_v<T> && v < 0) return std::vector<T>(n, T{0});
  const TensorData* t = g.constant(v);
  if (!t) return make_error(EINVAL, std::string(what) + " is not constant");
  std::vector<T> f;
  if constexpr (std::is_integral_v<T>) {
    f = t->to_ints();
  } else {
    f = t->to_floats();
  }
  if (f.size() == 1) f.assign(n, f[0]);
  if (f.size() != n) {
    return make_error(EINVAL, std::string(what) + " has " + std::to_string(f.size()) +
                                  " values, expected 1 or " + std::to_string(n));
  }
  return f;
}

Expected<std::vector<float>> floats_n(const Graph& g, ValueId v, size_t n, const char* what) {
  return values_n<float>(g, v, n, what);
}

Expected<std::vector<int64_t>> ints_n(const Graph& g, ValueId v, size_t n, const char* what) {
  return values_n<int64_t>(g, v, n, what);
}

template <typename T>
std::span<const std::byte> bytes_of(const std::vector<T>& v) {
  return std::as_bytes(std::span(v));
}

struct Act {
  uint8_t func;
  float alpha, beta;
};

std::optional<Act> act_of(const std::string& op, const Node* n) {
  auto a = [&](const char* key, float def) { return n ? n->attr_float(key, def) : def; };
  if (op == "Relu") return Act{NPU_ACT_RELU, 0, 0};
  if (op == "LeakyRelu") return Act{NPU_ACT_LEAKY_RELU, a("alpha", 0.01f), 0};
  if (op == "Elu") return Act{NPU_ACT_ELU, a("alpha", 1.0f), 0};
  if (op == "Sigmoid") return Act{NPU_ACT_SIGMOID, 0, 0};
  if (op == "Tanh") return Act{NPU_ACT_TANH, 0, 0};
  if (op == "HardSigmoid") return Act{NPU_ACT_HARDSIGMOID, a("alpha", 0.2f), a("beta", 0.5f)};
  if (op == "HardSwish") return Act{NPU_ACT_HARDSWISH, 0, 0};
  if (op == "Softplus") return Act{NPU_ACT_SOFTPLUS, 0, 0};
  if (op == "Erf") return Act{NPU_ACT_ERF, 0, 0};
  if (op == "Exp") return Act{NPU_ACT_EXP, 0, 0};
  if (op == "Log") return Act{NPU_ACT_LOG, 0, 0};
  if (op == "Sqrt") return Act{NPU_ACT_SQRT, 0, 0};
  if (op == "Abs") return Act{NPU_ACT_ABS, 0, 0};
  if (op == "Neg") return Act{NPU_ACT_NEG, 0, 0};
  if (op == "Reciprocal") return Act{NPU_ACT_RECIPROCAL, 0, 0};
  if (op == "Clip") return Act{NPU_ACT_CLIP, -codegen::kInf, codegen::kInf};
  return std::nullopt;
}

/// A fused activation of a float Conv/MatMul: a clamp when it is one (Relu, Clip), else an
/// ACTIVATION layer on the output in place.
template <typename Op>
Expected<void> fused_activation(const Node& n, Op& op, std::optional<Act>& post) {
  if (!n.activation) return ok();
  const FusedActivation& f = *n.activation;
  if (f.op_type == "Relu") {
    op.fclamp_min = 0.0f;
    return ok();
  }
  if (f.op_type == "Clip") {
    op.fclamp_min = f.alpha;
    op.fclamp_max = f.beta;
    return ok();
  }
  post = act_of(f.op_type, nullptr);
  if (!post) return make_error(EINVAL, "fused activation " + f.op_type + " is not supported");
  if (f.op_type == "LeakyRelu" || f.op_type == "Elu") post->alpha = f.alpha;
  if (f.op_type == "HardSigmoid") post->alpha = f.alpha, post->beta = f.beta;
  return ok();
}

Expected<void> emit_post(Lowering& L, const std::optional<Act>& post, const TensorDesc& out,
                         const std::string& name) {
  if (!post) return ok();
  codegen::ActivationOp a;
  a.name = name + "/act";
  a.func = post->func;
  a.alpha = post->alpha;
  a.beta = post->beta;
  a.input = out;
  a.output = out;
  return L.layer(a, &codegen::emit_activation);
}

/// The real scale of an integer conv/matmul output channel as ONNX computes it (float32:
/// x_scale * w_scale, then / y_scale) as a multiplier and shift.
npu_chan_qparams chan_qparams(float x_scale, float w_scale, float y_scale, int32_t bias,
                              int32_t w_zp) {
  const float s = (x_scale * w_scale) / y_scale;
  const auto m = ref::quantize_multiplier(static_cast<double>(s));
  return npu_chan_qparams{bias, m.multiplier, m.shift, w_zp};
}

/// Integer conv/matmul parameters: the input and output zero points and one
/// npu_chan_qparams per output channel. ConvInteger/MatMulInteger (`integer_only`): inputs
/// (x, w, x_zp, w_zp), int32 output. QLinearConv/QLinearMatMul: inputs (x, x_scale, x_zp, w,
/// w_scale, w_zp, y_scale, y_zp, bias) with the ONNX float32 scale x_scale * w_scale / y_scale
/// (bias: QLinearConv's B, or the compiler's QLinearMatMul extension).
struct IntParams {
  int32_t in_zp = 0, out_zp = 0;
  std::vector<npu_chan_qparams> chan;
};

Expected<IntParams> int_params(const Graph& g, const Node& n, size_t channels, bool integer_only) {
  IntParams p;
  p.chan.resize(channels);
  if (integer_only) {
    auto xzp = ints_n(g, n.input(2), 1, "input zero point");
    if (!xzp) return xzp.error();
    auto wzp = ints_n(g, n.input(3), channels, "weight zero point");
    if (!wzp) return wzp.error();
    p.in_zp = static_cast<int32_t>((*xzp)[0]);
    for (size_t c = 0; c < channels; ++c)
      p.chan[c] = {0, 1 << 30, 30, static_cast<int32_t>((*wzp)[c])};
    return p;
  }
  auto xs = floats_n(g, n.input(1), 1, "input scale");
  auto xzp = ints_n(g, n.input(2), 1, "input zero point");
  auto ws = floats_n(g, n.input(4), channels, "weight scale");
  auto wzp = ints_n(g, n.input(5), channels, "weight zero point");
  auto ys = floats_n(g, n.input(6), 1, "output scale");
  auto yzp = ints_n(g, n.input(7), 1, "output zero point");
  auto bias = ints_n(g, n.input(8), channels, "bias");
  for (auto* e : {&xs, &ws, &ys}) {
    if (!*e) return e->error();
  }
  for (auto* e : {&xzp, &wzp, &yzp, &bias}) {
    if (!*e) return e->error();
  }
  p.in_zp = static_cast<int32_t>((*xzp)[0]);
  p.out_zp = static_cast<int32_t>((*yzp)[0]);
  for (size_t c = 0; c < channels; ++c) {
    p.chan[c] = chan_qparams((*xs)[0], (*ws)[c], (*ys)[0], static_cast<int32_t>((*bias)[c]),
                             static_cast<int32_t>((*wzp)[c]));
  }
  return p;
}

/// TensorDesc of a 1-D conv/pool tensor stored [N][W][C] as [N][1][W][C].
TensorDesc as_2d(TensorDesc t) {
  if (t.dims.size() == 3) t.dims.insert(t.dims.begin() + 1, 1);
  return t;
}

struct Window {
  uint32_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  uint32_t pt = 0, pl = 0, pb = 0, pr = 0;
};

/// Kernel, strides, dilations and pads of a 1-D/2-D conv or pool (auto_pad resolved).
Expected<Window> window_of(const Node& n, const std::vector<int64_t>& in_dims,
                           std::vector<int64_t> kernel) {
  const size_t sp = in_dims.size() - 2;  // 1 or 2
  const auto strides = n.attr_ints("strides", std::vector<int64_t>(sp, 1));
  const auto dil = n.attr_ints("dilations", std::vector<int64_t>(sp, 1));
  auto pads = n.attr_ints("pads", std::vector<int64_t>(2 * sp, 0));
  if (strides.size() != sp || dil.size() != sp || pads.size() != 2 * sp || kernel.size() != sp)
    return make_error(EINVAL, "kernel/strides/dilations/pads do not match the input rank");
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < sp; ++i) {
      const int64_t in = in_dims[2 + i];
      const int64_t out = (in + strides[i] - 1) / strides[i];
      const int64_t total =
          std::max<int64_t>(0, (out - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - in);
      const int64_t small = total / 2;
      pads[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[sp + i] = total - pads[i];
    }
  } else if (auto_pad == "VALID") {
    std::fill(pads.begin(), pads.end(), 0);
  }
  Window w;
  auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
  if (sp == 1) {
    w.kw = u(kernel[0]), w.sw = u(strides[0]), w.dw = u(dil[0]);
    w.pl = u(pads[0]), w.pr = u(pads[1]);
  } else {
    w.kh = u(kernel[0]), w.kw = u(kernel[1]), w.sh = u(strides[0]), w.sw = u(strides[1]);
    w.dh = u(dil[0]), w.dw = u(dil[1]);
    w.pt = u(pads[0]), w.pl = u(pads[1]), w.pb = u(pads[2]), w.pr = u(pads[3]);
  }
  return w;
}

/// OIHW (or OIW) constant weights reordered to OHWI.
std::vector<std::byte> to_ohwi(const TensorData& w) {
  const int64_t O = w.dims[0], I = w.dims[1];
  const int64_t HW = product(w.dims, 2, w.dims.size());
  const size_t es = dtype_size(w.dtype);
  std::vector<std::byte> out(w.bytes.size());
  for (int64_t o = 0; o < O; ++o)
    for (int64_t i = 0; i < I; ++i)
      for (int64_t p = 0; p < HW; ++p) {
        std::memcpy(out.data() + ((o * HW + p) * I + i) * es,
                    w.bytes.data() + ((o * I + i) * HW + p) * es, es);
      }
  return out;
}

Expected<void> lower_conv(Lowering& L, const Node& n) {
  const Graph& g = L.g;
  const bool ql = n.op_type == "QLinearConv", ci = n.op_type == "ConvInteger";
  const ValueId x = n.input(0), w = n.input(ql ? 3 : 1), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  const TensorData* wt = g.constant(w);
  if (!wt || wt->dims.size() != xd->size()) return make_error(EINVAL, "weights are not constant");
  const size_t rank = xd->size();
  auto win = window_of(n, *xd, std::vector<int64_t>(wt->dims.begin() + 2, wt->dims.end()));
  if (!win) return win.error();
  const auto OC = static_cast<size_t>(wt->dims[0]);

  codegen::Conv2dOp op;
  op.name = n.name;
  auto in = L.in_perm(x, channels_last_perm(rank));
  if (!in) return in.error();
  op.input = as_2d(*in);
  auto out_s = L.define(y, channels_last_perm(rank));
  if (!out_s) return out_s.error();
  auto out = L.desc(y, *out_s);
  if (!out) return out.error();
  op.output = as_2d(*out);
  auto wdt = npu_dtype(wt->dtype, "weights");
  if (!wdt) return wdt.error();
  const auto kh = win->kh, kw = win->kw;
  op.weights =
      TensorDesc::make(L.add_constant(to_ohwi(*wt)), *wdt,
                       {static_cast<uint32_t>(OC), kh, kw, static_cast<uint32_t>(wt->dims[1])});
  op.stride_h = win->sh, op.stride_w = win->sw, op.dil_h = win->dh, op.dil_w = win->dw;
  op.pad_top = win->pt, op.pad_left = win->pl, op.pad_bottom = win->pb, op.pad_right = win->pr;
  op.groups = static_cast<uint32_t>(n.attr_int("group", 1));
  std::optional<Act> post;
  if (n.op_type == "Conv") {
    if (n.input(2) >= 0) {
      auto b = floats_n(g, n.input(2), OC, "bias");
      if (!b) return b.error();
      op.chan_va = L.add_constant(bytes_of(*b));
    }
    NPU_TRY(fused_activation(n, op, post));
  } else {
    if (n.activation) return make_error(EINVAL, "fused activation on an integer conv");
    auto q = int_params(g, n, OC, ci);
    if (!q) return q.error();
    op.in_zp = q->in_zp;
    op.out_zp = q->out_zp;
    op.chan_va = L.add_constant(bytes_of(q->chan));
  }
  NPU_TRY(L.layer(op, &codegen::emit_conv2d));
  return emit_post(L, post, *out, n.name);
}

Expected<void> lower_matmul(Lowering& L, const Node& n) {
  const Graph& g = L.g;
  const bool ql = n.op_type == "QLinearMatMul", mi = n.op_type == "MatMulInteger";
  const bool gemm = n.op_type == "Gemm";
  const ValueId a = n.input(0), b = n.input(ql ? 3 : 1), y = n.outputs[0];
  auto ad = L.dims(a), bd = L.dims(b), yd = L.dims(y);
  if (!ad) return ad.error();
  if (!bd) return bd.error();
  if (!yd) return yd.error();
  const bool tb = gemm && n.attr_int("transB", 0) != 0;
  const auto M = static_cast<uint32_t>((*ad)[ad->size() - 2]);
  const auto K = static_cast<uint32_t>((*ad)[ad->size() - 1]);
  const auto N = static_cast<uint32_t>(tb ? (*bd)[bd->size() - 2] : (*bd)[bd->size() - 1]);
  const auto a_batch = static_cast<uint32_t>(product(*ad, 0, ad->size() - 2));
  const auto b_batch = static_cast<uint32_t>(product(*bd, 0, bd->size() - 2));
  const uint32_t batch = std::max(a_batch, b_batch);

  codegen::MatMulOp op;
  op.name = n.name;
  op.transpose_b = tb;
  auto as = L.in_perm(a, identity_perm(ad->size()));
  if (!as) return as.error();
  op.a = *as;
  op.a.dims = {M, K};
  if (batch > 1) {
    op.a.dims.insert(op.a.dims.begin(), batch);
    if (a_batch == 1) op.a.strides = {0, uint64_t(K) * op.a.elem_size(), op.a.elem_size()};
  }
  auto bs = L.in_perm(b, identity_perm(bd->size()));
  if (!bs) return bs.error();
  op.b = *bs;
  op.b.dims = tb ? std::vector<uint32_t>{N, K} : std::vector<uint32_t>{K, N};
  if (b_batch > 1) op.b.dims.insert(op.b.dims.begin(), b_batch);
  auto out = L.define_desc(y, identity_perm(yd->size()));
  if (!out) return out.error();
  op.output = *out;
  op.output.dims = {M, N};
  if (batch > 1) op.output.dims.insert(op.output.dims.begin(), batch);

  std::optional<Act> post;
  std::optional<ValueId> add_after;  // a Gemm C that is not a per-column bias
  if (!ql && !mi) {
    const ValueId c = gemm ? n.input(2) : (n.inputs.size() > 2 ? n.input(2) : kNoValue);
    if (c >= 0) {
      const TensorData* ct = g.constant(c);
      if (!ct) return make_error(EINVAL, "bias is not constant");
      const bool per_column = ct->dims.size() < 2 || ct->dims[ct->dims.size() - 2] == 1;
      if (per_column) {
        auto bias = floats_n(g, c, N, "bias");
        if (!bias) return bias.error();
        op.chan_va = L.add_constant(bytes_of(*bias));
      } else {
        add_after = c;
      }
    }
    NPU_TRY(fused_activation(n, op, post));
    if (add_after && (op.fclamp_min != -codegen::kInf || op.fclamp_max != codegen::kInf))
      return make_error(EINVAL, "a clamp after a full-matrix C");
  } else {
    auto q = int_params(g, n, N, mi);
    if (!q) return q.error();
    op.a_zp = q->in_zp;
    op.out_zp = q->out_zp;
    op.chan_va = L.add_constant(bytes_of(q->chan));
  }
  NPU_TRY(L.layer(op, &codegen::emit_matmul));
  if (add_after) {
    codegen::EltwiseOp e;
    e.name = n.name + "/c";
    e.op = NPU_ELTWISE_ADD;
    e.a = *out;
    e.output = *out;
    auto cv = L.logical_view(*add_after);
    if (!cv) return cv.error();
    e.b = *cv;
    NPU_TRY(L.layer(e, &codegen::emit_eltwise));
  }
  return emit_post(L, post, *out, n.name);
}

/// v's logical view right-aligned to `rank` dims and permuted into storage order `perm`.
Expected<TensorDesc> broadcast_view(Lowering& L, ValueId v, size_t rank, const Perm& perm,
                                    std::optional<DType> as) {
  TensorDesc t;
  if (L.g.value(v).is_constant()) {
    auto s = L.constant_storage(v, as);
    if (!s) return s.error();
    const TensorData* c = L.g.constant(v);
    auto dt = npu_dtype(as ? *as : c->dtype, "'" + L.g.value(v).name + "'");
    if (!dt) return dt.error();
    std::vector<uint32_t> d;
    for (int64_t x : c->dims) d.push_back(static_cast<uint32_t>(x));
    t = TensorDesc::make(s->va, *dt, d);
  } else {
    auto lv = L.logical_view(v);
    if (!lv) return lv.error();
    t = *lv;
    if (L.g.value(v).shape && L.g.value(v).shape->empty()) t.dims.clear(), t.strides.clear();
  }
  // Explicit strides (computed before they are set: stride() reads them once present).
  std::vector<uint64_t> strides(t.dims.size());
  for (size_t i = 0; i < t.dims.size(); ++i) strides[i] = t.stride(i);
  t.strides = std::move(strides);
  while (t.dims.size() < rank) {
    t.dims.insert(t.dims.begin(), 1);
    t.strides.insert(t.strides.begin(), 0);
  }
  TensorDesc p = t;
  for (size_t j = 0; j < perm.size(); ++j) {
    p.dims[j] = t.dims[static_cast<size_t>(perm[j])];
    p.strides[j] = t.strides[static_cast<size_t>(perm[j])];
  }
  return p;
}

Expected<void> lower_eltwise(Lowering& L, const Node& n) {
  static const std::map<std::string, uint8_t> kOps = {
      {"Add", NPU_ELTWISE_ADD}, {"Sub", NPU_ELTWISE_SUB},    {"Mul", NPU_ELTWISE_MUL},
      {"Div", NPU_ELTWISE_DIV}, {"Max", NPU_ELTWISE_MAX},    {"Min", NPU_ELTWISE_MIN},
      {"Pow", NPU_ELTWISE_POW}, {"PRelu", NPU_ELTWISE_PRELU}};
  const ValueId y = n.outputs[0];
  auto yd = L.dims(y);
  if (!yd) return yd.error();
  const size_t rank = yd->size();
  Perm perm = identity_perm(rank);
  for (ValueId v : n.inputs) {
    if (v < 0 || L.g.value(v).is_constant()) continue;
    auto s = L.get(v);
    if (!s) return s.error();
    if (s->perm.size() == rank && s->perm != perm) {
      perm = s->perm;
      break;
    }
  }
  codegen::EltwiseOp op;
  op.name = n.name;
  op.op = kOps.at(n.op_type);
  const DType t = L.g.value(y).dtype;
  auto a = broadcast_view(L, n.input(0), rank, perm, t);
  if (!a) return a.error();
  auto b = broadcast_view(L, n.input(1), rank, perm, t);
  if (!b) return b.error();
  auto out = L.define_desc(y, perm);
  if (!out) return out.error();
  op.a = *a, op.b = *b, op.output = *out;
  if (rank == 0) op.a.dims = op.b.dims = op.output.dims = {1};
  if (rank == 0) op.a.strides = op.b.strides = {};
  return L.layer(op, &codegen::emit_eltwise);
}

Expected<void> lower_activation(Lowering& L, const Node& n) {
  auto act = act_of(n.op_type, &n);
  if (!act) return make_error(EINVAL, "no device activation");
  if (n.op_type == "Clip") {
    if (n.input(1) >= 0) {
      auto lo = floats_n(L.g, n.input(1), 1, "min");
      if (!lo) return lo.error();
      act->alpha = (*lo)[0];
    }
    if (n.input(2) >= 0) {
      auto hi = floats_n(L.g, n.input(2), 1, "max");
      if (!hi) return hi.error();
      act->beta = (*hi)[0];
    }
  }
  auto s = L.get(n.input(0));
  if (!s) return s.error();
  codegen::ActivationOp op;
  op.name = n.name;
  op.func = act->func, op.alpha = act->alpha, op.beta = act->beta;
  auto in = L.physical(n.input(0));
  if (!in) return in.error();
  auto out = L.define_desc(n.outputs[0], s->perm);
  if (!out) return out.error();
  op.input = *in, op.output = *out;
  return L.layer(op, &codegen::emit_activation);
}

Expected<void> lower_pool(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x), yd = L.dims(y);
  if (!xd) return xd.error();
  if (!yd) return yd.error();
  const size_t rank = xd->size();
  codegen::PoolOp op;
  op.name = n.name;
  const bool global = n.op_type.rfind("Global", 0) == 0;
  op.kind = n.op_type.find("Max") != std::string::npos ? NPU_POOL_MAX : NPU_POOL_AVG;
  op.global = global;
  if (!global) {
    auto win = window_of(n, *xd, n.attr_ints("kernel_shape"));
    if (!win) return win.error();
    if (win->dh != 1 || win->dw != 1) return make_error(EINVAL, "dilated pooling");
    op.k_h = win->kh, op.k_w = win->kw, op.stride_h = win->sh, op.stride_w = win->sw;
    op.pad_top = win->pt, op.pad_left = win->pl, op.pad_bottom = win->pb, op.pad_right = win->pr;
    op.count_pad = n.attr_int("count_include_pad", 0) != 0;
    // ceil_mode: extend the bottom/right padding to reach the inferred output size.
    const int64_t ih = rank == 4 ? (*xd)[2] : 1, iw = (*xd)[rank - 1];
    const int64_t oh = rank == 4 ? (*yd)[2] : 1, ow = (*yd)[rank - 1];
    const int64_t need_b = (oh - 1) * op.stride_h + op.k_h - ih - op.pad_top;
    const int64_t need_r = (ow - 1) * op.stride_w + op.k_w - iw - op.pad_left;
    if (need_b > op.pad_bottom || need_r > op.pad_right) {
      if (op.kind == NPU_POOL_AVG && op.count_pad)
        return make_error(EINVAL, "ceil_mode with count_include_pad");
      op.pad_bottom = static_cast<uint32_t>(std::max<int64_t>(need_b, op.pad_bottom));
      op.pad_right = static_cast<uint32_t>(std::max<int64_t>(need_r, op.pad_right));
    }
  }
  auto in = L.in_perm(x, channels_last_perm(rank));
  if (!in) return in.error();
  op.input = as_2d(*in);
  auto out = L.define_desc(y, channels_last_perm(rank));
  if (!out) return out.error();
  op.output = as_2d(*out);
  return L.layer(op, &codegen::emit_pool);
}

Expected<void> lower_softmax(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  const auto rank = static_cast<int64_t>(xd->size());
  int64_t axis = n.attr_int("axis", n.opset < 13 ? 1 : -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) return make_error(EINVAL, "bad axis");
  if (n.opset >= 13 && axis != rank - 1) return make_error(EINVAL, "softmax over a non-last axis");
  const auto rows = static_cast<uint32_t>(product(*xd, 0, static_cast<size_t>(axis)));
  const auto len = static_cast<uint32_t>(product(*xd, static_cast<size_t>(axis), xd->size()));
  codegen::SoftmaxOp op;
  op.name = n.name;
  op.log = n.op_type == "LogSoftmax";
  auto in = L.in_perm(x, identity_perm(xd->size()));
  if (!in) return in.error();
  auto out = L.define_desc(y, identity_perm(xd->size()));
  if (!out) return out.error();
  op.input = *in, op.output = *out;
  op.input.dims = op.output.dims = {rows, len};
  return L.layer(op, &codegen::emit_softmax);
}

Expected<void> lower_reduce(Lowering& L, const Node& n) {
  static const std::map<std::string, uint8_t> kKinds = {{"ReduceSum", NPU_REDUCE_SUM},
                                                        {"ReduceMean", NPU_REDUCE_MEAN},
                                                        {"ReduceMax", NPU_REDUCE_MAX},
                                                        {"ReduceMin", NPU_REDUCE_MIN}};
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  const auto rank = static_cast<int64_t>(xd->size());
  std::vector<int64_t> axes;
  if (n.input(1) >= 0) {
    const TensorData* t = L.g.constant(n.input(1));
    if (!t) return make_error(EINVAL, "axes are not constant");
    axes = t->to_ints();
  } else {
    axes = n.attr_ints("axes");
  }
  auto in_s = L.storage_in_perm(x, identity_perm(xd->size()));
  if (!in_s) return in_s.error();
  if (axes.empty()) {
    if (n.attr_int("noop_with_empty_axes", 0) != 0) {
      L.alias(y, *in_s, in_s->perm);
      return ok();
    }
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  codegen::ReduceOp op;
  op.name = n.name;
  op.kind = kKinds.at(n.op_type);
  auto in = L.desc(x, *in_s);
  if (!in) return in.error();
  auto yd = L.dims(y);
  if (!yd) return yd.error();
  auto out = L.define_desc(y, identity_perm(yd->size()));
  if (!out) return out.error();
  op.input = *in, op.output = *out;
  if (rank == 0) {
    op.input.dims = {1};
    axes = {0};
  }
  op.axis_begin = static_cast<uint32_t>(axes.front());
  op.axis_end = static_cast<uint32_t>(axes.back() + 1);
  return L.layer(op, &codegen::emit_reduce);
}

Expected<void> lower_batchnorm(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  if (xd->size() < 2) return make_error(EINVAL, "BatchNormalization of rank < 2");
  const auto C = static_cast<size_t>((*xd)[1]);
  auto gamma = floats_n(L.g, n.input(1), C, "scale");
  auto beta = floats_n(L.g, n.input(2), C, "B");
  auto mean = floats_n(L.g, n.input(3), C, "mean");
  auto var = floats_n(L.g, n.input(4), C, "var");
  for (auto* e : {&gamma, &beta, &mean, &var}) {
    if (!*e) return e->error();
  }
  const float eps = n.attr_float("epsilon", 1e-5f);
  std::vector<float> scale(C), shift(C);
  for (size_t c = 0; c < C; ++c) {
    scale[c] = (*gamma)[c] / std::sqrt((*var)[c] + eps);
    shift[c] = (*beta)[c] - (*mean)[c] * scale[c];
  }
  const Perm perm = channels_last_perm(xd->size());
  codegen::ScaleShiftOp op;
  op.name = n.name;
  op.scale_va = L.add_constant(bytes_of(scale));
  op.shift_va = L.add_constant(bytes_of(shift));
  auto in = L.in_perm(x, perm);
  if (!in) return in.error();
  auto out = L.define_desc(y, perm);
  if (!out) return out.error();
  op.input = *in, op.output = *out;
  return L.layer(op, &codegen::emit_scale_shift);
}

Expected<void> lower_quant(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  auto s = L.get(x);
  if (!s) return s.error();
  codegen::QuantizeOp op;
  op.name = n.name;
  op.dequantize = n.op_type == "DequantizeLinear";
  const TensorData* st = L.g.constant(n.input(1));
  if (!st) return make_error(EINVAL, "scale is not constant");
  const size_t count = static_cast<size_t>(st->element_count());
  auto in = L.physical(x);
  if (!in) return in.error();
  auto out = L.define_desc(y, s->perm);
  if (!out) return out.error();
  op.input = *in, op.output = *out;
  if (count == 1) {
    auto sc = floats_n(L.g, n.input(1), 1, "scale");
    auto zp = ints_n(L.g, n.input(2), 1, "zero_point");
    if (!sc) return sc.error();
    if (!zp) return zp.error();
    op.scale = (*sc)[0];
    op.zp = static_cast<int32_t>((*zp)[0]);
  } else {
    int64_t axis = n.attr_int("axis", 1);
    const auto rank = static_cast<int64_t>(xd->size());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return make_error(EINVAL, "bad axis");
    const auto C = static_cast<size_t>((*xd)[static_cast<size_t>(axis)]);
    auto sc = floats_n(L.g, n.input(1), C, "scale");
    auto zp = ints_n(L.g, n.input(2), C, "zero_point");
    if (!sc) return sc.error();
    if (!zp) return zp.error();
    std::vector<npu_qparam> params(C);
    for (size_t c = 0; c < C; ++c) params[c] = {(*sc)[c], static_cast<int32_t>((*zp)[c])};
    op.params_va = L.add_constant(bytes_of(params));
    op.channels = static_cast<uint32_t>(C);
    // Inner extent: the stored dims after the axis's stored position.
    size_t j = 0;
    while (s->perm[j] != axis) ++j;
    op.inner = 1;
    for (size_t k = j + 1; k < in->dims.size(); ++k) op.inner *= in->dims[k];
  }
  return L.layer(op, &codegen::emit_quantize);
}

/// Reshape-like ops: the output shares the input's bytes in identity order.
Expected<void> lower_view(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  auto yd = L.dims(y);
  if (!yd) return yd.error();
  auto s = L.storage_in_perm(x, identity_perm(xd->size()));
  if (!s) return s.error();
  L.alias(y, *s, identity_perm(yd->size()));
  return ok();
}

/// Transpose: the output is the input's bytes read in another order (no data movement).
Expected<void> lower_transpose(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  const size_t rank = xd->size();
  std::vector<int64_t> p = n.attr_ints("perm");
  if (p.empty()) {
    for (size_t i = 0; i < rank; ++i) p.push_back(static_cast<int64_t>(rank - 1 - i));
  }
  if (p.size() != rank) return make_error(EINVAL, "perm does not match the rank");
  auto s = L.get(x);
  if (!s) return s.error();
  // Output logical dim i is input logical dim p[i]; stored dim j holds input dim P[j], which
  // is output dim pinv[P[j]].
  Perm pinv(rank);
  for (size_t i = 0; i < rank; ++i) pinv[static_cast<size_t>(p[i])] = static_cast<int>(i);
  Perm out(rank);
  for (size_t j = 0; j < rank; ++j) out[j] = pinv[static_cast<size_t>(s->perm[j])];
  L.alias(y, *s, out);
  return ok();
}

/// Concat: each input is copied into its slice of the output (in the inputs' common order).
Expected<void> lower_concat(Lowering& L, const Node& n) {
  const ValueId y = n.outputs[0];
  auto yd = L.dims(y);
  if (!yd) return yd.error();
  const size_t rank = yd->size();
  int64_t axis = n.attr_int("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis < 0 || axis >= static_cast<int64_t>(rank)) return make_error(EINVAL, "bad axis");
  std::optional<Perm> common;
  for (ValueId v : n.inputs) {
    if (v < 0 || L.g.value(v).is_constant()) continue;
    auto s = L.get(v);
    if (!s) return s.error();
    if (!common) {
      common = s->perm;
    } else if (*common != s->perm) {
      common = identity_perm(rank);
      break;
    }
  }
  const Perm perm = common && common->size() == rank ? *common : identity_perm(rank);
  auto out = L.define_desc(y, perm);
  if (!out) return out.error();
  std::vector<uint64_t> strides(rank);
  for (size_t j = 0; j < rank; ++j) strides[j] = out->stride(j);
  out->strides = std::move(strides);
  size_t j_axis = 0;
  while (perm[j_axis] != axis) ++j_axis;
  uint64_t offset = 0;
  for (ValueId v : n.inputs) {
    if (v < 0) continue;
    auto src = broadcast_view(L, v, rank, perm, L.g.value(y).dtype);
    if (!src) return src.error();
    if (src->elements() == 0) continue;
    codegen::CopyOp op;
    op.name = n.name + "/" + L.g.value(v).name;
    op.input = *src;
    op.output = *out;
    op.output.va += offset * out->strides[j_axis];
    op.output.dims[j_axis] = src->dims[j_axis];
    offset += src->dims[j_axis];
    NPU_TRY(L.layer(op, &codegen::emit_copy));
  }
  return ok();
}

/// Constant-mode Pad in the input's storage order.
Expected<void> lower_pad(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  const size_t rank = xd->size();
  if (n.attr_string("mode", "constant") != "constant")
    return make_error(EINVAL, "non-constant mode");
  if (n.input(3) >= 0) return make_error(EINVAL, "Pad axes input");
  auto pads = ints_n(L.g, n.input(1), 2 * rank, "pads");
  if (!pads) return pads.error();
  auto s = L.get(x);
  if (!s) return s.error();
  codegen::PadOp op;
  op.name = n.name;
  auto in = L.physical(x);
  if (!in) return in.error();
  auto out = L.define_desc(y, s->perm);
  if (!out) return out.error();
  op.input = *in, op.output = *out;
  for (size_t j = 0; j < rank; ++j) {
    const int64_t p = (*pads)[static_cast<size_t>(s->perm[j])];
    if (p < 0) return make_error(EINVAL, "negative pads");
    op.pad_before.push_back(static_cast<uint32_t>(p));
  }
  if (rank == 0) op.pad_before = {0};
  const DType t = L.g.value(x).dtype;
  if (n.input(2) >= 0) {
    if (t == DType::kFloat32) {
      auto f = floats_n(L.g, n.input(2), 1, "constant_value");
      if (!f) return f.error();
      std::memcpy(&op.fill_bits, f->data(), 4);
    } else {
      auto v = ints_n(L.g, n.input(2), 1, "constant_value");
      if (!v) return v.error();
      op.fill_bits = static_cast<uint32_t>(static_cast<int32_t>((*v)[0]));
    }
  }
  return L.layer(op, &codegen::emit_pad);
}

}  // namespace

Expected<void> Lowering::lower_node(const Node& n) {
  const std::string& op = n.op_type;
  if (!n.domain.empty()) return make_error(EINVAL, "operator of domain '" + n.domain + "'");
  if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") return lower_conv(*this, n);
  if (op == "MatMul" || op == "Gemm" || op == "MatMulInteger" || op == "QLinearMatMul")
    return lower_matmul(*this, n);
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min" ||
      op == "Pow" || op == "PRelu")
    return lower_eltwise(*this, n);
  if (act_of(op, &n)) return lower_activation(*this, n);
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool")
    return lower_pool(*this, n);
  if (op == "Softmax" || op == "LogSoftmax") return lower_softmax(*this, n);
  if (op.rfind("Reduce", 0) == 0) return lower_reduce(*this, n);
  if (op == "BatchNormalization") return lower_batchnorm(*this, n);
  if (op == "QuantizeLinear" || op == "DequantizeLinear") return lower_quant(*this, n);
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
      op == "Identity" || op == "Dropout")
    return lower_view(*this, n);
  if (op == "Transpose") return lower_transpose(*this, n);
  if (op == "Concat") return lower_concat(*this, n);
  if (op == "Pad") return lower_pad(*this, n);
  return make_error(EINVAL, "no device lowering for " + op);
}

}  // namespace npu::compiler::detail
