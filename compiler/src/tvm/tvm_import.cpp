// TVM JSON import (npu/compiler/tvm_import.h): the document (tvm_json.h), its leaves bound to
// graph inputs or params, each kernel translated through the table (tvm_kernels.h), the heads
// named output_<k>, and the recorded output types checked against ONNX shape inference and the
// registry's shape rules.
#include "npu/compiler/tvm_import.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <fstream>
#include <set>
#include <sstream>

#include "npu/compiler/pass_manager.h"
#include "npu/format/shape.h"
#include "onnx_proto.h"
#include "tvm/tvm_kernels.h"

namespace npu::compiler {

namespace {

using tvm::TensorSig;

/// The last component of a kernel name: "example_npu.conv2d_relu_fused" -> "conv2d_relu_fused".
std::string short_name(const std::string& name) {
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

class Importer {
 public:
  Importer(const tvm::Document& d, const ImportOptions& o) : d_(d), o_(o) {}

  Expected<Graph> run() {
    g_.opsets[""] = tvm::kOpset;
    entries_.resize(d_.nodes.size());
    NPU_TRY(leaves());
    for (uint32_t id : d_.kernel_order) NPU_TRY(kernel(id));
    NPU_TRY(outputs());
    NPU_TRY(check_types());
    NPU_TRY(g_.verify());
    return std::move(g_);
  }

 private:
  struct Expect {
    ValueId value;
    TensorSig sig;
    std::string label;
  };

  Expected<DType> dtype_of(const TensorSig& s, const std::string& what) const {
    const std::optional<DType> t = format::dtype_from_name(s.dtype);
    if (!t || !detail::accepted_dtype(*t)) {
      return make_error(ENOTSUP, what + ": unsupported element type '" + s.dtype + "'");
    }
    return *t;
  }

  // Inputs and consts in arg_nodes order: graph inputs, or constants from the params.
  Expected<void> leaves() {
    for (uint32_t id : d_.arg_nodes) {
      const tvm::JsonNode& n = d_.nodes[id];
      const std::string label = tvm::label(d_, id);
      if (n.outputs.size() != 1) {
        return make_error(ENOTSUP, label + ": " + std::to_string(n.outputs.size()) +
                                       " outputs (a tuple parameter) are not supported");
      }
      auto t = dtype_of(n.outputs[0], label);
      if (!t) return t.error();
      if (g_.find_value(n.name) != kNoValue || n.name.empty()) {
        return make_error(EINVAL, label + ": the name is empty or used by another leaf");
      }
      auto it = o_.constant_inputs.find(n.name);
      if (it != o_.constant_inputs.end()) {
        NPU_TRY(bind_constant(n, label, *t, it->second));
      } else if (n.op == "const") {
        return make_error(EINVAL, label + " has no value in the params");
      } else {
        NPU_TRY(add_input(n, label, *t));
      }
      entries_[id] = {g_.find_value(n.name)};
    }
    for (const auto& [name, a] : o_.constant_inputs) {
      const ValueId v = g_.find_value(name);
      if (v == kNoValue || !g_.value(v).is_constant()) {
        return make_error(EINVAL, "params: '" + name + "' is neither a const nor an input node");
      }
    }
    for (const auto& [name, dims] : o_.input_shapes) {
      const ValueId v = g_.find_value(name);
      if (v == kNoValue || !g_.is_graph_input(v)) {
        return make_error(EINVAL, "a shape is given for '" + name + "', not an input node");
      }
    }
    return ok();
  }

  Expected<void> bind_constant(const tvm::JsonNode& n, const std::string& label, DType t,
                               const NpyArray& a) {
    const std::string what = "params '" + n.name + "' (" + label + ")";
    NPU_TRY(format::check_npy(a, what));
    if (a.dtype != t) {
      return make_error(EINVAL, what + ": " + format::dtype_name(a.dtype) +
                                    " array for a node of type " + format::dtype_name(t));
    }
    const auto& dims = n.outputs[0].dims;
    bool fits = dims.size() == a.shape.size();
    for (size_t i = 0; fits && i < dims.size(); ++i) fits = dims[i] < 0 || dims[i] == a.shape[i];
    if (!fits) {
      return make_error(EINVAL, what + ": shape " + format::shape_text(a.shape) +
                                    " but the graph records " + format::shape_text(dims));
    }
    Value v;
    v.name = n.name;
    v.dtype = t;
    v.shape = make_shape(a.shape);
    v.constant = std::make_shared<const NpyArray>(a);
    g_.add_value(std::move(v));
    return ok();
  }

  Expected<void> add_input(const tvm::JsonNode& n, const std::string& label, DType t) {
    std::vector<int64_t> dims = n.outputs[0].dims;
    if (auto it = o_.input_shapes.find(n.name); it != o_.input_shapes.end()) {
      bool fits = it->second.size() == dims.size();
      for (size_t i = 0; fits && i < dims.size(); ++i) {
        fits = dims[i] < 0 || dims[i] == it->second[i];
      }
      if (!fits) {
        return make_error(EINVAL, label + ": the given shape " + format::shape_text(it->second) +
                                      " does not fit the recorded " + format::shape_text(dims));
      }
      dims = it->second;
    }
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 0) {
        return make_error(
            EINVAL, label + ": dim " + std::to_string(i) + " is dynamic; give the input's shape");
      }
    }
    Value v;
    v.name = n.name;
    v.dtype = t;
    v.shape = make_shape(dims);
    g_.inputs.push_back(g_.add_value(std::move(v)));
    return ok();
  }

  Expected<void> kernel(uint32_t id) {
    const tvm::JsonNode& n = d_.nodes[id];
    const std::string label = tvm::label(d_, id);
    const tvm::OpRow* row = tvm::find_row(n.name);
    if (!row) {
      return make_error(ENOTSUP, label +
                                     ": unknown kernel (not an example_npu composite or a Relax "
                                     "operator of the table, docs/tvm.md)");
    }
    if (n.inputs.size() != static_cast<size_t>(row->info.inputs) ||
        n.outputs.size() != static_cast<size_t>(row->info.outputs)) {
      return make_error(EINVAL, label + ": has " + std::to_string(n.inputs.size()) +
                                    " inputs and " + std::to_string(n.outputs.size()) +
                                    " outputs, the kernel takes " +
                                    std::to_string(row->info.inputs) + " and gives " +
                                    std::to_string(row->info.outputs));
    }
    tvm::KernelCall c{*row, label, {}, {}, n.outputs, tvm::Attrs(row->attrs)};
    for (const auto& [key, value] : n.attrs) {
      const auto s = std::find_if(row->attrs.begin(), row->attrs.end(),
                                  [&k = key](const ops::AttrSchema& a) { return a.name == k; });
      if (s == row->attrs.end())
        return make_error(EINVAL, label + ": unknown attribute '" + key + "'");
      auto v = tvm::decode_attr(value, *s, label + ": attribute");
      if (!v) return v.error();
      if (*v) c.attrs.set(key, std::move(**v));
    }
    for (const tvm::Entry& e : n.inputs) {
      c.inputs.push_back(entries_[e.node][e.index]);
      c.in.push_back(d_.nodes[e.node].outputs[e.index]);
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      NPU_TRY(dtype_of(n.outputs[k], label + ": output " + std::to_string(k)));
    }
    const std::string stem = short_name(n.name) + "_" + std::to_string(id);
    const size_t first_node = g_.nodes.size(), first_value = g_.num_values();
    tvm::Builder b(g_, stem);
    auto outs = tvm::kernel_fn(row->kind)(b, c);
    if (!outs) return outs.error();
    for (size_t i = first_node; i < g_.nodes.size(); ++i) node_labels_[g_.nodes[i].name] = label;
    for (size_t k = 0; k < outs->size(); ++k) {
      const ValueId v = (*outs)[k];
      if (static_cast<size_t>(v) >= first_value) {
        g_.rename_value(v, g_.unique_name(k == 0 ? stem : stem + "_" + std::to_string(k)));
      }
      expects_.push_back({v, n.outputs[k], label + ": output " + std::to_string(k)});
    }
    entries_[id] = std::move(*outs);
    return ok();
  }

  // The heads become the graph outputs output_0, output_1, ...; a head that is a leaf, or an
  // entry already named by another head, gets an Identity of its own.
  Expected<void> outputs() {
    const auto producers = g_.producers();
    for (size_t k = 0; k < d_.heads.size(); ++k) {
      const tvm::Entry& h = d_.heads[k];
      const std::string name = "output_" + std::to_string(k);
      ValueId v = entries_[h.node][h.index];
      if (g_.find_value(name) != kNoValue && g_.find_value(name) != v) {
        return make_error(EINVAL, "head " + std::to_string(k) + ": the graph already has a " +
                                      "value named '" + name + "'");
      }
      if (producers[static_cast<size_t>(v)] < 0 || g_.is_graph_output(v)) {
        tvm::Builder b(g_, name);
        v = b.node("Identity", {v});
      }
      g_.rename_value(v, name);
      g_.outputs.push_back(v);
    }
    return ok();
  }

  // Fills every value's type by ONNX shape inference (strict, so an operator whose inputs do
  // not fit fails here) and the registry's shape rules, then checks each kernel output
  // against the type TVM recorded.
  Expected<void> check_types() {
    onnx::ModelProto m = detail::export_onnx(g_);
    try {
      onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/1,
                                          /*data_prop=*/true);
      onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception& e) {
      return make_error(EINVAL, inference_error(detail::one_line(e.what())));
    }
    if (auto r = create_pass("infer-shapes")->run(g_); !r) return r.error();
    for (const Expect& x : expects_) {
      Value& v = g_.value(x.value);
      const std::optional<DType> t = format::dtype_from_name(x.sig.dtype);
      if (v.dtype && v.dtype != t) {
        return make_error(EINVAL, x.label + ": recorded as " + x.sig.dtype +
                                      " but the operator gives " + dtype_name(v.dtype));
      }
      v.dtype = t;
      const Shape recorded = [&] {
        Shape s;
        for (int64_t d : x.sig.dims) s.push_back(d < 0 ? Dim{} : Dim::fixed(d));
        return s;
      }();
      bool fits = !v.shape || v.shape->size() == recorded.size();
      for (size_t i = 0; fits && v.shape && i < recorded.size(); ++i) {
        const Dim& d = (*v.shape)[i];
        fits = !d.is_static() || !recorded[i].is_static() || d.value == recorded[i].value;
      }
      if (!fits) {
        return make_error(EINVAL, x.label + ": the recorded shape " + shape_to_string(recorded) +
                                      " does not match the operator's " +
                                      shape_to_string(*v.shape));
      }
      if (!v.static_dims()) v.shape = recorded;
    }
    return ok();
  }

  // ONNX names the node as "node name: NAME)": say which TVM kernel it came from.
  std::string inference_error(const std::string& msg) const {
    const std::string key = "node name: ";
    const size_t at = msg.find(key);
    const size_t end = at == std::string::npos ? at : msg.find(')', at);
    if (end != std::string::npos) {
      const std::string name = msg.substr(at + key.size(), end - at - key.size());
      if (auto it = node_labels_.find(name); it != node_labels_.end()) {
        return it->second + ": " + msg;
      }
    }
    return "shape inference: " + msg;
  }

  const tvm::Document& d_;
  const ImportOptions& o_;
  Graph g_;
  std::vector<std::vector<ValueId>> entries_;  // per node, the value of each output entry
  std::vector<Expect> expects_;
  std::map<std::string, std::string> node_labels_;  // IR node name -> TVM node label
};

}  // namespace

Expected<Graph> import_tvm_json_text(std::string_view text, const ImportOptions& options,
                                     const std::string& source) {
  auto fail = [&](const Error& e) { return detail::source_error(source, e); };
  auto doc = tvm::parse(text);
  if (!doc) return fail(doc.error());
  try {
    auto g = Importer(*doc, options).run();
    if (!g) return fail(g.error());
    return g;
  } catch (const std::exception& e) {
    return fail(make_error(EINVAL, detail::one_line(e.what())));
  }
}

Expected<Graph> import_tvm_json(const std::string& path, const ImportOptions& options) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return make_error(ENOENT, path + ": cannot open the model file");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (!f && !f.eof()) return make_error(EIO, path + ": read error");
  return import_tvm_json_text(ss.str(), options, path);
}

}  // namespace npu::compiler
