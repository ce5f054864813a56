// Raw jobs: buffer/dump spec parsing and running a prebuilt command buffer with buffers at
// fixed device addresses (see npu/raw_job.h).
#include "npu/raw_job.h"

#include "npu/format/file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>

#include "npu/command_buffer.h"
#include "npu_isa.h"

namespace npu {

std::optional<uint64_t> parse_u64(std::string_view text) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

Expected<BufferSpec> parse_buffer_spec(std::string_view text) {
  const auto bad = [&](std::string_view what) {
    return make_error(EINVAL, fmt::format("--buffer '{}': {}", text, what));
  };
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) return bad("expected ADDR=FILE or ADDR=size:N");
  BufferSpec spec;
  const auto addr = parse_u64(text.substr(0, eq));
  if (!addr) return bad("address must be a decimal or 0x-hex number");
  spec.address = *addr;
  std::string_view rest = text.substr(eq + 1);
  if (rest.ends_with(":ro")) {
    spec.read_only = true;
    rest.remove_suffix(3);
  }
  if (rest.empty()) return bad("missing file name or size:N");
  if (rest.starts_with("size:")) {
    const auto size = parse_u64(rest.substr(5));
    if (!size) return bad("size must be a decimal or 0x-hex number");
    if (*size == 0) return bad("size must be at least 1");
    spec.size = *size;
  } else {
    spec.file = std::string(rest);
  }
  return spec;
}

Expected<DumpSpec> parse_dump_spec(std::string_view text) {
  const auto bad = [&](std::string_view what) {
    return make_error(EINVAL, fmt::format("--dump '{}': {}", text, what));
  };
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) return bad("expected ADDR:LEN=FILE");
  const std::string_view range = text.substr(0, eq);
  const size_t colon = range.find(':');
  if (colon == std::string_view::npos) return bad("expected ADDR:LEN=FILE");
  DumpSpec spec;
  const auto addr = parse_u64(range.substr(0, colon));
  if (!addr) return bad("address must be a decimal or 0x-hex number");
  const auto len = parse_u64(range.substr(colon + 1));
  if (!len) return bad("length must be a decimal or 0x-hex number");
  if (*len == 0) return bad("length must be at least 1");
  if (*addr + *len < *addr) return bad("range wraps around the address space");
  spec.address = *addr;
  spec.length = *len;
  spec.file = std::string(text.substr(eq + 1));
  if (spec.file.empty()) return bad("missing file name");
  return spec;
}

Expected<void> check_buffer_specs(std::span<const BufferSpec> specs) {
  for (size_t i = 0; i < specs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      const auto& a = specs[i];
      const auto& b = specs[j];
      if (a.size == 0 || b.size == 0) continue;
      if (a.address < b.address + b.size && b.address < a.address + a.size) {
        return make_error(
            EINVAL, fmt::format("--buffer {:#x}: overlaps --buffer {:#x}", a.address, b.address));
      }
    }
  }
  return {};
}

bool is_command_buffer(std::span<const std::byte> bytes) {
  if (bytes.size() < sizeof(uint32_t)) return false;
  uint32_t magic = 0;
  std::memcpy(&magic, bytes.data(), sizeof(magic));
  return magic == NPU_ISA_MAGIC;
}

std::string buffer_file_name(uint64_t address) {
  return fmt::format("buf_{:#x}.bin", address);
}

Expected<std::vector<std::byte>> RawJobRun::read_range(uint64_t address, uint64_t length) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    const uint64_t base = specs[i].address;
    const uint64_t size = specs[i].size;
    if (address >= base && length <= size && address - base <= size - length) {
      std::vector<std::byte> out(length);
      NPU_TRY(buffers[i].read(address - base, out));
      return out;
    }
  }
  return make_error(EFAULT, fmt::format("range [{:#x}, {:#x}) is not inside one buffer", address,
                                        address + length));
}

Expected<RawJobRun> run_raw_job(const Device& device, std::span<const std::byte> cmdbuf,
                                std::span<const BufferSpec> buffers, const RawJobOptions& options) {
  RawJobRun run;
  run.specs.assign(buffers.begin(), buffers.end());
  std::vector<std::vector<std::byte>> contents(run.specs.size());
  for (size_t i = 0; i < run.specs.size(); ++i) {
    BufferSpec& spec = run.specs[i];
    if (!spec.data.empty()) {
      if (!spec.file.empty()) {
        return make_error(EINVAL, fmt::format("buffer {:#x}: both a file and data", spec.address));
      }
      spec.size = spec.data.size();
      continue;
    }
    if (spec.file.empty()) {
      if (spec.size == 0) {
        return make_error(EINVAL,
                          fmt::format("buffer {:#x}: size must be at least 1", spec.address));
      }
      continue;
    }
    auto data = format::read_file(spec.file);
    if (!data) {
      return make_error(data.error().code,
                        fmt::format("buffer {:#x}: {}", spec.address, data.error().message));
    }
    if (data->empty()) {
      return make_error(EINVAL,
                        fmt::format("buffer {:#x}: '{}' is empty", spec.address, spec.file));
    }
    spec.size = data->size();
    contents[i] = std::move(*data);
  }
  NPU_TRY(check_buffer_specs(run.specs));

  if (const auto& va = device.params().va_range) {
    for (const BufferSpec& spec : run.specs) {
      if (va->align != 0 && spec.address % va->align != 0) {
        return make_error(EINVAL, fmt::format("buffer {:#x}: address is not a multiple of the "
                                              "device's va alignment {:#x}",
                                              spec.address, va->align));
      }
      if (spec.address < va->start || spec.address > va->end ||
          spec.size > va->end - spec.address) {
        return make_error(EINVAL, fmt::format("buffer {:#x}: [{:#x}, {:#x}) is outside the "
                                              "device's va range [{:#x}, {:#x})",
                                              spec.address, spec.address, spec.address + spec.size,
                                              va->start, va->end));
      }
    }
  }

  CommandBuffer cb = CommandBuffer::from_bytes(device, cmdbuf);
  run.buffers.reserve(run.specs.size());
  for (size_t i = 0; i < run.specs.size(); ++i) {
    const BufferSpec& spec = run.specs[i];
    auto buf = Buffer::allocate(device, spec.size,
                                {.device_read_only = spec.read_only, .fixed_va = spec.address});
    if (!buf) {
      return make_error(buf.error().code,
                        fmt::format("buffer {:#x}: {}", spec.address, buf.error().message));
    }
    const std::span<const std::byte> bytes = spec.data.empty() ? contents[i] : spec.data;
    if (!bytes.empty()) {
      if (auto w = buf->write(0, bytes); !w) {
        return make_error(w.error().code,
                          fmt::format("buffer {:#x}: {}", spec.address, w.error().message));
      }
    }
    cb.use(*buf, spec.read_only ? Access::kRead : Access::kReadWrite);
    run.buffers.push_back(std::move(*buf));
  }
  for (BufferSpec& spec : run.specs) spec.data = {};  // the caller's memory is not kept

  NPU_TRY(cb.finalize({.skip_validation = options.skip_validation}));
  auto ctx = Context::create(device, options.priority);
  if (!ctx) return ctx.error();
  run.context.emplace(std::move(*ctx));
  const int64_t t0 = monotonic_ns();
  auto job = run.context->submit(cb, {.racecheck = options.racecheck});
  if (!job) return job.error();
  run.job.emplace(*job);
  auto result = run.job->wait(options.timeout);
  run.host_ns = static_cast<uint64_t>(monotonic_ns() - t0);
  if (!result) {
    if (result.error().code != ETIMEDOUT) return result.error();
    run.timed_out = true;
    return run;
  }
  run.result = *result;
  if (device.params().has(DRM_NPU_CAP_JOB_PROFILE)) {
    if (auto profile = run.job->profile()) run.profile = std::move(*profile);
  }
  if (options.racecheck) {
    auto hazards = run.job->hazards();
    if (!hazards) return hazards.error();
    run.hazards = std::move(*hazards);
  }
  return run;
}

}  // namespace npu
