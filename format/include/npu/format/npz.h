// NumPy .npz archives: what np.savez (members stored) and np.savez_compressed (members
// deflated) write — a ZIP file with one NAME.npy member per array, keyed by NAME. The reader
// takes the ZIP central directory (with the ZIP64 records NumPy writes) and parses each member
// with parse_npy(); its CRC-32 is checked. Anything else — encrypted members, other
// compression methods, multi-disk archives, a member that is not a .npy file, a duplicate
// key, a truncated or inconsistent archive — is an Error of one line naming the file and the
// member. The writer (tests, tools) writes a plain ZIP that np.load reads. Pure functions.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "npu/expected.h"
#include "npu/format/npy.h"

namespace npu::format {

/// The arrays of an .npz archive by key (member name without ".npy"); `name` (usually the
/// path) prefixes every error, e.g. "p.npz: member 'w.npy': compression method 12 is not
/// supported (np.savez stores, np.savez_compressed deflates)".
Expected<std::map<std::string, NpyArray>> parse_npz(std::span<const std::byte> bytes,
                                                    std::string_view name);
/// Reads and parses a file; errors name the path.
Expected<std::map<std::string, NpyArray>> read_npz(const std::string& path);

/// The bytes of an .npz archive holding `arrays` (member KEY.npy each, deflated when
/// `compress`, else stored). Fails on an array that check_npy() refuses or an archive past the
/// 4 GiB a ZIP without ZIP64 holds.
Expected<std::vector<std::byte>> serialize_npz(const std::map<std::string, NpyArray>& arrays,
                                               bool compress = false);
/// Serializes and writes the file; errors name the path.
Expected<void> write_npz(const std::string& path, const std::map<std::string, NpyArray>& arrays,
                         bool compress = false);

}  // namespace npu::format
