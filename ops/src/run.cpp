// The public entry points of the operator library (npu/ops/ops.h): look an op type up in the
// per-file tables (common.h), check the inputs and outputs, turn exceptions into errors.
#include <algorithm>
#include <array>
#include <new>

#include "common.h"
#include "npu/ops/ops.h"

namespace npu::ops {

namespace {

std::array<const detail::OpTable*, 4> op_tables() {
  return {&detail::elementwise_ops(), &detail::nn_ops(), &detail::quant_ops(),
          &detail::tensor_ops()};
}

const detail::OpFn* find_op(std::string_view op_type) {
  for (const detail::OpTable* t : op_tables()) {
    if (auto it = t->find(op_type); it != t->end()) return &it->second;
  }
  return nullptr;
}

}  // namespace

bool is_supported(std::string_view op_type) {
  return find_op(op_type) != nullptr;
}

std::vector<std::string> names() {
  std::vector<std::string> names;
  for (const detail::OpTable* t : op_tables()) {
    for (const auto& [name, fn] : *t) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Expected<std::vector<format::NpyArray>> run(std::string_view op_type, std::string_view attributes,
                                            std::span<const format::NpyArray* const> inputs,
                                            size_t num_outputs) {
  const detail::OpFn* fn = find_op(op_type);
  if (fn == nullptr) {
    return make_error(ENOTSUP, "host op '" + std::string(op_type) + "' is not supported");
  }
  const detail::json attrs =
      detail::json::parse(attributes.empty() ? std::string_view("{}") : attributes, nullptr,
                          /*allow_exceptions=*/false);
  if (attrs.is_discarded() || !attrs.is_object()) {
    return make_error(EINVAL, std::string(op_type) + ": attributes are not a JSON object");
  }
  try {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] == nullptr) continue;
      NPU_TRY(format::check_npy(*inputs[i], std::string(op_type) + ": input " + std::to_string(i)));
    }
    detail::OpCall call{std::string(op_type), attrs, inputs, num_outputs};
    if (attrs.contains("_opset")) {
      if (!attrs["_opset"].is_number_integer()) {
        return make_error(EINVAL, std::string(op_type) + ": attribute _opset: not an integer");
      }
      call.opset = attrs["_opset"].get<int64_t>();
    }
    Expected<std::vector<format::NpyArray>> out = (*fn)(call);
    if (out) {
      for (const format::NpyArray& a : *out) {  // shape and data must agree before anyone copies
        NPU_TRY(format::check_npy(a, std::string(op_type) + ": output"));
      }
    }
    if (out && out->size() != num_outputs) {
      return make_error(EINVAL, std::string(op_type) + ": produces " + std::to_string(out->size()) +
                                    " outputs, " + std::to_string(num_outputs) + " expected");
    }
    return out;
  } catch (const std::bad_alloc&) {
    return make_error(ENOMEM, std::string(op_type) + ": out of memory");
  } catch (const std::exception& e) {  // JSON type errors; none expected
    return make_error(EINVAL, std::string(op_type) + ": " + e.what());
  }
}

}  // namespace npu::ops
