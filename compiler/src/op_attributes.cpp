// A node's attributes as the operator library's JSON (op_attributes.h).
#include "op_attributes.h"

#include <nlohmann/json.hpp>

#include <type_traits>
#include <variant>

#include "npu/format/array_values.h"
#include "npu/format/dtype.h"

namespace npu::compiler::detail {

namespace {

using json = nlohmann::json;

json tensor_attr_json(const NpyArray& t) {
  json j;
  j["dtype"] = format::dtype_name(t.dtype);
  j["dims"] = t.shape;
  if (format::dtype_is_float(t.dtype)) {
    j["values"] = format::to_floats(t);
  } else {
    j["values"] = format::to_ints(t);
  }
  return j;
}

}  // namespace

std::string op_attributes(const Node& n) {
  json j = json::object();
  for (const auto& [name, value] : n.attrs) {
    const std::string& key = name;  // (clang 14 cannot capture a structured binding)
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, NpyArray>) {
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
