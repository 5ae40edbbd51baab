// Which piece to read next, and from which holder (docs/P2P.md "Piece order"). Pure logic over
// what the tracker's events said; one per fetch; not thread-safe.
//
// The order keeps the sources from being the bottleneck and spreads the pieces fast:
//   1. pieces some other receiver already holds come first, the rarest first (fewest holders),
//      so each new copy makes a scarce piece less scarce and the source is left alone;
//   2. then pieces only the sources hold, those no other receiver has started to read first;
//   3. ties go by distance from this rank's start piece: receivers start at different places
//      (start = their index x pieces / receivers), so their first reads from the source differ.
// The holder of a piece: a receiver before a source, the one with fewest reads in flight from
// this rank, ties broken from rank self+piece+1 on so that reads spread over equal holders. At most
// `per_peer` reads are in flight to one receiver and `per_source` to one source. A holder
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
  PiecePicker(size_t pieces, int world_size, int32_t self, size_t start);

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
  // usable holder, or its holders have no free slot. End() each pick once it finished.
  std::optional<Pick> Next(const PickerLimits& limits);
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
    PieceSet have;
    PieceSet bad;
    uint32_t in_flight = 0;
  };
  bool Usable(const Holder& h) const { return h.active && !h.failed; }
  void Count(const Holder& h, uint32_t piece, int delta);
  void Forget(int32_t rank);  // subtracts the holder's pieces from the counts
  void Rebuild();
  std::optional<Pick> Scan(const PickerLimits& limits);
  int32_t ChooseHolder(uint32_t piece, const PickerLimits& limits) const;

  size_t pieces_;
  int32_t self_;
  size_t start_;
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
