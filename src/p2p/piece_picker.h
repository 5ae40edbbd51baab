// Which piece to read next, and from which holder (docs/P2P.md "Piece order"). Pure logic over
// what the tracker's events said; one per fetch; not thread-safe.
//
// The pieces are cut into as many stripes as there are fetching receivers; receiver i owns
// stripe i = [i x pieces / n, (i+1) x pieces / n). The sources are read for owned stripes only,
// so each piece leaves a source about once (source share ~ 1/n, a scatter), and everything
// else travels between receivers (an allgather, but dynamic and checked). The order:
//   1. this rank's own stripe, in order (from a source, or from a receiver that has it);
//   2. pieces other receivers hold, the rarest first (fewest holders), so each new copy makes
//      a scarce piece less scarce;
//   3. when nothing of 1 and 2 can be read and nothing is in flight (this rank idles), a piece
//      only the sources hold is read from a source: of a stripe whose owner left or failed
//      (when the owners are known), or of any stripe after a longer idle (an owner that is
//      alive but stalled); one no other rank started, from the end of its stripe (the owner
//      reaches it last), stripes after this rank's own first.
// The holder of a piece: a receiver before a source, the one with fewest reads in flight from
// this rank, then the one this rank has read from least, remaining ties broken from rank
// self+piece+1 on so that reads spread over equal holders. At
// most `per_peer` reads are in flight to one receiver and `per_source` to one source. A holder
// whose read failed, and a (holder, piece) that failed its checksum, are never chosen again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "p2p/piece_set.h"

namespace mooncake::p2p {

struct PickerLimits {
  uint32_t per_peer = 4;
  uint32_t per_source = 4;
};

struct Pick {
  uint32_t piece = 0;
  int32_t holder = -1;
};

class PiecePicker {
 public:
  // This rank owns stripe `stripe` of `stripes` (0 of 1: every piece is its own).
  PiecePicker(size_t pieces, int world_size, int32_t self, uint32_t stripe, uint32_t stripes);
  // The rank that owns each stripe (one per stripe), when known: lets idle ranks take over the
  // stripes of owners that left at once (order 3). Without it any stripe counts as orphaned.
  void SetStripeOwners(std::vector<int32_t> owners);

  // What the tracker said.
  void AddHolder(int32_t rank, bool source);  // a source holds every piece, others none yet
  void RemoveHolder(int32_t rank);            // left, dead or banned
  void HolderHas(int32_t rank, uint32_t piece);
  void HolderDropped(int32_t rank, uint32_t piece);
  void StartedElsewhere(uint32_t piece);
  // What this fetch saw.
  void HolderFailed(int32_t rank);             // a read from it failed: not used again
  void MarkBad(int32_t rank, uint32_t piece);  // it served this piece damaged
  void Have(uint32_t piece);                   // verified here
  void Lost(uint32_t piece);                   // failed a later check: fetch it again

  // The next read (marked in flight), or none: every missing piece is in flight, held by no
  // usable holder, or its holders have no free slot. Order 3 above: with `steal_orphans` (the
  // caller idles) from stripes whose owner left; with `steal_any` (idle a while) from any.
  // End() each pick once it finished.
  std::optional<Pick> Next(const PickerLimits& limits, bool steal_orphans = false,
                           bool steal_any = false);
  void End(const Pick& pick);

  bool complete() const { return have_.full(); }
  size_t missing() const { return have_.size() - have_.count(); }
  size_t in_flight() const { return in_flight_.count(); }
  bool is_source(int32_t rank) const;
  // A missing piece that no usable holder has (for the error when a fetch stalls), or none.
  std::optional<uint32_t> Unavailable() const;

 private:
  struct Holder {
    bool active = false;
    bool source = false;
    bool failed = false;
    bool left = false;  // was a holder, then left (dead, banned, unregistered)
    PieceSet have;
    PieceSet bad;
    uint32_t in_flight = 0;
    uint32_t reads = 0;  // reads this rank started from it, in all
  };
  bool Usable(const Holder& h) const { return h.active && !h.failed; }
  void Count(const Holder& h, uint32_t piece, int delta);
  void Forget(int32_t rank);  // subtracts the holder's pieces from the counts
  void Rebuild();
  std::optional<Pick> Scan(const PickerLimits& limits);
  std::optional<Pick> Steal(const PickerLimits& limits, bool any_stripe);
  bool Orphaned(uint32_t stripe) const;
  // A usable holder of `piece` with a free slot, or -1. Sources only when `any_source` or the
  // piece is in this rank's stripe.
  int32_t ChooseHolder(uint32_t piece, const PickerLimits& limits, bool any_source) const;
  uint32_t StripeOf(uint32_t piece) const;
  size_t StripeBegin(uint32_t stripe) const { return pieces_ * stripe / stripes_; }
  bool Owned(uint32_t piece) const { return piece >= begin_ && piece < end_; }
  std::optional<Pick> Take(uint32_t piece, int32_t holder);

  size_t pieces_;
  int32_t self_;
  uint32_t stripe_;
  uint32_t stripes_;
  size_t begin_, end_;           // this rank's stripe
  std::vector<int32_t> owners_;  // rank owning each stripe (empty: unknown)
  std::vector<Holder> holders_;
  std::vector<uint32_t> holders_of_;    // usable holders of each piece
  std::vector<uint32_t> receivers_of_;  // usable non-source holders of each piece
  std::vector<uint32_t> started_;       // reads other ranks began of each piece
  PieceSet have_;
  PieceSet in_flight_;
  std::vector<uint32_t> plan_;  // candidate pieces, best first
  size_t cursor_ = 0;           // plan_[0, cursor_) are done or in flight
  bool dirty_ = true;           // the view changed since the plan was made
  bool must_rebuild_ = false;   // a piece left behind the cursor became a candidate again
  uint32_t picks_since_rebuild_ = 0;
};

}  // namespace mooncake::p2p
