// The assembler: .npuasm text -> command buffer (syntax in docs/asm.md).
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "asm_table.h"
#include "npu/isa/asm.h"
#include "npu/isa/builder.h"
#include "npu/isa/opcodes.h"
#include "npu/isa/validate.h"

namespace npu::isa {
namespace asmtab {

bool parse_f32(std::string_view s, uint32_t& bits) {
  if (s.starts_with("bits(") && s.ends_with(")") && s.size() > 6) {
    std::string_view h = s.substr(5, s.size() - 6);
    if (!h.starts_with("0x") && !h.starts_with("0X")) return false;
    h.remove_prefix(2);
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(h.data(), h.data() + h.size(), v, 16);
    if (ec != std::errc() || p != h.data() + h.size() || h.empty() || v > 0xffffffffu) {
      return false;
    }
    bits = static_cast<uint32_t>(v);
    return true;
  }
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  uint32_t b = 0;
  if (s == "inf" || s == "infinity") {
    b = 0x7f800000u;
  } else if (s == "nan") {
    b = 0x7fc00000u;
  } else {
    auto fmt = std::chars_format::general;
    if (s.starts_with("0x") || s.starts_with("0X")) {
      s.remove_prefix(2);
      fmt = std::chars_format::hex;
    }
    if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.')) {
      return false;
    }
    float f = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), f, fmt);
    if (ec != std::errc() || p != s.data() + s.size()) return false;
    b = std::bit_cast<uint32_t>(f);
  }
  bits = neg ? (b ^ 0x80000000u) : b;
  return true;
}

}  // namespace asmtab

namespace {

using namespace asmtab;
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

constexpr i128 kU64Max = static_cast<i128>(~uint64_t{0});

std::string lower_range(Type t, i128& lo, i128& hi) {
  switch (t) {
    case Type::U8:
      lo = 0, hi = 0xff;
      return "0..255";
    case Type::U16:
      lo = 0, hi = 0xffff;
      return "0..65535";
    case Type::U32:
      lo = 0, hi = 0xffffffffll;
      return "0..4294967295";
    case Type::U64:
      lo = 0, hi = kU64Max;
      return "0..18446744073709551615";
    case Type::S32:
    default:
      lo = INT32_MIN, hi = INT32_MAX;
      return "-2147483648..2147483647";
  }
}

std::string to_string(i128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  u128 u = neg ? -static_cast<u128>(v) : static_cast<u128>(v);
  std::string s;
  while (u) {
    s.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (neg) s.push_back('-');
  std::reverse(s.begin(), s.end());
  return s;
}

bool is_symbol(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string_view::npos ? p : p - start));
    if (p == std::string_view::npos) return out;
    start = p + 1;
  }
}

std::vector<std::string_view> tokenize(std::string_view line) {
  std::vector<std::string_view> toks;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t b = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > b) toks.push_back(line.substr(b, i - b));
  }
  return toks;
}

class Assembler {
 public:
  explicit Assembler(std::string_view file) : file_(file) {}

  Expected<Assembly> run(std::string_view text) {
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t nl = text.find('\n', pos);
      std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
      ++line_;
      NPU_TRY(statement(line));
      if (nl == std::string_view::npos) break;
      pos = nl + 1;
    }
    if (cmds_.empty()) return make_error(EINVAL, std::string(file_) + ": no commands");
    Assembly out;
    out.bytes =
        CommandBufferBuilder::serialize(cmds_, features_ ? *features_ : program_features(cmds_));
    if (version_) {  // .version overrides the header's version fields
      npu_cmdbuf_header h;
      std::memcpy(&h, out.bytes.data(), sizeof h);
      h.version_major = version_->first;
      h.version_minor = version_->second;
      std::memcpy(out.bytes.data(), &h, sizeof h);
    }
    out.lines = std::move(lines_);
    return out;
  }

 private:
  Error fail(const std::string& msg) const {
    return make_error(EINVAL, std::string(file_) + ":" + std::to_string(line_) + ": " + msg);
  }

  Expected<void> statement(std::string_view line) {
    size_t c = line.find_first_of("#;");
    if (c != std::string_view::npos) line = line.substr(0, c);
    auto toks = tokenize(line);
    if (toks.empty()) return ok();
    if (toks[0].starts_with(".")) return directive(toks);
    return command(toks);
  }

  /// Evaluates `[+-]term([+-]term)*`, terms being decimal/0x/0b numbers or .equ symbols.
  Expected<i128> eval(std::string_view s, const std::string& ctx) const {
    if (s.empty()) return fail(ctx + "missing value");
    i128 total = 0;
    size_t i = 0;
    bool first = true;
    while (i < s.size() || first) {
      bool neg = false;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
        neg = s[i] == '-';
        ++i;
      } else if (!first) {
        return fail(ctx + "bad value '" + std::string(s) + "'");
      }
      size_t b = i;
      while (i < s.size() && s[i] != '+' && s[i] != '-') ++i;
      std::string_view term = s.substr(b, i - b);
      first = false;
      if (term.empty()) return fail(ctx + "bad value '" + std::string(s) + "'");
      i128 v = 0;
      if (std::isdigit(static_cast<unsigned char>(term[0]))) {
        int base = 10;
        std::string_view digits = term;
        if (term.size() > 2 && term[0] == '0' && (term[1] == 'x' || term[1] == 'X')) {
          base = 16, digits.remove_prefix(2);
        } else if (term.size() > 2 && term[0] == '0' && (term[1] == 'b' || term[1] == 'B')) {
          base = 2, digits.remove_prefix(2);
        }
        uint64_t u = 0;
        auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), u, base);
        if (ec == std::errc::result_out_of_range) {
          return fail(ctx + "value '" + std::string(term) + "' out of range");
        }
        if (ec != std::errc() || p != digits.data() + digits.size()) {
          return fail(ctx + "bad value '" + std::string(s) + "'");
        }
        v = u;
      } else if (is_symbol(term)) {
        auto it = syms_.find(term);
        if (it == syms_.end()) return fail(ctx + "unknown symbol '" + std::string(term) + "'");
        v = it->second;
      } else {
        return fail(ctx + "bad value '" + std::string(s) + "'");
      }
      total += neg ? -v : v;
    }
    return total;
  }

  Expected<void> directive(const std::vector<std::string_view>& t) {
    const std::string_view d = t[0];
    const std::string ctx = std::string(d) + ": ";
    if (d == ".equ") {
      if (t.size() != 3) return fail(".equ: expected '.equ NAME VALUE'");
      if (!is_symbol(t[1])) return fail(".equ: bad symbol name '" + std::string(t[1]) + "'");
      if (syms_.count(t[1])) {
        return fail(".equ: symbol '" + std::string(t[1]) + "' already defined");
      }
      auto v = eval(t[2], ctx);
      if (!v) return v.error();
      if (*v < -(static_cast<i128>(1) << 63) || *v > kU64Max) {
        return fail(".equ: value " + to_string(*v) + " out of 64-bit range");
      }
      syms_.emplace(std::string(t[1]), *v);
      return ok();
    }
    if (d == ".version") {
      if (version_) return fail(".version: given twice");
      auto parts = t.size() == 2 ? split(t[1], '.') : std::vector<std::string_view>{};
      if (parts.size() != 2) return fail(".version: expected MAJOR.MINOR");
      uint16_t v[2];
      for (int i = 0; i < 2; ++i) {
        auto [p, ec] = std::from_chars(parts[i].data(), parts[i].data() + parts[i].size(), v[i]);
        if (ec != std::errc() || p != parts[i].data() + parts[i].size()) {
          return fail(".version: bad version '" + std::string(t[1]) + "'");
        }
      }
      version_ = {v[0], v[1]};
      return ok();
    }
    if (d == ".features") {
      if (features_) return fail(".features: given twice");
      if (t.size() < 2) return fail(".features: expected feature names or 'none'");
      uint64_t f = 0;
      for (size_t i = 1; i < t.size(); ++i) {
        if (t[i] == "none") continue;
        auto it = std::find_if(std::begin(kFeatures), std::end(kFeatures),
                               [&](const Named& n) { return t[i] == n.name; });
        if (it != std::end(kFeatures)) {
          f |= uint64_t{1} << it->value;
          continue;
        }
        if (!std::isdigit(static_cast<unsigned char>(t[i][0]))) {
          return fail(".features: unknown feature '" + std::string(t[i]) + "'");
        }
        auto v = eval(t[i], ctx);
        if (!v) return v.error();
        if (*v < 0 || *v > kU64Max) return fail(".features: value out of range");
        f |= static_cast<uint64_t>(*v);
      }
      features_ = f;
      return ok();
    }
    if (d == ".raw") {
      npu_cmd c;
      size_t n = 0;
      for (size_t i = 1; i < t.size(); ++i) {
        std::string_view h = t[i];
        if (h.size() % 2) return fail(".raw: odd number of hex digits in '" + std::string(h) + "'");
        for (size_t j = 0; j < h.size(); j += 2) {
          uint8_t byte = 0;
          auto [p, ec] = std::from_chars(h.data() + j, h.data() + j + 2, byte, 16);
          if (ec != std::errc() || p != h.data() + j + 2) {
            return fail(".raw: bad hex byte '" + std::string(h.substr(j, 2)) + "'");
          }
          if (n < NPU_CMD_SIZE) c.bytes[n] = byte;
          ++n;
        }
      }
      if (n != NPU_CMD_SIZE) {
        return fail(".raw: expected 128 bytes, got " + std::to_string(n));
      }
      return push(c);
    }
    return fail("unknown directive '" + std::string(d) + "'");
  }

  Expected<void> push(const npu_cmd& c) {
    if (cmds_.size() >= (0xffffffffu - sizeof(npu_cmdbuf_header)) / NPU_CMD_SIZE) {
      return fail("too many commands");
    }
    cmds_.push_back(c);
    lines_.push_back(line_);
    return ok();
  }

  Expected<void> command(const std::vector<std::string_view>& t) {
    const OpcodeInfo* op = find_opcode(t[0]);
    if (!op) return fail("unknown opcode '" + std::string(t[0]) + "'");
    const std::string name = op->mnemonic;
    const std::span<const Field> fields = fields_of(op->opcode);
    npu_cmd c;
    std::memset(&c, 0, sizeof c);
    c.hdr.opcode = op->opcode;
    std::optional<uint8_t> engine;
    std::vector<const Field*> seen;
    for (size_t i = 1; i < t.size(); ++i) {
      const std::string_view tok = t[i];
      size_t eq = tok.find('=');
      if (eq == std::string_view::npos) {
        if (const std::optional<uint8_t> id = find_engine(tok)) {
          if (engine) return fail(name + ": engine given twice");
          if (!op->allows(*id)) {
            return fail(name + ": engine " + std::string(tok) + " not allowed (expected " +
                        engine_list(*op) + ")");
          }
          engine = id;
          continue;
        }
        auto f = std::find_if(op->flag_names.begin(), op->flag_names.end(),
                              [&](const FlagName& fl) { return tok == fl.name; });
        if (f == op->flag_names.end()) {
          return fail(name + ": unknown flag or engine '" + std::string(tok) + "'");
        }
        if (c.hdr.flags & f->bit)
          return fail(name + ": flag '" + std::string(tok) + "' given twice");
        c.hdr.flags |= f->bit;
        continue;
      }
      const std::string_view key = tok.substr(0, eq);
      auto f = std::find_if(fields.begin(), fields.end(),
                            [&](const Field& fl) { return key == fl.name; });
      if (f == fields.end()) {
        return fail(name + ": unknown field '" + std::string(key) + "'");
      }
      if (std::find(seen.begin(), seen.end(), &*f) != seen.end()) {
        return fail(name + ": field '" + std::string(key) + "' given twice");
      }
      seen.push_back(&*f);
      NPU_TRY(set_field(c, *f, tok.substr(eq + 1), name + ": field " + f->name + ": "));
    }
    if (!engine) engine = op->sole_engine();
    if (!engine) return fail(name + ": missing engine (one of " + engine_list(*op) + ")");
    c.hdr.engine = *engine;
    return push(c);
  }

  static std::string engine_list(const OpcodeInfo& op) {
    std::string s;
    for (uint8_t e = 0; e < NPU_NUM_ENGINES; ++e) {
      if (!op.allows(e)) continue;
      if (!s.empty()) s += ", ";
      s += engine_name(e);
    }
    return s;
  }

  Expected<void> set_field(npu_cmd& c, const Field& f, std::string_view value,
                           const std::string& ctx) const {
    auto parts = split(value, ',');
    if (parts.size() != f.count) {
      return fail(ctx + "expected " + std::to_string(f.count) +
                  (f.count == 1 ? " value" : " values") + ", got " + std::to_string(parts.size()));
    }
    const uint32_t sz = type_size(f.type);
    for (size_t i = 0; i < parts.size(); ++i) {
      uint8_t* dst = c.bytes + f.offset + i * sz;
      const std::string_view p = parts[i];
      if (p.empty()) return fail(ctx + "missing value");
      if (f.type == Type::F32) {
        uint32_t bits = 0;
        if (!parse_f32(p, bits)) return fail(ctx + "bad float '" + std::string(p) + "'");
        std::memcpy(dst, &bits, 4);
        continue;
      }
      if (f.enumeration != Enum::None) {
        auto names = enum_values(f.enumeration);
        auto it =
            std::find_if(names.begin(), names.end(), [&](const Named& n) { return p == n.name; });
        if (it != names.end()) {
          *dst = it->value;
          continue;
        }
        if (is_symbol(p) && !syms_.count(p)) {
          std::string allowed;
          for (const Named& n : names)
            allowed += (allowed.empty() ? "" : "|") + std::string(n.name);
          return fail(ctx + "unknown value '" + std::string(p) + "' (expected " + allowed + ")");
        }
      }
      auto v = eval(p, ctx);
      if (!v) return v.error();
      i128 lo = 0, hi = 0;
      const std::string range = lower_range(f.type, lo, hi);
      if (*v < lo || *v > hi) {
        return fail(ctx + "value " + to_string(*v) + " out of range " + range);
      }
      const uint64_t u = static_cast<uint64_t>(*v);
      switch (sz) {
        case 1:
          *dst = static_cast<uint8_t>(u);
          break;
        case 2: {
          uint16_t x = static_cast<uint16_t>(u);
          std::memcpy(dst, &x, 2);
          break;
        }
        case 4: {
          uint32_t x = static_cast<uint32_t>(u);
          std::memcpy(dst, &x, 4);
          break;
        }
        default:
          std::memcpy(dst, &u, 8);
      }
    }
    return ok();
  }

  std::string_view file_;
  uint32_t line_ = 0;
  std::map<std::string, i128, std::less<>> syms_;
  std::vector<npu_cmd> cmds_;
  std::vector<uint32_t> lines_;
  std::optional<uint64_t> features_;
  std::optional<std::pair<uint16_t, uint16_t>> version_;
};

}  // namespace

Expected<Assembly> assemble_listing(std::string_view text, std::string_view filename) {
  return Assembler(filename).run(text);
}

Expected<std::vector<std::byte>> assemble(std::string_view text, std::string_view filename) {
  auto r = assemble_listing(text, filename);
  if (!r) return r.error();
  return std::move(r->bytes);
}

Expected<void> validate_assembly(const Assembly& assembly, const DeviceConfig& cfg,
                                 std::string_view filename) {
  auto r = validate(assembly.bytes, cfg);
  if (r) return ok();
  Error e = r.error();
  std::string where = std::string(filename);
  const std::string_view m = e.message;
  if (m.starts_with("command ")) {
    uint32_t index = 0;
    auto [p, ec] = std::from_chars(m.data() + 8, m.data() + m.size(), index);
    if (ec == std::errc() && p != m.data() + 8 && index < assembly.lines.size()) {
      where += ":" + std::to_string(assembly.lines[index]);
    }
  }
  e.message = where + ": " + e.message;
  return e;
}

}  // namespace npu::isa
