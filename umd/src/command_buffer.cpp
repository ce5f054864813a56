// CommandBuffer: buffer references at record time; validation, DRAM-range check and upload at
// finalize (the one place libnpu validates, with the shared isa::validate()).
#include "npu/command_buffer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "state.h"

namespace npu {

namespace {

const char* access_name(uint32_t access) {
  switch (access) {
    case DRM_NPU_ACCESS_READ:
      return "read";
    case DRM_NPU_ACCESS_WRITE:
      return "write";
    default:
      return "read-write";
  }
}

}  // namespace

CommandBuffer::CommandBuffer(Device device) : device_(std::move(device)) {}

CommandBuffer CommandBuffer::from_bytes(Device device, std::span<const std::byte> bytes) {
  CommandBuffer cb(std::move(device));
  cb.raw_ = true;
  cb.bytes_.assign(bytes.begin(), bytes.end());
  return cb;
}

uint32_t CommandBuffer::dma_load(const Buffer& src, uint64_t offset, isa::DmaArgs args) {
  reference(src, DRM_NPU_ACCESS_READ, "dma_load");
  args.dram = src.device_address() + offset;
  return touch(builder_.dma_load(args));
}

uint32_t CommandBuffer::dma_store(const Buffer& dst, uint64_t offset, isa::DmaArgs args) {
  reference(dst, DRM_NPU_ACCESS_WRITE, "dma_store");
  args.dram = dst.device_address() + offset;
  return touch(builder_.dma_store(args));
}

void CommandBuffer::use(const Buffer& buffer, Access access) {
  reference(buffer, static_cast<uint32_t>(access), "use");
}

void CommandBuffer::reference(const Buffer& buffer, uint32_t access, const char* what) {
  finalized_ = false;
  if (record_error_) return;  // keep the first error
  if (!buffer) {
    record_error_ =
        make_error(EBADF, fmt::format("{}: buffer is empty (moved from or closed)", what));
    return;
  }
  if (buffer.device_state() != device_.state()) {
    record_error_ = make_error(
        EXDEV, fmt::format("{}: bo {} belongs to another device than this command buffer's ({})",
                           what, buffer.handle(), device_.path()));
    return;
  }
  if (buffer.device_read_only() && (access & DRM_NPU_ACCESS_WRITE) != 0) {
    record_error_ = make_error(
        EINVAL,
        fmt::format("{}: bo {} is device read-only but used for write", what, buffer.handle()));
    return;
  }
  const auto it = std::find_if(uses_.begin(), uses_.end(),
                               [&](const BufferUse& u) { return u.handle == buffer.handle(); });
  if (it != uses_.end()) {
    it->access |= access;
  } else {
    uses_.push_back({buffer.handle(), access, buffer.device_address(), buffer.allocation_size()});
  }
}

Expected<void> CommandBuffer::check_ranges() const {
  for (const isa::DramAccess& d : program_->dram) {
    const bool covered = std::any_of(uses_.begin(), uses_.end(), [&](const BufferUse& u) {
      return u.device_address <= d.begin && d.end <= u.device_address + u.size &&
             (u.access & d.access) == d.access;
    });
    if (!covered) {
      return make_error(
          EFAULT,
          fmt::format("finalize: command {} ({}): field {}: device range [{:#x}, {:#x}) is not "
                      "inside a buffer referenced for {}",
                      d.cmd_index, isa::opcode_name(program_->cmds[d.cmd_index].hdr.opcode),
                      d.field, d.begin, d.end, access_name(d.access)));
    }
  }
  return ok();
}

Expected<void> CommandBuffer::finalize(FinalizeOptions options) {
  const uint32_t flags = options.skip_validation ? DRM_NPU_SUBMIT_SKIP_VALIDATION : 0;
  if (finalized_ && flags == submit_flags_) return ok();
  finalized_ = false;
  if (record_error_) return *record_error_;

  if (!raw_) {
    // Serialize a copy, so recording may continue after finalize (the builder's finish()
    // would append END to the recorded commands themselves).
    std::vector<npu_cmd> cmds(builder_.commands().begin(), builder_.commands().end());
    if (cmds.empty() || cmds.back().hdr.opcode != NPU_OP_END) {
      isa::CommandBufferBuilder end;
      end.end();
      cmds.push_back(end.commands()[0]);
    }
    bytes_ = isa::CommandBufferBuilder::serialize(cmds, isa::program_features(cmds));
  }
  if (bytes_.empty()) return make_error(EINVAL, "finalize: command buffer is empty");

  program_.reset();
  if (options.skip_validation) {
    if (!device_.params().has(DRM_NPU_CAP_SKIP_VALIDATION)) {
      return make_error(
          EOPNOTSUPP,
          fmt::format("finalize: device {} does not support skipping validation", device_.path()));
    }
  } else {
    auto program = isa::validate(bytes_, device_.config());
    if (!program) {
      return make_error(program.error().code, "finalize: " + program.error().message);
    }
    program_ = std::move(*program);
    NPU_TRY(check_ranges());
  }

  if (!bo_ || bo_->size() < bytes_.size()) {
    bo_.reset();
    // Whole pages, so that a later, longer recording can reuse the BO.
    const uint64_t size = (bytes_.size() + 4095) / 4096 * 4096;
    auto bo = Buffer::allocate(device_, size, {.device_read_only = true});
    if (!bo) return make_error(bo.error().code, "finalize: upload: " + bo.error().message);
    bo_.emplace(std::move(*bo));
  }
  if (auto w = bo_->write(0, bytes_); !w) {
    return make_error(w.error().code, "finalize: upload: " + w.error().message);
  }
  submit_flags_ = flags;
  finalized_ = true;
  return ok();
}

}  // namespace npu
