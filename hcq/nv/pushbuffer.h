// An NVIDIA pushbuffer: a stream of method headers, each followed by its data words, that a channel's host unit
// (PBDMA) fetches through a GPFIFO entry and hands to the engine bound to the header's subchannel. The writer is in
// the spirit of Mesa's nv_push.h (reserve space, write, commit), but every mistake throws instead of asserting: more
// words than reserved, data without a header, a header whose data is missing, a method offset that is not
// 4-aligned or beyond the 12-bit dword address, a count or an immediate that does not fit 13 bits.
// It writes either into words it owns (the encoders' test helpers) or straight into external memory such as a piece of
// a device's pushbuffer ring (as Mesa's nv_push and RADV's radv_cs write into the mapped command buffer), so the
// device encodes each command once, in place, within the size the command declared.
// The decoder reads the same headers back; the mock GPU and the tests use it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace doorbell::nv {

// NVC56F_DMA_SEC_OP values (clc56f.h): how a header's data words map to methods.
enum class SecOp : uint32_t {
  kIncMethod = 1,       // data[i] goes to method + 4i
  kNonIncMethod = 3,    // every data word goes to method (a FIFO-like method such as LOAD_INLINE_QMD_DATA)
  kImmdDataMethod = 4,  // no data words: the 13-bit value sits in the header's count field
  kOneInc = 5,          // data[0] goes to method, the rest to method + 4
};
std::string to_string(SecOp op);

inline constexpr uint32_t kMaxMethodOffset = 0x3ffc;     // NVC56F_DMA_METHOD_ADDRESS 11:0, in dwords
inline constexpr uint32_t kMaxMethodCount = 0x1fff;      // NVC56F_DMA_METHOD_COUNT 28:16
inline constexpr uint32_t kMaxImmediateData = 0x1fff;    // NVC56F_DMA_IMMD_DATA 28:16
inline constexpr uint32_t kMaxSubchannel = 7;            // NVC56F_DMA_METHOD_SUBCHANNEL 15:13
inline constexpr size_t kMaxPushbufferWords = 0x1fffff;  // NVC86F_GP_ENTRY1_LENGTH 30:10: one GPFIFO entry's worth

// One header word. `count_or_data` is the number of data words that follow, or for kImmdDataMethod the value itself.
// Throws std::invalid_argument naming the bad operand.
uint32_t method_header(SecOp op, uint32_t subchannel, uint32_t method_offset, uint32_t count_or_data);

class PushBuffer {
 public:
  explicit PushBuffer(size_t capacity_words = kMaxPushbufferWords);
  // Writes into `memory` (capacity: its size), which must outlive the writer; words() is then unavailable, the words
  // are memory[0, size()).
  explicit PushBuffer(std::span<uint32_t> memory);

  // Space: reserve(n) opens room for exactly n words (headers and data), write()/header() fill it, commit() closes
  // it. Only one reservation is open at a time; commit() throws unless exactly n words were written and the last
  // header got all its data.
  void reserve(size_t words);
  void header(SecOp op, uint32_t subchannel, uint32_t method_offset, uint32_t count);
  void write(uint32_t data_word);
  void commit();

  // Whole methods: reserve, header, data, commit.
  void inc(uint32_t subchannel, uint32_t method_offset, std::span<const uint32_t> data);
  void inc(uint32_t subchannel, uint32_t method_offset, std::initializer_list<uint32_t> data) {
    inc(subchannel, method_offset, std::span<const uint32_t>(data.begin(), data.size()));
  }
  void non_inc(uint32_t subchannel, uint32_t method_offset, std::span<const uint32_t> data);
  void one_inc(uint32_t subchannel, uint32_t method_offset, std::span<const uint32_t> data);
  void immediate(uint32_t subchannel, uint32_t method_offset, uint32_t value);
  // Whole methods encoded elsewhere (a vector from an encode_* helper): reserved, copied and committed. Throws
  // std::invalid_argument, writing nothing, unless `words` decode to complete methods.
  void append_encoded(std::span<const uint32_t> words);

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  // The committed words; throws std::logic_error while a reservation is open or when writing into external memory.
  const std::vector<uint32_t>& words() const;
  std::vector<uint32_t> take();

 private:
  void whole_method(SecOp op, uint32_t subchannel, uint32_t method_offset, std::span<const uint32_t> data);
  void append(uint32_t word);

  size_t capacity_;
  std::vector<uint32_t> words_;  // owned words, when external_ is null
  uint32_t* external_ = nullptr;
  size_t size_ = 0;
  bool open_ = false;
  size_t reservation_start_ = 0;
  size_t reservation_end_ = 0;  // size_ when the open reservation is full
  uint32_t data_owed_ = 0;      // data words the last header still expects
  uint32_t owing_method_ = 0;   // that header's method, for errors
};

// One header and its data, as read back from words.
struct DecodedMethod {
  size_t word_index = 0;  // where the header sits in the stream
  uint32_t subchannel = 0;
  uint32_t method = 0;  // byte offset of the first method
  SecOp sec_op = SecOp::kIncMethod;
  std::vector<uint32_t> data;  // for kImmdDataMethod: the one 13-bit value

  // The method (byte offset) that data[i] is written to, per sec_op.
  uint32_t method_of(size_t i) const;
  bool operator==(const DecodedMethod&) const = default;
};

// Decodes a whole pushbuffer. Zero words are NVC56F_DMA_NOP and are skipped. Throws std::invalid_argument naming the
// word index for a sec op other than the four above, or for a header whose data words run past the end.
std::vector<DecodedMethod> decode_pushbuffer(std::span<const uint32_t> words);

}  // namespace doorbell::nv
