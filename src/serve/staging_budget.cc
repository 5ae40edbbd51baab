#include "serve/staging_budget.h"

#include <algorithm>

#include "common/threads.h"

namespace mooncake::serve {

StagingBuffer::StagingBuffer(std::shared_ptr<StagingBudget> budget,
                             std::unique_ptr<engine::KvMemory> memory)
    : memory_(std::move(memory)), budget_(std::move(budget)), size_(memory_->bytes().size()) {}

StagingBuffer::~StagingBuffer() {
  if (charged_.exchange(false)) budget_->Release(size_, false);
}

void StagingBuffer::Retire() {
  if (charged_.exchange(false)) budget_->Release(size_, true);
}

std::shared_ptr<StagingBuffer> StagingBudget::Acquire(uint64_t size, engine::Engine& engine) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return charged_ == 0 || charged_ + size <= limit_; });
    charged_ += size;
    high_water_ = std::max(high_water_, charged_);
  }
  return std::make_shared<StagingBuffer>(shared_from_this(), engine.AllocateKv(size));
}

uint64_t StagingBudget::high_water() const { return CopyLocked(mutex_, high_water_); }

uint64_t StagingBudget::retired_bytes() const { return CopyLocked(mutex_, retired_); }

void StagingBudget::Release(uint64_t size, bool retired) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    charged_ -= size;
    if (retired) retired_ += size;
  }
  cv_.notify_all();
}

}  // namespace mooncake::serve
