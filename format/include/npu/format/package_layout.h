// The binary container of a model package (.npub), docs/package.md §2: a 64-byte header, a
// table of 48-byte section entries, 64-byte-aligned section payloads and a UTF-8 JSON metadata
// blob. All integers little-endian. These constants are the layout's machine-readable half.
#pragma once

#include <cstddef>
#include <cstdint>

namespace npu::format {

/// "NPUB" as the first four bytes of the file.
inline constexpr char kPackageMagic[4] = {'N', 'P', 'U', 'B'};
inline constexpr uint16_t kPackageVersionMajor = 1;
inline constexpr uint16_t kPackageVersionMinor = 0;

/// Header field offsets (bytes from the start of the file).
namespace header {
inline constexpr size_t kMagic = 0;                // char[4] "NPUB"
inline constexpr size_t kVersionMajor = 4;         // u16, must equal kPackageVersionMajor
inline constexpr size_t kVersionMinor = 6;         // u16
inline constexpr size_t kFlags = 8;                // u32, must be 0
inline constexpr size_t kHeaderSize = 12;          // u32, 64 (more only in newer minors)
inline constexpr size_t kFileSize = 16;            // u64, the exact file size
inline constexpr size_t kMetadataOffset = 24;      // u64, 8-aligned
inline constexpr size_t kMetadataSize = 32;        // u64, >= 2
inline constexpr size_t kSectionTableOffset = 40;  // u64, 8-aligned
inline constexpr size_t kSectionCount = 48;        // u32
inline constexpr size_t kChecksum = 52;            // u32, CRC-32 of the file with this field 0
inline constexpr size_t kReserved = 56;            // u64, must be 0
inline constexpr size_t kSize = 64;
}  // namespace header

/// Section table entry field offsets (bytes from the start of the entry).
namespace section_entry {
inline constexpr size_t kKind = 0;    // u32, SectionKind
inline constexpr size_t kFlags = 4;   // u32, must be 0
inline constexpr size_t kOffset = 8;  // u64, 64-aligned
inline constexpr size_t kSize = 16;   // u64
inline constexpr size_t kName = 24;   // char[24], [A-Za-z0-9_.-], NUL-padded, non-empty
inline constexpr size_t kNameSize = 24;
inline constexpr size_t kEntrySize = 48;
}  // namespace section_entry

inline constexpr size_t kSectionAlign = 64;
inline constexpr uint32_t kMaxSections = 65536;

/// What a section holds.
enum class SectionKind : uint32_t {
  kCommandBuffer = 1,  // an ISA command buffer (uapi/npu_isa.h) of one device segment
  kConstants = 2,      // initial contents of a constants buffer (weights, biases, qparams)
  kHostData = 3,       // opaque bytes for host segments (tables, large attributes)
  kExtra = 4,          // opaque bytes tools may ignore (debug info, source model)
};

/// "command_buffer", "constants", "host_data", "extra" or "unknown".
const char* section_kind_name(SectionKind kind);

}  // namespace npu::format
