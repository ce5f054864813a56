// Test helper: writes TVM BYOC JSON graphs as TVM's codegen does (codegen_json.h,
// json_node.h), in the native encoding of TVM >= 0.24 and in the legacy one of TVM <= 0.23
// (the dmlc writer: "shape" and "dtype" wrapped in one more list, num_inputs/num_outputs as
// strings, every other attribute a list holding one list of strings). Nodes are added in
// order; node_row_ptr and arg_nodes are derived as the serializer derives them.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace npu::compiler::testing {

class TvmGraph {
 public:
  using json = nlohmann::json;
  using Dims = std::vector<int64_t>;

  /// An input (function parameter) node; returns its id.
  int input(const std::string& name, const Dims& dims, const std::string& dtype = "float32") {
    return leaf("input", name, dims, dtype);
  }
  /// A const node (its value comes from the params).
  int constant(const std::string& name, const Dims& dims, const std::string& dtype = "float32") {
    return leaf("const", name, dims, dtype);
  }
  /// A kernel reading entries {node, index}; one recorded output type per entry of `outs`.
  int kernel(const std::string& name, const std::vector<std::pair<int, int>>& inputs,
             const std::vector<Dims>& outs, json attrs = json::object(),
             std::vector<std::string> dtypes = {}) {
    if (dtypes.empty()) dtypes.assign(outs.size(), "float32");
    json n = {{"op", "kernel"}, {"name", name}, {"inputs", json::array()}};
    for (const auto& [node, index] : inputs) n["inputs"].push_back({node, index, 0});
    attrs["shape"] = outs;
    attrs["dtype"] = dtypes;
    attrs["num_inputs"] = inputs.size();
    attrs["num_outputs"] = outs.size();
    n["attrs"] = attrs;
    nodes_.push_back(std::move(n));
    outputs_.push_back(outs.size());
    return static_cast<int>(nodes_.size()) - 1;
  }
  /// A kernel with one output of type `dtype`.
  int kernel1(const std::string& name, const std::vector<std::pair<int, int>>& inputs,
              const Dims& out, json attrs = json::object(), const std::string& dtype = "float32") {
    return kernel(name, inputs, {out}, std::move(attrs), {dtype});
  }
  /// A batch_norm kernel of `x` (shape `dims`) whose four parameters of `channels` values are
  /// new nodes named names[0..3] (const nodes, or inputs when `as_inputs`); three outputs.
  int batch_norm(const std::string& name, int x, const Dims& dims, int64_t channels,
                 const std::vector<std::string>& names, bool as_inputs = false,
                 json attrs = json::object()) {
    std::vector<std::pair<int, int>> in = {{x, 0}};
    for (const auto& n : names) {
      in.push_back({as_inputs ? input(n, {channels}) : constant(n, {channels}), 0});
    }
    return kernel(name, in, {dims, {channels}, {channels}}, std::move(attrs));
  }
  void head(int node, int index = 0) { heads_.push_back({node, index, 0}); }

  /// The document as TVM >= 0.24 writes it.
  json document() const {
    json arg_nodes = json::array(), row_ptr = json::array({0});
    int64_t rows = 0;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!nodes_[i].contains("inputs")) arg_nodes.push_back(i);
      rows += static_cast<int64_t>(outputs_[i]);
      row_ptr.push_back(rows);
    }
    return {
        {"nodes", nodes_}, {"arg_nodes", arg_nodes}, {"heads", heads_}, {"node_row_ptr", row_ptr}};
  }
  std::string native() const { return document().dump(2); }

  /// The same graph as TVM <= 0.23 wrote it.
  std::string legacy() const {
    json doc = document();
    for (json& n : doc["nodes"]) {
      json& attrs = n["attrs"];
      json out = json::object();
      for (const auto& [key, v] : attrs.items()) {
        if (key == "shape" || key == "dtype") {
          out[key] = json::array({v});
        } else if (key == "num_inputs" || key == "num_outputs") {
          out[key] = std::to_string(v.get<int64_t>());
        } else {
          json strings = json::array();
          for (const json& x : v.is_array() ? v : json::array({v})) strings.push_back(text(x));
          out[key] = json::array({strings});
        }
      }
      attrs = out;
    }
    return doc.dump(2);
  }

 private:
  static std::string text(const json& x) {
    if (x.is_string()) return x.get<std::string>();
    if (x.is_boolean()) return x.get<bool>() ? "1" : "0";
    if (x.is_number_float()) {
      std::ostringstream s;
      s.precision(17);
      s << x.get<double>();
      return s.str();
    }
    return x.dump();
  }

  int leaf(const std::string& op, const std::string& name, const Dims& dims,
           const std::string& dtype) {
    nodes_.push_back({{"op", op},
                      {"name", name},
                      {"attrs", {{"shape", json::array({dims})}, {"dtype", {dtype}}}}});
    outputs_.push_back(1);
    return static_cast<int>(nodes_.size()) - 1;
  }

  std::vector<json> nodes_;
  std::vector<size_t> outputs_;
  json heads_ = json::array();
};

}  // namespace npu::compiler::testing
