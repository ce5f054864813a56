// libFuzzer target: the .npub package reader, its validation, and the model runtime on every
// package that loads (docs/reliability.md). A custom mutator recomputes the package's CRC-32
// after three mutations in four, so mutated packages get past the checksum into the
// metadata, section and command-buffer checks — and, once valid, into npu::Model: loaded on an
// emulated device ("emu:") and run on zero inputs, device segments and host ops alike, under
// a 2 s time limit (RunOptions::timeout). Packages whose buffers exceed 64 MiB are only
// parsed (a fuzz process has 4 GiB).
// What must hold: no crash, no sanitizer report; run() returns a result or an error.
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <span>
#include <string>

#include "npu/device.h"
#include "npu/format/crc32.h"
#include "npu/format/package.h"
#include "npu/format/package_layout.h"
#include "npu/runtime/model.h"

namespace {

constexpr size_t kChecksumOffset = npu::format::header::kChecksum;

void fix_checksum(uint8_t* data, size_t size) {
  if (size < kChecksumOffset + 4) return;
  std::memset(data + kChecksumOffset, 0, 4);
  const uint32_t crc = npu::format::crc32(std::as_bytes(std::span(data, size)));
  for (int i = 0; i < 4; ++i) data[kChecksumOffset + i] = static_cast<uint8_t>(crc >> (8 * i));
}

void run_model(const npu::format::Package& p) {
  uint64_t bytes = 0;
  for (const auto& b : p.metadata.buffers) bytes += b.size;
  if (bytes > (64u << 20)) return;
  // A 200 ms watchdog: a run that hits its time limit destroys its context, which waits for
  // the running device job; a long job must not hold an input past libFuzzer's timeout.
  static auto device = [] {
    const std::string config = "/tmp/fuzz_package_device." + std::to_string(::getpid()) + ".json";
    if (FILE* f = std::fopen(config.c_str(), "w")) {
      std::fputs("{\"watchdog_ms\": 200}\n", f);
      std::fclose(f);
    }
    auto d = npu::Device::open("emu:" + config);
    std::remove(config.c_str());
    return d;
  }();
  if (!device) return;
  auto model = npu::Model::load(*device, p, "fuzz.npub");
  if (!model) return;
  std::map<std::string, npu::format::NpyArray> inputs;
  for (const auto& in : model->inputs()) {
    std::vector<int64_t> shape;
    int64_t elements = 1;
    for (const auto& d : in.shape) {
      shape.push_back(d.symbolic() ? 1 : d.size);
      elements *= std::max<int64_t>(shape.back(), 0);
      if (elements > (1 << 20)) return;
    }
    inputs[in.name] = npu::format::NpyArray::zeros(in.dtype, shape);
  }
  (void)model->run(inputs, {.timeout = std::chrono::seconds(2)});
}

}  // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  size = LLVMFuzzerMutate(data, size, max_size);
  if (seed % 4 != 0) fix_checksum(data, size);
  return size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = std::as_bytes(std::span(data, size));
  auto p = npu::format::parse_package(bytes, "fuzz.npub");
  if (!p) return 0;
  if (!npu::format::validate_package(*p, "fuzz.npub")) return 0;
  run_model(*p);
  return 0;
}
