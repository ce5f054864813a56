// Test helper: builds small ONNX models with the protobuf API, writes them to temp files
// and imports them, so every compiler test starts from a real .onnx file.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "npu/compiler/onnx_import.h"
#include "npu/isa/half.h"

namespace npu::compiler::testing {

using DimSpec = std::variant<int64_t, std::string>;

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13) {
    model_.set_ir_version(8);
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  onnx::ModelProto& model() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }

  void input(const std::string& name, const std::vector<DimSpec>& dims,
             int elem = onnx::TensorProto::FLOAT) {
    set_type(graph().add_input(), name, dims, elem);
  }
  void output(const std::string& name, int elem = onnx::TensorProto::FLOAT) {
    auto* v = graph().add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  }
  void output(const std::string& name, const std::vector<DimSpec>& dims,
              int elem = onnx::TensorProto::FLOAT) {
    set_type(graph().add_output(), name, dims, elem);
  }

  /// A declared type and shape of an intermediate value (graph.value_info).
  void value_info(const std::string& name, const std::vector<DimSpec>& dims,
                  int elem = onnx::TensorProto::FLOAT) {
    set_type(graph().add_value_info(), name, dims, elem);
  }

  /// A float initializer in raw_data (raw = true) or float_data.
  void init_f(const std::string& name, const std::vector<int64_t>& dims,
              const std::vector<float>& data, bool raw = true) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    if (raw) {
      t->set_raw_data(std::string(reinterpret_cast<const char*>(data.data()), data.size() * 4));
    } else {
      for (float f : data) t->add_float_data(f);
    }
  }
  /// A float16 initializer of `data` rounded to fp16: in raw_data (raw = true) or as bit
  /// patterns in int32_data (onnx.proto's rule for FLOAT16).
  void init_h(const std::string& name, const std::vector<int64_t>& dims,
              const std::vector<float>& data, bool raw = true) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT16);
    for (int64_t d : dims) t->add_dims(d);
    std::string bytes;
    for (float f : data) {
      const uint16_t h = isa::fp32_to_fp16(f);
      if (raw) {
        bytes.append(reinterpret_cast<const char*>(&h), 2);
      } else {
        t->add_int32_data(h);
      }
    }
    if (raw) t->set_raw_data(bytes);
  }
  void init_i64(const std::string& name, const std::vector<int64_t>& dims,
                const std::vector<int64_t>& data) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : data) t->add_int64_data(v);
  }

  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + std::to_string(graph().node_size()) : name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }

  static void attr(onnx::NodeProto& n, const std::string& key, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& key, float v) {
    auto* a = n.add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& key, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& key, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto& n, const std::string& key, const std::vector<float>& v) {
    auto* a = n.add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float x : v) a->add_floats(x);
  }

  std::string bytes() const { return model_.SerializeAsString(); }

  /// Writes the model to a fresh temp file and returns its path.
  std::string save() const {
    static std::atomic<int> counter{0};
    const auto path =
        std::filesystem::temp_directory_path() /
        ("npuc_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".onnx");
    std::ofstream f(path, std::ios::binary);
    f << bytes();
    return path.string();
  }

  Expected<Graph> import(const ImportOptions& options = {}) const {
    const std::string path = save();
    auto g = import_onnx(path, options);
    std::filesystem::remove(path);
    return g;
  }

 private:
  static void set_type(onnx::ValueInfoProto* v, const std::string& name,
                       const std::vector<DimSpec>& dims, int elem) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (const auto& d : dims) {
      auto* dim = shape->add_dim();
      if (std::holds_alternative<int64_t>(d)) {
        dim->set_dim_value(std::get<int64_t>(d));
      } else {
        dim->set_dim_param(std::get<std::string>(d));
      }
    }
  }

  onnx::ModelProto model_;
};

/// Static dims of the value named `name` (empty if unknown), for assertions.
inline std::vector<int64_t> dims_of(const Graph& g, const std::string& name) {
  const ValueId id = g.find_value(name);
  if (id == kNoValue) return {-2};
  return g.value(id).static_dims().value_or(std::vector<int64_t>{-1});
}

/// Count of nodes with `op_type`.
inline size_t count_ops(const Graph& g, const std::string& op_type) {
  size_t c = 0;
  for (const Node& n : g.nodes) c += n.op_type == op_type;
  return c;
}

}  // namespace npu::compiler::testing
