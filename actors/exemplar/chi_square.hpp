// Chi-square goodness of fit for the sampler tests: the statistic over
// observed and expected counts, and its survival function (the p-value),
// computed here from the regularized upper incomplete gamma function.
#pragma once

#include <cmath>
#include <span>
#include <vector>

#include "runtime/base/result.hpp"

namespace crucible::exemplar::testing {

// Q(a, x) = Γ(a, x) / Γ(a): series for x < a + 1, continued fraction above.
inline double upper_regularized_gamma(double a, double x) {
  CRUCIBLE_CHECK(a > 0 && x >= 0, "gamma arguments out of range");
  if (x == 0) return 1.0;
  const double log_prefix = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1) {
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 100000; ++n) {
      term *= x / (a + n);
      sum += term;
      if (std::fabs(term) < std::fabs(sum) * 1e-16) break;
    }
    return 1.0 - sum * std::exp(log_prefix);
  }
  // Lentz's method for the continued fraction of Γ(a, x).
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-16) break;
  }
  return std::exp(log_prefix) * h;
}

// P(X >= x) for X ~ chi-square with df degrees of freedom.
inline double chi_square_survival(double x, double df) { return upper_regularized_gamma(df / 2, x / 2); }

struct fit {
  double statistic = 0;
  int degrees_of_freedom = 0;
  double p_value = 1;
};

// Pearson's test. Cells whose expected count is below 5 are pooled into one
// cell (and that cell dropped too if it is still below 5, its counts added to
// the largest cell) so the chi-square approximation holds.
inline fit goodness_of_fit(std::span<const double> observed, std::span<const double> expected) {
  CRUCIBLE_CHECK(observed.size() == expected.size(), "observed and expected differ in size");
  std::vector<double> o, e;
  double pooled_o = 0, pooled_e = 0;
  for (std::size_t i = 0; i < observed.size(); ++i) {
    if (expected[i] < 5) {
      pooled_o += observed[i];
      pooled_e += expected[i];
    } else {
      o.push_back(observed[i]);
      e.push_back(expected[i]);
    }
  }
  if (pooled_e >= 5) {
    o.push_back(pooled_o);
    e.push_back(pooled_e);
  } else if (!o.empty()) {
    std::size_t big = 0;
    for (std::size_t i = 1; i < e.size(); ++i)
      if (e[i] > e[big]) big = i;
    o[big] += pooled_o;
    e[big] += pooled_e;
  }
  fit f;
  for (std::size_t i = 0; i < o.size(); ++i) f.statistic += (o[i] - e[i]) * (o[i] - e[i]) / e[i];
  f.degrees_of_freedom = static_cast<int>(o.size()) - 1;
  f.p_value = f.degrees_of_freedom > 0 ? chi_square_survival(f.statistic, f.degrees_of_freedom) : 1.0;
  return f;
}

}  // namespace crucible::exemplar::testing
