// Package: a compiled model (.npub, docs/package.md) as the compiler writes it and the
// runtime loads it: typed metadata plus binary sections (command buffers, constants, host
// data). Reading validates everything (container layout, checksum, JSON schema, every
// cross-reference and, given a DeviceConfig, every command buffer and its DRAM accesses), so
// the runtime can trust a loaded Package. Errors name the file and the field, e.g.
// "model.npub: section 3 (weights): offset 4096 + size 8192 beyond file size 10000".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "npu/expected.h"
#include "npu/format/package_layout.h"
#include "npu/format/package_metadata.h"
#include "npu/format/section_bytes.h"
#include "npu/isa/device_config.h"

namespace npu::format {

/// One binary section. Names are 1-24 characters of [A-Za-z0-9_.-], unique in a package.
/// `data` either owns its bytes (a package built in memory) or is a view of the mapped file it
/// was read from (read_package()); either way it keeps them alive as long as any copy of the
/// Section or its Package lives (section_bytes.h).
struct Section {
  SectionKind kind = SectionKind::kExtra;
  std::string name = {};
  SectionBytes data = {};
  bool operator==(const Section&) const = default;
};

struct Package {
  PackageMetadata metadata = {};
  std::vector<Section> sections = {};  // referenced by index from the metadata
  bool operator==(const Package&) const = default;
};

/// The most commands a package's device segments may hold in all (each command buffer holds
/// at most NPU_MAX_CMDS): 2^22, 512 MiB of commands.
inline constexpr uint64_t kMaxPackageCommands = uint64_t{1} << 22;

/// Parses and validates the bytes of a package; `name` (usually the path) prefixes errors.
/// With `device`, command buffers are also checked with isa::validate() against it, their
/// DRAM accesses against the segment's buffers, and the target against the device.
/// The sections are copies: the Package does not refer to `bytes` once this returns.
Expected<Package> parse_package(std::span<const std::byte> bytes, std::string_view name,
                                const isa::DeviceConfig* device = nullptr);
/// The same, but constants, host-data and extra sections are views of `bytes` that share
/// `owner`, which must keep `bytes` valid and unchanged while held. Command-buffer sections,
/// which the runtime trusts once validated, are still copied (they are small), so changing the
/// backing memory afterwards can change constants but never a validated command buffer.
Expected<Package> parse_package(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                                std::string_view name, const isa::DeviceConfig* device = nullptr);
/// Maps and parses a file; errors name the path. The returned Package holds the mapping (see
/// the overload above): the file's pages are shared, not copied, and unmapped when the last
/// copy of the Package goes. Replace a package file (write_package() renames over it); do not
/// rewrite or truncate it in place while a Package read from it lives.
Expected<Package> read_package(const std::string& path, const isa::DeviceConfig* device = nullptr);

/// The semantic checks parse_package() runs after decoding (docs/package.md §4), for a
/// Package built in memory or a runtime checking against its device after loading.
Expected<void> validate_package(const Package& p, std::string_view name,
                                const isa::DeviceConfig* device = nullptr);

/// Validates (without a device) and serializes: the same Package always gives the same bytes,
/// and parse_package() of them gives back an equal Package.
Expected<std::vector<std::byte>> serialize_package(const Package& p);
/// serialize_package() then an atomic write; errors name the path.
Expected<void> write_package(const std::string& path, const Package& p);

/// Low level, for tools and tests: lays out the container around the given metadata text
/// and sections without any validation (names longer than 24 bytes are cut).
std::vector<std::byte> assemble_package(std::string_view metadata_json,
                                        std::span<const Section> sections,
                                        uint16_t version_minor = kPackageVersionMinor);

/// Recomputes and stores the header checksum of a package in place (tests that patch bytes).
void seal_package(std::span<std::byte> bytes);

}  // namespace npu::format
