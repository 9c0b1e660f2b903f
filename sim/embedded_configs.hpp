#pragma once
// Configuration files shipped in configs/, compiled in (see cmake/EmbedConfigs.cmake).
#include <string_view>
#include <vector>

namespace ccsim {

struct EmbeddedFile {
  std::string_view path;     // relative to configs/, e.g. "models/hopper.json"
  std::string_view content;
};

const std::vector<EmbeddedFile>& embedded_configs();

}  // namespace ccsim
