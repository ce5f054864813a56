// The bytes of a string, for the format tests that build files from literal text.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

namespace npu::format::test {

inline std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> v(s.size());
  if (!s.empty()) std::memcpy(v.data(), s.data(), s.size());
  return v;
}

}  // namespace npu::format::test
