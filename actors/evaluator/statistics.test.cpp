#include "actors/evaluator/statistics.hpp"
#include "actors/evaluator/protocol.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <limits>
#include <vector>

#include <doctest/doctest.h>

using namespace crucible::evaluator;

TEST_CASE("fourteen rounds fall into seven buckets of two, in order") {
  const std::vector<double> s{1, 3, 2, 2, 4, 6, 1, 1, 2, 4, 3, 3, 5, 7};
  const auto m = bucket_means(s, 7, bucket_statistic::arithmetic);
  CHECK(m == std::vector<double>{2, 2, 5, 1, 3, 3, 6});
}

TEST_CASE("uneven rounds spread over buckets by integer division") {
  // n = 10, k = 7: bounds 0 1 2 4 5 7 8 10.
  const std::vector<double> s{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const auto m = bucket_means(s, 7, bucket_statistic::arithmetic);
  CHECK(m == std::vector<double>{1, 2, 3.5, 5, 6.5, 8, 9.5});
}

TEST_CASE("a geometric bucket mean is the mean of log speedups") {
  const std::vector<double> s{1, 4, 2, 8};
  const auto m = bucket_means(s, 2, bucket_statistic::geometric);
  CHECK(m[0] == doctest::Approx(2.0));
  CHECK(m[1] == doctest::Approx(4.0));
}

TEST_CASE("a trimmed bucket drops the tenth fastest and slowest rounds") {
  std::vector<double> s(9, 1.0);
  s.insert(s.begin(), 100.0);  // one preempted-reference round
  CHECK(bucket_means(s, 1, bucket_statistic::trimmed)[0] == doctest::Approx(1.0));
  CHECK(bucket_means(s, 1, bucket_statistic::geometric)[0] == doctest::Approx(std::pow(100.0, 0.1)));
  CHECK(bucket_means(s, 1, bucket_statistic::median)[0] == doctest::Approx(1.0));
}

TEST_CASE("an order effect cancels in order-balanced bucket means however a bucket's orders split") {
  // Identity whose second runner is 3% faster: candidate-first rounds read
  // 1/1.03 (the reference ran second), reference-first rounds 1.03. Each
  // bucket of 20 rounds splits 12 to 8, as a random order often does.
  std::vector<double> s;
  std::vector<bool> cand_first;
  for (int b = 0; b < 7; ++b)
    for (int i = 0; i < 20; ++i) {
      cand_first.push_back(i < 12);
      s.push_back(i < 12 ? 1 / 1.03 : 1.03);
    }
  for (auto stat : {bucket_statistic::trimmed, bucket_statistic::geometric}) {
    const double plain = bucket_means(s, 7, stat)[3];
    CHECK(std::abs(plain - 1.0) > 0.005);
    const auto balanced = order_balanced_bucket_means(s, cand_first, 7, stat);
    for (double m : balanced) CHECK(m == doctest::Approx(1.0).epsilon(1e-12));
  }
}

TEST_CASE("a bucket with rounds of only one order takes that order's statistic") {
  const std::vector<double> s{2, 2, 4, 4};
  const auto m = order_balanced_bucket_means(s, {true, true, false, true}, 2, bucket_statistic::geometric);
  CHECK(m[0] == doctest::Approx(2.0));
  CHECK(m[1] == doctest::Approx(4.0));
}

TEST_CASE("the median of an odd count is the middle and of an even count the mean of the two middles") {
  CHECK(median(std::vector<double>{3, 1, 2}) == 2);
  CHECK(median(std::vector<double>{4, 1, 3, 2}) == 2.5);
  CHECK(median(std::vector<double>{}) == 0);
  // Speedup = median of seven bucket means.
  CHECK(median(std::vector<double>{1.2, 1.1, 1.3, 1.15, 1.25, 1.05, 1.4}) == doctest::Approx(1.2));
}

TEST_CASE("sample variance divides by n minus one") {
  CHECK(sample_variance(std::vector<double>{1, 2, 3, 4}) == doctest::Approx(5.0 / 3.0));
  CHECK(sample_variance(std::vector<double>{7}) == 0);
  // Six buckets at 1.00 and one at 1.07: mean 1.01, squares 6e-4 + 36e-4, / 6.
  CHECK(sample_variance(std::vector<double>{1, 1, 1, 1, 1, 1, 1.07}) == doctest::Approx(7e-4));
  // The paper's bound: one bucket at 1.15 among 1.0s stays under 0.005
  // (mean 1.021429, ss = 6 * 0.021429^2 + 0.128571^2 = 0.019286, / 6) ...
  CHECK(sample_variance(std::vector<double>{1, 1, 1, 1, 1, 1, 1.15}) == doctest::Approx(0.0032143).epsilon(1e-4));
  // ... two buckets at 1.2 do not: mean 1.0571, ss = 5 * 0.0571^2 + 2 * 0.1429^2 = 0.05714, / 6.
  CHECK(sample_variance(std::vector<double>{1, 1, 1, 1, 1, 1.2, 1.2}) == doctest::Approx(0.0095238).epsilon(1e-4));
}

TEST_CASE("the median's relative standard error is sqrt(pi/2) times the mean's") {
  // sqrt(0.0007 / 7) = 0.01 exactly; times 1.2533.
  CHECK(median_relative_stderr(0.0007, 7) == doctest::Approx(0.012533));
  CHECK(median_relative_stderr(0, 7) == 0);
  CHECK(median_relative_stderr(0.0007, 0) == 0);
  CHECK(median_relative_stderr(-1e-12, 7) == 0);  // a variance rounded below 0
}

TEST_CASE("rounding goes toward 1.00 by two decimals") {
  CHECK(conservative_round(1.118) == 1.11);
  CHECK(conservative_round(0.992) == 1.00);
  CHECK(conservative_round(1.0) == 1.00);
  CHECK(conservative_round(1.009999) == 1.00);
  CHECK(conservative_round(0.990001) == 1.00);
  CHECK(conservative_round(0.99) == 0.99);
  CHECK(conservative_round(0.985) == 0.99);
  CHECK(conservative_round(1.13) == 1.13);  // 112.99999... in binary must not become 1.12
  CHECK(conservative_round(0.57) == 0.57);
  CHECK(conservative_round(2.999) == 2.99);
  CHECK(conservative_round(29.0085) == 29.00);
}

TEST_CASE("a speedup that is not a positive finite number rounds to zero") {
  CHECK(conservative_round(0.0) == 0);
  CHECK(conservative_round(-1.5) == 0);
  CHECK(conservative_round(std::numeric_limits<double>::quiet_NaN()) == 0);
  CHECK(conservative_round(std::numeric_limits<double>::infinity()) == 0);
}

TEST_CASE("round speedups are reference time over candidate time") {
  const std::vector<double> ref{2, 3}, cand{1, 6};
  CHECK(round_speedups(ref, cand) == std::vector<double>{2, 0.5});
}

TEST_CASE("a round with zero time is a broken invariant and aborts") {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::signal(SIGABRT, SIG_DFL);  // not doctest's crash reporter
    const std::vector<double> ref{1}, cand{0};
    (void)round_speedups(ref, cand);
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  CHECK(WIFSIGNALED(st));
  CHECK(WTERMSIG(st) == SIGABRT);
}

TEST_CASE("a seed stream is splitmix64 and repeats for the same seed") {
  seed_stream a(0), b(0), c(1);
  CHECK(a.next() == 0xE220A8397B1DCDAFull);
  CHECK(b.next() == 0xE220A8397B1DCDAFull);
  CHECK(a.next() == b.next());
  CHECK(c.next() != 0xE220A8397B1DCDAFull);
}

TEST_CASE("bucket statistics are named both ways") {
  for (auto s : {bucket_statistic::geometric, bucket_statistic::arithmetic, bucket_statistic::trimmed,
                 bucket_statistic::median})
    CHECK(bucket_statistic_by_name(to_string(s)).value() == s);
  CHECK_FALSE(bucket_statistic_by_name("mode").ok());
}

TEST_CASE("the early stop settles a speedup far from 1.00 at 1% and one near it at 0.3%") {
  protocol_options p;
  CHECK(p.stop_target(1.0, 0.002) == doctest::Approx(0.003));
  CHECK(p.stop_target(1.9, 0.002) == doctest::Approx(0.003));
  // 26x with a 0.8% standard error: the interval 26 +- 3 * 0.21 is far above 2.
  CHECK(p.stop_target(26.0, 0.008) == doctest::Approx(0.01));
  CHECK(p.stop_target(0.1, 0.008) == doctest::Approx(0.01));
  // 2.1x whose interval reaches below 2 is not far yet.
  CHECK(p.stop_target(2.1, 0.02) == doctest::Approx(0.003));
  // Without the far rule (stop_far_factor 0) one target holds everywhere.
  p.stop_far_factor = 0;
  CHECK(p.stop_target(26.0, 0.008) == doctest::Approx(0.003));
}
