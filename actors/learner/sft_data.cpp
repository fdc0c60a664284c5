#include "actors/learner/sft_data.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

namespace crucible::learner {

result<std::vector<sft_example>> read_sft_jsonl(const std::filesystem::path& path, const policy::tokenizer& tok,
                                                std::optional<std::int32_t> eos_token) {
  std::ifstream in(path);
  if (!in) return make_error(errc::not_found, path.string() + ": cannot open SFT data");
  std::vector<sft_example> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path.string() + ":" + std::to_string(number);
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return make_error(errc::invalid_argument, where + ": not a JSON object");
    for (const char* key : {"prompt", "completion"}) {
      if (!j.contains(key) || !j[key].is_string() || j[key].get<std::string>().empty())
        return make_error(errc::invalid_argument, where + ": \"" + key + "\" must be a non-empty string");
    }
    auto prompt = tok.encode(j["prompt"].get<std::string>());
    if (!prompt) return make_error(errc::invalid_argument, where + ": prompt: " + prompt.error().message);
    auto completion = tok.encode(j["completion"].get<std::string>(), {.add_special_tokens = false});
    if (!completion) return make_error(errc::invalid_argument, where + ": completion: " + completion.error().message);
    if (eos_token) completion->push_back(*eos_token);
    out.push_back({std::move(*prompt), std::move(*completion)});
  }
  if (in.bad()) return make_error(errc::io, path.string() + ": read error");
  return out;
}

}  // namespace crucible::learner
