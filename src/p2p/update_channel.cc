#include "p2p/update_channel.h"

#include "common/threads.h"

namespace mooncake::p2p {

UpdateChannel::UpdateChannel(TrackerClient& tracker, std::string name, Nanos interval)
    : tracker_(tracker), name_(std::move(name)), interval_(interval) {
  pending_.name = name_;
  last_success_ = clock_.Now();
  ticker_.Start(interval_, PeriodicThread::First::kWait, [this] { return Tick(); });
}

UpdateChannel::~UpdateChannel() { Stop(); }

void UpdateChannel::Landed(uint32_t piece) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.landed.push_back(piece);
}

void UpdateChannel::Started(uint32_t piece) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.started.push_back(piece);
}

void UpdateChannel::Bad(int32_t holder, uint32_t piece) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.bad.push_back({holder, piece});
}

void UpdateChannel::Failed(int32_t holder) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.failed.push_back(holder);
}

std::vector<UpdateResponse> UpdateChannel::TakeAnswers() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(answers_, {});
}

Status UpdateChannel::last_error() const { return CopyLocked(mutex_, error_); }

Nanos UpdateChannel::last_success() const { return CopyLocked(mutex_, last_success_); }

Status UpdateChannel::SendOnce() {
  std::lock_guard<std::mutex> send(send_mutex_);
  UpdateRequest request;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    request = std::exchange(pending_, UpdateRequest{});
    pending_.name = name_;
    request.since = next_;
  }
  auto answer = tracker_.Update(request);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!answer.ok()) {
    // Keep what was not delivered for the next try (the tracker applies pieces idempotently).
    auto put_back = [](auto& from, auto& into) {
      into.insert(into.end(), from.begin(), from.end());
    };
    put_back(request.landed, pending_.landed);
    put_back(request.bad, pending_.bad);
    put_back(request.failed, pending_.failed);
    error_ = answer.status();
    return error_;
  }
  error_ = Status::Ok();
  last_success_ = clock_.Now();
  next_ = answer->next;
  answers_.push_back(std::move(*answer));
  return Status::Ok();
}

bool UpdateChannel::Tick() {
  Status s = SendOnce();
  auto backlog = [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    return s.ok() && !answers_.empty() && answers_.back().events.size() >= kMaxEventsPerUpdate;
  };
  while (backlog() && !ticker_.stopping()) s = SendOnce();
  return true;
}

void UpdateChannel::Stop() { ticker_.Stop(); }

Status UpdateChannel::Flush() {
  Stop();
  return SendOnce();
}

}  // namespace mooncake::p2p
