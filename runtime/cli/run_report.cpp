#include "runtime/cli/run_report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "runtime/cli/kernels_found.hpp"

namespace crucible::cli {

namespace {

struct series {
  std::string name, color;
  std::vector<std::pair<double, double>> points;
  bool dots = false;  // scatter instead of a line
};

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

// One chart: x and y axes with their ranges, a legend, lines or dots.
std::string chart(const std::string& title, const std::string& x_label, const std::vector<series>& all, bool log_y = false) {
  constexpr double W = 560, H = 260, L = 60, R = 16, T = 28, B = 40;
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  auto fy = [&](double y) { return log_y ? std::log10(std::max(y, 1e-3)) : y; };
  for (const auto& s : all)
    for (auto [x, y] : s.points) {
      x0 = std::min(x0, x), x1 = std::max(x1, x);
      y0 = std::min(y0, fy(y)), y1 = std::max(y1, fy(y));
    }
  std::string svg = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="11">)", W, H);
  svg += fmt::format(R"(<text x="{}" y="16" font-size="13" font-weight="bold">{}</text>)", L, escape(title));
  if (x0 > x1) return svg + fmt::format(R"(<text x="{}" y="{}">no data yet</text></svg>)", L, H / 2);
  if (x1 == x0) x1 = x0 + 1;
  if (y1 == y0) y1 = y0 + 1, y0 -= 1;
  auto px = [&](double x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
  auto py = [&](double y) { return T + (1 - (fy(y) - y0) / (y1 - y0)) * (H - T - B); };
  svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)", L, T, W - L - R, H - T - B);
  for (int i = 0; i <= 4; ++i) {
    double v = y0 + (y1 - y0) * i / 4, yy = T + (1 - i / 4.0) * (H - T - B);
    svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{:.3g}</text>)", L - 4, yy + 4, log_y ? std::pow(10, v) : v);
    double xv = x0 + (x1 - x0) * i / 4;
    svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{:.3g}</text>)", px(xv), H - B + 14, xv);
  }
  svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", L + (W - L - R) / 2, H - 6, escape(x_label));
  double legend_x = L + 8;
  for (const auto& s : all) {
    if (s.dots) {
      for (auto [x, y] : s.points)
        svg += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="2.5" fill="{}" fill-opacity="0.6"/>)", px(x), py(y), s.color);
    } else if (!s.points.empty()) {
      std::string d;
      for (auto [x, y] : s.points) d += fmt::format("{}{:.1f},{:.1f}", d.empty() ? "M" : " L", px(x), py(y));
      svg += fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="1.6"/>)", d, s.color);
    }
    svg += fmt::format(R"(<rect x="{}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{}">{}</text>)", legend_x,
                       T + 6, s.color, legend_x + 14, T + 15, escape(s.name));
    legend_x += 24 + 7 * static_cast<double>(s.name.size());
  }
  return svg + "</svg>";
}

// The mean of the last `window` values at each point.
std::vector<std::pair<double, double>> rolling(const std::vector<std::pair<double, double>>& in, std::size_t window) {
  std::vector<std::pair<double, double>> out;
  double sum = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    sum += in[i].second;
    if (i >= window) sum -= in[i - window].second;
    out.push_back({in[i].first, sum / static_cast<double>(std::min(i + 1, window))});
  }
  return out;
}

// Each task's best kernel (kernels_found.hpp), its code folded away.
std::string kernels_table(const std::vector<settled_row>& rows) {
  auto best = best_kernels(rows);
  std::string html = "<h2>Kernels found</h2>\n";
  if (best.empty()) return html + "<p>no task has a settled success yet</p>\n";
  html += "<table><tr><th>task</th><th>reward</th><th>verified</th><th>policy version</th><th>when (UTC)</th>"
          "<th>candidate</th><th>code</th></tr>\n";
  for (const auto& k : best)
    html += fmt::format(
        "<tr><td>{}</td><td>{:.3f}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td style=\"text-align:left\"><details><summary>{} lines</summary><pre>{}</pre></details></td></tr>\n",
        escape(k.task), k.reward, k.verified ? "yes" : "no", k.policy_version, iso_time(k.settled_ns), escape(k.id),
        std::count(k.code.begin(), k.code.end(), '\n') + (k.code.empty() || k.code.back() == '\n' ? 0 : 1),
        escape(k.code));
  return html + "</table>\n";
}

}  // namespace

status write_report(const std::string& path, const std::vector<settled_row>& rows,
                    const std::vector<nlohmann::json>& metrics, const nlohmann::json& summary, double bucket_width) {
  const std::int64_t t0 = rows.empty() ? 0 : rows.front().submitted_ns;
  auto minutes = [&](std::int64_t ns) { return static_cast<double>(ns - t0) / 60e9; };
  auto groups = groups_of(rows);

  series reward{"group mean reward", "#1f77b4"}, reward_avg{"rolling mean (10 groups)", "#d62728"};
  series success_avg{"success rate, rolling (10 groups)", "#2ca02c"};
  std::vector<std::pair<double, double>> per_group_success;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    reward.points.push_back({static_cast<double>(i), groups[i].mean_reward()});
    per_group_success.push_back(
        {static_cast<double>(i), static_cast<double>(groups[i].successes) / static_cast<double>(groups[i].samples)});
  }
  reward.dots = true;
  reward_avg.points = rolling(reward.points, 10);
  success_avg.points = rolling(per_group_success, 10);

  series speedup{"speedup of each success", "#9467bd"};
  speedup.dots = true;
  series buckets{"exemplar buckets filled", "#8c564b"};
  std::set<long> filled;
  std::map<std::string, series> verdicts;
  const std::map<std::string, std::string> colors = {
      {"Success", "#2ca02c"}, {"Failure", "#d62728"}, {"Void", "#7f7f7f"}, {"Hack", "#000000"}, {"NoCode", "#ff7f0e"}};
  std::map<std::string, double> counts;
  for (const auto& r : rows) {
    const double t = minutes(r.settled_ns ? r.settled_ns : r.submitted_ns);
    if (r.status == "Success") {
      speedup.points.push_back({t, std::max(r.speedup, 1e-3)});
      filled.insert(std::lround(std::floor(r.reward / bucket_width)));
      buckets.points.push_back({t, static_cast<double>(filled.size())});
    }
    counts[r.status] += 1;
    auto& s = verdicts[r.status];
    s.name = r.status;
    s.color = colors.count(r.status) ? colors.at(r.status) : "#17becf";
    s.points.push_back({t, counts[r.status]});
  }
  std::vector<series> verdict_series;
  for (auto& [name, s] : verdicts) verdict_series.push_back(s);

  series staleness{"mean staleness of trained groups", "#17becf"}, loss{"loss", "#1f77b4"}, kl{"KL to reference", "#ff7f0e"};
  for (const auto& m : metrics) {
    const double v = m.value("version", 0.0);
    loss.points.push_back({v, m.value("loss", 0.0)});
    kl.points.push_back({v, m.value("kl", 0.0)});
    double n = 0, sum = 0;
    if (m.contains("staleness") && m["staleness"].is_object())
      for (auto& [age, count] : m["staleness"].items()) {
        n += count.get<double>();
        sum += std::stod(age) * count.get<double>();
      }
    if (n > 0) staleness.points.push_back({v, sum / n});
  }

  std::ofstream out(path, std::ios::trunc);
  out << "<!doctype html><html><head><meta charset=\"utf-8\"><title>crucible run report</title>"
         "<style>body{font-family:sans-serif;margin:24px}svg{margin:8px;border:1px solid #eee}"
         "td,th{padding:2px 10px;text-align:right}</style></head><body>\n";
  out << "<h1>crucible run</h1><p>" << escape(summary.value("run_dir", std::string())) << "</p>\n<table>";
  for (const auto& key : {"groups", "samples", "first_fifth", "last_fifth", "learned", "versions", "elapsed_s"})
    if (summary.contains(key)) out << "<tr><th>" << key << "</th><td>" << escape(summary[key].dump()) << "</td></tr>";
  out << "</table>\n";
  out << kernels_table(rows);
  out << chart("Reward per group", "group (in order started)", {reward, reward_avg});
  out << chart("Success rate", "group (in order started)", {success_avg});
  out << chart("Speedup of successes (log scale)", "minutes", {speedup}, true);
  out << chart("Verdicts (cumulative count by settlement status)", "minutes", verdict_series);
  out << chart("Exemplar buckets", "minutes", {buckets});
  out << chart("Staleness", "policy version", {staleness});
  out << chart("Learner loss", "policy version", {loss});
  out << chart("KL to the reference", "policy version", {kl});
  out << "\n</body></html>\n";
  if (!out) return make_error(errc::io, path + ": cannot write the report");
  return status::success();
}

}  // namespace crucible::cli
