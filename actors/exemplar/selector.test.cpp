// Selectors: Equation 1 by goodness of fit, the distinct-bucket rule, the
// temperature limits, uniform and island selection.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "actors/exemplar/chi_square.hpp"
#include "actors/exemplar/selector.hpp"

using namespace crucible::exemplar;
using crucible::exemplar::testing::chi_square_survival;
using crucible::exemplar::testing::goodness_of_fit;

namespace {

const std::vector<bucket_stat> six_buckets = {
    {10, 40, 1.05}, {11, 3, 1.15}, {14, 12, 1.45}, {19, 1, 1.95}, {25, 7, 2.55}, {30, 2, 3.05},
};

// Exact probability of the ordered pair (i, j), i != j, under draws without
// replacement renormalized after the first: p_i * p_j / (1 - p_i).
double pair_probability(const std::vector<double>& p, std::size_t i, std::size_t j) {
  return p[i] * p[j] / (1 - p[i]);
}

std::vector<double> means_of(const std::vector<bucket_stat>& b) {
  std::vector<double> m;
  for (const auto& x : b) m.push_back(x.mean);
  return m;
}

// Draws ordered pairs and tests them against the exact pair distribution.
double pair_fit_p_value(selector& s, const std::vector<bucket_stat>& buckets, double tau, std::uint64_t seed,
                        const std::vector<double>& p, int draws = 100000) {
  const std::size_t k = buckets.size();
  std::vector<double> observed(k * k, 0), expected(k * k, 0);
  rng gen(seed);
  for (int d = 0; d < draws; ++d) {
    auto picks = s.choose("t", buckets, 2, tau, gen);
    REQUIRE(picks.size() == 2);
    REQUIRE(picks[0].bucket_index != picks[1].bucket_index);
    REQUIRE(picks[0].ordinal < buckets[picks[0].bucket_index].count);
    REQUIRE(picks[1].ordinal < buckets[picks[1].bucket_index].count);
    observed[picks[0].bucket_index * k + picks[1].bucket_index] += 1;
  }
  std::vector<double> o, e;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j)
      if (i != j) {
        o.push_back(observed[i * k + j]);
        e.push_back(draws * pair_probability(p, i, j));
      }
  auto f = goodness_of_fit(o, e);
  MESSAGE("tau=" << tau << " chi2=" << f.statistic << " df=" << f.degrees_of_freedom << " p=" << f.p_value);
  return f.p_value;
}

}  // namespace

TEST_CASE("the chi-square survival function matches tabulated quantiles") {
  CHECK(chi_square_survival(3.841458820694124, 1) == doctest::Approx(0.05).epsilon(1e-9));
  CHECK(chi_square_survival(18.307038053275146, 10) == doctest::Approx(0.05).epsilon(1e-9));
  CHECK(chi_square_survival(10.827566170662733, 1) == doctest::Approx(0.001).epsilon(1e-8));
  CHECK(chi_square_survival(59.70306, 29) == doctest::Approx(0.000601).epsilon(2e-3));
  CHECK(chi_square_survival(0, 4) == 1.0);
  CHECK(chi_square_survival(2, 2) == doctest::Approx(std::exp(-1.0)));  // df 2 is exponential
}

TEST_CASE("equation 1 gives exp((s_i - mean)/tau) normalized") {
  std::vector<double> s = {1.0, 1.5, 3.0};
  double tau = 0.7, mu = (1.0 + 1.5 + 3.0) / 3;
  double z = 0;
  for (double x : s) z += std::exp((x - mu) / tau);
  auto p = equation1(s, tau);
  for (std::size_t i = 0; i < s.size(); ++i) CHECK(p[i] == doctest::Approx(std::exp((s[i] - mu) / tau) / z));
  auto tiny = equation1(s, 1e-9);  // no overflow, no NaN
  CHECK(tiny[2] == doctest::Approx(1.0));
  CHECK(tiny[0] == 0.0);
}

TEST_CASE("bucket pairs follow equation 1 without replacement over 100000 draws") {
  auto s = make_bucket_selector();
  for (double tau : {0.3, 1.0, 3.0}) {
    CAPTURE(tau);
    auto p = equation1(means_of(six_buckets), tau);
    CHECK(pair_fit_p_value(*s, six_buckets, tau, 1000 + static_cast<std::uint64_t>(tau * 10), p) > 0.001);
  }
}

TEST_CASE("pairs drawn with replacement would fail the distinct-bucket fit") {
  // The test has power: the same draws compared against the distribution of
  // two independent Equation 1 draws conditioned on being distinct, p_i p_j /
  // (1 - Σ p_k²), must be rejected (that would be a different sampler).
  auto s = make_bucket_selector();
  double tau = 0.3;
  auto p = equation1(means_of(six_buckets), tau);
  double same = 0;
  for (double x : p) same += x * x;
  const std::size_t k = six_buckets.size();
  std::vector<double> observed(k * k, 0);
  rng gen(77);
  for (int d = 0; d < 100000; ++d) {
    auto picks = s->choose("t", six_buckets, 2, tau, gen);
    observed[picks[0].bucket_index * k + picks[1].bucket_index] += 1;
  }
  std::vector<double> o, e;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j)
      if (i != j) {
        o.push_back(observed[i * k + j]);
        e.push_back(100000 * p[i] * p[j] / (1 - same));
      }
  CHECK(goodness_of_fit(o, e).p_value < 0.001);
}

TEST_CASE("one code is drawn uniformly within a chosen bucket") {
  auto s = make_bucket_selector();
  std::vector<bucket_stat> one = {{3, 7, 0.35}};
  std::vector<double> observed(7, 0), expected(7, 100000.0 / 7);
  rng gen(5);
  for (int d = 0; d < 100000; ++d) {
    auto picks = s->choose("t", one, 2, 1.0, gen);
    REQUIRE(picks.size() == 1);  // fewer buckets than n: one exemplar, not an error
    observed[picks[0].ordinal] += 1;
  }
  CHECK(goodness_of_fit(observed, expected).p_value > 0.001);
}

TEST_CASE("a temperature near zero picks the top buckets in order") {
  auto s = make_bucket_selector();
  rng gen(9);
  for (int d = 0; d < 1000; ++d) {
    auto picks = s->choose("t", six_buckets, 2, 1e-4, gen);
    REQUIRE(picks.size() == 2);
    CHECK(picks[0].bucket_index == 5);  // mean 3.05
    CHECK(picks[1].bucket_index == 4);  // mean 2.55
  }
}

TEST_CASE("a large temperature draws bucket pairs uniformly") {
  auto s = make_bucket_selector();
  std::vector<double> uniform(six_buckets.size(), 1.0 / six_buckets.size());
  CHECK(pair_fit_p_value(*s, six_buckets, 1e6, 4242, uniform) > 0.001);
}

TEST_CASE("the same seed gives the same picks") {
  auto s = make_bucket_selector();
  rng a(123), b(123);
  for (int d = 0; d < 100; ++d) CHECK(s->choose("t", six_buckets, 2, 0.5, a) == s->choose("t", six_buckets, 2, 0.5, b));
}

TEST_CASE("a task with no buckets gets no picks") {
  rng gen(1);
  CHECK(make_bucket_selector()->choose("t", {}, 2, 1.0, gen).empty());
  CHECK(make_uniform_selector()->choose("t", {}, 2, 1.0, gen).empty());
  CHECK(make_island_selector(3, 10, 1)->choose("t", {}, 2, 1.0, gen).empty());
}

TEST_CASE("the uniform selector draws distinct exemplars uniformly over the task") {
  auto s = make_uniform_selector();
  std::uint64_t total = 0;
  for (const auto& b : six_buckets) total += b.count;
  // The first pick of each draw is uniform over all exemplars.
  std::vector<double> observed(total, 0), expected(total, 100000.0 / total);
  rng gen(31);
  for (int d = 0; d < 100000; ++d) {
    auto picks = s->choose("t", six_buckets, 2, 1.0, gen);
    REQUIRE(picks.size() == 2);
    REQUIRE_FALSE(picks[0] == picks[1]);
    std::uint64_t g = picks[0].ordinal;
    for (std::size_t i = 0; i < picks[0].bucket_index; ++i) g += six_buckets[i].count;
    observed[g] += 1;
  }
  CHECK(goodness_of_fit(observed, expected).p_value > 0.001);
}

TEST_CASE("island requests visit the islands in turn and stay inside each island") {
  auto s = make_island_selector(4, 1000000, 1);
  std::vector<bucket_stat> b = {{0, 40, 0.05}, {5, 21, 0.55}, {9, 8, 0.95}};
  rng gen(2);
  for (int d = 0; d < 400; ++d) {
    auto picks = s->choose("t", b, 2, 1.0, gen);
    REQUIRE(picks.size() == 2);
    for (const auto& p : picks) CHECK(p.ordinal % 4 == static_cast<std::uint64_t>(d % 4));
  }
}

TEST_CASE("migration moves the strongest island's best exemplar into the weakest island") {
  // Bucket 9 (the best) has 2 exemplars: ordinals 0 and 1 live on islands 0
  // and 1. Islands 2 and 3 only reach bucket 5 until a migration.
  const std::uint64_t interval = 8;
  auto s = make_island_selector(4, interval, 1);
  std::vector<bucket_stat> b = {{0, 40, 0.05}, {5, 21, 0.55}, {9, 2, 0.95}};
  rng gen(3);
  std::set<std::uint64_t> islands_reaching_top;
  for (std::uint64_t d = 0; d < interval; ++d) {
    for (const auto& p : s->choose("t", b, 3, 1.0, gen))
      if (p.bucket_index == 2) islands_reaching_top.insert(d % 4);
  }
  CHECK(islands_reaching_top == std::set<std::uint64_t>{0, 1});
  // After the migration, one of the weak islands (2 or 3) reaches bucket 9
  // through a migrant with ordinal 0 or 1; n=3 of 3 buckets means every
  // request of that island includes it.
  std::set<std::uint64_t> after;
  for (std::uint64_t d = interval; d < 2 * interval; ++d) {
    for (const auto& p : s->choose("t", b, 3, 1.0, gen))
      if (p.bucket_index == 2) {
        after.insert(d % 4);
        CHECK(p.ordinal < 2);
      }
  }
  CHECK(after.size() == 3);
  CHECK(after.count(0) == 1);
  CHECK(after.count(1) == 1);
}

TEST_CASE("selectors describe themselves") {
  CHECK(make_bucket_selector()->describe() == "bucket");
  CHECK(make_uniform_selector()->describe() == "uniform");
  CHECK(make_island_selector(4, 100, 1)->describe().find("island") == 0);
}

TEST_CASE("a non-positive temperature reaching a selector is a broken invariant and aborts") {
  // The store refuses such temperatures as invalid arguments; a selector
  // seeing one means a caller skipped that check.
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(2);  // keep the abort message out of the test output
    rng gen(1);
    make_bucket_selector()->choose("t", six_buckets, 2, 0.0, gen);
    _exit(0);
  }
  int wstatus = 0;
  REQUIRE(::waitpid(child, &wstatus, 0) == child);
  CHECK(WIFSIGNALED(wstatus));
  CHECK(WTERMSIG(wstatus) == SIGABRT);
}
