// IR <-> ONNX protobuf conversions: tensors (raw_data and typed fields; external data is
// refused), tensor types and a whole-graph export used to re-run ONNX shape inference.
#include "onnx_proto.h"

#include <cctype>
#include <cstring>
#include <type_traits>

#include "huge_pages.h"

namespace npu::compiler::detail {

std::string one_line(std::string s) {
  std::string out;
  out.reserve(s.size());
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  while (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

Error source_error(const std::string& source, const Error& e) {
  std::string msg = source + ": " + e.message;
  for (char& c : msg) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return make_error(e.code, std::move(msg));
}

namespace {

struct OnnxType {
  int onnx;
  DType dtype;
};
constexpr OnnxType kOnnxTypes[] = {
    {onnx::TensorProto::FLOAT, DType::kFloat32},  {onnx::TensorProto::UINT8, DType::kUint8},
    {onnx::TensorProto::INT8, DType::kInt8},      {onnx::TensorProto::INT32, DType::kInt32},
    {onnx::TensorProto::INT64, DType::kInt64},    {onnx::TensorProto::BOOL, DType::kBool},
    {onnx::TensorProto::DOUBLE, DType::kFloat64}, {onnx::TensorProto::INT16, DType::kInt16},
    {onnx::TensorProto::UINT16, DType::kUint16},  {onnx::TensorProto::UINT32, DType::kUint32},
    {onnx::TensorProto::UINT64, DType::kUint64},  {onnx::TensorProto::FLOAT16, DType::kFloat16},
};

template <typename Field>
void copy_typed(const Field& field, NpyArray& t, bool as_double) {
  for (int i = 0; i < field.size(); ++i) {
    if (as_double) {
      format::set_number(t, i, static_cast<double>(field.Get(i)));
    } else {
      format::set_int(t, i, static_cast<int64_t>(field.Get(i)));
    }
  }
}

}  // namespace

std::optional<DType> dtype_from_onnx(int onnx_type) {
  for (const OnnxType& t : kOnnxTypes) {
    if (t.onnx == onnx_type) return t.dtype;
  }
  return std::nullopt;
}

int dtype_to_onnx(DType t) {
  for (const OnnxType& o : kOnnxTypes) {
    if (o.dtype == t) return o.onnx;
  }
  return onnx::TensorProto::UNDEFINED;
}

Expected<NpyArray> tensor_from_proto(const onnx::TensorProto& p, const std::string& what,
                                     std::optional<std::span<const std::byte>> raw_data) {
  if (p.data_location() == onnx::TensorProto::EXTERNAL || p.external_data_size() > 0) {
    return make_error(ENOTSUP, what +
                                   ": external tensor data is not supported (save the model "
                                   "with all tensors inside the .onnx file)");
  }
  if (p.has_segment()) return make_error(ENOTSUP, what + ": segmented tensors are not supported");
  const std::optional<DType> dtype = dtype_from_onnx(p.data_type());
  if (!dtype) {
    return make_error(ENOTSUP, what + ": unsupported element type " +
                                   onnx::TensorProto_DataType_Name(p.data_type()));
  }
  std::vector<int64_t> dims;
  for (int64_t d : p.dims()) {
    if (d < 0) return make_error(EINVAL, what + ": negative dim " + std::to_string(d));
    dims.push_back(d);
  }
  const int64_t count = format::element_count(dims);
  if (count < 0 || count > (int64_t{1} << 40)) {
    return make_error(EINVAL, what + ": too many elements");
  }
  const size_t nbytes = static_cast<size_t>(count) * format::dtype_size(*dtype);
  if (!raw_data && p.has_raw_data()) {
    raw_data =
        std::span(reinterpret_cast<const std::byte*>(p.raw_data().data()), p.raw_data().size());
  }
  if (raw_data) {
    if (raw_data->size() != nbytes) {
      return make_error(EINVAL, what + ": raw_data has " + std::to_string(raw_data->size()) +
                                    " bytes, expected " + std::to_string(nbytes));
    }
    NpyArray t;  // the bytes copied once, without zero-filling first
    t.dtype = *dtype;
    t.shape = std::move(dims);
    reserve_huge(t.data, nbytes);
    t.data.assign(raw_data->begin(), raw_data->end());
    if (t.dtype == DType::kBool) {  // any nonzero byte is true; the IR keeps bools 0/1
      for (std::byte& b : t.data) b = std::byte{b != std::byte{0}};
    }
    return t;
  }
  // int32, int16, uint16, int8, uint8 and bool live in int32_data; uint32 and uint64 in
  // uint64_data (onnx.proto).
  const bool in_uint64 = *dtype == DType::kUint32 || *dtype == DType::kUint64;
  const int64_t have = *dtype == DType::kFloat32   ? p.float_data_size()
                       : *dtype == DType::kFloat64 ? p.double_data_size()
                       : *dtype == DType::kInt64   ? p.int64_data_size()
                       : in_uint64                 ? p.uint64_data_size()
                                                   : p.int32_data_size();
  if (have != count) {
    return make_error(EINVAL, what + ": has " + std::to_string(have) + " values for " +
                                  std::to_string(count) + " elements");
  }
  NpyArray t = NpyArray::zeros(*dtype, std::move(dims));
  switch (t.dtype) {
    case DType::kFloat32:
      copy_typed(p.float_data(), t, true);
      break;
    case DType::kFloat64:
      copy_typed(p.double_data(), t, true);
      break;
    case DType::kInt64:
      copy_typed(p.int64_data(), t, false);
      break;
    case DType::kUint32:
    case DType::kUint64:  // set_int stores the two's-complement bits: values above 2^63 survive
      copy_typed(p.uint64_data(), t, false);
      break;
    case DType::kFloat16:  // int32_data holds each element's bit pattern in its low 16 bits
      for (int i = 0; i < p.int32_data_size(); ++i) {
        const auto bits = static_cast<uint16_t>(p.int32_data(i));
        std::memcpy(t.data.data() + 2 * static_cast<size_t>(i), &bits, 2);
      }
      break;
    default:
      copy_typed(p.int32_data(), t, false);
      break;
  }
  return t;
}

onnx::TensorProto tensor_to_proto(const NpyArray& t, const std::string& name) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(dtype_to_onnx(t.dtype));
  for (int64_t d : t.shape) p.add_dims(d);
  p.set_raw_data(std::string(reinterpret_cast<const char*>(t.data.data()), t.data.size()));
  return p;
}

Expected<void> type_from_proto(const onnx::TypeProto& type, const std::string& what, Value& v) {
  if (!type.has_tensor_type()) {
    return make_error(ENOTSUP, what + ": only tensor types are supported");
  }
  const auto& tt = type.tensor_type();
  if (tt.elem_type() != 0) {
    v.dtype = dtype_from_onnx(tt.elem_type());
    if (!v.dtype) {
      return make_error(ENOTSUP, what + ": unsupported element type " +
                                     onnx::TensorProto_DataType_Name(tt.elem_type()));
    }
  }
  if (tt.has_shape()) {
    Shape s;
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0) {
        s.push_back(Dim::fixed(d.dim_value()));
      } else {
        s.push_back(Dim::named(d.has_dim_param() ? d.dim_param() : ""));
      }
    }
    v.shape = std::move(s);
  }
  return ok();
}

onnx::TypeProto type_to_proto(const Value& v) {
  onnx::TypeProto t;
  auto* tt = t.mutable_tensor_type();
  tt->set_elem_type(v.dtype ? dtype_to_onnx(*v.dtype) : onnx::TensorProto::UNDEFINED);
  if (v.shape) {
    auto* shape = tt->mutable_shape();
    for (const Dim& d : *v.shape) {
      auto* dim = shape->add_dim();
      if (d.is_static()) {
        dim->set_dim_value(d.value);
      } else if (!d.symbol.empty()) {
        dim->set_dim_param(d.symbol);
      }
    }
  }
  return t;
}

namespace {
void attr_to_proto(const std::string& key, const AttrValue& a, onnx::AttributeProto& p) {
  p.set_name(key);
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          p.set_type(onnx::AttributeProto::INT);
          p.set_i(x);
        } else if constexpr (std::is_same_v<T, float>) {
          p.set_type(onnx::AttributeProto::FLOAT);
          p.set_f(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          p.set_type(onnx::AttributeProto::STRING);
          p.set_s(x);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          p.set_type(onnx::AttributeProto::INTS);
          for (int64_t i : x) p.add_ints(i);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          p.set_type(onnx::AttributeProto::FLOATS);
          for (float f : x) p.add_floats(f);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          p.set_type(onnx::AttributeProto::STRINGS);
          for (const auto& s : x) p.add_strings(s);
        } else {
          p.set_type(onnx::AttributeProto::TENSOR);
          *p.mutable_t() = tensor_to_proto(x, key);
        }
      },
      a);
}
}  // namespace

onnx::ModelProto export_onnx(const Graph& g, size_t max_constant_bytes) {
  onnx::ModelProto m;
  m.set_ir_version(onnx::IR_VERSION);
  m.set_producer_name("npuc");
  for (const auto& [domain, version] : g.opsets) {
    auto* op = m.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  auto* graph = m.mutable_graph();
  graph->set_name(g.name);
  std::vector<bool> used(g.num_values(), false);
  for (const Node& n : g.nodes) {
    for (ValueId i : n.inputs) {
      if (i >= 0) used[static_cast<size_t>(i)] = true;
    }
  }
  for (ValueId o : g.outputs) used[static_cast<size_t>(o)] = true;
  for (ValueId i : g.inputs) {
    auto* vi = graph->add_input();
    vi->set_name(g.value(i).name);
    *vi->mutable_type() = type_to_proto(g.value(i));
  }
  for (size_t id = 0; id < g.num_values(); ++id) {
    const Value& v = g.value(static_cast<ValueId>(id));
    if (!v.constant || !used[id]) continue;
    if (v.constant->data.size() > max_constant_bytes && v.constant->dtype != DType::kInt64) {
      auto* vi = graph->add_input();
      vi->set_name(v.name);
      *vi->mutable_type() = type_to_proto(v);
      continue;
    }
    *graph->add_initializer() = tensor_to_proto(*v.constant, v.name);
  }
  for (const Node& n : g.nodes) {
    auto* p = graph->add_node();
    p->set_name(n.name);
    p->set_op_type(n.op_type);
    p->set_domain(n.domain);
    for (ValueId i : n.inputs) p->add_input(i >= 0 ? g.value(i).name : "");
    for (ValueId o : n.outputs) p->add_output(o >= 0 ? g.value(o).name : "");
    for (const auto& [key, a] : n.attrs) attr_to_proto(key, a, *p->add_attribute());
    for (ValueId o : n.outputs) {
      if (o < 0 || !g.value(o).dtype || g.is_graph_output(o)) continue;
      auto* vi = graph->add_value_info();
      vi->set_name(g.value(o).name);
      *vi->mutable_type() = type_to_proto(g.value(o));
    }
  }
  for (ValueId o : g.outputs) {
    auto* vi = graph->add_output();
    vi->set_name(g.value(o).name);
    *vi->mutable_type() = type_to_proto(g.value(o));
  }
  return m;
}

}  // namespace npu::compiler::detail
