// ProgramCache: the validated programs of the command buffers a file submitted last, by their
// bytes. A model submits the same command buffers for every inference, and validating one
// (every command's fields, SRAM ranges, the semaphore rules over the whole buffer) took 9% of
// a ResNet-18 int8 inference's host time; a buffer whose bytes equal one validated before gets
// that program again, with the same isa::Program::id, by which the device keeps the program's
// schedule (emu/device/serial_runner.cpp). Validation depends on the bytes and the device
// config alone, so the answer is the same; a buffer the validator refused is not kept (it is
// refused again, with its message). The DRAM ranges are still checked against each job's Mmu.
// SUBMIT looks a buffer up where it lies (find()): a hit needs no copy, which for ResNet-50's 4
// MiB of commands was a megabyte-sized memcpy per inference. A miss is validated where it lies
// too: isa::validate() reads the header once and checks copies of the commands, never the
// buffer again, so what the submitter writes meanwhile cannot slip past the checks, and an
// entry is the program itself (its header and commands are the bytes it was made from). The
// first submission of a ResNet-50 copied its 4 MiB three times here (the stable copy, the
// program's, the cache's), on fresh pages: one copy now.
//
// Bounded: at most kEntries programs and kMaxBytes of command buffers per file; the least
// recently used go first. Per file, so one file's submissions say nothing about another's.
//
// Threading: one mutex; validation runs outside it (two threads may validate the same bytes at
// once; both results are good). Lifetime: owned by its File; the programs are shared with the
// jobs that run them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "npu/expected.h"
#include "npu/isa/device_config.h"
#include "npu/isa/validate.h"

namespace npu::emu::kmd {

class ProgramCache {
 public:
  static constexpr size_t kEntries = 16;
  static constexpr size_t kMaxBytes = size_t{64} << 20;

  /// The kept program of `bytes`, or nullptr when none is kept for them. The bytes are only
  /// compared, so a caller may pass a command buffer where it lies (a BO the submitter can
  /// still write: a hit's program is the cache's own copy, which nothing writes).
  std::shared_ptr<const isa::Program> find(std::span<const std::byte> bytes);

  /// The validated program of `bytes`: a kept one when these bytes were validated before, else
  /// isa::validate()'s, kept (with a new id) when it passes. `bytes` may be a command buffer
  /// where it lies, as for find().
  Expected<std::shared_ptr<const isa::Program>> validate(std::span<const std::byte> bytes,
                                                         const isa::DeviceConfig& cfg);

  /// Programs validated (not found) so far, for tests.
  uint64_t validated() const;

 private:
  /// Whether `bytes` are those `p` was made from: its header, then its commands.
  static bool same(const isa::Program& p, std::span<const std::byte> bytes);
  std::shared_ptr<const isa::Program> find_locked(std::span<const std::byte> bytes);

  mutable std::mutex mu_;
  std::list<std::shared_ptr<const isa::Program>> entries_;  // most recently used first
  size_t bytes_ = 0;
  uint64_t validated_ = 0;
};

}  // namespace npu::emu::kmd
