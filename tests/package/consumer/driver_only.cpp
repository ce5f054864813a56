// Uses the installed libnpu without the emulator backend (npu::npu only): opening "emu:" must
// fail with a one-line error that names the CMake target to link.
#include <cstdio>
#include <string>

#include "npu/device.h"

int main() {
  auto dev = npu::Device::open("emu:");
  if (dev) return std::fprintf(stderr, "consumer_driver_only: emu: opened without npu::emu\n"), 1;
  const std::string& message = dev.error().message;
  if (message.find("npu::emu") == std::string::npos || message.find('\n') != std::string::npos) {
    return std::fprintf(stderr, "consumer_driver_only: unexpected error: %s\n", message.c_str()),
           1;
  }
  std::printf("consumer_driver_only: %s\n", message.c_str());
  return 0;
}
