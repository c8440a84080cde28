#include "hcq/nv/pushbuffer.h"

#include <stdexcept>

#include "hcq/nv/bit_field.h"
#include "hcq/nv/nv_classes.h"

namespace doorbell::nv {
namespace {

void check_method(uint32_t subchannel, uint32_t method_offset) {
  if (subchannel > kMaxSubchannel) {
    throw std::invalid_argument("pushbuffer: subchannel " + std::to_string(subchannel) +
                                " is out of range; expected 0.." + std::to_string(kMaxSubchannel));
  }
  if (method_offset % 4 != 0) {
    throw std::invalid_argument("pushbuffer: method offset " + hex(method_offset) +
                                " is not 4-byte aligned; methods are addressed in dwords");
  }
  if (method_offset > kMaxMethodOffset) {
    throw std::invalid_argument("pushbuffer: method offset " + hex(method_offset) +
                                " is out of range; expected at most " + hex(kMaxMethodOffset) +
                                " (NVC56F_DMA_METHOD_ADDRESS is 12 bits of dwords)");
  }
}

bool known(uint32_t sec_op) {
  return sec_op == static_cast<uint32_t>(SecOp::kIncMethod) || sec_op == static_cast<uint32_t>(SecOp::kNonIncMethod) ||
         sec_op == static_cast<uint32_t>(SecOp::kImmdDataMethod) || sec_op == static_cast<uint32_t>(SecOp::kOneInc);
}

}  // namespace

std::string to_string(SecOp op) {
  switch (op) {
    case SecOp::kIncMethod: return "INC_METHOD";
    case SecOp::kNonIncMethod: return "NON_INC_METHOD";
    case SecOp::kImmdDataMethod: return "IMMD_DATA_METHOD";
    case SecOp::kOneInc: return "ONE_INC";
  }
  return "SEC_OP " + std::to_string(static_cast<uint32_t>(op));
}

uint32_t method_header(SecOp op, uint32_t subchannel, uint32_t method_offset, uint32_t count_or_data) {
  check_method(subchannel, method_offset);
  if (!known(static_cast<uint32_t>(op))) {
    throw std::invalid_argument("pushbuffer: " + to_string(op) + " is not a method header kind; expected 1, 3, 4 or 5");
  }
  if (op == SecOp::kImmdDataMethod && count_or_data > kMaxImmediateData) {
    throw std::invalid_argument("pushbuffer: immediate data " + hex(count_or_data) + " for method " +
                                hex(method_offset) + " does not fit NVC56F_DMA_IMMD_DATA (13 bits); expected at most " +
                                hex(kMaxImmediateData));
  }
  if (op != SecOp::kImmdDataMethod && count_or_data > kMaxMethodCount) {
    throw std::invalid_argument(
        "pushbuffer: " + std::to_string(count_or_data) + " data words for method " + hex(method_offset) +
        " do not fit NVC56F_DMA_METHOD_COUNT (13 bits); expected at most " + std::to_string(kMaxMethodCount));
  }
  return field_bits(NVC56F_DMA_SEC_OP, static_cast<uint32_t>(op)) | field_bits(NVC56F_DMA_METHOD_COUNT, count_or_data) |
         field_bits(NVC56F_DMA_METHOD_SUBCHANNEL, subchannel) |
         field_bits(NVC56F_DMA_METHOD_ADDRESS, method_offset >> 2);
}

PushBuffer::PushBuffer(size_t capacity_words) : capacity_(capacity_words) {
  if (capacity_words == 0 || capacity_words > kMaxPushbufferWords) {
    throw std::invalid_argument("PushBuffer: capacity of " + std::to_string(capacity_words) + " words; expected 1.." +
                                std::to_string(kMaxPushbufferWords) + " (the most one GPFIFO entry can fetch)");
  }
}

PushBuffer::PushBuffer(std::span<uint32_t> memory) : capacity_(memory.size()), external_(memory.data()) {
  if (memory.empty() || memory.size() > kMaxPushbufferWords) {
    throw std::invalid_argument("PushBuffer: external memory of " + std::to_string(memory.size()) + " words; expected 1.." +
                                std::to_string(kMaxPushbufferWords) + " (the most one GPFIFO entry can fetch)");
  }
}

void PushBuffer::reserve(size_t words) {
  if (open_) {
    throw std::logic_error("PushBuffer: reserve(" + std::to_string(words) +
                           ") while a reservation is still open; commit() it first");
  }
  if (words > capacity_ - size_) {
    throw std::length_error("PushBuffer: reserving " + std::to_string(words) + " words with " +
                            std::to_string(size_) + " of " + std::to_string(capacity_) +
                            " used would exceed the capacity");
  }
  open_ = true;
  reservation_start_ = size_;
  reservation_end_ = size_ + words;
}

void PushBuffer::append(uint32_t word) {
  if (!open_) {
    throw std::logic_error("PushBuffer: write outside a reservation; call reserve() first");
  }
  if (size_ >= reservation_end_) {
    throw std::length_error("PushBuffer: writing word " + std::to_string(size_ + 1) +
                            " exceeds the reservation, which ends at " + std::to_string(reservation_end_) + " words");
  }
  if (external_ != nullptr) {
    external_[size_] = word;
  } else {
    words_.push_back(word);
  }
  ++size_;
}

void PushBuffer::header(SecOp op, uint32_t subchannel, uint32_t method_offset, uint32_t count) {
  if (data_owed_ != 0) {
    throw std::logic_error("PushBuffer: a header for method " + hex(method_offset) + " while method " +
                           hex(owing_method_) + " still expects " + std::to_string(data_owed_) + " data words");
  }
  append(method_header(op, subchannel, method_offset, count));
  data_owed_ = op == SecOp::kImmdDataMethod ? 0 : count;
  owing_method_ = method_offset;
}

void PushBuffer::write(uint32_t data_word) {
  if (data_owed_ == 0) {
    throw std::logic_error("PushBuffer: data word " + hex(data_word) +
                           " without a method header that expects it; call header() first");
  }
  append(data_word);
  --data_owed_;
}

void PushBuffer::commit() {
  if (!open_) {
    throw std::logic_error("PushBuffer: commit() without an open reservation");
  }
  if (data_owed_ != 0) {
    throw std::logic_error("PushBuffer: commit() while method " + hex(owing_method_) + " still expects " +
                           std::to_string(data_owed_) + " data words");
  }
  if (size_ != reservation_end_) {
    throw std::logic_error("PushBuffer: commit() after writing " + std::to_string(size_ - reservation_start_) +
                           " of the " + std::to_string(reservation_end_ - reservation_start_) +
                           " reserved words; expected all of them");
  }
  open_ = false;
}

void PushBuffer::whole_method(SecOp op, uint32_t subchannel, uint32_t method_offset, std::span<const uint32_t> data) {
  if (data.empty()) {
    throw std::invalid_argument("PushBuffer: " + to_string(op) + " method " + hex(method_offset) +
                                " with no data words; expected at least one");
  }
  if (data.size() > kMaxMethodCount) {
    throw std::invalid_argument(
        "PushBuffer: " + std::to_string(data.size()) + " data words for method " + hex(method_offset) +
        " do not fit NVC56F_DMA_METHOD_COUNT (13 bits); expected at most " + std::to_string(kMaxMethodCount));
  }
  // Validate before reserving, so a bad method leaves no reservation open behind it.
  method_header(op, subchannel, method_offset, static_cast<uint32_t>(data.size()));
  reserve(1 + data.size());
  header(op, subchannel, method_offset, static_cast<uint32_t>(data.size()));
  for (uint32_t word : data) write(word);
  commit();
}

void PushBuffer::inc(uint32_t subchannel, uint32_t method_offset, std::span<const uint32_t> data) {
  whole_method(SecOp::kIncMethod, subchannel, method_offset, data);
}

void PushBuffer::non_inc(uint32_t subchannel, uint32_t method_offset, std::span<const uint32_t> data) {
  whole_method(SecOp::kNonIncMethod, subchannel, method_offset, data);
}

void PushBuffer::one_inc(uint32_t subchannel, uint32_t method_offset, std::span<const uint32_t> data) {
  whole_method(SecOp::kOneInc, subchannel, method_offset, data);
}

void PushBuffer::immediate(uint32_t subchannel, uint32_t method_offset, uint32_t value) {
  method_header(SecOp::kImmdDataMethod, subchannel, method_offset, value);
  reserve(1);
  header(SecOp::kImmdDataMethod, subchannel, method_offset, value);
  commit();
}

void PushBuffer::append_encoded(std::span<const uint32_t> words) {
  decode_pushbuffer(words);  // every header's data is there
  reserve(words.size());
  for (uint32_t word : words) append(word);
  commit();
}

const std::vector<uint32_t>& PushBuffer::words() const {
  if (open_) {
    throw std::logic_error("PushBuffer: words() while a reservation is open; commit() it first");
  }
  if (external_ != nullptr) {
    throw std::logic_error("PushBuffer: words() of a writer into external memory; its words are in that memory");
  }
  return words_;
}

std::vector<uint32_t> PushBuffer::take() {
  words();  // the same check
  std::vector<uint32_t> out = std::move(words_);
  words_.clear();
  size_ = 0;
  return out;
}

uint32_t DecodedMethod::method_of(size_t i) const {
  switch (sec_op) {
    case SecOp::kIncMethod: return method + 4 * static_cast<uint32_t>(i);
    case SecOp::kOneInc: return i == 0 ? method : method + 4;
    case SecOp::kNonIncMethod:
    case SecOp::kImmdDataMethod: return method;
  }
  return method;
}

std::vector<DecodedMethod> decode_pushbuffer(std::span<const uint32_t> words) {
  std::vector<DecodedMethod> methods;
  size_t i = 0;
  while (i < words.size()) {
    const uint32_t h = words[i];
    if (h == 0) {  // NVC56F_DMA_NOP
      ++i;
      continue;
    }
    const uint32_t sec_op = field_value(h, NVC56F_DMA_SEC_OP);
    if (!known(sec_op)) {
      throw std::invalid_argument("pushbuffer word " + std::to_string(i) + " (" + hex(h) + "): SEC_OP " +
                                  std::to_string(sec_op) +
                                  " is not supported; expected 1 (INC), 3 (NON_INC), 4 (IMMD) or 5 (ONE_INC)");
    }
    DecodedMethod m;
    m.word_index = i;
    m.sec_op = static_cast<SecOp>(sec_op);
    m.subchannel = field_value(h, NVC56F_DMA_METHOD_SUBCHANNEL);
    m.method = field_value(h, NVC56F_DMA_METHOD_ADDRESS) << 2;
    const uint32_t count = field_value(h, NVC56F_DMA_METHOD_COUNT);  // NVC56F_DMA_IMMD_DATA for immediates
    if (m.sec_op == SecOp::kImmdDataMethod) {
      m.data.push_back(count);
      ++i;
    } else {
      if (count > words.size() - i - 1) {
        throw std::invalid_argument("pushbuffer word " + std::to_string(i) + " (" + hex(h) + "): method " +
                                    hex(m.method) + " on subchannel " + std::to_string(m.subchannel) + " declares " +
                                    std::to_string(count) + " data words, but only " +
                                    std::to_string(words.size() - i - 1) + " follow");
      }
      m.data.assign(words.begin() + static_cast<ptrdiff_t>(i + 1),
                    words.begin() + static_cast<ptrdiff_t>(i + 1 + count));
      i += 1 + count;
    }
    methods.push_back(std::move(m));
  }
  return methods;
}

}  // namespace doorbell::nv
