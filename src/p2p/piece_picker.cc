#include "p2p/piece_picker.h"

#include <algorithm>
#include <tuple>

namespace mooncake::p2p {
namespace {
// A plan is rebuilt at most this often between reads when the view changes: rebuilding sorts
// the missing pieces, which for a million-piece object costs more than a read.
constexpr uint32_t kPicksPerRebuild = 32;
// Candidates examined per Next() when their holders are busy.
constexpr size_t kScanLimit = 4096;
}  // namespace

PiecePicker::PiecePicker(size_t pieces, int world_size, int32_t self, uint32_t stripe,
                         uint32_t stripes)
    : pieces_(pieces),
      self_(self),
      stripe_(stripes == 0 ? 0 : stripe % stripes),
      stripes_(std::max<uint32_t>(1, stripes)),
      begin_(pieces * stripe_ / stripes_),
      end_(pieces * (stripe_ + 1) / stripes_),
      holders_(std::max(1, world_size)),
      holders_of_(pieces, 0),
      receivers_of_(pieces, 0),
      started_(pieces, 0),
      have_(pieces),
      in_flight_(pieces) {
  for (auto& h : holders_) {
    h.have = PieceSet(pieces);
    h.bad = PieceSet(pieces);
  }
}

bool PiecePicker::is_source(int32_t rank) const {
  return rank >= 0 && rank < static_cast<int32_t>(holders_.size()) && holders_[rank].source;
}

void PiecePicker::Count(const Holder& h, uint32_t piece, int delta) {
  holders_of_[piece] += delta;
  if (!h.source) receivers_of_[piece] += delta;
  dirty_ = true;
}

void PiecePicker::Forget(int32_t rank) {
  Holder& h = holders_[rank];
  if (!Usable(h)) return;
  for (uint32_t p = 0; p < pieces_; ++p) {
    if (h.have.Test(p)) Count(h, p, -1);
  }
}

void PiecePicker::AddHolder(int32_t rank, bool source) {
  if (rank < 0 || rank >= static_cast<int32_t>(holders_.size()) || rank == self_) return;
  Forget(rank);
  Holder& h = holders_[rank];
  const bool failed = h.failed;
  h = Holder{true,        source, failed, false, PieceSet(pieces_), PieceSet(pieces_),
             h.in_flight, h.reads};
  if (source) {
    h.have.InsertAll();
    if (Usable(h)) {
      for (uint32_t p = 0; p < pieces_; ++p) Count(h, p, +1);
    }
  }
}

void PiecePicker::RemoveHolder(int32_t rank) {
  if (rank < 0 || rank >= static_cast<int32_t>(holders_.size())) return;
  Forget(rank);
  if (holders_[rank].active) holders_[rank].left = true;
  holders_[rank].active = false;
}

void PiecePicker::SetStripeOwners(std::vector<int32_t> owners) {
  if (owners.size() == stripes_) owners_ = std::move(owners);
}

bool PiecePicker::Orphaned(uint32_t stripe) const {
  if (owners_.empty()) return true;
  const int32_t owner = owners_[stripe];
  if (owner < 0 || owner >= static_cast<int32_t>(holders_.size())) return true;
  return holders_[owner].left || holders_[owner].failed;
}

void PiecePicker::HolderFailed(int32_t rank) {
  if (rank < 0 || rank >= static_cast<int32_t>(holders_.size())) return;
  Forget(rank);
  holders_[rank].failed = true;
}

void PiecePicker::HolderHas(int32_t rank, uint32_t piece) {
  if (rank < 0 || rank >= static_cast<int32_t>(holders_.size()) || piece >= pieces_) return;
  Holder& h = holders_[rank];
  if (!h.active || h.bad.Test(piece) || !h.have.Insert(piece)) return;
  if (!h.failed) Count(h, piece, +1);
  if (started_[piece] > 0) --started_[piece];
}

void PiecePicker::HolderDropped(int32_t rank, uint32_t piece) {
  if (rank < 0 || rank >= static_cast<int32_t>(holders_.size()) || piece >= pieces_) return;
  Holder& h = holders_[rank];
  if (!h.have.Erase(piece)) return;
  if (Usable(h)) Count(h, piece, -1);
}

void PiecePicker::StartedElsewhere(uint32_t piece) {
  if (piece >= pieces_) return;
  ++started_[piece];
  dirty_ = true;
}

void PiecePicker::MarkBad(int32_t rank, uint32_t piece) {
  if (rank < 0 || rank >= static_cast<int32_t>(holders_.size()) || piece >= pieces_) return;
  HolderDropped(rank, piece);
  holders_[rank].bad.Insert(piece);
}

void PiecePicker::Have(uint32_t piece) {
  if (have_.Insert(piece)) dirty_ = true;
}

void PiecePicker::Lost(uint32_t piece) {
  if (have_.Erase(piece)) must_rebuild_ = true;
}

uint32_t PiecePicker::StripeOf(uint32_t piece) const {
  uint32_t s = static_cast<uint32_t>(static_cast<uint64_t>(piece) * stripes_ / pieces_);
  while (s + 1 < stripes_ && StripeBegin(s + 1) <= piece) ++s;
  while (s > 0 && StripeBegin(s) > piece) --s;
  return s;
}

void PiecePicker::Rebuild() {
  plan_.clear();
  for (uint32_t p = 0; p < pieces_; ++p) {
    if (have_.Test(p) || in_flight_.Test(p)) continue;
    if (Owned(p) ? holders_of_[p] > 0 : receivers_of_[p] > 0) plan_.push_back(p);
  }
  // Lower is better: own stripe in order, then what receivers hold, rarest first.
  auto key = [this](uint32_t p) {
    return Owned(p) ? std::make_tuple(0u, 0u, p) : std::make_tuple(1u, receivers_of_[p], p);
  };
  std::sort(plan_.begin(), plan_.end(), [&key](uint32_t a, uint32_t b) { return key(a) < key(b); });
  cursor_ = 0;
  dirty_ = false;
  must_rebuild_ = false;
  picks_since_rebuild_ = 0;
}

int32_t PiecePicker::ChooseHolder(uint32_t piece, const PickerLimits& limits,
                                  bool any_source) const {
  const int32_t n = static_cast<int32_t>(holders_.size());
  const bool source_ok = any_source || Owned(piece);
  int32_t best = -1;
  // Starting from a different rank per piece spreads equal holders' reads over them.
  for (int32_t i = 1; i <= n; ++i) {
    const int32_t r = static_cast<int32_t>((self_ + piece + i) % n);
    const Holder& h = holders_[r];
    if (r == self_ || !Usable(h) || !h.have.Test(piece) || h.bad.Test(piece)) continue;
    if (h.source && !source_ok) continue;
    if (h.in_flight >= (h.source ? limits.per_source : limits.per_peer)) continue;
    if (best < 0) {
      best = r;
      continue;
    }
    const Holder& b = holders_[best];
    // Equal in flight: the holder read from least so far. Mapped copies finish inside the
    // round, so in-flight counts are mostly 0 and would leave the choice to the rotation alone;
    // the running count spreads a fetch's reads evenly over equal holders whatever the timing
    // (a damaged source is asked often enough to be caught and set aside).
    if (std::make_tuple(h.source, h.in_flight, h.reads) <
        std::make_tuple(b.source, b.in_flight, b.reads)) {
      best = r;
    }
  }
  return best;
}

std::optional<Pick> PiecePicker::Take(uint32_t piece, int32_t holder) {
  in_flight_.Insert(piece);
  ++holders_[holder].in_flight;
  ++holders_[holder].reads;
  ++picks_since_rebuild_;
  return Pick{piece, holder};
}

std::optional<Pick> PiecePicker::Scan(const PickerLimits& limits) {
  while (cursor_ < plan_.size() &&
         (have_.Test(plan_[cursor_]) || in_flight_.Test(plan_[cursor_]))) {
    ++cursor_;
  }
  const size_t end = std::min(plan_.size(), cursor_ + kScanLimit);
  for (size_t i = cursor_; i < end; ++i) {
    const uint32_t p = plan_[i];
    if (have_.Test(p) || in_flight_.Test(p)) continue;
    const int32_t holder = ChooseHolder(p, limits, /*any_source=*/false);
    if (holder >= 0) return Take(p, holder);
  }
  return std::nullopt;
}

std::optional<Pick> PiecePicker::Steal(const PickerLimits& limits, bool any_stripe) {
  // The best piece to take from a source out of turn: nobody started it, it lies late in its
  // stripe, and its stripe comes soon after this rank's (so idle ranks spread over stripes).
  std::optional<std::tuple<uint32_t, size_t, uint32_t>> best_key;
  std::optional<uint32_t> best;
  for (uint32_t p = 0; p < pieces_; ++p) {
    if (have_.Test(p) || in_flight_.Test(p) || holders_of_[p] == 0) continue;
    const uint32_t s = StripeOf(p);
    if (!any_stripe && !Orphaned(s)) continue;
    const size_t from_end = StripeBegin(s + 1 < stripes_ ? s + 1 : stripes_) - 1 - p;
    const auto key = std::make_tuple(started_[p], from_end, (s + stripes_ - stripe_) % stripes_);
    if (!best_key || key < *best_key) {
      best_key = key;
      best = p;
    }
  }
  if (!best) return std::nullopt;
  const int32_t holder = ChooseHolder(*best, limits, /*any_source=*/true);
  if (holder < 0) return std::nullopt;
  return Take(*best, holder);
}

std::optional<Pick> PiecePicker::Next(const PickerLimits& limits, bool steal_orphans,
                                      bool steal_any) {
  if (must_rebuild_ ||
      (dirty_ && (cursor_ >= plan_.size() || picks_since_rebuild_ >= kPicksPerRebuild))) {
    Rebuild();
  }
  auto pick = Scan(limits);
  if (!pick && dirty_) {  // pieces may have become available since the plan was made
    Rebuild();
    pick = Scan(limits);
  }
  if (!pick && (steal_orphans || steal_any) && in_flight_.empty()) pick = Steal(limits, steal_any);
  return pick;
}

void PiecePicker::End(const Pick& pick) {
  // A piece that did not arrive is a candidate again, behind the plan's cursor: replan.
  if (pick.piece < pieces_ && in_flight_.Erase(pick.piece) && !have_.Test(pick.piece)) {
    must_rebuild_ = true;
  }
  if (pick.holder >= 0 && pick.holder < static_cast<int32_t>(holders_.size()) &&
      holders_[pick.holder].in_flight > 0) {
    --holders_[pick.holder].in_flight;
  }
}

std::optional<uint32_t> PiecePicker::Unavailable() const {
  for (uint32_t p = 0; p < pieces_; ++p) {
    if (!have_.Test(p) && !in_flight_.Test(p) && holders_of_[p] == 0) return p;
  }
  return std::nullopt;
}

}  // namespace mooncake::p2p
