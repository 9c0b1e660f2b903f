#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <nlohmann/json.hpp>

#include "sim/error.hpp"
#include "sim/nccl_env.hpp"
#include "sim/scenario.hpp"
#include "sim/topology/paths.hpp"
#include "sim/topology/presets.hpp"

using namespace ccsim;
using namespace ccsim::topo;

namespace {

Scenario parse(const std::string& text) { return scenario_from_json(nlohmann::json::parse(text), "test.json", "."); }

// The error a scenario gives: what() of the Error it throws.
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

double lanes_between_gpus(const Topology& t, std::size_t a, std::size_t b) {
  double lanes = 0;
  const Route r = t.route(a, b);
  for (auto l : r.hops.front().links) lanes += t.link(l).lanes;
  return lanes;
}

}  // namespace

TEST_CASE("a scenario: base, variants inheriting it, sweep with defaults and per-variant overrides") {
  const Scenario s = parse(R"({
    "name": "s", "description": "d",
    "base": {"topo": "dgx-h100", "nodes": 2, "nic": "ndr", "model": {"net_efficiency": 0.9}},
    "variants": [
      {"name": "base"},
      {"name": "xdr", "nic": "xdr", "model": {"hop_latency_us.net.simple": 10},
       "changes": [{"scale_bandwidth": {"kind": "nvlink", "factor": 2}}, {"remove_device": "*.nvswitch0"}],
       "sweep": {"algorithms": ["tree"]}}],
    "sweep": {"algorithms": ["ring", "auto"], "sizes": {"min": "1K", "max": "1M", "factor": 4}}})");
  REQUIRE(s.variants.size() == 2);
  CHECK(s.variants[0].machine.preset.nodes == 2);
  CHECK(s.variants[1].machine.preset.nodes == 2);  // inherited
  CHECK(s.variants[1].machine.preset.nic == "xdr");
  CHECK(s.variants[1].machine.model_overrides.at("net_efficiency") == 0.9);  // base overrides kept
  CHECK(s.variants[1].machine.model_overrides.at("hop_latency_us.net.simple") == 10);
  CHECK(s.variants[0].sweep.sizes == std::vector<Bytes>{1024, 4096, 16384, 65536, 262144, 1048576});
  CHECK(s.variants[0].sweep.algorithms == std::vector<std::string>{"ring", "auto"});
  CHECK(s.variants[1].sweep.algorithms == std::vector<std::string>{"tree"});
  CHECK(s.variants[1].sweep.sizes == s.variants[0].sweep.sizes);
  CHECK(s.variants[0].sweep.protocols == std::vector<std::string>{"auto"});

  const System base = build_system(s, s.variants[0]);
  const System xdr = build_system(s, s.variants[1]);
  CHECK(base.model.get("net_efficiency") == 0.9);
  CHECK(xdr.model.get("hop_latency_us.net.simple") == 10);
  CHECK(xdr.topology.devices().size() == base.topology.devices().size() - 2);  // nvswitch0 of both nodes
  CHECK_FALSE(xdr.topology.find_device("n0.nvswitch0"));
  CHECK(xdr.topology.find_device("n0.nvswitch1"));
  // 13 of 18 lanes left (5/4/4/5 over the four switches), each at twice the NVLink4 rate.
  CHECK(route_bandwidth(xdr.topology, 0, 1) == test::approx(13 * 2 * 25e9));
  CHECK(route_bandwidth(base.topology, 0, 1) == test::approx(18 * 25e9));
}

TEST_CASE("bad scenarios name the file, the JSON path and what was expected") {
  const std::string sweep = R"("sweep": {"sizes": ["1M"]})";
  CHECK(error_of("[1, 2]") == "test.json: (top level): expected an object");
  CHECK(error_of(R"({"base": {}})") == "test.json: sweep: missing (expected collectives, algorithms, protocols and sizes)");
  CHECK(error_of(R"({"sweep": {}})") == "test.json: sweep.sizes: missing (expected {\"min\", \"max\", \"factor\"} or a list of sizes)");
  CHECK(error_of(R"({"sweep": {"sizes": {"min": "1M", "max": "1K"}}})") == "test.json: sweep.sizes: min is larger than max");
  CHECK(error_of(R"({"sweep": {"sizes": {"min": "8", "max": "1K", "factor": 1}}})") ==
        "test.json: sweep.sizes.factor: expected a number above 1");
  CHECK(error_of(R"({"sweep": {"sizes": {"min": "8", "max": "1T", "factor": 1.001}}})") ==
        "test.json: sweep.sizes: more than 1000 sizes (raise the factor)");
  CHECK(error_of(R"({"sweep": {"sizes": ["1Q"]}})").starts_with("test.json: sweep.sizes[0]: invalid size \"1Q\""));
  CHECK(error_of(R"({"sweep": {"sizes": ["1M"], "algorithms": ["ring", "rung"]}})").starts_with(
      "test.json: sweep.algorithms[1]: unknown algorithm \"rung\""));
  CHECK(error_of(R"({"sweep": {"sizes": ["1M"], "collectives": "allreduc"}})").starts_with("test.json: sweep.collectives[0]: unknown collective"));
  CHECK(error_of(R"({"sweep": {"sizes": ["1M"], "protocols": ["ll64"]}})").starts_with("test.json: sweep.protocols[0]: unknown protocol"));
  CHECK(error_of(R"({"sweep": {"sizes": ["1M"], "type": "float7"}})").starts_with("test.json: sweep.type: unknown data type"));
  CHECK(error_of(R"({"sweep": {"sizes": ["1M"], "sise": 1}})").starts_with("test.json: sweep.sise: unknown key (expected one of collectives,"));
  CHECK(error_of(R"({"base": {"node": 2}, )" + sweep + "}").starts_with("test.json: base.node: unknown key"));
  CHECK(error_of(R"({"base": {"nodes": 0}, )" + sweep + "}") == "test.json: base.nodes: expected an integer >= 1");
  CHECK(error_of(R"({"base": {"nic": "ndr2"}, )" + sweep + "}").starts_with("test.json: base.nic: configs/links.json: no net generation \"ndr2\""));
  CHECK(error_of(R"({"base": {"model": {"nvlink_eff": 1}}, )" + sweep + "}").starts_with("test.json: base.model.nvlink_eff: unknown model parameter"));
  CHECK(error_of(R"({"variants": [], )" + sweep + "}") == "test.json: variants: expected a non-empty list of variants");
  CHECK(error_of(R"({"variants": [{"description": "x"}], )" + sweep + "}") ==
        "test.json: variants[0].name: missing (expected a short name such as \"base\")");
  CHECK(error_of(R"({"variants": [{"name": "a"}, {"name": "a"}], )" + sweep + "}") ==
        "test.json: variants[1].name: \"a\" names another variant too");
  CHECK(error_of(R"({"variants": [{"name": "a", "changes": [{"scale_bandwidth": {"kind": "nvlnk", "factor": 2}}]}], )" + sweep + "}") ==
        "test.json: variants[0].changes[0].scale_bandwidth.kind: expected one of nvlink, pcie, c2c, cpu, net");
  CHECK(error_of(R"({"variants": [{"name": "a", "changes": [{"degrade_link": {"between": ["gpu0"], "factor": 0.5}}]}], )" + sweep + "}") ==
        "test.json: variants[0].changes[0].degrade_link.between: expected two device names, e.g. [\"gpu0\", \"nvswitch0\"]");
  CHECK(error_of(R"({"variants": [{"name": "a", "changes": [{"degrade_link": {"between": ["gpu0", "x"], "factor": -1}}]}], )" + sweep + "}") ==
        "test.json: variants[0].changes[0].degrade_link.factor: expected a positive number");
  CHECK(error_of(R"({"variants": [{"name": "a", "changes": [{"remove_device": "x", "remove_link": {}}]}], )" + sweep + "}").starts_with(
        "test.json: variants[0].changes[0]: expected exactly one change per entry"));
  CHECK(error_of(R"({"sweep": {"sizes": ["1M"]}, "variant": []})").starts_with("test.json: variant: unknown key"));
  CHECK(error_of(R"({"sweep": {"sizes": ["1M"], "nccl_env": {"NCCL_NTHREADS": 256}}})").starts_with(
      "test.json: sweep.nccl_env.NCCL_NTHREADS: not a setting ccsim follows (expected one of NCCL_ALGO, NCCL_PROTO, NCCL_MIN_NCHANNELS"));
  CHECK(error_of(R"({"sweep": {"sizes": ["1M"], "nccl_env": {"NCCL_BUFFSIZE": 8}}})") ==
        "test.json: sweep.nccl_env.NCCL_BUFFSIZE: NCCL_BUFFSIZE=8: expected a whole number from 65536 to 1073741824");
  CHECK(error_of(R"({"sweep": {"sizes": ["1M"], "nccl_env": {"NCCL_MAX_NCHANNELS": 0}}})") ==
        "test.json: sweep.nccl_env.NCCL_MAX_NCHANNELS: NCCL_MAX_NCHANNELS=0: expected a whole number from 1 to 64");
  CHECK(error_of(R"({"sweep": {"sizes": ["1M"], "nccl_env": [8]}})").starts_with("test.json: sweep.nccl_env: expected an object"));
}

TEST_CASE("a sweep's NCCL channel settings, as numbers or strings, reach each variant") {
  const Scenario s = parse(R"({"sweep": {"sizes": ["1M"], "nccl_env": {"NCCL_MAX_NCHANNELS": 8, "NCCL_MIN_CTAS": "2"}},
                              "variants": [{"name": "a"}, {"name": "b", "sweep": {"nccl_env": {"NCCL_MAX_NCHANNELS": 4}}}]})");
  REQUIRE(s.variants.size() == 2);
  CHECK(s.variants[0].sweep.nccl_env_settings.max_channels == 8);
  CHECK(s.variants[0].sweep.nccl_env_settings.min_ctas == 2);
  CHECK(s.variants[1].sweep.nccl_env_settings.max_channels == 4);
  CHECK(s.variants[1].sweep.nccl_env_settings.min_ctas == 2);
  // NCCL_ALGO / NCCL_PROTO: what the cost model may pick, a variant's replacing the base's.
  const Scenario lists = parse(R"({"sweep": {"sizes": ["1M"], "nccl_env": {"NCCL_PROTO": "^LL128"}},
                                  "variants": [{"name": "a"}, {"name": "b", "sweep": {"nccl_env": {"NCCL_PROTO": "Simple", "NCCL_ALGO": "allreduce:ring"}}}]})");
  CHECK(nccl::to_string(lists.variants[0].sweep.nccl_env_settings) == "NCCL_PROTO=^LL128");
  CHECK(nccl::to_string(lists.variants[1].sweep.nccl_env_settings) == "NCCL_ALGO=allreduce:ring NCCL_PROTO=Simple");
  CHECK(error_of(R"({"sweep": {"sizes": ["1M"], "nccl_env": {"NCCL_ALGO": "ring;tree"}}})")
            .starts_with("test.json: sweep.nccl_env.NCCL_ALGO: NCCL_ALGO=ring;tree: every entry but the first names the collective"));
}

TEST_CASE("changes that do not fit the machine fail when the variant is built, naming the change") {
  auto build_error = [](const std::string& changes) {
    const Scenario s = parse(R"({"base": {"topo": "dgx-a100"}, "sweep": {"sizes": ["1M"]},
                                 "variants": [{"name": "v", "changes": )" + changes + "}]}");
    try {
      build_system(s, s.variants[0]);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(build_error(R"([{"remove_device": "nvswitch9"}])") ==
        "test.json: variants[0].changes[0].remove_device: topology dgx-a100 has no device \"nvswitch9\" (devices are named like gpu0, gpu1, gpu2, gpu3)");
  CHECK(build_error(R"([{"remove_device": "gpu3"}])").starts_with("test.json: variants[0].changes[0].remove_device: cannot remove gpu3: GPUs are the ranks"));
  CHECK(build_error(R"([{"remove_link": {"between": ["gpu0", "gpu1"]}}])") ==
        "test.json: variants[0].changes[0].remove_link: no link joins gpu0 and gpu1");
  CHECK(build_error(R"([{"scale_bandwidth": {"kind": "c2c", "factor": 2}}])") ==
        "test.json: variants[0].changes[0].scale_bandwidth: the machine has no c2c link");
  CHECK(build_error(R"([{"remove_device": "nvswitch0"}, {"degrade_link": {"between": ["gpu0", "nvswitch1"], "factor": 0.5}}])") == "(no error)");
}

TEST_CASE("removing an NVSwitch of a DGX A100 narrows every GPU pair's route: removing all falls back to PCIe") {
  Topology t = make_preset("dgx-a100");
  CHECK(lanes_between_gpus(t, 0, 7) == 12);
  const double full = route_bandwidth(t, 0, 7);
  t.remove_device(t.device_named("nvswitch0"));
  CHECK(lanes_between_gpus(t, 0, 7) == 10);
  CHECK(route_bandwidth(t, 0, 7) == test::approx(full * 10 / 12));
  CHECK(path_class(t, t.gpu(0), t.gpu(7)) == "NV10");
  for (int s = 1; s < 6; ++s) t.remove_device(t.device_named("nvswitch" + std::to_string(s)));
  CHECK(t.route(0, 7).latency_class == LatencyClass::pcie);  // GPU, PCIe switches, the CPUs
  CHECK(path_class(t, t.gpu(0), t.gpu(7)) == "SYS");
  CHECK(t.gpu_count() == 8);
}

TEST_CASE("a GPU cut off from the others is an error, and the topology stays as it was") {
  topo::PresetOptions o;
  o.gpus = 4;
  Topology t = make_preset("nvswitch-flat", o);  // one switch, nothing else
  const std::size_t devices = t.devices().size();
  CHECK_THROWS_WITH_AS(t.remove_device(t.device_named("nvswitch0")),
                       "removing nvswitch0 disconnects the GPUs: topology nvswitch-flat: no route from gpu0 to gpu1", Error);
  CHECK(t.devices().size() == devices);
  CHECK_THROWS_WITH_AS(t.remove_link(t.device_named("gpu2"), t.device_named("nvswitch0")),
                       "removing the link gpu2 - nvswitch0 disconnects the GPUs: topology nvswitch-flat: no route from gpu0 to gpu2", Error);
  CHECK(t.route(0, 2).hops.size() == 2);
  // Multi-node: losing one NIC's leaf link leaves the others (traffic crosses rails through a spine).
  topo::PresetOptions two;
  two.nodes = 2;
  Topology m = make_preset("dgx-h100", two);
  m.remove_link(m.device_named("n0.nic3"), m.device_named("leaf3"));
  m.check_gpus_connected();
  CHECK(m.route(3, 11).latency_class == LatencyClass::net);
}

TEST_CASE("degrading a link halves its bandwidth and its lanes: scaling a kind leaves the lanes") {
  Topology t = make_preset("dgx-h100");
  const DeviceId g = t.device_named("gpu0"), p = t.device_named("pcie0");
  const double before = t.link(t.links_between(g, p).front()).bandwidth_bytes_per_s;
  t.scale_link(g, p, 0.5);
  CHECK(t.link(t.links_between(g, p).front()).bandwidth_bytes_per_s == test::approx(before / 2));
  CHECK(t.link(t.links_between(g, p).front()).lanes == 8);  // x16 at half width is x8
  CHECK(t.scale_links(LinkKind::nvlink, 2) == 8 * 4);
  CHECK(t.link(t.links_between(g, t.device_named("nvswitch0")).front()).lanes == 5);
  CHECK(route_bandwidth(t, 0, 1) == test::approx(2 * 18 * 25e9));
  CHECK_THROWS_AS(t.scale_link(g, p, 0), Error);
  CHECK_THROWS_WITH_AS(t.scale_link(g, t.device_named("gpu1"), 0.5), doctest::Contains("no link joins these devices"), Error);
}

TEST_CASE("device patterns: exact names, and *.name in every node") {
  topo::PresetOptions two;
  two.nodes = 2;
  const Topology t = make_preset("dgx-h100", two);
  CHECK(match_devices(t, "*.nvswitch0") == std::vector<std::string>{"n0.nvswitch0", "n1.nvswitch0"});
  CHECK(match_devices(t, "n1.gpu3") == std::vector<std::string>{"n1.gpu3"});
  CHECK_THROWS_WITH_AS(match_devices(t, "gpu3"), doctest::Contains("(devices are named like n0.gpu3, n1.gpu3)"), Error);
  CHECK_THROWS_AS(match_devices(t, "*.gpu9"), Error);
}
