// A rank's copy of an object: its entries' bytes, in files mapped into memory or in one
// registered buffer, registered with the transport so that peers can read them one-sided.
//
// Four ways to make one:
//   OpenSourceFiles     a holder's files, mapped read-only (shared with the page cache; the
//                       user's files are never written)
//   LoadSourceMemory    a holder's files read into one buffer (Transport::AllocateMemory when
//                       the backend has it: same-host peers then read it with one memcpy)
//   CreateFiles         a receiver's files under a folder, created at their final size and
//                       mapped shared (a file that exists with the right size is kept: its
//                       pieces are checked and only the others fetched)
//   CreateMemory        a receiver's buffer
// Ownership: the object owns its mappings, buffer and registrations and releases them when
// destroyed; the transport must outlive it. Not thread-safe; pieces are written by one fetcher.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "p2p/manifest.h"
#include "transport/transport.h"

namespace mooncake::p2p {

// One file of a source: where it is, and the entry it becomes.
struct SourceFile {
  std::string file;  // path to open
  ManifestEntry entry;
};

// The files of `path` (a regular file, or a folder walked recursively; other kinds of files
// are skipped), as entries named "<basename of path>[/<relative path>]", sorted by name.
// Fails naming the path that cannot be read.
Result<std::vector<SourceFile>> ScanSource(const std::string& path);

// The last component of a source path: the default object name and the first component of
// its entries ("ckpt" for "/data/ckpt/").
std::string ObjectNameOf(const std::string& path);

class LocalObject {
 public:
  ~LocalObject();
  LocalObject(const LocalObject&) = delete;
  LocalObject& operator=(const LocalObject&) = delete;

  // `writable_private`: map copy-on-write and writable (fault injection damages the served
  // copy, never the file). `transport` may be null (nothing registered).
  static Result<std::unique_ptr<LocalObject>> OpenSourceFiles(const std::vector<SourceFile>& files,
                                                              transport::Transport* transport,
                                                              bool writable_private);
  // Reads the files into one buffer; hashes each piece right after it is read (into
  // *checksums, piece order at `piece_size`), while it is still in cache.
  static Result<std::unique_ptr<LocalObject>> LoadSourceMemory(const std::vector<SourceFile>& files,
                                                               uint64_t piece_size,
                                                               transport::Transport* transport,
                                                               std::vector<uint64_t>* checksums);
  static Result<std::unique_ptr<LocalObject>> CreateFiles(const Manifest& manifest,
                                                          const std::string& dir,
                                                          transport::Transport* transport);
  // The files of `manifest` under `dir` as they are, mapped read-only and not registered (a
  // rank checking the copy another rank of its node wrote). Fails when one is missing or has
  // another size.
  static Result<std::unique_ptr<LocalObject>> OpenExistingFiles(const Manifest& manifest,
                                                                const std::string& dir);
  static Result<std::unique_ptr<LocalObject>> CreateMemory(const Manifest& manifest,
                                                           transport::Transport* transport);

  const std::vector<ManifestEntry>& entries() const { return entries_; }
  // First byte of entry e (null for an empty entry).
  std::byte* entry_data(size_t e) const { return entry_data_[e]; }
  // The entry's file existed with its final size before (CreateFiles); its bytes may be good.
  bool entry_existed(size_t e) const { return entry_existed_[e]; }
  // Local addresses of the entries, for HolderCopy::entry_addrs (0 for an empty entry).
  std::vector<uint64_t> EntryAddresses() const;
  // Encoded remote descriptors of every registered region.
  Result<std::vector<std::vector<std::byte>>> ExportDescriptors() const;
  // The transport was closed and released the registrations: the destructor then only unmaps
  // and frees, without calling it.
  void TransportClosed();

 private:
  struct Mapping {
    void* addr = nullptr;
    size_t length = 0;
    // kTransport: Transport::AllocateMemory's; kReleased: that, after the transport closed.
    enum class Kind { kMmap, kHeap, kTransport, kReleased } kind = Kind::kMmap;
    transport::MemoryRegion region;  // id 0: not registered
  };
  LocalObject() = default;
  // An object of `manifest`'s entries, none mapped yet; `existed`: their files were there before.
  static std::unique_ptr<LocalObject> ForManifest(const Manifest& manifest,
                                                  transport::Transport* transport, bool existed);
  Status Register(Mapping& m);
  Status MapFile(const std::string& file, uint64_t size, int open_flags, int prot, int flags,
                 size_t entry);
  Status AllocateBuffer(uint64_t total);

  transport::Transport* transport_ = nullptr;
  std::vector<ManifestEntry> entries_;
  std::vector<std::byte*> entry_data_;
  std::vector<bool> entry_existed_;
  std::vector<Mapping> mappings_;
};

// Checksums of every piece of `object` at `piece_size` (a holder's files mapped by
// OpenSourceFiles), hashed on `threads` threads.
std::vector<uint64_t> HashPieces(const LocalObject& object, uint64_t piece_size, int threads);

}  // namespace mooncake::p2p
