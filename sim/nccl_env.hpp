#pragma once
// The NCCL environment settings ccsim follows (nccl::EnvSettings): reading them from text (a log's
// command line, `--nccl-env NAME=VALUE`, a map entry or a scenario), saying them back, and what
// NCCL_ALGO / NCCL_PROTO leave NCCL's cost model for each collective.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sim/nccl_tuning.hpp"

namespace ccsim::nccl {

constexpr int kMaxChannels = 64;  // MAXCHANNELS (reference/nccl-model.md §1.7)

// The NCCL environment variables EnvSettings holds, in the order `ccsim` lists them.
const std::vector<std::string>& env_setting_names();
std::string env_setting_names_text();  // "NCCL_ALGO, NCCL_PROTO, NCCL_MIN_NCHANNELS, ..."
// Sets the field of `name` (one of env_setting_names, or the old NCCL_MIN_NRINGS /
// NCCL_MAX_NRINGS) to `value`. Returns false for any other name; Error for a value NCCL does not
// take (channel counts: a whole number from 1, or 0 for a minimum, to MAXCHANNELS (64);
// NCCL_NVLS_ENABLE 0, 1 or 2; NCCL_COLLNET_ENABLE and NCCL_LL128_C2C 0 or 1; NCCL_ALGO / NCCL_PROTO:
// what enabled_algos reads).
bool set_env_setting(EnvSettings& settings, const std::string& name, const std::string& value);
// The value of setting `name` as set_env_setting took it, none when unset; Error for any other name.
std::optional<std::string> env_setting(const EnvSettings& settings, const std::string& name);
// Every setting of a JSON object (a map entry's or a scenario's "nccl_env": {"NCCL_MAX_NCHANNELS":
// 16, "NCCL_PROTO": "^LL128"}), whole numbers or strings. Error for a value of another JSON type,
// one NCCL does not take, or a name ccsim does not follow, starting "<path>.<name>: ".
void set_env_settings(EnvSettings& settings, const nlohmann::json& object, const std::string& path);
// Every setting `over` gives replaces `base`'s.
void overlay_env_settings(EnvSettings& base, const EnvSettings& over);
// "NCCL_MAX_NCHANNELS=16 NCCL_PROTO=^LL128" for the settings given; empty for none.
std::string to_string(const EnvSettings& settings);

// What NCCL_ALGO (EnvSettings::algo) leaves the cost model for `func`, in NCCL's index order; none
// where it does not name the function (NCCL's default: every algorithm). NCCL's parseList
// (tuning.cc) reads the value: names are case-insensitive and comma-separated, '^' turns a list into
// an exclusion, and from NCCL 2.24 ';' separates entries of which all but the first start with the
// function they set ("ring,tree;allreduce:^nvls": Ring and Tree for all, all but NVLS for
// AllReduce). Error for a value NCCL rejects (an unknown name or function, a later entry without a
// function).
std::optional<std::vector<Algo>> enabled_algos(const EnvSettings& settings, Func func);
// NCCL_PROTO's (EnvSettings::proto) as enabled_algos reads NCCL_ALGO: LL, LL128, Simple.
std::optional<std::vector<Protocol>> enabled_protocols(const EnvSettings& settings, Func func);
// Whether NCCL_PROTO names LL128 for `func` in a list of what to run (not an exclusion, which
// leaves it at its default): NCCL then runs it wherever its cost model rates it, past the safety
// rule that keeps it off by default (tuning.cc: protoEnable 1, not 2; a maintainer in NVIDIA/nccl pull
// request 1081: "we want NCCL_PROTO=LL128 to force the use of LL128").
bool ll128_requested(const EnvSettings& settings, Func func);
// Whether NCCL may run LL128 for `func` on `s`: its default conditions hold (System::ll128_enabled)
// or NCCL_PROTO names it, and the network's plugin leaves it (System::net_allows_ll128).
bool ll128_allowed(const System& s, Func func);

}  // namespace ccsim::nccl
