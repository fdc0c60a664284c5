#include <doctest/doctest.h>

#include <cmath>

#include "actors/exemplar/bucketing.hpp"

using namespace crucible;
using namespace crucible::exemplar;

TEST_CASE("a linear bucket holds every score in its half-open range") {
  bucketing b(bucket_scale::linear, 0.1);
  for (double s = -2.0; s < 5.0; s += 0.01) {
    auto k = b.bucket_of(s);
    REQUIRE(k.ok());
    CHECK(b.range(*k).low <= s + 1e-9);
    CHECK(s < b.range(*k).high - 1e-9);
  }
  CHECK(*b.bucket_of(1.05) == 10);
  CHECK(*b.bucket_of(0.0) == 0);
  CHECK(*b.bucket_of(-0.01) == -1);
  // Two-decimal scores on an edge open the upper bucket, whatever the rounding.
  for (int cents = -300; cents <= 1000; cents += 10) CHECK(*b.bucket_of(cents / 100.0) == cents / 10);
  CHECK(*b.bucket_of(1.4) == 14);
  CHECK(*b.bucket_of(1.39) == 13);
}

TEST_CASE("a logarithmic bucket spans a constant ratio of scores") {
  bucketing b(bucket_scale::logarithmic, std::log(2.0));
  CHECK(*b.bucket_of(1.0) == 0);
  CHECK(*b.bucket_of(1.99) == 0);
  CHECK(*b.bucket_of(2.01) == 1);
  CHECK(*b.bucket_of(0.6) == -1);
  CHECK(b.range(3).low == doctest::Approx(8.0));
  CHECK(b.range(3).high == doctest::Approx(16.0));
}

TEST_CASE("scores that cannot be bucketed are invalid arguments") {
  bucketing lin(bucket_scale::linear, 0.1);
  bucketing log(bucket_scale::logarithmic, 0.1);
  CHECK(lin.bucket_of(NAN).error().code == errc::invalid_argument);
  CHECK(lin.bucket_of(INFINITY).error().code == errc::invalid_argument);
  CHECK(lin.bucket_of(1e300).error().code == errc::invalid_argument);
  CHECK(log.bucket_of(0.0).error().code == errc::invalid_argument);
  CHECK(log.bucket_of(-1.0).error().code == errc::invalid_argument);
}

TEST_CASE("the bucketing text form names scale and width") {
  CHECK(bucketing(bucket_scale::linear, 0.25).describe() == "linear:0.25");
  CHECK(bucketing(bucket_scale::logarithmic, 0.5).describe() == "logarithmic:0.5");
}

TEST_CASE("options parse their names and reject bad ranges") {
  CHECK(*parse_bucket_scale("log") == bucket_scale::logarithmic);
  CHECK(*parse_selector_kind("island") == selector_kind::island);
  CHECK_FALSE(parse_selector_kind("random").ok());
  exemplar_options o;
  CHECK(validate(o).ok());
  o.bucket_width = 0;
  CHECK_FALSE(validate(o).ok());
  o = {};
  o.islands = 0;
  CHECK_FALSE(validate(o).ok());
}
