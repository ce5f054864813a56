// Typed attribute reads (attributes.h).
#include "attributes.h"

#include <string>

namespace npu::ops::detail {

Expected<int64_t> int_attr(const OpCall& c, const char* name, int64_t def) {
  if (!c.attrs.contains(name)) return def;
  return required_int_attr(c, name);
}

Expected<int64_t> required_int_attr(const OpCall& c, const char* name) {
  if (!c.attrs.contains(name)) return op_error(c, std::string("missing attribute '") + name + "'");
  const json& v = c.attrs[name];
  if (!v.is_number_integer())
    return op_error(c, std::string("attribute ") + name + " is not an int");
  return v.get<int64_t>();
}

Expected<float> float_attr(const OpCall& c, const char* name, float def) {
  if (!c.attrs.contains(name)) return def;
  const json& v = c.attrs[name];
  if (!v.is_number()) return op_error(c, std::string("attribute ") + name + ": not a number");
  return v.get<float>();
}

Expected<std::string> string_attr(const OpCall& c, const char* name, const char* def) {
  if (!c.attrs.contains(name)) return std::string(def);
  const json& v = c.attrs[name];
  if (!v.is_string()) return op_error(c, std::string("attribute ") + name + " is not a string");
  return v.get<std::string>();
}

Expected<float> float_attr(const OpCall& c, const char* name) {
  const AttrSchema* a = c.schema->attribute(name);
  return float_attr(c, name, a && a->default_value ? std::stof(*a->default_value) : 0.0f);
}

Expected<std::string> string_attr(const OpCall& c, const char* name) {
  const AttrSchema* a = c.schema->attribute(name);
  return string_attr(c, name, a && a->default_value ? a->default_value->c_str() : "");
}

Expected<std::optional<std::vector<int64_t>>> ints_attr(const OpCall& c, const char* name) {
  if (!c.attrs.contains(name)) return std::optional<std::vector<int64_t>>{};
  const json& v = c.attrs[name];
  const auto not_ints = [&] {
    return op_error(c, std::string("attribute ") + name + " is not a list of ints");
  };
  if (!v.is_array()) return not_ints();
  std::vector<int64_t> out;
  for (const json& e : v) {
    if (!e.is_number_integer()) return not_ints();
    out.push_back(e.get<int64_t>());
  }
  return std::optional<std::vector<int64_t>>{std::move(out)};
}

Expected<size_t> norm_axis(const OpCall& c, int64_t axis, size_t rank, bool inclusive) {
  const auto r = static_cast<int64_t>(rank) + (inclusive ? 1 : 0);
  const int64_t a = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
  if (a < 0 || a >= r) {
    return op_error(
        c, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  }
  return static_cast<size_t>(a);
}

}  // namespace npu::ops::detail
