// Device support rules (one function per operator class) and the device/host partition.
// The limits come from the ISA's command fields: u8 strides/dilations/padding in CONV2D and
// POOL, 4-D views in ELTWISE/TRANSPOSE, fp32-only transcendental functions, int8 arithmetic
// that saturates where ONNX wraps.
#include "npu/compiler/support.h"

#include <algorithm>
#include <set>

#include "npu/compiler/op_set.h"
#include "npu/format/shape.h"
#include "passes/conv_transpose_to_conv.h"
#include "passes/instance_norm_to_layernorm.h"
#include "passes/resize_to_matmul.h"
#include "passes/unroll_recurrence.h"

namespace npu::compiler {

namespace {

constexpr int64_t kMaxU8 = 255;

bool is_quant_type(std::optional<DType> t) {
  return t == DType::kInt8 || t == DType::kUint8;
}

/// The float types the device computes on: float32, and float16 (stored as fp16, converted
/// to fp32 by the DMA for the vector engine, fp16 on the matrix engine's half array).
bool is_device_float(std::optional<DType> t) {
  return t == DType::kFloat32 || t == DType::kFloat16;
}

std::string name_of(const Graph& g, ValueId v) {
  return "'" + g.value(v).name + "'";
}

// Common checks: static shapes and device element types on every non-constant operand.
std::string check_operands(const Graph& g, const Node& n, bool allow_int32) {
  auto check = [&](ValueId v) -> std::string {
    if (v < 0) return {};
    const Value& val = g.value(v);
    if (!val.static_dims()) {
      std::string why = "dynamic shape " + (val.shape ? shape_to_string(*val.shape) : "[*]");
      return why + " of " + name_of(g, v);
    }
    // Checked before any lowering: tiling a tensor the device could never hold would emit
    // commands until memory runs out (docs/reliability.md).
    const int64_t count = format::element_count(*val.static_dims());
    const uint64_t es = val.dtype ? format::dtype_size(*val.dtype) : 1;
    if (count < 0 ||
        static_cast<uint64_t>(count) > kMaxDeviceTensorBytes / std::max<uint64_t>(es, 1)) {
      return "tensor " + name_of(g, v) + " " + shape_to_string(*val.shape) +
             " is larger than a device tensor may be (" + std::to_string(kMaxDeviceTensorBytes) +
             " bytes)";
    }
    if (val.is_constant()) return {};
    const std::optional<DType> t = val.dtype;
    if (is_device_float(t) || is_quant_type(t) || (allow_int32 && t == DType::kInt32)) return {};
    return std::string(dtype_name(t)) + " tensor " + name_of(g, v) +
           " is not supported on the device";
  };
  for (ValueId v : n.inputs) {
    if (auto r = check(v); !r.empty()) return r;
  }
  for (ValueId v : n.outputs) {
    if (auto r = check(v); !r.empty()) return r;
  }
  return {};
}

size_t rank_of(const Graph& g, ValueId v) {
  return v >= 0 && g.value(v).shape ? g.value(v).shape->size() : 0;
}

bool fits_u8(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x >= 0 && x <= kMaxU8; });
}

std::string conv_reason(const Graph& g, const Node& n) {
  const bool qlinear = n.op_type == "QLinearConv";
  const ValueId x = n.input(0);
  const ValueId w = n.input(qlinear ? 3 : 1);
  const size_t rank = rank_of(g, x);
  if (rank != 3 && rank != 4) return "only 1-D and 2-D convolutions run on the device";
  if (!g.constant(w)) return "weights are not constant";
  if (n.op_type == "Conv" && !is_device_float(g.value(x).dtype))
    return "Conv input is not float32 or float16";
  if (n.op_type == "Conv" && n.input(2) >= 0 && !g.constant(n.input(2)))
    return "bias is not constant";
  if (n.op_type != "Conv" && !is_quant_type(g.value(x).dtype)) return "input is not int8/uint8";
  if (qlinear) {
    for (size_t i : {1, 2, 4, 5, 6, 7, 8}) {
      if (n.input(i) >= 0 && !g.constant(n.input(i)))
        return "quantization parameters are not constant";
    }
  }
  if (n.op_type == "ConvInteger" && n.input(3) >= 0 && !g.constant(n.input(3))) {
    return "weight zero point is not constant";
  }
  if (!fits_u8(n.attr_ints("strides"))) return "stride above 255";
  if (!fits_u8(n.attr_ints("dilations"))) return "dilation above 255";
  if (!fits_u8(n.attr_ints("pads"))) return "padding above 255";
  return {};
}

std::string matmul_reason(const Graph& g, const Node& n) {
  const bool qlinear = n.op_type == "QLinearMatMul";
  const ValueId a = n.input(0);
  const ValueId b = n.input(qlinear ? 3 : 1);
  const size_t ra = rank_of(g, a), rb = rank_of(g, b);
  if (ra < 2 || rb < 2) return "1-D operand (matrix-vector product)";
  if (ra > 4 || rb > 4) return "rank above 4";
  if (n.op_type == "Gemm") {
    if (n.attr_int("transA", 0) != 0) return "transA=1 is not supported";
    if (n.attr_float("alpha", 1.0f) != 1.0f) return "alpha other than 1";
    if (n.input(2) >= 0 && (!g.constant(n.input(2)) || n.attr_float("beta", 1.0f) != 1.0f)) {
      return "C is not a constant bias with beta 1";
    }
  }
  if ((n.op_type == "Gemm" || n.op_type == "MatMul") && !is_device_float(g.value(a).dtype)) {
    return std::string(dtype_name(g.value(a).dtype)) + " matmul (use the quantized ops)";
  }
  if (n.op_type == "MatMul" && n.input(2) >= 0 && !g.constant(n.input(2)))
    return "bias is not constant";
  if (n.op_type != "Gemm" && n.op_type != "MatMul" && !is_quant_type(g.value(a).dtype)) {
    return "input is not int8/uint8";
  }
  if (qlinear) {
    for (size_t i : {1, 2, 4, 5, 6, 7}) {
      if (!g.constant(n.input(i))) return "quantization parameters are not constant";
    }
  }
  // Batch dims: equal, or one operand without batch (the ISA broadcasts a whole operand).
  const auto da = *g.value(a).static_dims();
  const auto db = *g.value(b).static_dims();
  const std::vector<int64_t> ba(da.begin(), da.end() - 2), bb(db.begin(), db.end() - 2);
  auto count = [](const std::vector<int64_t>& d) { return format::element_count(d); };
  if (count(ba) > 1 && count(bb) > 1 && ba != bb) return "batch dims broadcast partially";
  return {};
}

std::string eltwise_reason(const Graph& g, const Node& n) {
  if (n.inputs.size() != 2)
    return "variadic " + n.op_type + " with " + std::to_string(n.inputs.size()) + " inputs";
  const std::optional<DType> t = g.value(n.outputs[0]).dtype;
  if ((n.op_type == "Pow" || n.op_type == "PRelu") && !is_device_float(t))
    return n.op_type + " on integers";
  if (is_quant_type(t)) return "8-bit integer arithmetic wraps in ONNX but saturates on the device";
  if (rank_of(g, n.outputs[0]) > 4) return "rank above 4";
  return {};
}

std::string activation_reason(const Graph& g, const Node& n) {
  const std::optional<DType> t = g.value(n.input(0)).dtype;
  const bool int_ok = n.op_type == "Relu" || n.op_type == "Clip" || n.op_type == "Abs";
  if (!is_device_float(t) && !(int_ok && t == DType::kInt32)) {
    return n.op_type + " on " + dtype_name(t) + " is not supported on the device";
  }
  if (n.op_type == "Gelu" && n.attr_string("approximate", "none") != "none") {
    return "Gelu approximate='" + n.attr_string("approximate") +
           "' (the device's GELU is the erf form)";
  }
  if (n.op_type == "Clip") {
    for (size_t i = 1; i <= 2; ++i) {
      if (n.input(i) >= 0 && !g.constant(n.input(i))) return "Clip bounds are not constant";
    }
  }
  return {};
}

std::string pool_reason(const Graph& g, const Node& n) {
  const size_t rank = rank_of(g, n.input(0));
  if (rank != 3 && rank != 4) return "only 1-D and 2-D pooling run on the device";
  if (g.value(n.input(0)).dtype == DType::kInt32) return "int32 pooling";
  if (n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool") return {};
  if (n.outputs.size() > 1 && n.outputs[1] >= 0) return "MaxPool indices output is used";
  for (int64_t d : n.attr_ints("dilations")) {
    if (d != 1) return "dilated pooling";
  }
  if (n.attr_int("storage_order", 0) != 0) return "column-major storage_order";
  if (!fits_u8(n.attr_ints("strides"))) return "stride above 255";
  if (!fits_u8(n.attr_ints("pads"))) return "padding above 255";
  return {};
}

std::string softmax_reason(const Graph& g, const Node& n) {
  const std::optional<DType> t = g.value(n.input(0)).dtype;
  return is_device_float(t) ? "" : "softmax on " + std::string(dtype_name(t));
}

std::string norm_reason(const Graph& g, const Node& n) {
  if (n.attr_int("training_mode", 0) != 0) return "training-mode BatchNormalization";
  for (size_t i = 1; i <= 4; ++i) {
    if (!g.constant(n.input(i))) return "BatchNormalization parameters are not constant";
  }
  for (size_t o = 1; o < n.outputs.size(); ++o) {
    if (n.outputs[o] >= 0) return "BatchNormalization statistics outputs are used";
  }
  const std::optional<DType> t = g.value(n.input(0)).dtype;
  return is_device_float(t) ? "" : "BatchNormalization on " + std::string(dtype_name(t));
}

std::string layernorm_reason(const Graph& g, const Node& n) {
  const std::optional<DType> t = g.value(n.input(0)).dtype;
  if (!is_device_float(t)) return "LayerNormalization on " + std::string(dtype_name(t));
  for (size_t o = 1; o < n.outputs.size(); ++o) {
    if (n.outputs[o] >= 0 && g.value(n.outputs[o]).dtype != DType::kFloat32)
      return "LayerNormalization Mean/InvStdDev are not float32";
  }
  const auto rank = static_cast<int64_t>(rank_of(g, n.input(0)));
  int64_t axis = n.attr_int("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return "axis out of range";
  const auto dims = *g.value(n.input(0)).static_dims();
  const int64_t len = format::element_count(std::vector<int64_t>(dims.begin() + axis, dims.end()));
  const int64_t rows =
      format::element_count(std::vector<int64_t>(dims.begin(), dims.begin() + axis));
  if (len > UINT32_MAX || rows > UINT32_MAX) return "tensor too large";
  for (size_t i = 1; i <= 2; ++i) {  // Scale and B: [len] (or broadcastable to the row)
    if (n.input(i) < 0) continue;
    const auto sd = g.value(n.input(i)).static_dims();
    if (!sd || format::element_count(*sd) != len) return "Scale/B do not cover the normalized axes";
  }
  return {};
}

std::string quant_reason(const Graph& g, const Node& n) {
  for (size_t i = 1; i <= 2; ++i) {
    if (n.input(i) >= 0 && !g.constant(n.input(i))) return "scale/zero point are not constant";
  }
  if (n.op_type == "QuantizeLinear" && !is_quant_type(g.value(n.outputs[0]).dtype))
    return "output is not int8/uint8";
  for (ValueId v : n.inputs)
    if (v >= 0 && g.value(v).dtype == DType::kFloat16) return "float16 (de)quantization";
  for (ValueId v : n.outputs)
    if (v >= 0 && g.value(v).dtype == DType::kFloat16) return "float16 (de)quantization";
  return {};
}

std::string reduce_reason(const Graph& g, const Node& n) {
  const std::optional<DType> t = g.value(n.input(0)).dtype;
  if (!is_device_float(t)) return n.op_type + " on " + dtype_name(t);
  if (n.input(1) >= 0 && !g.constant(n.input(1))) return "reduction axes are not constant";
  std::vector<int64_t> axes =
      n.input(1) >= 0 ? format::to_ints(*g.constant(n.input(1))) : n.attr_ints("axes");
  const auto rank = static_cast<int64_t>(rank_of(g, n.input(0)));
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  for (size_t i = 1; i < axes.size(); ++i) {
    if (axes[i] != axes[i - 1] + 1) return "reduced axes are not contiguous";
  }
  return {};
}

std::string transpose_reason(const Graph& g, const Node& n) {
  return rank_of(g, n.input(0)) <= 4 ? "" : "transpose of rank above 4";
}

std::string reshape_reason(const Graph& g, const Node& n) {
  if (n.op_type == "Reshape" && !g.constant(n.input(1))) return "target shape is not constant";
  if ((n.op_type == "Squeeze" || n.op_type == "Unsqueeze") && n.input(1) >= 0 &&
      !g.constant(n.input(1))) {
    return "axes are not constant";
  }
  return {};
}

std::string concat_reason(const Graph&, const Node&) {
  return {};
}

/// A Slice the device runs as a view of its input's bytes or a strided copy (lower_slice):
/// constant starts/ends/axes/steps, positive steps, a non-empty result.
std::string slice_reason(const Graph& g, const Node& n) {
  if (n.input(1) < 0 || n.input(2) < 0) return "Slice without starts or ends";
  for (size_t i = 1; i <= 4; ++i) {
    if (n.input(i) >= 0 && !g.constant(n.input(i)))
      return "Slice starts/ends/axes/steps are not constant";
  }
  if (n.input(4) >= 0) {
    for (int64_t step : format::to_ints(*g.constant(n.input(4)))) {
      if (step <= 0) {
        return "Slice step " + std::to_string(step) + " (the device's views step forward)";
      }
    }
  }
  if (format::element_count(*g.value(n.outputs[0]).static_dims()) == 0) return "empty Slice";
  return {};
}

std::string pad_reason(const Graph& g, const Node& n) {
  if (n.attr_string("mode", "constant") != "constant") return n.attr_string("mode") + " padding";
  for (size_t i = 1; i <= 3; ++i) {
    if (n.input(i) >= 0 && !g.constant(n.input(i))) return "pads are not constant";
  }
  if (n.input(1) >= 0) {
    for (int64_t p : format::to_ints(*g.constant(n.input(1)))) {
      if (p < 0 || p > 65535) return "negative or huge pads";
    }
  }
  if (rank_of(g, n.input(0)) > 4) return "rank above 4";
  return {};
}

}  // namespace

/// Nearest-neighbour Resize of the two spatial dims of a 4-D tensor by integer factors whose
/// coordinate rule reads input index floor(o / s): asymmetric with floor, or half_pixel /
/// pytorch_half_pixel with a round_prefer_* nearest mode (no ties at integer factors). The
/// device runs it as a copy from a view that repeats every element (zero strides).
std::string resize_copy_reason(const Graph& g, const Node& n) {
  if (n.attr_string("mode", "nearest") != "nearest")
    return n.attr_string("mode") + " Resize (the device replicates pixels: nearest only)";
  const std::string coord = n.attr_string("coordinate_transformation_mode", "half_pixel");
  const std::string nearest = n.attr_string("nearest_mode", "round_prefer_floor");
  const bool floor_rule = (coord == "asymmetric" && nearest == "floor") ||
                          ((coord == "half_pixel" || coord == "pytorch_half_pixel") &&
                           (nearest == "round_prefer_floor" || nearest == "round_prefer_ceil"));
  if (!floor_rule) return "Resize " + coord + " with nearest_mode " + nearest;
  if (n.attrs.count("axes")) return "Resize with axes";
  if (rank_of(g, n.input(0)) != 4) return "Resize of rank other than 4";
  const auto xd = g.value(n.input(0)).static_dims();
  const auto yd = g.value(n.outputs[0]).static_dims();
  if (!xd || !yd) return "Resize with a dynamic shape";
  if ((*xd)[0] != (*yd)[0] || (*xd)[1] != (*yd)[1]) return "Resize of the batch or channel dim";
  for (size_t a : {2, 3}) {
    const int64_t in = (*xd)[a], out = (*yd)[a];
    if (in <= 0 || out % in != 0 || out / in > 65535) return "Resize by a non-integer factor";
  }
  const ValueId scales = n.input(n.opset < 11 ? 1 : 2);
  if (scales >= 0) {
    const NpyArray* s = g.constant(scales);
    if (!s) return "Resize scales are not constant";
    const auto f = format::to_floats(*s);
    for (size_t a = 0; a < f.size() && a < 4; ++a) {
      if (f[a] != static_cast<float>((*yd)[a]) / static_cast<float>((*xd)[a]))
        return "Resize scales differ from the output/input ratio";
    }
  }
  return {};
}

namespace {

/// A Resize the device copies (resize_copy_reason) or resize-to-matmul rewrote; the others
/// say why neither applies.
std::string resize_reason(const Graph& g, const Node& n) {
  const std::string copy = resize_copy_reason(g, n);
  if (copy.empty()) return {};
  const std::string matmul = resize_matmul_reason(g, n);
  if (matmul.empty()) return "resize-to-matmul did not run";
  const std::string mode = n.attr_string("mode", "nearest");
  return mode == "nearest" ? copy + "; " + matmul : mode + " Resize: " + matmul;
}

std::string noop_reason(const Graph&, const Node& n) {
  return n.op_type == "Identity" ? "" : "Dropout with its mask used";
}

std::string host_reason(const Graph& g, const Node& n) {
  if (n.op_type == "ConvTranspose") {
    // The device runs the ones conv-transpose-to-conv rewrites into a Conv.
    const std::string r = conv_transpose_host_reason(g, n);
    return r.empty() ? "conv-transpose-to-conv did not run" : r;
  }
  if (n.op_type == "InstanceNormalization") {
    // The device runs the ones instance-norm-to-layernorm rewrites.
    const std::string r = instance_norm_host_reason(g, n);
    return r.empty() ? "instance-norm-to-layernorm did not run" : r;
  }
  return "no device implementation";
}

/// The support rule of each device family (OpClass order) and whether the family takes int32
/// operands (npu/compiler/device_families.def).
struct FamilyRule {
  std::string (*reason)(const Graph&, const Node&);
  bool int32_ok;
};
constexpr FamilyRule kFamilyRules[kNumOpClasses] = {
#define NPU_FAMILY(Class, Name, Support, Lower, Int32) {Support, Int32},
#include "npu/compiler/device_families.def"
#undef NPU_FAMILY
};

}  // namespace

std::string device_support_reason(const Graph& g, const Node& n) {
  if (n.domain == "npu" && n.op_type.ends_with("Recurrence")) {
    // The device runs the ones unroll-recurrence unrolled.
    const std::string r = unroll_recurrence_reason(g, n);
    return "recurrence (its input projections run on the device, split-recurrence); " +
           (r.empty() ? std::string("unroll-recurrence did not run") : "not unrolled: " + r);
  }
  if (!n.domain.empty()) return "operator of domain '" + n.domain + "'";
  const OpInfo* info = find_op(n.op_type);
  if (!info) return "unsupported operator";
  if (info->op_class == OpClass::kHost) return host_reason(g, n);
  if (n.inputs.empty() || n.input(0) < 0 || n.outputs.empty() || n.outputs[0] < 0) {
    return "missing operand";
  }
  const FamilyRule& rule = kFamilyRules[static_cast<size_t>(info->op_class)];
  if (auto r = check_operands(g, n, rule.int32_ok); !r.empty()) return r;
  return rule.reason(g, n);
}

Expected<Partition> partition(const Graph& g) {
  Partition p;
  const size_t count = g.nodes.size();
  const auto producers = g.producers();
  std::vector<int> pending(count, 0);
  std::vector<std::vector<size_t>> users(count);
  for (size_t n = 0; n < count; ++n) {
    const Node& node = g.nodes[n];
    if (node.placement.target == Target::kUnassigned) {
      return make_error(EINVAL, node.label() + ": no placement (run check-support first)");
    }
    std::set<int> deps;
    for (ValueId i : node.inputs) {
      if (i >= 0 && producers[static_cast<size_t>(i)] >= 0)
        deps.insert(producers[static_cast<size_t>(i)]);
    }
    for (int d : deps) users[static_cast<size_t>(d)].push_back(n);
    pending[n] = static_cast<int>(deps.size());
    (node.placement.target == Target::kDevice ? p.device_ops : p.host_ops)++;
  }
  std::set<size_t> ready;
  for (size_t n = 0; n < count; ++n) {
    if (pending[n] == 0) ready.insert(n);
  }
  std::vector<int> segment_of(count, -1);
  while (!ready.empty()) {
    size_t pick = *ready.begin();
    if (!p.segments.empty()) {
      for (size_t r : ready) {
        if (g.nodes[r].placement.target == p.segments.back().target) {
          pick = r;
          break;
        }
      }
    }
    ready.erase(pick);
    const Target t = g.nodes[pick].placement.target;
    if (p.segments.empty() || p.segments.back().target != t)
      p.segments.push_back(Segment{t, {}, {}, {}});
    p.segments.back().nodes.push_back(pick);
    segment_of[pick] = static_cast<int>(p.segments.size() - 1);
    for (size_t u : users[pick]) {
      if (--pending[u] == 0) ready.insert(u);
    }
  }
  // Segment boundaries: values crossing from one segment to another (or out of the graph).
  for (size_t s = 0; s < p.segments.size(); ++s) {
    Segment& seg = p.segments[s];
    std::set<ValueId> in, out;
    for (size_t n : seg.nodes) {
      for (ValueId i : g.nodes[n].inputs) {
        if (i < 0 || g.value(i).is_constant()) continue;
        const int prod = producers[static_cast<size_t>(i)];
        if (prod < 0 || segment_of[static_cast<size_t>(prod)] != static_cast<int>(s)) in.insert(i);
      }
    }
    for (size_t other = 0; other < count; ++other) {
      if (segment_of[other] == static_cast<int>(s)) continue;
      for (ValueId i : g.nodes[other].inputs) {
        if (i >= 0 && producers[static_cast<size_t>(i)] >= 0 &&
            segment_of[static_cast<size_t>(producers[static_cast<size_t>(i)])] ==
                static_cast<int>(s)) {
          out.insert(i);
        }
      }
    }
    for (ValueId o : g.outputs) {
      const int prod = producers[static_cast<size_t>(o)];
      if (prod >= 0 && segment_of[static_cast<size_t>(prod)] == static_cast<int>(s)) out.insert(o);
    }
    seg.inputs.assign(in.begin(), in.end());
    seg.outputs.assign(out.begin(), out.end());
  }
  return p;
}

std::string partition_report(const Graph& g, const Partition& p) {
  std::string r = std::to_string(p.device_ops) + " ops on the NPU, " + std::to_string(p.host_ops) +
                  " on the host (" + std::to_string(p.segments.size()) + " segments)\n";
  for (const Segment& s : p.segments) {
    if (s.target != Target::kHost) continue;
    for (size_t n : s.nodes) {
      const Node& node = g.nodes[n];
      r += "  host: " + node.label() + ": " + node.placement.reason + "\n";
    }
  }
  return r;
}

}  // namespace npu::compiler
