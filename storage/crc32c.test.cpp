#include <doctest/doctest.h>

#include <string>

#include "storage/crc32c.hpp"

using namespace crucible::storage;

TEST_CASE("crc32c gives the published check value on both paths") {
  // RFC 3720 (iSCSI) and every CRC catalogue: CRC-32C of "123456789".
  CHECK(crc32c("123456789") == 0xE3069283u);
  CHECK(crc32c_portable(0, "123456789", 9) == 0xE3069283u);
  std::string zeros(32, '\0');  // RFC 3720 B.4: 32 bytes of zeros
  CHECK(crc32c(zeros) == 0x8A9136AAu);
  CHECK(crc32c_portable(0, zeros.data(), zeros.size()) == 0x8A9136AAu);
}

TEST_CASE("the hardware and portable crc32c agree on every length and alignment, in pieces too") {
  std::string data;
  for (int i = 0; i < 300; ++i) data.push_back(static_cast<char>(i * 37 + 11));
  for (std::size_t off = 0; off < 9; ++off)
    for (std::size_t len = 0; len + off <= data.size(); len += 7) {
      auto whole = crc32c(0, data.data() + off, len);
      CHECK(whole == crc32c_portable(0, data.data() + off, len));
      auto half = len / 2;
      CHECK(crc32c(crc32c(0, data.data() + off, half), data.data() + off + half, len - half) == whole);
    }
}

TEST_CASE("crc32c notices a flipped bit") {
  std::string data(4096, 'x');
  auto before = crc32c(data);
  data[1000] ^= 0x10;
  CHECK(crc32c(data) != before);
}
