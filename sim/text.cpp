#include "sim/text.hpp"

#include <algorithm>
#include <cctype>

namespace ccsim {

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> split_list(std::string_view text, char separator) {
  std::vector<std::string_view> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    if (const std::string_view item = trim(text.substr(start, end - start)); !item.empty()) items.push_back(item);
    start = end + 1;
  }
  return items;
}

}  // namespace ccsim
