// A region of GPU-visible memory used as a ring (a GPU device's pushbuffers or indirect buffers, its kernel
// arguments): take() hands out aligned pieces that never straddle the end, and a piece is handed out again only after
// the submission that used it completed. close(count) says everything taken so far belongs to submission `count`;
// take() calls wait(count) for the oldest such submission when it needs its space back. Not thread-safe: the device's
// submit lock guards it.
#pragma once
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <string>
#include <utility>

namespace doorbell {

class UploadRing {
 public:
  // `what` names the ring in errors ("NV: the compute pushbuffer ring").
  UploadRing(uint8_t* cpu, uint64_t va, uint64_t size, std::string what) : cpu_(cpu), va_(va), size_(size), what_(std::move(what)) {}
  struct Piece {
    uint8_t* cpu;
    uint64_t va;
  };
  template <class Wait>
  Piece take(uint64_t bytes, uint64_t align, Wait&& wait) {
    if (bytes > size_) throw std::invalid_argument(what_ + ": " + std::to_string(bytes) + " bytes do not fit its " + std::to_string(size_));
    uint64_t pos = round_up(head_, align);
    if (pos / size_ != (pos + bytes - 1) / size_) pos = round_up(pos, size_);  // never straddle the end
    while (pos + bytes > completed_end_ + size_) {
      if (pending_.empty()) throw std::logic_error(what_ + " is full of the submission being recorded");
      wait(pending_.front().second);
      completed_end_ = pending_.front().first;
      pending_.pop_front();
    }
    head_ = pos + bytes;
    return {cpu_ + pos % size_, va_ + pos % size_};
  }
  void close(uint64_t count) { pending_.push_back({head_, count}); }

 private:
  static uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }
  uint8_t* cpu_;
  uint64_t va_, size_;
  std::string what_;
  uint64_t head_ = 0;           // bytes handed out since the start (positions are head % size)
  uint64_t completed_end_ = 0;  // everything before this position belongs to completed submissions
  std::deque<std::pair<uint64_t, uint64_t>> pending_;  // (end position, submission count)
};

}  // namespace doorbell
