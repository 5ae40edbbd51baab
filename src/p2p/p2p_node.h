// A rank's end of the P2P store: the API of issue 15 (docs/P2P.md).
//
//   Register(manifest, copy)  this rank holds an object (every piece) and serves it: peers read
//                             its registered bytes one-sided, it does no work for them
//   Fetch(name, target)       this rank gets an object from every rank that holds pieces of
//                             it, verifies each piece, and serves each verified piece at once
//   Unregister(name)          stops serving it and releases its memory and mappings
//   List()                    the objects the tracker knows, with their holders
//
// The tracker (tracker.h) may be on this rank or another: the node only sees a TrackerClient.
// Threading: one thread calls the node's methods; Fetch runs on it (plus the UpdateChannel's
// thread). The transport and the tracker client outlive the node.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "p2p/fetcher.h"
#include "p2p/local_object.h"
#include "p2p/manifest.h"
#include "p2p/tracker_client.h"
#include "transport/transport.h"

namespace mooncake::p2p {

struct P2pConfig {
  uint64_t piece_size = 4ull << 20;  // p2p.piece_size, for objects this rank registers
  FetchConfig fetch;
  // How long Fetch waits for the object to be registered somewhere.
  Nanos lookup_timeout = Nanos(60'000'000'000);
  int hash_threads = 2;  // threads hashing a registered object's files
};

// Where a fetched object goes: one registered buffer, or files under a folder.
struct FetchTarget {
  enum class Kind { kMemory, kFiles } kind = Kind::kMemory;
  std::string dir;  // kFiles: entries become dir/<entry path>
};

class P2pNode {
 public:
  P2pNode(P2pConfig config, transport::Transport& transport, TrackerClient& tracker);
  ~P2pNode();

  // Builds the manifest of `files` (a holder's source, see ScanSource): maps them, or, with
  // `in_memory`, reads them into one registered buffer. Hashes every piece.
  Result<Manifest> PrepareSource(const std::string& name, const std::vector<SourceFile>& files,
                                 bool in_memory, bool writable_private,
                                 std::unique_ptr<LocalObject>* copy) const;
  Status Register(const Manifest& manifest, std::unique_ptr<LocalObject> copy);
  Result<FetchStats> Fetch(const std::string& name, const FetchTarget& target,
                           const FetchOptions& options);
  Status Unregister(const std::string& name);
  Result<ListResponse> List() { return tracker_.List(); }

  // This rank's copy of a held object (null when it holds none of that name).
  LocalObject* Held(const std::string& name);
  const Manifest* HeldManifest(const std::string& name) const;
  // The transport was closed (its registrations are gone): copies are released from now on
  // without calling it.
  void TransportClosed();

 private:
  struct HeldObject {
    Manifest manifest;
    std::unique_ptr<LocalObject> copy;
  };
  Result<Manifest> LookupWithRetry(const std::string& name, const std::atomic<bool>* cancel);
  Result<HolderCopy> DescribeCopy(const LocalObject& copy) const;

  P2pConfig config_;
  transport::Transport& transport_;
  TrackerClient& tracker_;
  std::map<std::string, HeldObject> held_;
  // Copies of failed fetches: reads abandoned at their deadline may still land in them, so
  // they stay mapped until the node (and, before it, the transport's use) ends.
  std::vector<std::unique_ptr<LocalObject>> abandoned_;
};

}  // namespace mooncake::p2p
