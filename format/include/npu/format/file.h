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

}  // namespace npu::format
