// Hasher128 and ContentKey: determinism, framing of byte strings, and the hex form.
#include "ir/content_hash.h"

#include <gtest/gtest.h>

#include <set>

namespace doorbell {
namespace {

ContentKey hash_bytes(std::initializer_list<std::string_view> parts) {
  Hasher128 h;
  for (std::string_view p : parts) h.add_bytes(p);
  return h.finish();
}

TEST(ContentHashTest, SameInputSameKey) {
  Hasher128 a, b;
  for (uint64_t v : {1ull, 2ull, 0xffffffffffffffffull}) {
    a.add_u64(v);
    b.add_u64(v);
  }
  a.add_bytes("doorbell");
  b.add_bytes("doorbell");
  EXPECT_EQ(a.finish(), b.finish());
  EXPECT_EQ(a.finish(), a.finish()) << "finish does not change the state";
  EXPECT_EQ(Hasher128().finish(), Hasher128().finish());
}

TEST(ContentHashTest, KeysArePinned) {
  // Keys name cached programs and schedules across processes: the hash function itself must never change.
  EXPECT_EQ(Hasher128().finish().hex(), "63f1068e19056a76c9161866ef33bada");
  Hasher128 h;
  h.add_u64(42);
  h.add_bytes("doorbell");
  EXPECT_EQ(h.finish().hex(), "2845b54f600078d73e172385a52f2b44");
}

TEST(ContentHashTest, LengthPrefixSeparatesByteStrings) {
  EXPECT_NE(hash_bytes({"ab", "c"}), hash_bytes({"a", "bc"}));
  EXPECT_NE(hash_bytes({"abc"}), hash_bytes({"ab", "c"}));
  EXPECT_NE(hash_bytes({"", "a"}), hash_bytes({"a", ""}));
  EXPECT_NE(hash_bytes({"a"}), hash_bytes({std::string_view("a\0", 2)})) << "a trailing zero byte counts";
  EXPECT_NE(hash_bytes({"abcdefgh"}), hash_bytes({"abcdefgh", ""}));
  EXPECT_NE(hash_bytes({"abcdefghi"}), hash_bytes({"abcdefgh", "i"}));
}

TEST(ContentHashTest, OrderAndValueMatter) {
  Hasher128 a, b, c;
  a.add_u64(1); a.add_u64(2);
  b.add_u64(2); b.add_u64(1);
  c.add_u64(1);
  EXPECT_NE(a.finish(), b.finish());
  EXPECT_NE(a.finish(), c.finish());
  Hasher128 zero;
  zero.add_u64(0);
  EXPECT_NE(zero.finish(), Hasher128().finish()) << "adding a zero is not nothing";
  // small inputs give distinct keys in both halves
  std::set<uint64_t> his, los;
  for (uint64_t v = 0; v < 1000; v++) {
    Hasher128 h;
    h.add_u64(v);
    ContentKey k = h.finish();
    his.insert(k.hi);
    los.insert(k.lo);
  }
  EXPECT_EQ(his.size(), 1000u);
  EXPECT_EQ(los.size(), 1000u);
}

TEST(ContentHashTest, HexIsThirtyTwoLowercaseDigitsHiFirst) {
  EXPECT_EQ((ContentKey{0x0123456789abcdefULL, 0xfedcba9876543210ULL}.hex()), "0123456789abcdeffedcba9876543210");
  EXPECT_EQ((ContentKey{0, 1}.hex()), "00000000000000000000000000000001");
  EXPECT_EQ((ContentKey{}.hex()), std::string(32, '0'));
  std::string h = hash_bytes({"x"}).hex();
  EXPECT_EQ(h.size(), 32u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos) << h;
}

TEST(ContentHashTest, KeysOrderByHiThenLo) {
  EXPECT_LT((ContentKey{1, 5}), (ContentKey{2, 0}));
  EXPECT_LT((ContentKey{1, 5}), (ContentKey{1, 6}));
  Hasher128 h;
  h.add_key(ContentKey{3, 4});
  Hasher128 g;
  g.add_u64(3);
  g.add_u64(4);
  EXPECT_EQ(h.finish(), g.finish()) << "add_key adds hi, then lo";
}

}  // namespace
}  // namespace doorbell
