#pragma once
// Small text forms shared by the parsers of names users and logs give (protocols, NCCL settings).
#include <string>
#include <string_view>

namespace ccsim {

// `text` with ASCII letters in lower case: names such as "Simple", "LL128" or "NVLSTree" compare
// whatever case a user or a log wrote them in.
std::string ascii_lower(std::string_view text);

// `text` without the ASCII white space (blanks, tabs, line ends) it begins and ends with.
std::string_view trim(std::string_view text);

}  // namespace ccsim
