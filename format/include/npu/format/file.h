// Whole-file reads and writes for the file formats (.npy, .npub). Errors name the path and the
// system's reason, e.g. "model.npub: cannot open: No such file or directory".
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "npu/expected.h"

namespace npu::format {

/// The bytes of a regular file (directories and other non-regular files are errors).
Expected<std::vector<std::byte>> read_file(const std::string& path);
/// Writes the bytes to a temporary file beside `path` and renames it over `path`, so a failed
/// write never leaves a truncated file behind.
Expected<void> write_file(const std::string& path, std::span<const std::byte> bytes);
/// The same for a file given as pieces, written one after another.
Expected<void> write_file(const std::string& path,
                          std::span<const std::span<const std::byte>> pieces);

/// A regular file mapped read-only (MAP_PRIVATE, populated up front), for reading large inputs
/// without copying them. Move-only; unmapped on destruction. An empty file maps to no bytes.
class MappedFile {
 public:
  static Expected<MappedFile> open(const std::string& path);
  MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; }
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  ~MappedFile();
  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(data_), size_}; }

 private:
  MappedFile(void* data, size_t size) : data_(data), size_(size) {}
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace npu::format
