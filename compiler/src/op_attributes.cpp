// A node's attributes as the operator library's JSON (op_attributes.h).
#include "op_attributes.h"

#include <nlohmann/json.hpp>

#include <type_traits>
#include <variant>

#include "npu/compiler/onnx_tensor.h"
#include "npu/format/dtype.h"

namespace npu::compiler::detail {

namespace {

using json = nlohmann::json;

json tensor_attr_json(const TensorData& t) {
  json j;
  j["dtype"] = format::dtype_name(to_format_dtype(t.dtype).value_or(format::DType::kFloat32));
  j["dims"] = t.dims;
  if (dtype_is_integral(t.dtype)) {
    j["values"] = t.to_ints();
  } else {
    j["values"] = t.to_floats();
  }
  return j;
}

}  // namespace

std::string op_attributes(const Node& n) {
  json j = json::object();
  for (const auto& [key, value] : n.attrs) {
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, TensorData>) {
            j[key] = tensor_attr_json(v);
          } else {
            j[key] = v;
          }
        },
        value);
  }
  j["_opset"] = n.opset;
  // ONNX strings are bytes: invalid UTF-8 (a hostile attribute) becomes U+FFFD instead of
  // an exception, and the operator then reports the value it does not know.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace npu::compiler::detail
