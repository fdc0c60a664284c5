#include <doctest/doctest.h>

#include "storage/segment_store.hpp"
#include "storage/temp_dir.hpp"

using namespace crucible::storage;

TEST_CASE("file segments keep appended bytes in order, list by number and survive their object") {
  temp_dir dir("segments");
  {
    auto s = open_file_segments(dir.sub("log"));
    REQUIRE(s.ok());
    REQUIRE((*s)->append(2, "hello ").ok());
    REQUIRE((*s)->append(10, "other").ok());
    REQUIRE((*s)->append(2, "world").ok());
    REQUIRE((*s)->sync(2).ok());
  }
  auto s = open_file_segments(dir.sub("log"));
  REQUIRE(s.ok());
  auto list = (*s)->list();
  REQUIRE(list.ok());
  CHECK(*list == std::vector<std::uint64_t>{2, 10});
  CHECK(*(*s)->read(2) == "hello world");
  CHECK(*(*s)->read(2, 6, 5) == "world");
  CHECK_FALSE((*s)->read(2, 6, 50).ok());
  REQUIRE((*s)->remove(2).ok());
  CHECK(*(*s)->list() == std::vector<std::uint64_t>{10});
  CHECK_FALSE((*s)->read(2).ok());
}

TEST_CASE("memory segments fail an append on request and keep half of it, as a torn write") {
  memory_segments s;
  REQUIRE(s.append(1, "abcd").ok());
  s.fail_next_appends(1);
  CHECK_FALSE(s.append(1, "efgh").ok());
  CHECK(*s.read(1) == "abcdef");
  REQUIRE(s.append(1, "x").ok());
  CHECK(s.bytes() == 7);
}
