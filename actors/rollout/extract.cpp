#include "actors/rollout/extract.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace crucible::rollout {

namespace {

constexpr std::string_view heading = "## Code Implementation";

struct line {
  std::size_t begin, end;  // [begin, end) without the newline
};

std::vector<line> lines_of(std::string_view text) {
  std::vector<line> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::size_t stop = end > pos && text[end - 1] == '\r' ? end - 1 : end;
    out.push_back({pos, stop});
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The text after a fence's backticks when the line is a fence, else nullopt.
std::optional<std::string_view> fence_info(std::string_view l) {
  std::size_t indent = 0;
  while (indent < l.size() && indent < 3 && l[indent] == ' ') ++indent;
  l.remove_prefix(indent);
  if (l.substr(0, 3) != "```") return std::nullopt;
  l.remove_prefix(3);
  while (!l.empty() && l.front() == '`') l.remove_prefix(1);
  return trim(l);
}

bool python_info(std::string_view info) {
  std::string word(info.substr(0, info.find_first_of(" \t{")));
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
  return word.empty() || word == "python" || word == "py" || word == "python3";
}

bool is_heading(std::string_view l) {
  l = trim(l);
  if (l.substr(0, heading.size()) != heading) return false;
  return trim(l.substr(heading.size())).find_first_not_of(":") == std::string_view::npos;
}

}  // namespace

extracted_code extract_code(std::string_view text) {
  auto ls = lines_of(text);
  auto view = [&](const line& l) { return text.substr(l.begin, l.end - l.begin); };
  // The last heading that is not inside a fenced block.
  std::optional<std::size_t> start;
  bool in_block = false;
  for (std::size_t i = 0; i < ls.size(); ++i) {
    auto l = view(ls[i]);
    if (fence_info(l)) in_block = !in_block;
    else if (!in_block && is_heading(l)) start = i + 1;
  }
  if (!start) return {std::nullopt, "no code: no '## Code Implementation' section"};

  // Only the last python block decides: an empty or unfinished one means the
  // completion's final answer has no code, whatever came before it.
  std::optional<std::string> last;
  std::string reason = "no code: no fenced python block after '## Code Implementation'";
  for (std::size_t i = *start; i < ls.size(); ++i) {
    auto info = fence_info(view(ls[i]));
    if (!info) continue;
    std::size_t close = i + 1;
    while (close < ls.size() && !(fence_info(view(ls[close])) && fence_info(view(ls[close]))->empty())) ++close;
    bool python = python_info(*info);
    if (close == ls.size()) {
      if (python) last.reset(), reason = "no code: the code block is never closed";
      break;
    }
    if (python) {
      std::string code;
      for (std::size_t k = i + 1; k < close; ++k) code.append(view(ls[k])).append(k + 1 < close ? "\n" : "");
      if (trim(code).empty())
        last.reset(), reason = "no code: the code block is empty";
      else
        last = code + "\n";
    }
    i = close;
  }
  if (last) return {std::move(last), ""};
  return {std::nullopt, reason};
}

}  // namespace crucible::rollout
