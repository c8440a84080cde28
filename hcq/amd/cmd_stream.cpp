#include "hcq/amd/cmd_stream.h"

#include <stdexcept>
#include <string>

namespace doorbell::amd {

CmdStream::CmdStream(std::span<uint32_t> memory) : memory_(memory), capacity_(memory.size()) {}

CmdStream::CmdStream(size_t capacity) : capacity_(capacity), owns_(true) {}

void CmdStream::reserve(size_t dwords, const char* packet) {
  if (open_)
    throw std::logic_error(std::string(packet) + ": reserved while " + packet_ + " is not committed (" +
                           std::to_string(reserved_end_ - size_) + " of its dwords unwritten)");
  if (dwords == 0) throw std::logic_error(std::string(packet) + ": a packet reserves at least one dword");
  if (dwords > capacity_ - size_)
    throw std::logic_error(std::string(packet) + ": " + std::to_string(dwords) + " dwords at dword " +
                           std::to_string(size_) + " pass the end of the stream's " + std::to_string(capacity_) +
                           " dwords");
  if (owns_ && owned_.size() < size_ + dwords) {
    owned_.resize(size_ + dwords);  // grows to what is reserved; memory_ follows the vector when it moves
    memory_ = owned_;
  }
  packet_ = packet;
  packet_start_ = size_;
  reserved_end_ = size_ + dwords;
  open_ = true;
}

void CmdStream::write(uint32_t dword) {
  if (!open_)
    throw std::logic_error(std::string("CmdStream: a dword written outside a reserved packet (the last was ") +
                           (*packet_ ? packet_ : "none") + ")");
  if (size_ == reserved_end_)
    throw std::logic_error(std::string(packet_) + ": more dwords written than the " +
                           std::to_string(reserved_end_ - packet_start_) + " reserved");
  memory_[size_++] = dword;
}

void CmdStream::commit() {
  if (!open_)
    throw std::logic_error(std::string("CmdStream: commit without a reserved packet (the last was ") +
                           (*packet_ ? packet_ : "none") + ")");
  if (size_ != reserved_end_)
    throw std::logic_error(std::string(packet_) + ": committed with " + std::to_string(reserved_end_ - size_) +
                           " of its " + std::to_string(reserved_end_ - packet_start_) + " reserved dwords unwritten");
  open_ = false;
}

void CmdStream::rollback() {
  if (!open_) return;
  size_ = packet_start_;
  reserved_end_ = size_;
  open_ = false;
}

std::span<const uint32_t> CmdStream::words() const { return {memory_.data(), size_}; }

}  // namespace doorbell::amd
