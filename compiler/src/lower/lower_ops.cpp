// The shared helpers of the per-op lowerings and the dispatch of a device node to its op
// family's entry (see lower_ops.h).
#include "lower/lower_ops.h"
#include "npu/compiler/op_set.h"
#include "npu/ops/spatial.h"

#include <algorithm>
#include <type_traits>

#include "npu/ref/scalar.h"

namespace npu::compiler::detail {

using codegen::TensorDesc;

int64_t dim_product(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) p *= d[i];
  return p;
}

namespace {

/// floats_n/ints_n (lower_ops.h) for element type T.
template <typename T>
Expected<std::vector<T>> values_n(const Graph& g, ValueId v, size_t n, const char* what) {
  if (std::is_integral_v<T> && v < 0) return std::vector<T>(n, T{0});
  const NpyArray* t = g.constant(v);
  if (!t) return make_error(EINVAL, std::string(what) + " is not constant");
  std::vector<T> f;
  if constexpr (std::is_integral_v<T>) {
    f = format::to_ints(*t);
  } else {
    f = format::to_floats(*t);
  }
  if (f.size() == 1) f.assign(n, f[0]);
  if (f.size() != n) {
    return make_error(EINVAL, std::string(what) + " has " + std::to_string(f.size()) +
                                  " values, expected 1 or " + std::to_string(n));
  }
  return f;
}

}  // namespace

Expected<std::vector<float>> floats_n(const Graph& g, ValueId v, size_t n, const char* what) {
  return values_n<float>(g, v, n, what);
}

Expected<std::vector<int64_t>> ints_n(const Graph& g, ValueId v, size_t n, const char* what) {
  return values_n<int64_t>(g, v, n, what);
}

uint8_t device_code(const Node& n) {
  const OpInfo* op = find_op(n.op_type);
  return op ? op->schema->code : 0;
}

std::optional<Act> act_of(const std::string& op_type, const Node* n) {
  const OpInfo* op = find_op(op_type);
  if (!op || op->op_class != OpClass::kActivation) return std::nullopt;
  const ops::OpSchema& s = *op->schema;
  if (s.code == NPU_ACT_CLIP) return Act{NPU_ACT_CLIP, -codegen::kInf, codegen::kInf};
  // alpha/beta where the schema has them, their defaults from the schema.
  auto param = [&](const char* key) {
    if (!s.attribute(key)) return 0.0f;
    const auto def = static_cast<float>(s.number_default(key));
    return n ? n->attr_float(key, def) : def;
  };
  return Act{s.code, param("alpha"), param("beta")};
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

namespace {

/// The real scale of an integer conv/matmul output channel as ONNX computes it (float32:
/// x_scale * w_scale, then / y_scale) as a multiplier and shift.
npu_chan_qparams chan_qparams(float x_scale, float w_scale, float y_scale, int32_t bias,
                              int32_t w_zp) {
  const float s = (x_scale * w_scale) / y_scale;
  const auto m = ref::quantize_multiplier(static_cast<double>(s));
  return npu_chan_qparams{bias, m.multiplier, m.shift, w_zp};
}

}  // namespace

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

TensorDesc as_2d(TensorDesc t) {
  if (t.dims.size() == 3) t.dims.insert(t.dims.begin() + 1, 1);
  return t;
}

Expected<Window> window_of(const Node& n, const std::vector<int64_t>& in_dims,
                           std::vector<int64_t> kernel) {
  const size_t sp = in_dims.size() - 2;  // 1 or 2
  const auto strides = n.attr_ints("strides", std::vector<int64_t>(sp, 1));
  const auto dil = n.attr_ints("dilations", std::vector<int64_t>(sp, 1));
  auto pads = n.attr_ints("pads", std::vector<int64_t>(2 * sp, 0));
  if (strides.size() != sp || dil.size() != sp || pads.size() != 2 * sp || kernel.size() != sp)
    return make_error(EINVAL, "kernel/strides/dilations/pads do not match the input rank");
  const auto mode = ops::parse_auto_pad(n.attr_string("auto_pad", "NOTSET"));
  if (!mode) return make_error(EINVAL, "auto_pad '" + n.attr_string("auto_pad") + "'");
  for (size_t i = 0; i < sp; ++i) {  // the operator library's rule (npu/ops/spatial.h)
    const ops::PadResult r = ops::resolve_pads(*mode, in_dims[2 + i], kernel[i], strides[i], dil[i],
                                               pads[i], pads[sp + i], false);
    if (r.overflow) return make_error(EOVERFLOW, "kernel/strides/dilations/pads overflow int64");
    pads[i] = r.begin;
    pads[sp + i] = r.end;
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

Expected<TensorDesc> broadcast_view(Lowering& L, ValueId v, size_t rank, const Perm& perm,
                                    std::optional<DType> as) {
  TensorDesc t;
  if (L.g.value(v).is_constant()) {
    auto s = L.constant_storage(v, as);
    if (!s) return s.error();
    const NpyArray* c = L.g.constant(v);
    auto dt = npu_dtype(as ? *as : c->dtype, "'" + L.g.value(v).name + "'");
    if (!dt) return dt.error();
    std::vector<uint32_t> d;
    for (int64_t x : c->shape) d.push_back(static_cast<uint32_t>(x));
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

// The op type -> family entry map (the operator registry's lowering hook to be).
Expected<void> lower_host(Lowering&, const Node& n) {
  return make_error(EINVAL, "no device lowering for " + n.op_type);
}

namespace {

/// The lowering of each device family (OpClass order, npu/compiler/device_families.def); the
/// operator registry's Device column maps each operator to its family.
constexpr LowerFn kFamilyLowerings[kNumOpClasses] = {
#define NPU_FAMILY(Class, Name, Support, Lower, Int32) Lower,
#include "npu/compiler/device_families.def"
#undef NPU_FAMILY
};

}  // namespace

Expected<void> Lowering::lower_node(const Node& n) {
  if (!n.domain.empty()) return make_error(EINVAL, "operator of domain '" + n.domain + "'");
  const OpInfo* op = find_op(n.op_type);
  if (!op) return make_error(EINVAL, "no device lowering for " + n.op_type);
  return kFamilyLowerings[static_cast<size_t>(op->op_class)](*this, n);
}

}  // namespace npu::compiler::detail
