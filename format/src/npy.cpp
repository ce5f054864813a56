// The .npy reader and writer. The header is a Python dict literal; we parse exactly the subset
// NumPy writes (strings, True/False, tuples of non-negative ints) with free whitespace, any key
// order and trailing commas, and reject everything else with the position of the problem.
#include "npu/format/npy.h"

#include <cstdio>
#include <optional>

#include "npu/format/file.h"
#include "npu/format/shape.h"

namespace npu::format {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr int64_t kMaxDim = int64_t{1} << 62;

// The shape as the header's Python tuple literal, as NumPy writes it: "(3, 2)", "(3,)", "()".
std::string tuple_literal(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// Element count; nullopt on a negative dim or a count past 2^62.
std::optional<uint64_t> checked_count(const std::vector<int64_t>& shape) {
  const int64_t n = element_count(shape);
  if (n < 0 || n > kMaxDim) return std::nullopt;
  return static_cast<uint64_t>(n);
}

struct Value {
  enum Kind { kString, kBool, kTuple } kind = kString;
  std::string str;
  bool b = false;
  std::vector<int64_t> dims;
};

// Parser of the header dict. Errors carry the byte offset within the header text.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view name) : s_(text), name_(name) {}

  Expected<void> parse(std::optional<Value>& descr, std::optional<Value>& fortran,
                       std::optional<Value>& shape) {
    skip_ws();
    if (!eat('{')) return error("expected '{' to open the header dict");
    for (;;) {
      skip_ws();
      if (eat('}')) break;
      std::string key;
      if (peek() != '\'' && peek() != '"') return error("expected a quoted key or '}'");
      NPU_TRY(parse_string(key));
      skip_ws();
      if (!eat(':')) return error("expected ':' after key '" + key + "'");
      skip_ws();
      std::optional<Value>* slot = nullptr;
      if (key == "descr") {
        slot = &descr;
      } else if (key == "fortran_order") {
        slot = &fortran;
      } else if (key == "shape") {
        slot = &shape;
      } else {
        return error("unexpected key '" + printable(key) + "'");
      }
      if (slot->has_value()) return error("duplicate key '" + key + "'");
      Value v;
      NPU_TRY(parse_value(key, v));
      *slot = std::move(v);
      skip_ws();
      if (eat(',')) continue;
      skip_ws();
      if (eat('}')) break;
      return error("expected ',' or '}' after the value of '" + key + "'");
    }
    skip_ws();
    if (pos_ != s_.size()) return error("unexpected text after the header dict");
    return ok();
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool eat_word(std::string_view w) {
    if (s_.substr(pos_, w.size()) == w) {
      pos_ += w.size();
      return true;
    }
    return false;
  }
  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  static std::string printable(std::string_view v) {
    std::string out;
    for (char c : v.substr(0, 40)) {
      const auto u = static_cast<unsigned char>(c);
      if (u >= 0x20 && u < 0x7f) {
        out += c;
      } else {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\x%02x", u);
        out += buf;
      }
    }
    if (v.size() > 40) out += "...";
    return out;
  }
  Error error(const std::string& what) const {
    return make_error(EINVAL, std::string(name_) + ": header: " + what + " (at header byte " +
                                  std::to_string(pos_) + ")");
  }

  Expected<void> parse_string(std::string& out) {
    const char q = s_[pos_++];
    const size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\') return error("escape sequences in strings are not supported");
      if (s_[pos_] == '\n') return error("unterminated string");
      ++pos_;
    }
    if (pos_ >= s_.size()) return error("unterminated string");
    out.assign(s_.substr(start, pos_ - start));
    ++pos_;
    return ok();
  }

  Expected<void> parse_int(int64_t& out) {
    if (peek() == '-') return error("negative dimension in shape");
    if (peek() < '0' || peek() > '9') return error("expected a non-negative integer in shape");
    // A Python integer literal has no leading zeros ("028" is a SyntaxError; NumPy refuses it).
    if (peek() == '0' && pos_ + 1 < s_.size() && s_[pos_ + 1] >= '0' && s_[pos_ + 1] <= '9') {
      return error("leading zero in a dimension of shape");
    }
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      const int digit = s_[pos_] - '0';
      if (v > (kMaxDim - digit) / 10) return error("dimension too large in shape");
      v = v * 10 + digit;
      ++pos_;
    }
    eat('L');  // Python 2 longs ("3L") in files written by old NumPy
    out = v;
    return ok();
  }

  Expected<void> parse_value(const std::string& key, Value& v) {
    const char c = peek();
    if (c == '\'' || c == '"') {
      v.kind = Value::kString;
      return parse_string(v.str);
    }
    if (eat_word("True")) {
      v.kind = Value::kBool;
      v.b = true;
      return ok();
    }
    if (eat_word("False")) {
      v.kind = Value::kBool;
      v.b = false;
      return ok();
    }
    if (eat('(')) {
      v.kind = Value::kTuple;
      for (;;) {
        skip_ws();
        if (eat(')')) return ok();
        if (v.dims.size() >= 64) return error("shape has more than 64 dimensions");
        int64_t d = 0;
        NPU_TRY(parse_int(d));
        v.dims.push_back(d);
        skip_ws();
        if (eat(',')) continue;
        skip_ws();
        if (eat(')')) return ok();
        return error("expected ',' or ')' in shape");
      }
    }
    if (c == '[' && key == "descr") {
      return error("structured dtypes (descr given as a list) are not supported");
    }
    return error("unsupported value for '" + key + "' (expected a string, True/False or a tuple)");
  }

  std::string_view s_;
  std::string_view name_;
  size_t pos_ = 0;
};

Expected<DType> parse_descr(const std::string& d, std::string_view name) {
  auto bad = [&](const std::string& why) {
    return make_error(EINVAL, std::string(name) + ": header: descr '" + d + "': " + why);
  };
  if (d.empty()) return bad("empty dtype");
  char order = '=';
  std::string_view body = d;
  if (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=') {
    order = d[0];
    body.remove_prefix(1);
  }
  struct Code {
    const char* code;
    DType type;
  };
  static constexpr Code kCodes[] = {
      {"b1", DType::kBool},    {"?", DType::kBool},     {"i1", DType::kInt8},
      {"u1", DType::kUint8},   {"i2", DType::kInt16},   {"u2", DType::kUint16},
      {"i4", DType::kInt32},   {"u4", DType::kUint32},  {"i8", DType::kInt64},
      {"u8", DType::kUint64},  {"f2", DType::kFloat16}, {"f4", DType::kFloat32},
      {"f8", DType::kFloat64},
  };
  for (const Code& c : kCodes) {
    if (body != c.code) continue;
    const bool one_byte = dtype_size(c.type) == 1;
    if (order == '>' && !one_byte) {
      return bad(
          "big-endian data is not supported (save with arr.astype(arr.dtype.newbyteorder('<')))");
    }
    if (order == '|' && !one_byte) return bad("'|' (no byte order) is only valid for 1-byte types");
    return c.type;
  }
  if (!body.empty() && (body[0] == 'O')) return bad("object arrays are not supported");
  if (!body.empty() && (body[0] == 'U' || body[0] == 'S'))
    return bad("string arrays are not supported");
  return bad(
      "unsupported dtype (supported: bool, int8, uint8, int16, uint16, int32, uint32, "
      "int64, uint64, float16, float32, float64)");
}

uint32_t read_le(const std::byte* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint32_t(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

}  // namespace

int64_t NpyArray::num_elements() const {
  return std::max<int64_t>(element_count(shape), 0);
}

NpyArray NpyArray::zeros(DType dtype, std::vector<int64_t> shape) {
  NpyArray a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.data.resize(static_cast<size_t>(a.num_elements()) * dtype_size(dtype));
  return a;
}

Expected<NpyArray> parse_npy(std::span<const std::byte> bytes, std::string_view name) {
  const std::string n(name);
  if (bytes.size() < kMagicLen || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0) {
    return make_error(EINVAL, n + ": not a .npy file (missing the \\x93NUMPY magic)");
  }
  if (bytes.size() < 10) {
    return make_error(EINVAL, n + ": truncated .npy preamble: " + std::to_string(bytes.size()) +
                                  " bytes, need at least 10");
  }
  const unsigned major = static_cast<uint8_t>(bytes[6]);
  const unsigned minor = static_cast<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return make_error(EINVAL, n + ": unsupported .npy format version " + std::to_string(major) +
                                  "." + std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }
  const size_t len_size = major == 1 ? 2 : 4;
  const size_t prefix = 8 + len_size;
  if (bytes.size() < prefix) {
    return make_error(EINVAL, n + ": truncated .npy preamble: " + std::to_string(bytes.size()) +
                                  " bytes, need " + std::to_string(prefix));
  }
  const uint64_t header_len = read_le(bytes.data() + 8, len_size);
  if (header_len > bytes.size() - prefix) {
    return make_error(EINVAL, n + ": header length " + std::to_string(header_len) +
                                  " beyond file size " + std::to_string(bytes.size()));
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes.data() + prefix), header_len);
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0 || (c >= 0x80 && major < 3)) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "%02x", c);
      return make_error(EINVAL, n + ": header: invalid byte 0x" + hex + " (at header byte " +
                                    std::to_string(i) + ")");
    }
  }
  std::optional<Value> descr, fortran, shape;
  HeaderParser parser(text, name);
  NPU_TRY(parser.parse(descr, fortran, shape));
  if (!descr) return make_error(EINVAL, n + ": header: missing key 'descr'");
  if (!fortran) return make_error(EINVAL, n + ": header: missing key 'fortran_order'");
  if (!shape) return make_error(EINVAL, n + ": header: missing key 'shape'");
  if (descr->kind != Value::kString) {
    return make_error(EINVAL, n + ": header: 'descr' must be a string");
  }
  if (fortran->kind != Value::kBool) {
    return make_error(EINVAL, n + ": header: 'fortran_order' must be True or False");
  }
  if (shape->kind != Value::kTuple) {
    return make_error(EINVAL, n + ": header: 'shape' must be a tuple of integers");
  }
  auto dtype = parse_descr(descr->str, name);
  if (!dtype) return dtype.error();

  NpyArray a;
  a.dtype = *dtype;
  a.shape = std::move(shape->dims);
  const auto count = checked_count(a.shape);
  uint64_t expect = 0;
  if (!count || __builtin_mul_overflow(*count, uint64_t(dtype_size(a.dtype)), &expect)) {
    return make_error(EINVAL, n + ": header: shape " + shape_text(a.shape) + " is too large");
  }
  // Fortran and C order are the same bytes when at most one dimension exceeds 1.
  size_t non_unit = 0;
  for (int64_t d : a.shape) non_unit += d > 1;
  if (fortran->b && non_unit > 1 && *count > 0) {
    return make_error(EINVAL, n + ": header: fortran_order True is not supported "
                                  "(save a C-order array, e.g. np.ascontiguousarray)");
  }
  const uint64_t have = bytes.size() - prefix - header_len;
  if (have != expect) {
    return make_error(EINVAL, n + ": data: shape " + shape_text(a.shape) + " " +
                                  dtype_name(a.dtype) + " needs " + std::to_string(expect) +
                                  " bytes, file has " + std::to_string(have) +
                                  (have < expect ? " (truncated)" : " (trailing bytes)"));
  }
  const std::byte* data = bytes.data() + prefix + header_len;
  if (a.dtype == DType::kBool) {
    for (uint64_t i = 0; i < expect; ++i) {
      const auto v = static_cast<uint8_t>(data[i]);
      if (v > 1) {
        return make_error(EINVAL, n + ": data: bool element " + std::to_string(i) + " has value " +
                                      std::to_string(v) + " (expected 0 or 1)");
      }
    }
  }
  a.data.assign(data, data + expect);
  return a;
}

Expected<NpyArray> read_npy(const std::string& path) {
  auto bytes = read_file(path);
  if (!bytes) return bytes.error();
  return parse_npy(*bytes, path);
}

std::vector<std::byte> serialize_npy(const NpyArray& a) {
  // NumPy's _write_array_header: sorted keys, repr() of each value, "}" then spaces and '\n'
  // so that magic + version + length + header is a multiple of 64.
  std::string header = std::string("{'descr': '") + npy_descr(a.dtype) +
                       "', 'fortran_order': False, 'shape': " + tuple_literal(a.shape) + ", }";
  unsigned major = 1;
  size_t prefix = 10;
  auto padded = [&] { return (prefix + header.size() + 1 + 63) / 64 * 64 - prefix; };
  if (padded() > 0xffff) {
    major = 2;
    prefix = 12;
  }
  const size_t hlen = padded();
  header.resize(hlen - 1, ' ');
  header += '\n';

  std::vector<std::byte> out;
  out.reserve(prefix + hlen + a.data.size());
  for (size_t i = 0; i < kMagicLen; ++i) out.push_back(std::byte(uint8_t(kMagic[i])));
  out.push_back(std::byte(uint8_t(major)));
  out.push_back(std::byte{0});
  for (size_t i = 0; i < prefix - 8; ++i) out.push_back(std::byte(uint8_t(hlen >> (8 * i))));
  for (char c : header) out.push_back(std::byte(uint8_t(c)));
  out.insert(out.end(), a.data.begin(), a.data.end());
  return out;
}

Expected<void> check_npy(const ArrayView& a, std::string_view name) {
  const std::string n(name);
  const auto count = checked_count(a.shape);
  uint64_t expect = 0;
  if (!count || __builtin_mul_overflow(*count, uint64_t(dtype_size(a.dtype)), &expect)) {
    return make_error(EINVAL, n + ": invalid shape " + shape_text(a.shape));
  }
  if (a.data.size() != expect) {
    return make_error(EINVAL, n + ": shape " + shape_text(a.shape) + " " + dtype_name(a.dtype) +
                                  " needs " + std::to_string(expect) + " bytes, array has " +
                                  std::to_string(a.data.size()));
  }
  if (a.dtype == DType::kBool) {
    for (size_t i = 0; i < a.data.size(); ++i) {
      if (static_cast<uint8_t>(a.data[i]) > 1) {
        return make_error(EINVAL, n + ": bool element " + std::to_string(i) + " is not 0 or 1");
      }
    }
  }
  return ok();
}

Expected<void> write_npy(const std::string& path, const NpyArray& a) {
  NPU_TRY(check_npy(a, path));
  return write_file(path, serialize_npy(a));
}

}  // namespace npu::format
