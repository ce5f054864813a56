// The operator registry (npu/ops/registry.h), built once from npu/ops/operators.def, and the
// shape rules.
#include "npu/ops/registry.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>

#include "broadcasting.h"
#include "npu_isa.h"  // the Code column: NPU_ACT_*, NPU_ELTWISE_*, ...
#include "op_call.h"

namespace npu::ops {

namespace {

std::optional<AttrType> attr_type(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, AttrType>, 7> kTypes{{
      {"int", AttrType::kInt},
      {"float", AttrType::kFloat},
      {"string", AttrType::kString},
      {"ints", AttrType::kInts},
      {"floats", AttrType::kFloats},
      {"strings", AttrType::kStrings},
      {"tensor", AttrType::kTensor},
  }};
  for (const auto& [n, t] : kTypes) {
    if (n == name) return t;
  }
  return std::nullopt;
}

// The Params column's spellings.
constexpr ParamSlots none{};
constexpr ParamSlots from(int first) {
  return ParamSlots{0, first};
}
template <typename... Slots>
constexpr ParamSlots at(Slots... slot) {
  return ParamSlots{((uint64_t{1} << slot) | ...), -1};
}

std::vector<OpSchema> build_registry() {
  using namespace types;  // NOLINT: the table's Types column names these sets
  constexpr ShapeRule Same = ShapeRule::kSame, Broadcast = ShapeRule::kBroadcast,
                      Compare = ShapeRule::kCompare, Impl = ShapeRule::kImpl;
  using enum Int8Rule;
  using enum IdentityRule;
  constexpr Int8Rule Through = kThrough, Requantized = kRequantized;
  constexpr IdentityRule Never = kNever, Always = kAlways, Inference = kInference,
                         SameShape = kSameShape, OneInput = kOneInput, IdentityPerm = kIdentityPerm,
                         ZeroPads = kZeroPads, FullSlice = kFullSlice, PlusZero = kPlusZero,
                         MinusZero = kMinusZero, TimesOne = kTimesOne, OverOne = kOverOne;
  std::vector<OpSchema> ops;
#define NPU_ROW(Domain, Name, Since, Until, Types, Shape, Device, Code, Host, Attributes, Params, \
                Int8, Identity)                                                                   \
  ops.push_back(OpSchema{#Name, Domain, Since, Until, Types, Shape, #Device, Code, #Host,         \
                         parse_attribute_schema("operators.def: " #Name, Attributes),             \
                         &detail::Host, Params, Int8, Identity});
#define NPU_OP(...) NPU_ROW("", __VA_ARGS__)
#define NPU_INTERNAL_OP(...) NPU_ROW("npu", __VA_ARGS__)
#include "npu/ops/operators.def"
#undef NPU_INTERNAL_OP
#undef NPU_OP
#undef NPU_ROW
  (void)Same, (void)Broadcast, (void)Compare, (void)Impl;
  (void)Through, (void)Requantized, (void)Never, (void)Always, (void)Inference, (void)SameShape,
      (void)OneInput, (void)IdentityPerm, (void)ZeroPads, (void)FullSlice, (void)PlusZero,
      (void)MinusZero, (void)TimesOne, (void)OverOne;
  return ops;
}

const std::vector<OpSchema>& table() {
  static const std::vector<OpSchema> ops = build_registry();
  return ops;
}

const std::map<std::string_view, const OpSchema*>& index() {
  static const std::map<std::string_view, const OpSchema*> by_name = [] {
    std::map<std::string_view, const OpSchema*> m;
    for (const OpSchema& s : table()) m.emplace(s.name, &s);
    return m;
  }();
  return by_name;
}

}  // namespace

std::vector<AttrSchema> parse_attribute_schema(std::string_view owner, std::string_view text) {
  std::vector<AttrSchema> out;
  size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == ' ') {
      ++pos;
      continue;
    }
    const size_t end = std::min(text.find(' ', pos), text.size());
    std::string_view entry = text.substr(pos, end - pos);
    pos = end;
    AttrSchema a;
    if (entry.ends_with('!')) {
      a.required = true;
      entry.remove_suffix(1);
    }
    if (const size_t eq = entry.find('='); eq != std::string_view::npos) {
      a.default_value = std::string(entry.substr(eq + 1));
      entry = entry.substr(0, eq);
    }
    const size_t colon = entry.find(':');
    const auto type =
        colon == std::string_view::npos ? std::nullopt : attr_type(entry.substr(colon + 1));
    if (!type) {
      std::fprintf(stderr, "npu::ops: %.*s: bad attribute entry '%.*s'\n",
                   static_cast<int>(owner.size()), owner.data(), static_cast<int>(entry.size()),
                   entry.data());
      std::abort();
    }
    a.name = std::string(entry.substr(0, colon));
    a.type = *type;
    out.push_back(std::move(a));
  }
  return out;
}

std::string DTypeSet::to_string() const {
  std::string out;
  for (int t = 0; t <= static_cast<int>(format::DType::kFloat64); ++t) {
    const auto d = static_cast<format::DType>(t);
    if (!contains(d)) continue;
    out += (out.empty() ? "" : ", ") + std::string(format::dtype_name(d));
  }
  return out;
}

const char* attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::kInt:
      return "int";
    case AttrType::kFloat:
      return "float";
    case AttrType::kString:
      return "string";
    case AttrType::kInts:
      return "ints";
    case AttrType::kFloats:
      return "floats";
    case AttrType::kStrings:
      return "strings";
    case AttrType::kTensor:
      return "tensor";
  }
  return "?";
}

const AttrSchema* OpSchema::attribute(std::string_view attr) const {
  for (const AttrSchema& a : attributes) {
    if (a.name == attr) return &a;
  }
  return nullptr;
}

double AttrSchema::number_default() const {
  return default_value ? std::strtod(default_value->c_str(), nullptr) : 0.0;
}

double OpSchema::number_default(std::string_view attr) const {
  const AttrSchema* a = attribute(attr);
  return a ? a->number_default() : 0.0;
}

std::span<const OpSchema> registry() {
  return table();
}

const OpSchema* find(std::string_view op_type) {
  const auto& m = index();
  const auto it = m.find(op_type);
  return it == m.end() ? nullptr : it->second;
}

Expected<std::optional<TensorType>> infer_output(std::string_view op_type,
                                                 std::span<const TensorType> inputs) {
  const OpSchema* s = find(op_type);
  if (s == nullptr || s->shape == ShapeRule::kImpl) return std::optional<TensorType>{};
  if (inputs.empty()) {
    return make_error(EINVAL, std::string(op_type) + ": shape rule needs at least one input");
  }
  if (s->shape == ShapeRule::kSame) return std::optional<TensorType>{inputs[0]};
  static const nlohmann::json kNoAttributes = nlohmann::json::object();
  const OpCall call{std::string(op_type), kNoAttributes, {}};
  std::vector<const detail::Shape*> shapes;
  for (const TensorType& t : inputs) shapes.push_back(&t.shape);
  auto out = detail::broadcast(call, shapes);
  if (!out) return out.error();
  const format::DType dtype =
      s->shape == ShapeRule::kCompare ? format::DType::kBool : inputs[0].dtype;
  return std::optional<TensorType>{TensorType{dtype, std::move(*out)}};
}

}  // namespace npu::ops
