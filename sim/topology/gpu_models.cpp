#include "sim/topology/gpu_models.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <vector>

namespace ccsim::topo {

namespace {

// Upper-cased words of a device name, split at spaces, dashes, underscores and slashes:
// "Tesla V100-SXM2-16GB" -> TESLA V100 SXM2 16GB.
std::vector<std::string> words_of(std::string_view name) {
  std::vector<std::string> words;
  std::string w;
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_' || c == '/' || c == '\t') {
      if (!w.empty()) words.push_back(std::move(w));
      w.clear();
    } else {
      w.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
  }
  if (!w.empty()) words.push_back(std::move(w));
  // File names glue what device names space out: "rtx2080ti", "h100nvl" -> RTX 2080 TI, H100 NVL.
  std::vector<std::string> split;
  for (const auto& word : words) {
    std::string rest = word;
    for (const char* prefix : {"RTX", "GTX"})
      if (rest.size() > 3 && rest.rfind(prefix, 0) == 0 && std::isdigit(static_cast<unsigned char>(rest[3]))) {
        split.push_back(prefix);
        rest = rest.substr(3);
      }
    std::string suffix;
    for (const char* s : {"NVL", "TI", "SUPER", "PCIE"}) {
      const std::string t = s;
      if (rest.size() > t.size() && rest.compare(rest.size() - t.size(), t.size(), t) == 0 &&
          std::isdigit(static_cast<unsigned char>(rest[rest.size() - t.size() - 1]))) {
        suffix = t;
        rest.resize(rest.size() - t.size());
        break;
      }
    }
    split.push_back(rest);
    if (!suffix.empty()) split.push_back(suffix);
  }
  return split;
}

struct Rule {
  std::initializer_list<std::string_view> words;  // all present
  const char* name;
  int sm;
  const char* family;  // empty: family_of_sm(sm)
  const char* preset;
};

// Compute capabilities from NVIDIA's CUDA GPU list (developer.nvidia.com/cuda-gpus). The first rule
// whose words are all in the name wins, so a variant (GH200, H100 NVL, A100 PCIe) comes before the
// name it contains. Presets: the 8-GPU baseboards and DGX machines of `ccsim topo list`; a GPU sold
// as a PCIe card names none (the PCIe presets are templates, not that machine).
const Rule kRules[] = {
    {{"GB200"}, "GB200", 100, "gb200", "gb200-nvl72"},
    {{"GB300"}, "GB300", 103, "", ""},
    {{"GB10"}, "GB10", 121, "gb10", "dgx-spark"},
    {{"B300"}, "B300", 103, "", "hgx-b300"},
    {{"B200"}, "B200", 100, "", "hgx-b200"},
    {{"GH200"}, "GH200", 90, "", "gh200-quad"},
    {{"H200", "NVL"}, "H200 NVL", 90, "h200", ""},
    {{"H200"}, "H200 SXM", 90, "h200", "dgx-h200"},
    {{"H800", "PCIE"}, "H800 PCIe", 90, "", ""},
    {{"H800"}, "H800 SXM", 90, "", "hgx-h800"},
    {{"H100", "NVL"}, "H100 NVL", 90, "", ""},
    {{"H100", "PCIE"}, "H100 PCIe", 90, "", ""},
    {{"H100"}, "H100 SXM", 90, "", "dgx-h100"},
    {{"H20"}, "H20", 90, "", ""},
    {{"A100", "PCIE"}, "A100 PCIe", 80, "", ""},
    {{"A100"}, "A100 SXM", 80, "", "dgx-a100"},
    {{"A800", "PCIE"}, "A800 PCIe", 80, "", ""},
    {{"A800"}, "A800", 80, "", ""},
    {{"A30"}, "A30", 80, "", ""},
    {{"A40"}, "A40", 86, "", ""},
    {{"A10G"}, "A10G", 86, "", ""},
    {{"A10"}, "A10", 86, "", ""},
    {{"A6000"}, "RTX A6000", 86, "", ""},
    {{"A5500"}, "RTX A5500", 86, "", ""},
    {{"A5000"}, "RTX A5000", 86, "", ""},
    {{"A4500"}, "RTX A4500", 86, "", ""},
    {{"A4000"}, "RTX A4000", 86, "", ""},
    {{"L40S"}, "L40S", 89, "", ""},
    {{"L40"}, "L40", 89, "", ""},
    {{"L20"}, "L20", 89, "", ""},
    {{"L4"}, "L4", 89, "", ""},
    {{"RTX", "PRO"}, "RTX PRO (Blackwell)", 120, "", ""},
    {{"6000D"}, "RTX 6000D", 120, "", ""},
    {{"RTX", "ADA"}, "RTX Ada", 89, "", ""},
    {{"QUADRO", "RTX"}, "Quadro RTX", 75, "", ""},
    {{"TITAN", "RTX"}, "TITAN RTX", 75, "", ""},
    {{"T4"}, "T4", 75, "", ""},
    {{"V100", "SXM3"}, "V100 SXM3", 70, "", "dgx2-v100"},
    {{"V100", "SXM2"}, "V100 SXM2", 70, "", "dgx1-v100"},
    {{"V100"}, "V100 PCIe", 70, "", ""},
    {{"V100S"}, "V100S PCIe", 70, "", ""},
    {{"GV100"}, "Quadro GV100", 70, "", ""},
    {{"TITAN", "V"}, "TITAN V", 70, "", ""},
    {{"P100", "SXM2"}, "P100 SXM2", 60, "", ""},
    {{"P100"}, "P100 PCIe", 60, "", ""},
    {{"P40"}, "P40", 61, "", ""},
};

// GeForce "RTX 4090", "GTX 1080": the series (first two digits) sets the architecture.
std::optional<GpuModel> geforce(const std::vector<std::string>& words) {
  const bool rtx = std::find(words.begin(), words.end(), "RTX") != words.end();
  const bool gtx = std::find(words.begin(), words.end(), "GTX") != words.end();
  if (!rtx && !gtx) return std::nullopt;
  for (const auto& w : words) {
    if (w.size() != 4 || !std::all_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      continue;
    const int series = std::stoi(w.substr(0, 2));
    const int sm = series == 50 ? 120 : series == 40 ? 89 : series == 30 ? 86 : series == 20 || series == 16 ? 75 : series == 10 ? 61 : 0;
    if (sm == 0) return std::nullopt;
    // "RTX 2080 Ti" and "RTX 4070 SUPER" are other cards than "RTX 2080" and "RTX 4070": keep the suffix.
    std::string name = std::string(rtx ? "RTX " : "GTX ") + w;
    if (std::find(words.begin(), words.end(), "TI") != words.end()) name += " Ti";
    if (std::find(words.begin(), words.end(), "SUPER") != words.end()) name += " SUPER";
    return GpuModel{name, sm, family_of_sm(sm), ""};
  }
  return std::nullopt;
}

}  // namespace

std::string family_of_sm(int sm) {
  if (sm >= 100) return "blackwell";
  if (sm >= 90) return "hopper";
  if (sm >= 80) return "ampere";
  return "volta";
}

const std::vector<std::string>& gpu_families() {
  static const std::vector<std::string> families{"volta", "ampere", "hopper", "h200", "blackwell", "gb200", "gb10"};
  return families;
}

std::optional<GpuModel> identify_gpu(std::string_view device_name) {
  const std::vector<std::string> words = words_of(device_name);
  auto has = [&](std::string_view w) { return std::find(words.begin(), words.end(), w) != words.end(); };
  for (const Rule& r : kRules) {
    if (!std::all_of(r.words.begin(), r.words.end(), has)) continue;
    const std::string family = *r.family ? r.family : family_of_sm(r.sm);
    // Baseboard parts whose board no preset describes (HGX H20, HGX A800, GB300 NVL72, the P100
    // DGX-1's four NVLink1 lanes a GPU).
    static constexpr std::string_view kBoardParts[] = {"H20", "A800", "GB300", "P100 SXM2"};
    const bool board = *r.preset || std::find(std::begin(kBoardParts), std::end(kBoardParts), r.name) != std::end(kBoardParts);
    return GpuModel{r.name, r.sm, family, r.preset, !board};
  }
  if (auto card = geforce(words)) {
    card->card = true;
    card->geforce = true;
    return card;
  }
  return std::nullopt;
}

}  // namespace ccsim::topo
