// The wire-format walk of split_weights() (onnx_weights.h). It knows three messages of
// onnx.proto: ModelProto.graph (field 7), GraphProto.initializer (field 5) and, in a
// TensorProto, data_type (field 2) and raw_data (field 9); every other field is copied byte
// for byte, in order, so protobuf parses the copy exactly as it would the original minus the
// cut raw_data fields.
#include "onnx_weights.h"

#include <cstdint>

namespace npu::compiler::detail {

namespace {

// TensorProto.DataType values of the floating-point types (onnx.proto).
constexpr uint64_t kFloat = 1, kFloat16 = 10, kDouble = 11, kBfloat16 = 16;

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// One field of a message: its number and wire type, its payload (the bytes after the tag for
// fixed and length-delimited fields, the varint's value for varints) and all of its bytes.
struct Field {
  uint32_t number = 0;
  uint32_t wire = 0;
  uint64_t value = 0;
  std::string_view payload;
  std::string_view whole;
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return pos_ == bytes_.size(); }

  // The next field, or false on malformed input (truncated, unknown wire type, group).
  bool next(Field& f) {
    const size_t start = pos_;
    uint64_t tag = 0;
    if (!varint(tag) || tag >> 3 == 0 || tag >> 3 > UINT32_MAX) return false;
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire = static_cast<uint32_t>(tag & 7);
    switch (f.wire) {
      case kVarint:
        if (!varint(f.value)) return false;
        break;
      case kFixed64:
      case kFixed32: {
        const size_t n = f.wire == kFixed64 ? 8 : 4;
        if (bytes_.size() - pos_ < n) return false;
        f.payload = bytes_.substr(pos_, n);
        pos_ += n;
        break;
      }
      case kLengthDelimited: {
        uint64_t n = 0;
        if (!varint(n) || n > bytes_.size() - pos_) return false;
        f.payload = bytes_.substr(pos_, static_cast<size_t>(n));
        pos_ += static_cast<size_t>(n);
        break;
      }
      default:  // groups (3, 4) and the invalid 6, 7
        return false;
    }
    f.whole = bytes_.substr(start, pos_ - start);
    return true;
  }

 private:
  bool varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ == bytes_.size()) return false;
      const auto b = static_cast<uint8_t>(bytes_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }

  std::string_view bytes_;
  size_t pos_ = 0;
};

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

// A length-delimited field `number` holding `payload`.
void put_message(std::string& out, uint32_t number, std::string_view payload) {
  put_varint(out, (uint64_t{number} << 3) | kLengthDelimited);
  put_varint(out, payload.size());
  out += payload;
}

std::span<const std::byte> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// A TensorProto: appended to `out` without its raw_data when that is cut.
bool split_tensor(std::string_view tensor, size_t min_bytes, std::string& out, SplitModel& m) {
  // First the type and the raw_data that protobuf keeps (the last one), wherever they are.
  uint64_t type = 0;
  std::optional<std::string_view> raw;
  Reader r(tensor);
  Field f;
  while (!r.done()) {
    if (!r.next(f)) return false;
    if (f.number == 2 && f.wire == kVarint) type = f.value;
    if (f.number == 9 && f.wire == kLengthDelimited) raw = f.payload;
  }
  const bool floating = type == kFloat || type == kFloat16 || type == kDouble || type == kBfloat16;
  if (!raw || raw->size() < min_bytes || !floating) {
    out += tensor;
    m.cut.emplace_back(std::nullopt);
    return true;
  }
  Reader again(tensor);
  while (!again.done()) {
    again.next(f);  // read once above: cannot fail
    if (!(f.number == 9 && f.wire == kLengthDelimited)) out += f.whole;
  }
  m.cut.emplace_back(as_bytes(*raw));
  return true;
}

bool split_graph(std::string_view graph, size_t min_bytes, std::string& out, SplitModel& m) {
  Reader r(graph);
  Field f;
  std::string tensor;
  while (!r.done()) {
    if (!r.next(f)) return false;
    if (f.number != 5 || f.wire != kLengthDelimited) {
      out += f.whole;
      continue;
    }
    tensor.clear();
    if (!split_tensor(f.payload, min_bytes, tensor, m)) return false;
    put_message(out, 5, tensor);
  }
  return true;
}

}  // namespace

std::optional<SplitModel> split_weights(std::string_view model, size_t min_bytes) {
  SplitModel m;
  Reader r(model);
  Field f;
  std::string graph;
  while (!r.done()) {
    if (!r.next(f)) return std::nullopt;
    if (f.number != 7 || f.wire != kLengthDelimited) {
      m.proto += f.whole;
      continue;
    }
    graph.clear();
    if (!split_graph(f.payload, min_bytes, graph, m)) return std::nullopt;
    put_message(m.proto, 7, graph);
  }
  return m;
}

}  // namespace npu::compiler::detail
