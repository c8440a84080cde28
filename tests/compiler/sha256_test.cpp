// SHA-256 against the examples of FIPS 180-2 (appendix B) and NIST's SHA256ShortMsg/LongMsg vectors.
#include <gtest/gtest.h>

#include <string>

#include "compiler/sha256.h"

namespace doorbell {
namespace {

std::string sha256_hex(const std::string& s) { return Sha256::hex(Sha256::of(s)); }

TEST(Sha256, FipsExamplesGiveTheirPublishedDigests) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // B.1
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),             // B.2: two blocks
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");  // B.3
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                       "mnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, PiecewiseAddsEqualOneAddAtEverySplit) {
  std::string msg;
  for (int i = 0; i < 200; i++) msg += static_cast<char>(i * 7 + 3);
  const Sha256::Digest whole = Sha256::of(msg);
  for (size_t a = 0; a <= msg.size(); a += 13)
    for (size_t b = a; b <= msg.size(); b += 29) {
      Sha256 h;
      h.add(std::string_view(msg).substr(0, a));
      h.add(std::string_view(msg).substr(a, b - a));
      h.add(std::string_view(msg).substr(b));
      ASSERT_EQ(h.finish(), whole) << "split at " << a << " and " << b;
    }
}

}  // namespace
}  // namespace doorbell
