#include "sim/nccl_env.hpp"

#include <array>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/error.hpp"
#include "sim/text.hpp"

namespace ccsim::nccl {

namespace {

struct EnvSettingField {
  const char* name;
  int EnvSettings::*field;
  int least, most;  // the values NCCL takes
  int unset;        // the field's value when the setting is not given
};
// NCCL_MIN_NRINGS / NCCL_MAX_NRINGS are the old names, which the new ones override (init.cc). A
// minimum of 0 is NCCL's own default (none); a maximum below 1 NCCL raises to 1 with a warning.
constexpr EnvSettingField kEnvSettingFields[] = {
    {"NCCL_MIN_NCHANNELS", &EnvSettings::min_channels, 0, kMaxChannels, 0},
    {"NCCL_MAX_NCHANNELS", &EnvSettings::max_channels, 1, kMaxChannels, 0},
    {"NCCL_MIN_CTAS", &EnvSettings::min_ctas, 0, kMaxChannels, 0},
    {"NCCL_MAX_CTAS", &EnvSettings::max_ctas, 1, kMaxChannels, 0},
    {"NCCL_NVLS_NCHANNELS", &EnvSettings::nvls_channels, 1, kMaxChannels, 0},
    {"NCCL_NCHANNELS_PER_NET_PEER", &EnvSettings::net_channels_per_peer, 1, kMaxChannels, 0},
    {"NCCL_MIN_P2P_NCHANNELS", &EnvSettings::min_p2p_channels, 0, kMaxChannels, 0},
    {"NCCL_MAX_P2P_NCHANNELS", &EnvSettings::max_p2p_channels, 1, kMaxChannels, 0},
    {"NCCL_NVLS_ENABLE", &EnvSettings::nvls_enable, 0, 2, -1},
    {"NCCL_COLLNET_ENABLE", &EnvSettings::collnet_enable, 0, 1, -1},
    {"NCCL_LL128_C2C", &EnvSettings::ll128_c2c, 0, 1, -1},
    // Byte counts NCCL takes as given. ccsim's bounds: a FIFO of at least 8 steps of 8 KiB, a
    // point-to-point step of at least 4 KiB, and neither over 1 GiB of a GPU's memory.
    {"NCCL_BUFFSIZE", &EnvSettings::buffsize, 1 << 16, 1 << 30, 0},
    {"NCCL_P2P_NET_CHUNKSIZE", &EnvSettings::p2p_net_chunk, 1 << 12, 1 << 30, 0},
    {"NCCL_P2P_NVL_CHUNKSIZE", &EnvSettings::p2p_nvl_chunk, 1 << 12, 1 << 30, 0},
    {"NCCL_P2P_PCI_CHUNKSIZE", &EnvSettings::p2p_pci_chunk, 1 << 12, 1 << 30, 0},
};

// The list settings: empty is unset.
struct ListSettingField {
  const char* name;
  std::string EnvSettings::*field;
};
constexpr ListSettingField kListSettingFields[] = {
    {"NCCL_ALGO", &EnvSettings::algo},
    {"NCCL_PROTO", &EnvSettings::proto},
};

// NCCL's names (ncclAlgoStr, ncclProtoStr, ncclFuncStr), in NCCL's index order: all_algos(),
// nccl_protocol_order() and Func's.
constexpr std::array<std::string_view, 7> kAlgoNames = {"Tree", "Ring", "CollNetDirect", "CollNetChain",
                                                         "NVLS", "NVLSTree", "PAT"};
constexpr std::array<std::string_view, 3> kProtoNames = {"LL", "LL128", "Simple"};
constexpr std::array<std::string_view, 5> kFuncNames = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                                         "AllReduce"};

std::string canonical_setting(const std::string& name) {
  return name == "NCCL_MIN_NRINGS" ? "NCCL_MIN_NCHANNELS" : name == "NCCL_MAX_NRINGS" ? "NCCL_MAX_NCHANNELS" : name;
}

template <std::size_t N>
std::optional<std::size_t> index_of(const std::array<std::string_view, N>& names, std::string_view given) {
  const std::string lower = ascii_lower(given);
  for (std::size_t i = 0; i < N; ++i)
    if (ascii_lower(names[i]) == lower) return i;
  return std::nullopt;
}

template <std::size_t N>
std::string names_text(const std::array<std::string_view, N>& names) {
  std::string out;
  for (const auto n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

// How an entry of NCCL_ALGO / NCCL_PROTO leaves each name, as NCCL's parseList marks it: off, on
// because the list names it, or at its default because an exclusion ('^') does not.
enum class Listed { off, named, left };

// NCCL's parseList (tuning.cc) for one function: how `value` leaves each of `names` for `func`,
// none when no entry of it speaks for the function. Every entry is read, so a value NCCL rejects
// fails whichever function is asked for.
template <std::size_t N>
std::optional<std::vector<Listed>> enable_list(const std::string& setting, const std::string& value,
                                             const std::array<std::string_view, N>& names, Func func) {
  const auto fail = [&](const std::string& why) { throw Error(setting + "=" + value + ": " + why); };
  std::optional<std::vector<Listed>> out;
  bool first = true;
  for (const std::string_view entry : split_list(value, ';')) {
    std::optional<std::size_t> function;  // none: every function
    std::string_view list = entry;
    if (const auto colon = entry.find(':'); colon != std::string_view::npos) {
      function = index_of(kFuncNames, trim(entry.substr(0, colon)));
      if (!function)
        fail("unknown function \"" + std::string(trim(entry.substr(0, colon))) + "\" (expected one of " +
             names_text(kFuncNames) + ")");
      list = trim(entry.substr(colon + 1));
    } else if (!first) {
      // A later entry without a function would undo every one before it, which NCCL refuses.
      fail("every entry but the first names the collective it sets, e.g. allreduce:" + std::string(names[0]));
    }
    first = false;
    const bool exclude = !list.empty() && list.front() == '^';
    if (exclude) list.remove_prefix(1);
    const auto items = split_list(list);
    if (items.empty()) fail("nothing listed in \"" + std::string(entry) + "\"");
    std::vector<Listed> on(N, exclude ? Listed::left : Listed::off);
    for (const std::string_view item : items) {
      const auto i = index_of(names, item);
      if (!i) fail("unknown name \"" + std::string(item) + "\" (expected one of " + names_text(names) + ")");
      on[*i] = exclude ? Listed::off : Listed::named;
    }
    if (!function || *function == static_cast<std::size_t>(func)) out = std::move(on);
  }
  return out;
}

// What `value` of `setting` leaves on for `func`, as `values` (in `names` order); none when unset
// or silent about the function.
template <typename T, std::size_t N>
std::optional<std::vector<T>> enabled(const char* setting, const std::string& value,
                                      const std::array<std::string_view, N>& names, const std::vector<T>& values,
                                      Func func) {
  if (value.empty()) return std::nullopt;
  const auto on = enable_list(setting, value, names, func);
  if (!on) return std::nullopt;
  std::vector<T> out;
  for (std::size_t i = 0; i < N; ++i)
    if ((*on)[i] != Listed::off) out.push_back(values.at(i));
  return out;
}

}  // namespace

const std::vector<std::string>& env_setting_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& f : kListSettingFields) v.emplace_back(f.name);
    for (const auto& f : kEnvSettingFields) v.emplace_back(f.name);
    return v;
  }();
  return names;
}

std::string env_setting_names_text() {
  std::string out;
  for (const auto& name : env_setting_names()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::optional<std::string> env_setting(const EnvSettings& settings, const std::string& name) {
  const std::string key = canonical_setting(name);
  for (const auto& f : kEnvSettingFields)
    if (key == f.name) return settings.*f.field == f.unset ? std::nullopt : std::optional(std::to_string(settings.*f.field));
  for (const auto& f : kListSettingFields)
    if (key == f.name) return (settings.*f.field).empty() ? std::nullopt : std::optional(settings.*f.field);
  throw Error("not a setting ccsim follows: " + name + " (expected one of " + env_setting_names_text() + ")");
}

bool set_env_setting(EnvSettings& settings, const std::string& name, const std::string& value) {
  const std::string key = canonical_setting(name);
  for (const auto& f : kEnvSettingFields) {
    if (key != f.name) continue;
    std::size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size() || n < f.least || n > f.most)
      throw Error(name + "=" + value + ": expected a whole number from " + std::to_string(f.least) + " to " +
                  std::to_string(f.most));
    settings.*f.field = n;
    return true;
  }
  for (const auto& f : kListSettingFields) {
    if (key != f.name) continue;
    const std::string given(trim(value));
    if (given.empty()) throw Error(name + "=: expected a list such as " + (f.field == &EnvSettings::algo ? "Ring,Tree or ^NVLS" : "^LL128"));
    // Read for every function now, so that a bad value fails where it is given.
    EnvSettings probe;
    probe.*f.field = given;
    for (std::size_t fn = 0; fn < kFuncNames.size(); ++fn) {
      enabled_algos(probe, static_cast<Func>(fn));
      enabled_protocols(probe, static_cast<Func>(fn));
    }
    settings.*f.field = given;
    return true;
  }
  return false;
}

void overlay_env_settings(EnvSettings& base, const EnvSettings& over) {
  for (const auto& f : kEnvSettingFields)
    if (over.*f.field != f.unset) base.*f.field = over.*f.field;
  for (const auto& f : kListSettingFields)
    if (!(over.*f.field).empty()) base.*f.field = over.*f.field;
}

std::string to_string(const EnvSettings& settings) {
  std::string out;
  for (const auto& name : env_setting_names())
    if (const auto value = env_setting(settings, name)) out += (out.empty() ? "" : " ") + name + "=" + *value;
  return out;
}

std::optional<std::vector<Algo>> enabled_algos(const EnvSettings& settings, Func func) {
  return enabled("NCCL_ALGO", settings.algo, kAlgoNames, all_algos(), func);
}

std::optional<std::vector<Protocol>> enabled_protocols(const EnvSettings& settings, Func func) {
  return enabled("NCCL_PROTO", settings.proto, kProtoNames, nccl_protocol_order(), func);
}

bool ll128_requested(const EnvSettings& settings, Func func) {
  if (settings.proto.empty()) return false;
  const auto listed = enable_list("NCCL_PROTO", settings.proto, kProtoNames, func);
  return listed && (*listed)[*index_of(kProtoNames, "LL128")] == Listed::named;
}

bool ll128_allowed(const System& s, Func func) {
  return (s.ll128_enabled || ll128_requested(s.nccl_env_settings, func)) && s.net_allows_ll128;
}

void set_env_settings(EnvSettings& settings, const nlohmann::json& object, const std::string& path) {
  for (const auto& [name, value] : object.items()) {
    const std::string at = path + "." + name + ": ";
    if (!value.is_number_integer() && !value.is_string())
      throw Error(at + "expected a whole number (a channel count) or a string (NCCL_ALGO, NCCL_PROTO)");
    bool known = false;
    try {
      known = set_env_setting(settings, name, value.is_string() ? value.get<std::string>() : std::to_string(value.get<long long>()));
    } catch (const Error& e) {
      throw Error(at + e.what());
    }
    if (!known) throw Error(at + "not a setting ccsim follows (expected one of " + env_setting_names_text() + ")");
  }
}

}  // namespace ccsim::nccl
