#pragma once
// Small text forms shared by the parsers of names users and logs give (protocols, NCCL settings).
#include <string>
#include <string_view>
#include <vector>

namespace ccsim {

// `text` with ASCII letters in lower case: names such as "Simple", "LL128" or "NVLSTree" compare
// whatever case a user or a log wrote them in.
std::string ascii_lower(std::string_view text);

// `text` without the ASCII white space (blanks, tabs, line ends) it begins and ends with.
std::string_view trim(std::string_view text);

// The items of a list such as "mlx5_0,mlx5_1" or "Ring, Tree", split at `separator`, trimmed,
// empty ones left out. They view `text`.
std::vector<std::string_view> split_list(std::string_view text, char separator = ',');

}  // namespace ccsim
