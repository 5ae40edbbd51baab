// One receiver's fetch of one object: reads pieces one-sided from every holder the tracker
// names, verifies each against the manifest, and reports each verified piece so that later
// readers can read it here (docs/P2P.md "Fetch").
//
// Per piece: the picker (piece_picker.h) chooses piece and holder; when the holder's copy is
// mapped into this process (shared memory on one host) this thread copies and hashes it in one
// pass (copy_hash.h); otherwise a one-sided READ goes to the transport, up to
// PickerLimits::per_peer in flight per holder, and the bytes are hashed when they have landed.
// A read that fails or outlives `piece_timeout` makes its holder unusable for this fetch; a
// piece that fails its checksum is read again from another holder and reported (the tracker
// drops it there). When every piece is in and a read was abandoned at its deadline, all are
// hashed once more (its late write cannot go unseen) and any that fail are fetched again.
//
// Threading: Run() runs on the caller's thread; an UpdateChannel thread talks to the tracker.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "p2p/local_object.h"
#include "p2p/manifest.h"
#include "p2p/piece_picker.h"
#include "p2p/tracker_client.h"
#include "p2p/update_channel.h"
#include "transport/transport.h"

namespace mooncake::p2p {

struct FetchConfig {
  PickerLimits limits;
  Nanos update_interval = Nanos(2'000'000);     // how often the tracker hears of new pieces
  Nanos piece_timeout = Nanos(10'000'000'000);  // one read's deadline
  // A fetch with nothing to read (no live holder has a missing piece) fails after this long.
  Nanos stall_timeout = Nanos(30'000'000'000);
  Nanos deadline = Nanos(3'600'000'000'000);  // the whole fetch
  // Idle this long (nothing to read from peers, own stripe done) before reading from a source
  // a piece of a stripe whose owner left, or of any stripe (PiecePicker "order 3").
  Nanos orphan_delay = Nanos(10'000'000);
  Nanos steal_delay = Nanos(1'000'000'000);
  uint32_t verify_rounds = 3;  // final checks that may send pieces back
};

struct FetchOptions {
  // This rank's stripe among the fetching receivers (piece_picker.h): it reads stripe `stripe`
  // of `stripes` from the sources, the rest from the other receivers.
  uint32_t stripe = 0;
  uint32_t stripes = 1;
  std::vector<int32_t> stripe_owners;  // rank of each stripe, when known (PiecePicker)
  // Called after each verified piece with the count so far (tests kill a rank mid-fetch).
  std::function<void(uint64_t verified)> on_piece;
  // Set by another thread to give up (the tracker is gone); the fetch fails with PeerFailure.
  const std::atomic<bool>* cancel = nullptr;
};

struct FetchStats {
  uint64_t bytes = 0;
  Nanos fetch_time{0};   // from the first read to the last verified piece
  Nanos verify_time{0};  // the final check of every piece (only after abandoned reads)
  uint32_t from_source = 0;
  uint32_t from_peers = 0;
  uint32_t present = 0;       // already in place (files kept from before)
  uint32_t corrupt = 0;       // failed their checksum at a holder, read again elsewhere
  uint32_t late_corrupt = 0;  // failed the final check, read again
  uint32_t read_failures = 0;
};

class Fetcher {
 public:
  // Everything borrowed outlives the fetcher. `dest` is this rank's (joined) copy.
  Fetcher(const FetchConfig& config, transport::Transport& transport, TrackerClient& tracker,
          const Manifest& manifest, LocalObject& dest, const FetchOptions& options);
  ~Fetcher();

  // Fetches every piece not yet in place. Call once, after joining the object as a holder.
  Result<FetchStats> Run();

 private:
  struct InFlight {
    Pick pick;
    std::unique_ptr<transport::TransferBatch> batch;
    Nanos started;
  };
  Status CheckPresent(UpdateChannel& channel);
  void Apply(const UpdateResponse& answer);
  void AddHolder(const HolderCopy& copy);
  // Starts reads until the picker has none; true when one was started or finished.
  bool StartReads(UpdateChannel& channel);
  bool PollReads(UpdateChannel& channel);
  void Finish(UpdateChannel& channel, const Pick& pick, const Status& status, uint64_t sum);
  Status CheckLimits(UpdateChannel& channel, Nanos stalled_since);
  std::vector<uint32_t> VerifyAll();
  Status FetchMissing(UpdateChannel& channel);

  const FetchConfig& config_;
  transport::Transport& transport_;
  TrackerClient& tracker_;
  const Manifest& manifest_;
  LocalObject& dest_;
  const FetchOptions& options_;
  SteadyClock clock_;
  PieceLayout layout_;
  PiecePicker picker_;
  std::vector<std::vector<uint64_t>> entry_addrs_;  // per holder rank
  std::vector<uint32_t> bad_from_;                  // damaged pieces served, per holder rank
  std::vector<InFlight> in_flight_;
  FetchStats stats_;
  uint64_t verified_ = 0;
  Nanos start_{0};
  Nanos idle_since_{0};  // since when nothing could be read (0: busy)
  uint32_t abandoned_ = 0;
  Nanos idle_total_{0};
  uint64_t idle_periods_ = 0,
           answers_ = 0;  // reads given up while still in flight (they may land later)
};

}  // namespace mooncake::p2p
