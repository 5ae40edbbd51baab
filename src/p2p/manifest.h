// An object of the P2P store: a named list of entries (files, or the regions of one buffer) cut
// into pieces of `piece_size` bytes, each with its XXH3-64 checksum (common/checksum.h). A piece
// never spans two entries: entry e of size s has ceil(s / piece_size) pieces (none when empty),
// numbered after the pieces of entries 0..e-1. The manifest travels over the wire (holder ->
// tracker -> receivers), so it is validated as a peer's input: entry paths are relative, have no
// "." or ".." components and are unique, since a receiver creates files under them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/wire_fields.h"

namespace mooncake::p2p {

inline constexpr uint64_t kMinPieceSize = 4096;
inline constexpr uint64_t kMaxPieceSize = 1ull << 30;
inline constexpr uint32_t kMaxEntries = 1u << 20;
inline constexpr uint32_t kMaxPieces = 1u << 24;  // 64 TiB at 4 MiB pieces
inline constexpr uint32_t kMaxPathBytes = 4096;
inline constexpr uint32_t kMaxNameBytes = 255;

struct ManifestEntry {
  std::string path;  // relative, '/'-separated (a buffer's region: any unique label)
  uint64_t size = 0;
  uint32_t mode = 0644;  // permission bits a receiver gives the file it writes

  MC_WIRE_FIELDS(path, size, mode)
  bool operator==(const ManifestEntry&) const = default;
};

struct Manifest {
  static constexpr const char* kWireName = "p2p Manifest";
  std::string name;
  uint64_t piece_size = 4ull << 20;
  std::vector<ManifestEntry> entries;
  std::vector<uint64_t> checksums;  // one per piece, in piece order

  MC_WIRE_FIELDS(name, piece_size, entries, checksums)
  bool operator==(const Manifest&) const = default;
  // Names the first problem: a bad name or piece size, an unsafe or duplicate path, too many
  // entries or pieces, a checksum count that disagrees with the sizes.
  Status Validate() const;
  uint64_t total_bytes() const;
};

// Where piece i lives: entry, offset inside it, length (piece_size but for an entry's last).
struct PieceRef {
  uint32_t entry = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
};

// The pieces of a manifest's entries (computed, never sent).
class PieceLayout {
 public:
  PieceLayout() = default;
  // `entries` and `piece_size` as in a valid manifest.
  PieceLayout(const std::vector<ManifestEntry>& entries, uint64_t piece_size);

  size_t count() const { return pieces_.size(); }
  const PieceRef& operator[](size_t i) const { return pieces_[i]; }
  uint64_t total_bytes() const { return total_bytes_; }
  // Offset of entry e's first byte if the entries were laid end to end (one buffer).
  uint64_t entry_offset(size_t e) const { return entry_offsets_[e]; }

 private:
  std::vector<PieceRef> pieces_;
  std::vector<uint64_t> entry_offsets_;
  uint64_t total_bytes_ = 0;
};

// Number of pieces of `entries` at `piece_size` (saturates at kMaxPieces + 1).
uint64_t CountPieces(const std::vector<ManifestEntry>& entries, uint64_t piece_size);

// "", or why `path` is not a safe relative path (absolute, empty or "."/".." component, NUL,
// too long).
std::string UnsafePathReason(const std::string& path);

// Encoded form and bounds-checked, validated decode (a malformed one names what is wrong).
std::vector<std::byte> EncodeManifest(const Manifest& manifest);
Result<Manifest> DecodeManifest(std::span<const std::byte> bytes);

}  // namespace mooncake::p2p
