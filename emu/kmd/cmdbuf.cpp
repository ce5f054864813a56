#include "cmdbuf.h"

#include <cstring>
#include <string>

#include <fmt/format.h>

#include "npu_isa.h"

namespace npu::emu::kmd {

Expected<isa::Program> parse_unvalidated(std::span<const std::byte> buffer) {
  npu_cmdbuf_header h{};
  if (buffer.size() < sizeof(h)) {
    return make_error(EINVAL, fmt::format("command buffer: {} bytes, smaller than its {}-byte "
                                          "header",
                                          buffer.size(), sizeof(h)));
  }
  std::memcpy(&h, buffer.data(), sizeof(h));
  if (h.magic != NPU_ISA_MAGIC) {
    return make_error(EINVAL, fmt::format("header: field magic: expected {:#x}, got {:#x}",
                                          NPU_ISA_MAGIC, h.magic));
  }
  if (h.version_major != NPU_ISA_VERSION_MAJOR) {
    return make_error(EINVAL, fmt::format("header: field version_major: expected {}, got {}",
                                          NPU_ISA_VERSION_MAJOR, h.version_major));
  }
  if (h.size != buffer.size()) {
    return make_error(EINVAL, fmt::format("header: field size: expected {} (the submitted "
                                          "cmd_size), got {}",
                                          buffer.size(), h.size));
  }
  const uint64_t body = buffer.size() - sizeof(h);
  if (h.num_cmds == 0 || body % NPU_CMD_SIZE != 0 || body / NPU_CMD_SIZE != h.num_cmds) {
    return make_error(EINVAL, fmt::format("header: field num_cmds: {} commands do not fill the "
                                          "{} bytes after the header",
                                          h.num_cmds, body));
  }
  isa::Program p;
  p.validated = false;  // the device checks each command before running it
  p.header = h;
  p.cmds = isa::copy_commands(buffer.data() + sizeof(h), h.num_cmds);
  return p;
}

namespace {

const char* access_name(uint8_t access) {
  switch (access) {
    case isa::kRead:
      return "read";
    case isa::kWrite:
      return "write";
    default:
      return "read-write";
  }
}

}  // namespace

Expected<void> check_dram_ranges(const isa::Program& program, const Mmu& mmu) {
  for (const isa::DramAccess& d : program.dram) {
    if (d.end <= d.begin) continue;
    if (mmu.translate(d.begin, d.end - d.begin, d.access) != nullptr) continue;
    const uint8_t op =
        d.cmd_index < program.cmds.size() ? program.cmds[d.cmd_index].hdr.opcode : uint8_t{0};
    return make_error(
        EFAULT, fmt::format("command {} ({}): field {}: device range [{:#x}, {:#x}) not inside "
                            "a referenced bo with {} access",
                            d.cmd_index, isa::opcode_name(op), d.field ? d.field : "?", d.begin,
                            d.end, access_name(d.access)));
  }
  return ok();
}

}  // namespace npu::emu::kmd
