// The disassembler: command buffer -> canonical .npuasm text (syntax in docs/asm.md), and the
// warning-style validation report npu-objdump prints.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>

#include "asm_table.h"
#include "common.h"
#include "npu/isa/asm.h"
#include "npu/isa/opcodes.h"
#include "npu/isa/validate.h"

namespace npu::isa {
namespace {

using namespace asmtab;
using detail::hex;

std::string format_f32(uint32_t bits) {
  if (bits == 0x7fc00000u) return "nan";
  if (bits == 0xffc00000u) return "-nan";
  const float f = std::bit_cast<float>(bits);
  std::string out;
  if ((bits & 0x7fffffffu) == 0x7f800000u) {
    out = (bits >> 31) ? "-inf" : "inf";
  } else if (f == f) {
    char buf[64];
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, f);
    if (ec == std::errc()) out.assign(buf, p);
  }
  uint32_t back = 0;
  if (!out.empty() && parse_f32(out, back) && back == bits) return out;
  char buf[24];
  std::snprintf(buf, sizeof buf, "bits(0x%08x)", bits);
  return buf;
}

uint64_t load(const uint8_t* p, Type t) {
  switch (t) {
    case Type::U8:
      return *p;
    case Type::U16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case Type::U64: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    default: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
  }
}

std::string format_value(const Field& f, const uint8_t* p) {
  const uint64_t v = load(p, f.type);
  if (f.type == Type::F32) return format_f32(static_cast<uint32_t>(v));
  if (f.type == Type::S32) return std::to_string(static_cast<int32_t>(static_cast<uint32_t>(v)));
  if (f.enumeration != Enum::None) {
    for (const Named& n : enum_values(f.enumeration)) {
      if (n.value == v) return n.name;
    }
  }
  return f.style == Style::Hex || f.style == Style::Addr ? hex(v) : std::to_string(v);
}

/// Why `c` needs `.raw`, or empty when the text form expresses it exactly.
std::string raw_reason(const npu_cmd& c, const OpcodeInfo* op) {
  char buf[64];
  if (!op) {
    std::snprintf(buf, sizeof buf, "unknown opcode 0x%02x", c.hdr.opcode);
    return buf;
  }
  if (c.hdr.engine >= NPU_NUM_ENGINES) return "unknown engine " + std::to_string(c.hdr.engine);
  if (!op->allows(c.hdr.engine)) {
    return std::string("engine ") + engine_name(c.hdr.engine) + " not allowed for " + op->mnemonic;
  }
  if (c.hdr.flags & ~op->flags) return "undefined flag bits " + hex(c.hdr.flags & ~op->flags);
  npu_cmd expressed;
  std::memset(&expressed, 0, sizeof expressed);
  expressed.hdr.opcode = c.hdr.opcode;
  expressed.hdr.engine = c.hdr.engine;
  expressed.hdr.flags = c.hdr.flags;
  for (const Field& f : fields_of(op->opcode)) {
    const size_t n = size_t{type_size(f.type)} * f.count;
    std::memcpy(expressed.bytes + f.offset, c.bytes + f.offset, n);
  }
  if (std::memcmp(&expressed, &c, sizeof c) != 0) return "non-zero reserved bytes";
  return {};
}

std::string format_command(const npu_cmd& c) {
  const OpcodeInfo* op = find_opcode(c.hdr.opcode);
  const std::string why = raw_reason(c, op);
  if (!why.empty()) {
    std::string s = ".raw";
    char buf[4];
    for (size_t i = 0; i < NPU_CMD_SIZE; ++i) {
      if (i % 8 == 0) s += ' ';
      std::snprintf(buf, sizeof buf, "%02x", c.bytes[i]);
      s += buf;
    }
    return s + "  # " + why;
  }
  std::string s = op->mnemonic;
  if (!op->sole_engine()) s += std::string(" ") + engine_name(c.hdr.engine);
  for (const Field& f : fields_of(op->opcode)) {
    const uint32_t sz = type_size(f.type);
    const uint8_t* p = c.bytes + f.offset;
    const bool always = f.style == Style::Addr || f.style == Style::Key;
    if (!always && std::all_of(p, p + size_t{sz} * f.count, [](uint8_t b) { return b == 0; })) {
      continue;
    }
    s += ' ';
    s += f.name;
    s += '=';
    for (uint32_t i = 0; i < f.count; ++i) {
      if (i) s += ',';
      s += format_value(f, p + size_t{i} * sz);
    }
  }
  for (const FlagName& f : op->flag_names) {
    if (c.hdr.flags & f.bit) s += std::string(" ") + f.name;
  }
  return s;
}

std::string format_features(uint64_t f) {
  if (f == 0) return "none";
  std::string s;
  for (const Named& n : kFeatures) {
    if (f & (uint64_t{1} << n.value)) {
      s += (s.empty() ? "" : " ") + std::string(n.name);
      f &= ~(uint64_t{1} << n.value);
    }
  }
  if (f) s += (s.empty() ? "" : " ") + hex(f);
  return s;
}

Error header_error(const std::string& what) {
  return make_error(EINVAL, "header: " + what);
}

/// Checks what the disassembler needs of the header and returns it.
Expected<npu_cmdbuf_header> read_header(std::span<const std::byte> buf) {
  npu_cmdbuf_header h;
  if (buf.size() < sizeof h) {
    return make_error(EINVAL, "buffer too short: " + std::to_string(buf.size()) +
                                  " bytes, the header alone is 32");
  }
  std::memcpy(&h, buf.data(), sizeof h);
  if (h.magic != NPU_ISA_MAGIC) {
    return header_error("bad magic " + hex(h.magic) + ", expected " + hex(NPU_ISA_MAGIC));
  }
  if (h.size != buf.size()) {
    return header_error("size " + std::to_string(h.size) + " does not match the buffer's " +
                        std::to_string(buf.size()) + " bytes");
  }
  if (h.num_cmds == 0) return header_error("num_cmds is 0");
  if (uint64_t{h.num_cmds} * NPU_CMD_SIZE + sizeof h != h.size) {
    return header_error("num_cmds " + std::to_string(h.num_cmds) + " does not match size " +
                        std::to_string(h.size) + " (32 + num_cmds * 128)");
  }
  if (h.reserved != 0) return header_error("reserved must be zero, got " + hex(h.reserved));
  return h;
}

}  // namespace

Expected<std::string> disassemble(std::span<const std::byte> buffer, DisasmOptions opts) {
  auto hdr = read_header(buffer);
  if (!hdr) return hdr.error();
  const npu_cmdbuf_header& h = *hdr;
  std::string out = "# npu command buffer: " + std::to_string(h.num_cmds) + " commands, " +
                    std::to_string(h.size) + " bytes\n";
  out +=
      ".version " + std::to_string(h.version_major) + "." + std::to_string(h.version_minor) + "\n";
  out += ".features " + format_features(h.required_features) + "\n";
  for (uint32_t i = 0; i < h.num_cmds; ++i) {
    npu_cmd c;
    std::memcpy(&c, buffer.data() + sizeof h + size_t{i} * NPU_CMD_SIZE, sizeof c);
    std::string line = format_command(c);
    if (opts.index_comments) {
      // A .raw line already carries a comment saying why; fold the index into it.
      const size_t hash = line.starts_with(".raw") ? line.find("  # ") : std::string::npos;
      if (hash != std::string::npos) {
        line.insert(hash + 4, "[" + std::to_string(i) + "] ");
      } else {
        line += "  # [" + std::to_string(i) + "]";
      }
    }
    out += line;
    out += '\n';
  }
  return out;
}

std::vector<Error> validation_problems(std::span<const std::byte> buffer, const DeviceConfig& cfg) {
  std::vector<Error> problems;
  auto h = read_header(buffer);
  if (!h) {
    if (auto r = validate(buffer, cfg); !r) problems.push_back(r.error());
    return problems;
  }
  // Each command on its own; then the buffer-wide rules on a copy in which every bad command
  // is replaced by a harmless one (a clean END stays an END), so they are reported as well.
  std::vector<std::byte> patched(buffer.begin(), buffer.end());
  for (uint32_t i = 0; i < h->num_cmds; ++i) {
    std::byte* at = patched.data() + sizeof(npu_cmdbuf_header) + size_t{i} * NPU_CMD_SIZE;
    npu_cmd c;
    std::memcpy(&c, at, sizeof c);
    if (auto r = check_command(c, i, cfg); !r) {
      problems.push_back(r.error());
      const uint8_t op = c.hdr.opcode == NPU_OP_END ? NPU_OP_END : NPU_OP_NOP;
      std::memset(&c, 0, sizeof c);
      c.hdr.opcode = op;
      c.hdr.engine = NPU_ENGINE_CP;
      std::memcpy(at, &c, sizeof c);
    }
  }
  if (auto r = validate(patched, cfg); !r) {
    const bool dup = std::any_of(problems.begin(), problems.end(),
                                 [&](const Error& e) { return e.message == r.error().message; });
    if (!dup) problems.push_back(r.error());
  }
  return problems;
}

}  // namespace npu::isa
