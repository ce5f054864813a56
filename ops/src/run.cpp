// npu::ops::run (npu/ops/ops.h): looks the operator up in the registry, checks everything the
// registry declares — the opset, the attributes against the schema, input 0's element type —
// and every input's invariants once, calls the implementation under the call's deadline,
// checks its outputs, and turns exceptions into errors.
#include <algorithm>
#include <cstring>
#include <new>
#include <optional>

#include "npu/cancel.h"
#include "npu/isa/half.h"
#include "npu/ops/ops.h"
#include "op_call.h"

namespace npu::ops {

namespace {

using format::DType;
using nlohmann::json;

bool all_of_array(const json& v, bool (json::*is)() const noexcept) {
  return v.is_array() && std::all_of(v.begin(), v.end(), [&](const json& e) { return (e.*is)(); });
}

/// "is not an int", ... (the wording the attribute accessors of attributes.h use), or empty.
std::string type_mismatch(AttrType t, const json& v) {
  switch (t) {
    case AttrType::kInt:
      return v.is_number_integer() ? "" : "is not an int";
    case AttrType::kFloat:
      return v.is_number() ? "" : ": not a number";
    case AttrType::kString:
      return v.is_string() ? "" : "is not a string";
    case AttrType::kInts:
      return all_of_array(v, &json::is_number_integer) ? "" : "is not a list of ints";
    case AttrType::kFloats:
      return all_of_array(v, &json::is_number) ? "" : "is not a list of numbers";
    case AttrType::kStrings:
      return all_of_array(v, &json::is_string) ? "" : "is not a list of strings";
    case AttrType::kTensor:
      return v.is_object() ? "" : "is not a tensor";
  }
  return "has an unknown type";
}

/// The checks the registry's schema allows: known attributes of the right JSON type, the
/// required ones present, "_opset" an integer in the operator's range.
Expected<int64_t> check_attributes(const OpSchema& s, const json& attrs) {
  const std::string op(s.name);
  int64_t opset = std::clamp(kDefaultOpset, s.since, s.until);
  for (const auto& [key, value] : attrs.items()) {
    if (key == "_opset") {
      if (!value.is_number_integer()) {
        return make_error(EINVAL, op + ": attribute _opset: not an integer");
      }
      opset = value.get<int64_t>();
      if (!s.supports_opset(opset)) {
        return make_error(EINVAL, op + ": opset " + std::to_string(opset) +
                                      " is outside the supported range " + std::to_string(s.since) +
                                      ".." + std::to_string(s.until));
      }
      continue;
    }
    if (key.starts_with('_')) continue;  // reserved for the stack's own annotations
    const AttrSchema* a = s.attribute(key);
    if (a == nullptr) return make_error(EINVAL, op + ": unknown attribute '" + key + "'");
    if (auto why = type_mismatch(a->type, value); !why.empty()) {
      return make_error(EINVAL, op + ": attribute " + key + (why[0] == ':' ? "" : " ") + why);
    }
  }
  for (const AttrSchema& a : s.attributes) {
    if (a.required && !attrs.contains(a.name)) {
      return make_error(EINVAL, op + ": missing attribute '" + a.name + "'");
    }
  }
  return opset;
}

/// Before opset 7 the binary elementwise operators broadcast B against A aligned at
/// attribute `axis` (broadcast=1); B with trailing 1s appended to reach A's rank, aligned at
/// the right, is the same under NumPy's rule. Returns that copy of input 1, or nullopt when
/// the call is not of that legacy form.
Expected<std::optional<format::NpyArray>> legacy_broadcast_operand(
    const OpSchema& s, const json& attrs, int64_t opset,
    std::span<const format::NpyArray* const> inputs) {
  if (opset >= 7 || !s.attribute("broadcast") || !s.attribute("axis") || !attrs.contains("axis") ||
      inputs.size() < 2 || !inputs[0] || !inputs[1]) {
    return std::optional<format::NpyArray>{};
  }
  const auto rank_a = static_cast<int64_t>(inputs[0]->shape.size());
  const auto rank_b = static_cast<int64_t>(inputs[1]->shape.size());
  int64_t axis = attrs["axis"].get<int64_t>();
  if (axis < 0) axis += rank_a;
  if (axis < 0 || axis + rank_b > rank_a) {
    return make_error(EINVAL, std::string(s.name) + ": legacy broadcast axis " +
                                  std::to_string(attrs["axis"].get<int64_t>()) +
                                  " with B of rank " + std::to_string(rank_b) +
                                  " does not fit A of rank " + std::to_string(rank_a));
  }
  format::NpyArray b = *inputs[1];
  b.shape.insert(b.shape.end(), static_cast<size_t>(rank_a - axis - rank_b), 1);
  return std::optional<format::NpyArray>{std::move(b)};
}

Expected<std::vector<format::NpyArray>> run_checked(const OpSchema& s, const json& attrs,
                                                    std::span<const format::NpyArray* const> inputs,
                                                    size_t num_outputs, const RunOptions& options) {
  const std::string op(s.name);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr) continue;
    NPU_TRY(format::check_npy(*inputs[i], op + ": input " + std::to_string(i)));
  }
  auto opset = check_attributes(s, attrs);
  if (!opset) return opset.error();
  if (!inputs.empty() && inputs[0] != nullptr && !s.types.contains(inputs[0]->dtype)) {
    return make_error(EINVAL,
                      op + ": dtype " + format::dtype_name(inputs[0]->dtype) + " is not supported");
  }
  auto legacy_b = legacy_broadcast_operand(s, attrs, *opset, inputs);
  if (!legacy_b) return legacy_b.error();
  std::vector<const format::NpyArray*> legacy_inputs;
  if (*legacy_b) {
    legacy_inputs.assign(inputs.begin(), inputs.end());
    legacy_inputs[1] = &**legacy_b;
    inputs = legacy_inputs;
  }
  const OpCall call{op, attrs,           inputs, num_outputs, *opset, options.max_output_bytes,
                    &s, options.max_work};
  auto out = s.host(call);
  if (!out) return out;
  for (const format::NpyArray& a : *out) {  // shape and data must agree before anyone copies
    NPU_TRY(format::check_npy(a, op + ": output"));
  }
  if (out->size() != num_outputs) {
    return make_error(EINVAL, op + ": produces " + std::to_string(out->size()) + " outputs, " +
                                  std::to_string(num_outputs) + " expected");
  }
  return out;
}

/// `a` with every element converted between float16 and float32 (to `t`).
format::NpyArray convert_half(const format::NpyArray& a, DType t) {
  format::NpyArray out = format::NpyArray::zeros(t, a.shape);
  const size_t n = static_cast<size_t>(a.num_elements());
  for (size_t i = 0; i < n; ++i) {
    if (t == DType::kFloat32) {
      uint16_t h;
      std::memcpy(&h, a.data.data() + 2 * i, 2);
      const float f = isa::fp16_to_fp32(h);
      std::memcpy(out.data.data() + 4 * i, &f, 4);
    } else {
      float f;
      std::memcpy(&f, a.data.data() + 4 * i, 4);
      const uint16_t h = isa::fp32_to_fp16(f);
      std::memcpy(out.data.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

/// float16 operands of an operator without a float16 path of its own (its registry types lack
/// float16): it computes on float32 copies and its float32 outputs are rounded back to
/// float16, as ONNX Runtime's CPU kernels do for float16. Operators that only move or select
/// elements list float16 and see the operands as they are.
Expected<std::vector<format::NpyArray>> run_widened(const OpSchema& s, const json& attrs,
                                                    std::span<const format::NpyArray* const> inputs,
                                                    size_t num_outputs, const RunOptions& options) {
  std::vector<format::NpyArray> wide;
  wide.reserve(inputs.size());
  std::vector<const format::NpyArray*> ptrs(inputs.begin(), inputs.end());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr || inputs[i]->dtype != DType::kFloat16) continue;
    NPU_TRY(format::check_npy(*inputs[i], std::string(s.name) + ": input " + std::to_string(i)));
    wide.push_back(convert_half(*inputs[i], DType::kFloat32));
    ptrs[i] = &wide.back();
  }
  auto out = run_checked(s, attrs, ptrs, num_outputs, options);
  if (!out) return out;
  for (format::NpyArray& a : *out) {
    if (a.dtype == DType::kFloat32) a = convert_half(a, DType::kFloat16);
  }
  return out;
}

bool has_half_input(std::span<const format::NpyArray* const> inputs) {
  return std::any_of(inputs.begin(), inputs.end(),
                     [](const format::NpyArray* a) { return a && a->dtype == DType::kFloat16; });
}

/// Parses the attributes text; errors name the op.
Expected<json> parse_attributes(std::string_view op_type, std::string_view attributes) {
  json attrs = json::parse(attributes.empty() ? std::string_view("{}") : attributes, nullptr,
                           /*allow_exceptions=*/false);
  if (attrs.is_discarded() || !attrs.is_object()) {
    return make_error(EINVAL, std::string(op_type) + ": attributes are not a JSON object");
  }
  return attrs;
}

}  // namespace

bool is_supported(std::string_view op_type) {
  return find(op_type) != nullptr;
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const OpSchema& s : registry()) out.emplace_back(s.name);
  std::sort(out.begin(), out.end());
  return out;
}

Expected<std::vector<format::NpyArray>> run(std::string_view op_type, std::string_view attributes,
                                            std::span<const format::NpyArray* const> inputs,
                                            size_t num_outputs, const RunOptions& options) {
  const OpSchema* s = find(op_type);
  if (s == nullptr) {
    return make_error(ENOTSUP, "host op '" + std::string(op_type) + "' is not supported");
  }
  auto attrs = parse_attributes(op_type, attributes);
  if (!attrs) return attrs.error();
  std::optional<CancelScope> scope;
  if (options.deadline) scope.emplace(*options.deadline);
  const auto stopped = [&] {
    return make_error(ETIMEDOUT, std::string(op_type) + ": stopped: the time limit passed");
  };
  if (cancelled()) return stopped();
  try {
    auto out = !s->types.contains(DType::kFloat16) && has_half_input(inputs)
                   ? run_widened(*s, *attrs, inputs, num_outputs, options)
                   : run_checked(*s, *attrs, inputs, num_outputs, options);
    if (cancelled()) return stopped();  // the loops stopped early: the output is partial
    return out;
  } catch (const std::bad_alloc&) {
    return make_error(ENOMEM, std::string(op_type) + ": out of memory");
  } catch (const std::exception& e) {  // JSON type errors; none expected
    return make_error(EINVAL, std::string(op_type) + ": " + e.what());
  }
}

Expected<std::vector<format::NpyArray>> run_on_type(std::string_view op_type,
                                                    std::string_view attributes,
                                                    format::DType dtype,
                                                    std::span<const int64_t> shape) {
  if (op_type != "Shape" && op_type != "Size") {
    return make_error(ENOTSUP, std::string(op_type) + ": reads its input's values");
  }
  // Shape and Size read only `shape` and `dtype`: the stand-in has no data.
  format::NpyArray type_only{dtype, {shape.begin(), shape.end()}, {}};
  const format::NpyArray* inputs[] = {&type_only};
  std::vector<format::NpyArray> out;
  auto done = detail::with_call(op_type, attributes, inputs, [&](const OpCall& call) {
    auto r = call.schema->host(call);
    if (!r) return Expected<void>(r.error());
    out = std::move(*r);
    return ok();
  });
  if (!done) return done.error();
  return out;
}

namespace detail {

Expected<void> with_call(std::string_view op_type, std::string_view attributes,
                         std::span<const NpyArray* const> inputs,
                         const std::function<Expected<void>(const OpCall&)>& f) {
  const OpSchema* s = find(op_type);
  if (s == nullptr) {
    return make_error(ENOTSUP, "host op '" + std::string(op_type) + "' is not supported");
  }
  auto attrs = parse_attributes(op_type, attributes);
  if (!attrs) return attrs.error();
  auto opset = check_attributes(*s, *attrs);
  if (!opset) return opset.error();
  const OpCall call{std::string(op_type), *attrs, inputs, 1, *opset, kMaxOutputBytes, s};
  try {
    return f(call);
  } catch (const std::bad_alloc&) {
    return make_error(ENOMEM, std::string(op_type) + ": out of memory");
  } catch (const std::exception& e) {
    return make_error(EINVAL, std::string(op_type) + ": " + e.what());
  }
}

}  // namespace detail

}  // namespace npu::ops
