#include "actors/rollout/rollout_progress.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace crucible::rollout {

result<rollout_progress> read_progress(const std::string& file) {
  rollout_progress p;
  std::ifstream in(file);
  if (!in) return p;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty() && number == 1) return p;
    auto bad = [&] {
      return make_error(errc::invalid_argument,
                        fmt::format("{} line {}: \"{}\" is not {}", file, number, line.substr(0, 80),
                                    number == 1 ? "the next group's number" : "\"resample NUMBER TIMES\""));
    };
    std::istringstream words(line);
    std::string extra;
    if (number == 1) {
      if (!(words >> p.next) || (words >> extra)) return bad();
      continue;
    }
    std::string word;
    std::uint64_t group = 0;
    std::uint32_t times = 0;
    if (!(words >> word >> group >> times) || word != "resample" || (words >> extra)) return bad();
    if (group >= p.next) p.resamples[group] = times;
  }
  return p;
}

status write_progress(const std::string& file, const rollout_progress& progress) {
  const std::string tmp = file + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << progress.next << "\n";
    for (const auto& [group, times] : progress.resamples)
      if (group >= progress.next && times > 0) out << "resample " << group << " " << times << "\n";
    if (!out.flush()) return make_error(errc::unavailable, "cannot write the rollout state file " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) return make_error(errc::unavailable, fmt::format("cannot rename {} to {}: {}", tmp, file, ec.message()));
  return {};
}

std::string learner_job_id(const std::string& name, std::uint64_t number, std::uint32_t resamples) {
  return resamples == 0 ? fmt::format("group/{}/g{}", name, number)
                        : fmt::format("group/{}/g{}/r{}", name, number, resamples);
}

}  // namespace crucible::rollout
