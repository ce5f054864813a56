// ONNX import: protobuf parse, bindings, schema checks, ONNX shape inference, then the IR.
// Every ONNX/protobuf exception is caught here and becomes a one-line npu::Error.
#include "npu/compiler/onnx_import.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

#include "import_steps.h"
#include "npu/compiler/op_set.h"
#include "npu/format/file.h"
#include "onnx_proto.h"
#include "onnx_weights.h"

namespace npu::compiler {

namespace {

using detail::one_line;

std::string node_label(const onnx::NodeProto& n) {
  return "node '" + n.name() + "' (" + n.op_type() + ")";
}

onnx::ValueInfoProto* find_input(onnx::GraphProto& g, const std::string& name) {
  for (auto& in : *g.mutable_input()) {
    if (in.name() == name) return &in;
  }
  return nullptr;
}

template <typename Pred>
void erase_if(google::protobuf::RepeatedPtrField<Pred>* field, auto pred) {
  for (int i = field->size() - 1; i >= 0; --i) {
    if (pred(field->Get(i))) field->DeleteSubrange(i, 1);
  }
}

Expected<std::map<std::string, int64_t>> read_opsets(const onnx::ModelProto& m) {
  std::map<std::string, int64_t> opsets;
  const auto ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const auto& op : m.opset_import()) {
    const std::string domain = op.domain() == "ai.onnx" ? "" : op.domain();
    auto it = ranges.find(domain);
    if (it != ranges.end() && op.version() > it->second.second) {
      return make_error(ENOTSUP, "opset " + std::to_string(op.version()) + " of domain '" +
                                     (domain.empty() ? "ai.onnx" : domain) +
                                     "' is newer than the supported " +
                                     std::to_string(it->second.second));
    }
    opsets[domain] = op.version();
  }
  if (!opsets.count("")) return make_error(EINVAL, "the model imports no ai.onnx opset");
  return opsets;
}

// Inputs fixed as constants, inputs with initializers (defaults) and run-time shapes.
// A replaced initializer leaves `cut` (a new one may be allocated at its address).
Expected<void> apply_bindings(onnx::GraphProto& g, const ImportOptions& opts,
                              detail::CutWeights& cut) {
  for (const auto& [name, data] : opts.constant_inputs) {
    onnx::ValueInfoProto* in = find_input(g, name);
    if (!in) return make_error(EINVAL, "bound input '" + name + "' is not a graph input");
    if (!detail::accepted_dtype(data.dtype)) {
      return make_error(ENOTSUP, "input '" + name + "': unsupported element type " +
                                     format::dtype_name(data.dtype));
    }
    NPU_TRY(format::check_npy(data, "input '" + name + "'"));
    const auto& tt = in->type().tensor_type();
    if (tt.elem_type() != 0 && detail::dtype_from_onnx(tt.elem_type()) != data.dtype) {
      return make_error(EINVAL, "input '" + name + "': bound constant is " +
                                    format::dtype_name(data.dtype) + " but the model expects " +
                                    onnx::TensorProto_DataType_Name(tt.elem_type()));
    }
    if (tt.has_shape()) {
      bool fits = tt.shape().dim_size() == static_cast<int>(data.shape.size());
      for (int i = 0; fits && i < tt.shape().dim_size(); ++i) {
        const auto& d = tt.shape().dim(i);
        fits = !d.has_dim_value() || d.dim_value() == data.shape[static_cast<size_t>(i)];
      }
      if (!fits) {
        return make_error(EINVAL, "input '" + name + "': bound constant of shape " +
                                      format::shape_text(data.shape) + " does not fit the model");
      }
    }
    const std::string& key = name;  // (clang 14 cannot capture a structured binding)
    erase_if(g.mutable_initializer(), [&](const onnx::TensorProto& t) {
      if (t.name() != key) return false;
      cut.erase(&t);
      return true;
    });
    *g.add_initializer() = detail::tensor_to_proto(data, name);
  }
  // The graph input stays listed (models with IR version < 4 must list initializers as
  // inputs for ONNX shape inference); build_graph() treats inputs with an initializer as
  // constants.

  std::map<std::string, int64_t> sym = opts.dim_values;
  for (const auto& [name, dims] : opts.input_shapes) {
    onnx::ValueInfoProto* in = find_input(g, name);
    if (!in) return make_error(EINVAL, "a shape is given for '" + name + "', not a graph input");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    // An input the compiler cannot take at all says so before its shape is checked.
    if (tt->elem_type() != 0 && !detail::dtype_from_onnx(tt->elem_type())) {
      return make_error(ENOTSUP, "input '" + name + "': unsupported element type " +
                                     onnx::TensorProto_DataType_Name(tt->elem_type()));
    }
    auto* shape = tt->mutable_shape();
    if (shape->dim_size() == 0 && !dims.empty()) {
      for (size_t i = 0; i < dims.size(); ++i) shape->add_dim();
    }
    if (shape->dim_size() != static_cast<int>(dims.size())) {
      return make_error(EINVAL, "input '" + name + "': the model has rank " +
                                    std::to_string(shape->dim_size()) + " but the given shape " +
                                    format::shape_text(dims) + " has rank " +
                                    std::to_string(dims.size()));
    }
    for (int i = 0; i < shape->dim_size(); ++i) {
      const int64_t given = dims[static_cast<size_t>(i)];
      auto* d = shape->mutable_dim(i);
      if (given < 0) return make_error(EINVAL, "input '" + name + "': negative dim in given shape");
      if (d->has_dim_value() && d->dim_value() != given) {
        return make_error(EINVAL, "input '" + name + "': dim " + std::to_string(i) + " is " +
                                      std::to_string(d->dim_value()) + " in the model but " +
                                      std::to_string(given) + " in the given shape");
      }
      if (d->has_dim_param()) {
        auto [it, inserted] = sym.emplace(d->dim_param(), given);
        if (!inserted && it->second != given) {
          return make_error(EINVAL, "input '" + name + "': dim '" + d->dim_param() + "' is " +
                                        std::to_string(given) + " here but " +
                                        std::to_string(it->second) + " elsewhere");
        }
      }
      d->set_dim_value(given);
    }
  }
  for (auto& in : *g.mutable_input()) {
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    for (auto& d : *in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (d.has_dim_param()) {
        if (auto it = sym.find(d.dim_param()); it != sym.end()) d.set_dim_value(it->second);
      }
    }
  }
  return ok();
}

// Names unnamed nodes, then checks each against its schema, the checker and our op set.
Expected<void> check_nodes(onnx::ModelProto& m, const std::map<std::string, int64_t>& opsets,
                           const ImportOptions& opts) {
  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(m.ir_version() > 0 ? static_cast<int>(m.ir_version())
                                        : static_cast<int>(onnx::IR_VERSION));
  std::unordered_map<std::string, int> ctx_opsets;
  for (const auto& [d, v] : opsets) ctx_opsets[d] = static_cast<int>(v);
  ctx.set_opset_imports(ctx_opsets);
  onnx::checker::LexicalScopeContext lex;
  auto* nodes = m.mutable_graph()->mutable_node();
  for (int i = 0; i < nodes->size(); ++i) {
    onnx::NodeProto& n = *nodes->Mutable(i);
    if (n.name().empty()) n.set_name(n.op_type() + "_" + std::to_string(i));
    if (n.domain() == "ai.onnx") n.set_domain("");
    auto it = opsets.find(n.domain());
    if (it == opsets.end()) {
      return make_error(
          EINVAL, node_label(n) + ": domain '" + n.domain() + "' is not imported by the model");
    }
    const auto* schema =
        onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(it->second), n.domain());
    if (!schema) {
      return make_error(ENOTSUP, node_label(n) + ": unknown operator in opset " +
                                     std::to_string(it->second) + " of domain '" +
                                     (n.domain().empty() ? "ai.onnx" : n.domain()) + "'");
    }
    const bool known = n.domain().empty() && (n.op_type() == "Constant" || find_op(n.op_type()));
    if (!known && !opts.allow_unsupported_ops) {
      return make_error(ENOTSUP, node_label(n) + ": unsupported operator");
    }
    if (const OpInfo* op = known ? find_op(n.op_type()) : nullptr;
        op && !op->schema->supports_opset(it->second)) {
      return make_error(ENOTSUP, node_label(n) + ": opset " + std::to_string(it->second) +
                                     " is not supported (the operator library implements " +
                                     n.op_type() + " for opsets " +
                                     std::to_string(op->schema->since) + ".." +
                                     std::to_string(op->schema->until) + ")");
    }
    for (const auto& a : n.attribute()) {
      if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS) {
        return make_error(
            ENOTSUP, node_label(n) + ": subgraph attribute '" + a.name() + "' is not supported");
      }
      // ONNX shape inference divides by these: a zero or negative one must not reach it.
      if ((a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape") &&
          a.type() == onnx::AttributeProto::INTS) {
        for (int64_t v : a.ints()) {
          if (v < 1) {
            return make_error(EINVAL, node_label(n) + ": attribute " + a.name() + " has " +
                                          std::to_string(v) + " (must be >= 1)");
          }
        }
      }
    }
    try {
      onnx::checker::check_node(n, ctx, lex);
    } catch (const std::exception& e) {
      std::string msg = e.what();
      if (auto cut = msg.find("==> Context"); cut != std::string::npos) msg.resize(cut);
      return make_error(EINVAL, node_label(n) + ": " + one_line(msg));
    }
  }
  return ok();
}

Expected<void> infer_shapes(onnx::ModelProto& m) {
  try {
    // check_type off: old exporters emit e.g. int64 Constants in opsets that only allowed
    // float, which runtimes accept; real shape errors still throw in strict mode.
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/1,
                                        /*data_prop=*/true);
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return make_error(EINVAL, "shape inference: " + one_line(e.what()));
  }
  return ok();
}

}  // namespace

Expected<Graph> import_onnx_bytes(std::string_view bytes, const ImportOptions& options,
                                  const std::string& source) {
  auto fail = [&](const Error& e) { return detail::source_error(source, e); };
  try {
    // Large weights are cut out before protobuf parses the model and copied once, from
    // `bytes`, into the graph (onnx_weights.h): `bytes` outlives every use of `cut`.
    std::optional<detail::SplitModel> split;
    if (bytes.size() <= static_cast<size_t>(INT32_MAX)) split = detail::split_weights(bytes);
    const bool any_cut =
        split && std::ranges::any_of(split->cut, [](const auto& c) { return c.has_value(); });
    const std::string_view proto = any_cut ? std::string_view(split->proto) : bytes;
    onnx::ModelProto model;
    if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
        !model.ParseFromArray(proto.data(), static_cast<int>(proto.size()))) {
      return make_error(EINVAL, source + ": not an onnx model (protobuf parse failed)");
    }
    detail::CutWeights cut;
    if (any_cut) {
      const auto& inits = model.graph().initializer();
      if (static_cast<size_t>(inits.size()) != split->cut.size()) {
        return make_error(EINVAL, source + ": initializers parsed differently than walked (" +
                                      std::to_string(inits.size()) + " vs " +
                                      std::to_string(split->cut.size()) + ")");
      }
      for (int i = 0; i < inits.size(); ++i) {
        if (const auto& c = split->cut[static_cast<size_t>(i)]) cut.emplace(&inits.Get(i), *c);
      }
      split->proto = std::string();  // parsed: release it
    }
    if (!model.has_graph()) return make_error(EINVAL, source + ": the model has no graph");
    auto opsets = read_opsets(model);
    if (!opsets) return fail(opsets.error());
    if (auto r = apply_bindings(*model.mutable_graph(), options, cut); !r) return fail(r.error());
    if (auto r = check_nodes(model, *opsets, options); !r) return fail(r.error());
    if (auto r = infer_shapes(model); !r) return fail(r.error());
    auto g = detail::build_graph(model.graph(), *opsets, cut);
    if (!g) return fail(g.error());
    if (auto r = detail::upgrade_legacy_forms(*g); !r) return fail(r.error());
    detail::annotate_quantization(*g);
    if (auto r = g->verify(); !r) return fail(r.error());
    return std::move(*g);
  } catch (const std::exception& e) {
    return fail(make_error(EINVAL, one_line(e.what())));
  }
}

Expected<Graph> import_onnx(const std::string& path, const ImportOptions& options) {
  // Mapped, not read: a model's weights are most of its bytes (ResNet-50: 100 MB), and
  // protobuf copies them once more anyway.
  auto file = format::MappedFile::open(path);
  if (!file) return file.error();  // "PATH: cannot open: No such file or directory"
  const auto bytes = file->bytes();
  return import_onnx_bytes(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), options, path);
}

}  // namespace npu::compiler
