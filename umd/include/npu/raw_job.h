// Raw jobs: run a prebuilt command buffer (npu-as output, header + commands) with buffers the
// caller places at fixed device addresses — the engine of `npu-submit CMDBUF.bin --buffer ...`.
//
// Semantics: run_raw_job() allocates one Buffer per BufferSpec at its fixed device address
// (DRM_NPU_BO_FIXED_VA; read-only specs get DRM_NPU_BO_DEVICE_READ_ONLY and are referenced
// READ, the others READ|WRITE), fills it from its file (or leaves it zero), submits the
// command buffer on a fresh Context (validated by CommandBuffer::finalize unless
// skip_validation), waits up to the timeout and reads the job profile when the device has
// DRM_NPU_CAP_JOB_PROFILE; with `racecheck` the job runs under the synchronization checker and
// its hazards are read too. A job that faults is not an error: RawJobRun::result says so.
// read_range() then reads back any range inside one buffer.
// Spec syntax (docs/tools.md):
//   buffer  ADDR=FILE | ADDR=size:N, either optionally followed by ":ro"
//   dump    ADDR:LEN=FILE
// ADDR, N and LEN are decimal or 0x-hex.
//
// Errors: lowercase one-liners naming the spec or buffer, e.g.
// "--buffer '0x1000=size:0': size must be at least 1",
// "buffer 0x100000000: allocate: 64 bytes: BO_CREATE failed: File exists".
// Threading/lifetime: RawJobRun owns its Buffers and the Context; plain value otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "npu/buffer.h"
#include "npu/context.h"
#include "npu/device.h"
#include "npu/expected.h"
#include "npu/job.h"

namespace npu {

/// One --buffer: `size` zero bytes, the contents of `file` or the bytes of `data`, at device
/// address `address`.
struct BufferSpec {
  uint64_t address = 0;
  std::string file;   // empty: zero-filled buffer of `size` bytes (or `data`)
  uint64_t size = 0;  // with `file`: 0 until run_raw_job() read it; with `data`: its size
  bool read_only = false;
  /// In-memory contents instead of a file (the Python module's NumPy buffers): the caller
  /// keeps them valid until run_raw_job() returns, which copies them into the buffer and
  /// clears the span in RawJobRun::specs.
  std::span<const std::byte> data = {};
};

/// One --dump: `length` bytes at `address` written to `file`.
struct DumpSpec {
  uint64_t address = 0;
  uint64_t length = 0;
  std::string file;
};

/// Parses a decimal or 0x-hex unsigned 64-bit integer (the whole text).
std::optional<uint64_t> parse_u64(std::string_view text);
/// Parses "ADDR=FILE[:ro]" or "ADDR=size:N[:ro]".
Expected<BufferSpec> parse_buffer_spec(std::string_view text);
/// Parses "ADDR:LEN=FILE".
Expected<DumpSpec> parse_dump_spec(std::string_view text);
/// Checks that no two buffers overlap ("--buffer 0x...: overlaps --buffer 0x...").
Expected<void> check_buffer_specs(std::span<const BufferSpec> specs);

/// Whether `bytes` start with the command-buffer magic NPU_ISA_MAGIC ("NPUC").
bool is_command_buffer(std::span<const std::byte> bytes);

struct RawJobOptions {
  bool skip_validation = false;
  bool racecheck = false;  // SubmitOptions::racecheck; RawJobRun::hazards gets the result
  /// How long to wait for the job; Job::kForever for no limit.
  std::chrono::nanoseconds timeout = Job::kForever;
  /// The priority of the job's context (REALTIME needs the privilege: EPERM, API 1.4).
  Priority priority = Priority::kNormal;
};

struct RawJobRun {
  std::vector<BufferSpec> specs;  // sizes filled in
  std::vector<Buffer> buffers;    // one per spec, same order
  std::optional<Context> context;
  std::optional<Job> job;
  JobResult result;
  bool timed_out = false;               // the wait's timeout passed (result is not meaningful)
  std::optional<JobProfile> profile;    // when the device profiles jobs and the job retired
  std::optional<HazardReport> hazards;  // with RawJobOptions::racecheck, once the job retired
  uint64_t host_ns = 0;                 // host time from submit to wait returning

  /// Success and status kOk.
  bool ok() const { return !timed_out && result.ok(); }
  /// Reads [address, address + length) from the buffer containing it (EFAULT otherwise).
  Expected<std::vector<std::byte>> read_range(uint64_t address, uint64_t length);
};

/// Runs `cmdbuf` with `buffers` (see the header comment).
Expected<RawJobRun> run_raw_job(const Device& device, std::span<const std::byte> cmdbuf,
                                std::span<const BufferSpec> buffers,
                                const RawJobOptions& options = {});

/// "buf_0x100100000.bin": the file name npu-submit --output-dir gives a buffer.
std::string buffer_file_name(uint64_t address);

}  // namespace npu
