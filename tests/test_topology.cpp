#include <doctest/doctest.h>

#include "tests/approx.hpp"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "sim/error.hpp"
#include "sim/topology/paths.hpp"
#include "sim/topology/presets.hpp"
#include "sim/topology/rings.hpp"

using namespace ccsim;
using namespace ccsim::topo;

namespace {
std::vector<std::string> hop_names(const Topology& t, const Route& r) {
  std::vector<std::string> out;
  for (const auto& hop : r.hops) {
    std::string names;
    for (auto l : hop.links) {
      const Link& link = t.link(l);
      const DeviceId to = link.a == hop.from ? link.b : link.a;
      names += (names.empty() ? "" : "|") + t.device(to).name;
    }
    out.push_back(names);
  }
  return out;
}
std::vector<std::string> route_names(const Topology& t, std::size_t a, std::size_t b) { return hop_names(t, t.route(a, b)); }
}  // namespace

TEST_CASE("dgx-h100: NVLink through all four NVSwitch planes, 18 lanes, NVLS-capable") {
  const Topology t = make_preset("dgx-h100");
  CHECK(t.gpu_count() == 8);
  CHECK(t.has_nvls());
  const Route r = t.route(0, 5);
  REQUIRE(r.hops.size() == 2);
  CHECK(r.hops[0].links.size() == 4);
  int lanes = 0;
  for (auto l : r.hops[0].links) lanes += t.link(l).lanes;
  CHECK(lanes == 18);
  CHECK(r.latency_class == LatencyClass::nvlink);
}

TEST_CASE("multi-node dgx-h100: same-rail traffic stays on its leaf, cross-rail goes through a spine") {
  PresetOptions o;
  o.nodes = 4;
  const Topology t = make_preset("dgx-h100", o);
  CHECK(t.gpu_count() == 32);
  CHECK(t.gpus_per_node() == 8);
  // GPU 3 of node 0 to GPU 3 of node 2: its PCIe switch, its NIC, the rail-3 leaf, and back down.
  CHECK(route_names(t, 3, 19) == std::vector<std::string>{"n0.pcie3", "n0.nic3", "leaf3", "n2.nic3", "n2.pcie3", "n2.gpu3"});
  CHECK(t.route(3, 19).latency_class == LatencyClass::net);
  const auto cross = route_names(t, 3, 20);  // to GPU 4 of node 2: rail 3 to rail 4
  REQUIRE(cross.size() == 8);
  CHECK(cross[3].rfind("spine", 0) == 0);
  // ECMP-like spreading: different pairs cross different spines.
  std::set<std::string> spines;
  for (std::size_t b = 8; b < 32; ++b)
    if (b % 8 != 3) spines.insert(route_names(t, 3, b)[3]);
  CHECK(spines.size() > 1);
}

TEST_CASE("point-to-point operations across nodes take the peer's rail through a relay GPU (PXN)") {
  PresetOptions o;
  o.nodes = 4;
  Topology t = make_preset("dgx-h100", o);
  // GPU 3 of node 0 to GPU 4 of node 2 (NCCL_P2P_PXN_LEVEL 2, the default): over NVLink to GPU 4
  // of node 0, whose NIC reads the data, then rail 4 only: no spine.
  const auto pxn = hop_names(t, t.p2p_operation_route(3, 20, 32));
  REQUIRE(pxn.size() == 8);
  CHECK(pxn[1].rfind("n0.gpu4", 0) == 0);  // from each NVSwitch plane
  CHECK(std::vector<std::string>(pxn.begin() + 2, pxn.end()) ==
        std::vector<std::string>{"n0.pcie4", "n0.nic4", "leaf4", "n2.nic4", "n2.pcie4", "n2.gpu4"});
  CHECK(t.p2p_operation_route(3, 20, 32).latency_class == LatencyClass::net);
  // The same rail, and GPUs of one node, route as collectives do.
  CHECK(hop_names(t, t.p2p_operation_route(3, 19, 32)) == route_names(t, 3, 19));
  CHECK(hop_names(t, t.p2p_operation_route(3, 4, 32)) == route_names(t, 3, 4));
  // The relay must be a rank of the communicator: GPU 2 of node 2 (rank 18) sends to GPU 4 of node
  // 0 through GPU 4 of node 2, rank 20, which a 20-rank communicator lacks (its own NIC then) and a
  // 21-rank one has.
  CHECK(hop_names(t, t.p2p_operation_route(18, 4, 20)) == route_names(t, 18, 4));
  CHECK(hop_names(t, t.p2p_operation_route(18, 4, 21))[1].rfind("n2.gpu4", 0) == 0);
  // Level 1 relays only where the sender's own path to that NIC is farther than PXB, as on DGX
  // H100 (through the CPU); level 0 keeps the sender's NIC.
  t.set_p2p_pxn_level(1);
  CHECK(hop_names(t, t.p2p_operation_route(3, 20, 32)) == pxn);
  t.set_p2p_pxn_level(0);
  CHECK(hop_names(t, t.p2p_operation_route(3, 20, 32)) == route_names(t, 3, 20));
  // Nor is there a relay where NCCL_P2P_LEVEL keeps GPUs from writing each other's memory.
  t.set_p2p_pxn_level(2);
  t.set_p2p_level(PathLevel::loc);
  CHECK(hop_names(t, t.p2p_operation_route(3, 20, 32)) == route_names(t, 3, 20));
  CHECK_THROWS_WITH_AS(t.set_p2p_pxn_level(3), "NCCL_P2P_PXN_LEVEL is 0, 1 or 2, not 3", Error);
  // A DGX A100 has two NICs behind each pair of GPUs' PCIe switches: GPU 0 reaches NIC 1 within
  // PXB. Level 2 still hands its data to GPU 1, next to that NIC; level 1 drives NIC 1 itself.
  PresetOptions two;
  two.nodes = 2;
  Topology a100 = make_preset("dgx-a100", two);
  const auto contains = [](const std::vector<std::string>& names, const std::string& what) {
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n.rfind(what, 0) == 0; });
  };
  const auto relayed = hop_names(a100, a100.p2p_operation_route(0, 9, 16));
  CHECK(a100.link(a100.p2p_operation_route(0, 9, 16).hops.front().links.front()).kind == LinkKind::nvlink);
  CHECK(contains(relayed, "n0.gpu1"));
  CHECK(contains(relayed, "n0.nic1"));
  a100.set_p2p_pxn_level(1);
  const auto direct = hop_names(a100, a100.p2p_operation_route(0, 9, 16));
  CHECK(a100.link(a100.p2p_operation_route(0, 9, 16).hops.front().links.front()).kind == LinkKind::pcie);
  CHECK_FALSE(contains(direct, "n0.gpu1"));
  CHECK(contains(direct, "n0.nic1"));
  CHECK(direct != route_names(a100, 0, 9));  // not GPU 0's own NIC 0
  // A GH200 reaches its NIC through its Grace (C2C), beyond PXB: no relay.
  const Topology gh = make_preset("gh200-quad", o);
  CHECK(hop_names(gh, gh.p2p_operation_route(3, 4, 16)) == hop_names(gh, gh.route(3, 4)));
}

TEST_CASE("rings across nodes change node only between GPUs of the same rail") {
  PresetOptions o;
  o.nodes = 4;
  const Topology t = make_preset("dgx-h100", o);
  const auto rs = rings(t, 32, 16);
  REQUIRE(rs.size() == 16);
  std::set<int> entry_rails;
  for (const auto& ring : rs) {
    std::vector<int> sorted = ring;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < 32; ++i) REQUIRE(sorted[static_cast<std::size_t>(i)] == i);
    for (std::size_t i = 0; i < ring.size(); ++i) {
      const int a = ring[i], b = ring[(i + 1) % ring.size()];
      if (a / 8 != b / 8) CHECK(a % 8 == b % 8);
    }
    entry_rails.insert(ring.front() % 8);
  }
  CHECK(entry_rails.size() == 8);  // channels spread over all NICs
}

TEST_CASE("preset errors are clear") {
  PresetOptions o;
  o.nodes = 2;
  CHECK_THROWS_WITH_AS(make_preset("nvswitch-flat", o), doctest::Contains("has no NICs"), Error);
  o.nodes = 0;
  CHECK_THROWS_WITH_AS(make_preset("dgx-h100", o), doctest::Contains("--nodes must be at least 1"), Error);
  CHECK_THROWS_WITH_AS(make_preset("dgx-h900"), doctest::Contains("unknown topology preset"), Error);
  CHECK_THROWS_WITH_AS(make_preset("dgx-h900"), doctest::Contains("hgx-a100"), Error);  // aliases are named too
}

TEST_CASE("a preset alias builds the machine of the preset it names") {
  for (const auto& a : preset_aliases()) {
    CAPTURE(a.name);
    bool is_preset = false, target_known = false;
    for (const auto& p : presets()) {
      is_preset |= p.name == a.name;
      target_known |= p.name == a.preset;
    }
    CHECK_FALSE(is_preset);  // an alias never hides a preset
    REQUIRE(target_known);
    PresetOptions o;
    o.nodes = 2;
    const Topology alias = make_preset(a.name, o), preset = make_preset(a.preset, o);
    CHECK(alias.name() == preset.name());
    CHECK(to_json(alias) == to_json(preset));
  }
}

#include "sim/topology/paths.hpp"

TEST_CASE("dgx1-v100 reproduces its published nvidia-smi topo -m GPU matrix") {
  // reference/nccl-model.md §5.6 (DGX-1V).
  const char* expected[8][8] = {
      {"X", "NV1", "NV1", "NV2", "NV2", "SYS", "SYS", "SYS"}, {"NV1", "X", "NV2", "NV1", "SYS", "NV2", "SYS", "SYS"},
      {"NV1", "NV2", "X", "NV2", "SYS", "SYS", "NV1", "SYS"}, {"NV2", "NV1", "NV2", "X", "SYS", "SYS", "SYS", "NV1"},
      {"NV2", "SYS", "SYS", "SYS", "X", "NV1", "NV1", "NV2"}, {"SYS", "NV2", "SYS", "SYS", "NV1", "X", "NV2", "NV1"},
      {"SYS", "SYS", "NV1", "SYS", "NV1", "NV2", "X", "NV2"}, {"SYS", "SYS", "SYS", "NV1", "NV2", "NV1", "NV2", "X"}};
  const Topology t = make_preset("dgx1-v100");
  for (std::size_t a = 0; a < 8; ++a)
    for (std::size_t b = 0; b < 8; ++b) CHECK(path_class(t, t.gpu(a), t.gpu(b)) == expected[a][b]);
}

TEST_CASE("NVSwitch presets give NV# between all GPU pairs as published") {
  for (auto [name, cls] : std::vector<std::pair<std::string, std::string>>{
           {"dgx2-v100", "NV6"}, {"dgx-a100", "NV12"}, {"dgx-h100", "NV18"}, {"dgx-h200", "NV18"}, {"hgx-h800", "NV8"},
           {"hgx-b200", "NV18"}, {"hgx-b300", "NV18"}}) {
    const Topology t = make_preset(name);
    for (std::size_t a = 0; a < t.gpu_count(); ++a)
      for (std::size_t b = 0; b < t.gpu_count(); ++b)
        if (a != b) CHECK(path_class(t, t.gpu(a), t.gpu(b)) == cls);
  }
  const Topology a100 = make_preset("dgx-a100");  // GPU0/1 reach NIC0/1 through two PCIe switches
  CHECK(path_class(a100, a100.gpu(0), a100.nics_of_node(0)[0]) == "PXB");
  CHECK(path_class(a100, a100.gpu(1), a100.nics_of_node(0)[1]) == "PXB");
  // A rack's GPUs are a family of their own (their model: the rack's NVLS rate), a board's Blackwell.
  CHECK(make_preset("gb200-nvl72").gpu_arch() == "gb200");
  CHECK(make_preset("hgx-b200").gpu_arch() == "blackwell");
  const Topology nvb = make_preset("pcie-gen4-4gpu-nvbridge");
  CHECK(path_class(nvb, nvb.gpu(0), nvb.gpu(1)) == "NV12");
  CHECK(path_class(nvb, nvb.gpu(0), nvb.gpu(2)) == "SYS");
}

TEST_CASE("rings: NVLink only on a DGX-1, two socket crossings at most on a PCIe box") {
  const Topology dgx1 = make_preset("dgx1-v100");
  for (const auto& ring : rings(dgx1, 8, 4))
    for (std::size_t i = 0; i < ring.size(); ++i) {
      const auto a = static_cast<std::size_t>(ring[i]), b = static_cast<std::size_t>(ring[(i + 1) % ring.size()]);
      CHECK(path_class(dgx1, dgx1.gpu(a), dgx1.gpu(b)).rfind("NV", 0) == 0);
    }
  const Topology pcie = make_preset("pcie-gen4-8gpu");
  for (const auto& ring : rings(pcie, 8, 4)) {
    int crossings = 0;
    for (std::size_t i = 0; i < ring.size(); ++i) {
      const auto a = static_cast<std::size_t>(ring[i]), b = static_cast<std::size_t>(ring[(i + 1) % ring.size()]);
      crossings += path_class(pcie, pcie.gpu(a), pcie.gpu(b)) == "SYS";
    }
    CHECK(crossings <= 2);
  }
}

#include <nlohmann/json.hpp>

#include "sim/topology/json_io.hpp"

TEST_CASE("custom JSON topologies load, and every mistake names its JSON path") {
  auto load = [](const char* text) { return topology_from_json(nlohmann::json::parse(text), "t.json"); };
  const Topology ok = load(R"({"name": "pair", "devices": [
      {"name": "a", "kind": "gpu", "arch": "hopper"}, {"name": "b", "kind": "gpu", "arch": "hopper"}],
      "links": [{"from": "a", "to": "b", "kind": "nvlink", "generation": "4", "lanes": 6}]})");
  CHECK(ok.gpu_count() == 2);
  CHECK(path_class(ok, ok.gpu(0), ok.gpu(1)) == "NV6");
  const char* two_gpus = R"({"name": "a", "arch": "hopper", "kind": "gpu"}, {"name": "b", "kind": "gpu", "arch": "hopper"})";
  auto with_link = [&](const std::string& link) {
    return std::string(R"({"name": "x", "devices": [)") + two_gpus + R"(], "links": [)" + link + "]}";
  };
  auto fails = [&](const std::string& text, const char* message) {
    CHECK_THROWS_WITH_AS(topology_from_json(nlohmann::json::parse(text), "t.json"), doctest::Contains(message), Error);
  };
  fails(with_link(R"({"from": "a", "to": "gpu9", "kind": "nvlink", "generation": "4"})"),
        "t.json: links[0].to: unknown device \"gpu9\"");
  fails(with_link(R"({"from": "a", "to": "b", "kind": "nvlonk", "generation": "4"})"), "links[0].kind: unknown \"nvlonk\"");
  fails(with_link(R"({"from": "a", "to": "b", "kind": "nvlink", "generation": "9"})"),
        "links[0].generation: configs/links.json: no nvlink generation \"9\" (known: 1, 2, 3, 4, 5)");
  fails(with_link(R"({"from": "a", "to": "b", "kind": "nvlink", "generation": "4", "lanes": 0})"),
        "links[0].lanes: expected an integer >= 1");
  fails(with_link(R"({"from": "a", "to": "a", "kind": "nvlink", "generation": "4"})"), "links[0]: a link joins two different");
  fails(R"({"name": "x", "devices": [{"name": "a", "kind": "gpu"}], "links": []})", "devices[0].arch: missing");
  fails(R"({"name": "x", "devices": [{"name": "a", "kind": "tpu", "arch": "x"}], "links": []})", "devices[0].kind: unknown \"tpu\"");
  fails(R"({"name": "x", "devices": [{"name": "a", "kind": "gpu", "arch": "hopper"}, {"name": "a", "kind": "cpu"}], "links": []})",
        "devices[1].name: device \"a\" is defined twice");
  fails(R"({"name": "x", "devices": [{"name": "s", "kind": "cpu"}], "links": []})", "devices: no GPU");
  fails(std::string(R"({"name": "x", "devices": [)") + two_gpus + R"(, {"name": "l", "kind": "net_switch", "latency_us": -1}], "links": []})",
        "t.json: devices[2].latency_us: expected a number >= 0 (microseconds)");
  // A misspelt key is not passed over with its default in place.
  fails(R"({"name": "x", "devices": [{"name": "a", "kind": "gpu", "arch": "hopper"}, {"name": "s", "kind": "nvswitch", "reduce": true}], "links": []})",
        "t.json: devices[1].reduce: unknown key (expected one of name, kind, arch, node, reduces, latency_us)");
  fails(with_link(R"({"from": "a", "to": "b", "kind": "nvlink", "generation": "4", "lane": 6})"),
        "t.json: links[0].lane: unknown key (expected one of from, to, kind, generation, lanes, bandwidth_gbps, p2p_fraction, source)");
  // p2p_fraction is a socket link's: refused elsewhere and outside (0, 1]; kept and written back.
  fails(with_link(R"({"from": "a", "to": "b", "kind": "nvlink", "generation": "4", "p2p_fraction": 0.5})"),
        "t.json: links[0].p2p_fraction: only a cpu link has one (peer-to-peer writes across sockets), not a nvlink link");
  const std::string on_two_sockets = std::string(R"({"name": "x", "devices": [)") + two_gpus +
      R"(, {"name": "c0", "kind": "cpu"}, {"name": "c1", "kind": "cpu"}], "links": [
      {"from": "a", "to": "c0", "kind": "pcie", "generation": "4", "lanes": 16},
      {"from": "b", "to": "c1", "kind": "pcie", "generation": "4", "lanes": 16},
      {"from": "c0", "to": "c1", "kind": "cpu", "generation": "xgmi", "source": "a test", "p2p_fraction": )";
  fails(on_two_sockets + "0}]}", "t.json: links[2].p2p_fraction: expected a number in (0, 1]");
  fails(on_two_sockets + "1.5}]}", "t.json: links[2].p2p_fraction: expected a number in (0, 1]");
  fails(on_two_sockets + R"("half"}]})", "t.json: links[2].p2p_fraction: expected a number in (0, 1]");
  fails(std::string(on_two_sockets).replace(on_two_sockets.find(R"("a test")"), 8, "7") + "1}]}", "t.json: links[2].source: expected a string");
  const Topology sockets = load((on_two_sockets + "0.85}]}").c_str());
  CHECK(sockets.link(2).p2p_fraction == 0.85);
  CHECK(sockets.link(0).p2p_fraction == 1.0);
  CHECK(to_json(sockets)["links"][2]["p2p_fraction"] == 0.85);
  CHECK_FALSE(to_json(sockets)["links"][0].contains("p2p_fraction"));
  CHECK(topology_from_json(to_json(sockets), "again").link(2).p2p_fraction == 0.85);
  fails(std::string(R"({"name": "x", "net_gdr_level": "NODE", "devices": [)") + two_gpus + R"(], "links": []})",
        "t.json: net_gdr_level: expected one of LOC, NVL, NVB, PIX, PXB, PHB, SYS (NCCL_NET_GDR_LEVEL)");
  fails(std::string(R"({"name": "x", "p2p_level": 3, "devices": [)") + two_gpus + R"(], "links": []})",
        "t.json: p2p_level: expected one of LOC, NVL, NVB, PIX, PXB, PHB, SYS (NCCL_P2P_LEVEL)");
  const std::string nvlink = R"({"from": "a", "to": "b", "kind": "nvlink", "generation": "4"})";
  CHECK(topology_from_json(nlohmann::json::parse(std::string(R"({"name": "x", "net_gdr_level": "SYS", "devices": [)") + two_gpus + R"(], "links": [)" + nvlink + "]}"), "t.json")
            .net_gdr_level() == PathLevel::sys);
  fails(std::string(R"({"name": "x", "p2p_pxn_level": 3, "devices": [)") + two_gpus + R"(], "links": []})",
        "t.json: p2p_pxn_level: expected 0, 1 or 2 (NCCL_P2P_PXN_LEVEL)");
  const Topology pxn_off = topology_from_json(
      nlohmann::json::parse(std::string(R"({"name": "x", "p2p_pxn_level": 0, "devices": [)") + two_gpus + R"(], "links": [)" + nvlink + "]}"), "t.json");
  CHECK(pxn_off.p2p_pxn_level() == 0);
  CHECK(to_json(pxn_off)["p2p_pxn_level"] == 0);
  CHECK_FALSE(to_json(make_preset("dgx-h100")).contains("p2p_pxn_level"));  // NCCL's default, 2, unsaid
  // A link joins what its kind joins; every GPU reaches the first; the machine's own checks name the file.
  fails(std::string(R"({"name": "x", "devices": [)") + two_gpus + R"(, {"name": "n", "kind": "nic"}], "links": [)" + nvlink +
            R"(, {"from": "a", "to": "n", "kind": "nvlink", "generation": "4"}]})",
        "t.json: links[1].kind: nvlink joins GPUs and NVSwitches, not a gpu and a nic");
  fails(with_link(R"({"from": "a", "to": "b", "kind": "net", "generation": "ndr"})"),
        "t.json: links[0].kind: net joins NICs and network switches, not a gpu and a gpu");
  fails(std::string(R"({"name": "x", "devices": [)") + two_gpus + R"(], "links": []})", "t.json: devices[1]: GPU \"b\" is joined to a by no path of links");
  fails(R"({"name": "x", "devices": [{"name": "a", "kind": "gpu", "arch": "hopper"}, {"name": "b", "kind": "gpu", "arch": "ampere"}],
        "links": [{"from": "a", "to": "b", "kind": "nvlink", "generation": "4"}]})", "t.json: topology x mixes GPU families");
  fails(R"({"name": "x", "links": []})", "devices: expected a non-empty array");
  fails(R"([1, 2])", "expected a JSON object");
  CHECK_THROWS_WITH_AS(load_topology_file("/nonexistent/t.json"), doctest::Contains("cannot open file"), Error);
}

#include <fstream>
#include <sstream>

#include "sim/topology/import_smi.hpp"

namespace {
std::string read_shared(const std::string& relative) {
  const std::string path = std::string(CCSIM_SHARED_DIR) + "/" + relative;
  std::ifstream in(path);
  INFO("shared test data: ", path);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("nvidia-smi import rebuilds machines whose derived matrix equals the real one") {
  // Real outputs from shared/data/topologies (sources in its INDEX.md).
  for (const char* file : {"oneflow-8xv100-sxm2-dgx1-like-smi-topo.txt", "a800-sxm4-8gpu-nv8-smi-topo.txt",
                           "nvidia-nccl-1617-4xh100-nv6-smi-topo.txt", "alcf-polaris-4xa100-smi-topo.txt",
                           "asus-esc8000a-e12-4xrtx6000ada-smi-topo.txt", "rtx4090-8gpu-pcie-go-gpuallocator-17-smi-topo.txt"}) {
    INFO(std::string(file));
    const std::string text = read_shared(std::string("data/topologies/") + file);
    const SmiMatrix m = parse_nvidia_smi(text, file);
    const Topology t = import_nvidia_smi(text, file);
    std::vector<DeviceId> ids;
    for (std::size_t i = 0; i < t.gpu_count(); ++i) ids.push_back(t.gpu(i));
    for (auto nic : t.nics_of_node(0)) ids.push_back(nic);
    std::vector<std::string> labels = m.gpus;
    labels.insert(labels.end(), m.nics.begin(), m.nics.end());
    REQUIRE(ids.size() == labels.size());
    int compared = 0;
    for (std::size_t a = 0; a < labels.size(); ++a)
      for (std::size_t b = 0; b < labels.size(); ++b) {
        if (!m.rows.count(labels[a]) && !m.rows.count(labels[b])) continue;
        const std::string want = m.cls(labels[a], labels[b]);
        INFO(labels[a], " ", labels[b]);
        CHECK(path_class(t, ids[a], ids[b]) == want);
        ++compared;
      }
    CHECK(compared >= 16);
  }
}

TEST_CASE("nvidia-smi import errors say where") {
  CHECK_THROWS_WITH_AS(parse_nvidia_smi("hello\nworld\n", "t.txt"), doctest::Contains("t.txt: no nvidia-smi topo -m header"), Error);
  CHECK_THROWS_WITH_AS(parse_nvidia_smi("\tGPU0\tGPU1\nGPU0\t X\tNV4\nGPU1\tNV4\n", "t.txt"),
                       doctest::Contains("t.txt:3: row GPU1 has 1 cells, expected 2"), Error);
  CHECK_THROWS_WITH_AS(parse_nvidia_smi("\tGPU0\tGPU1\nGPU0\t X\tXYZ\nGPU1\tNV4\t X\n", "t.txt"),
                       doctest::Contains("t.txt:2: unknown path class \"XYZ\""), Error);
  CHECK_THROWS_WITH_AS(parse_nvidia_smi(read_shared("data/topologies/dgx2-16xv100-nv6-partial-smi-topo.txt"), "dgx2.txt"),
                       doctest::Contains("row GPU4 is missing"), Error);
}

#include "sim/topology/import_xml.hpp"

TEST_CASE("an NCCL XML dump of an H100 node and the dgx-h100 preset agree on GPU paths and bandwidths") {
  // OCI BM.GPU.H100.8 full dump (shared/data/topologies/INDEX.md): 4 NVSwitches with 4/5/5/4 lanes.
  const Topology imported = import_nccl_xml(read_shared("data/topologies/oci-bm-gpu-h100-8-nccl-topo.xml"), "oci-h100.xml");
  const Topology preset = make_preset("dgx-h100");
  REQUIRE(imported.gpu_count() == 8);
  CHECK(imported.gpu_arch() == "hopper");
  CHECK(imported.has_nvls());
  CHECK(imported.nics_of_node(0).size() == 8);
  for (std::size_t a = 0; a < 8; ++a)
    for (std::size_t b = 0; b < 8; ++b) {
      CHECK(path_class(imported, imported.gpu(a), imported.gpu(b)) == path_class(preset, preset.gpu(a), preset.gpu(b)));
      if (a != b) CHECK(route_bandwidth(imported, a, b) == route_bandwidth(preset, a, b));
    }
}

TEST_CASE("XML import: VM dumps with hidden NVSwitches, flattened dumps, and errors with a line") {
  const Topology gb300 = import_nccl_xml(read_shared("data/topologies/oci-gb300-2tray-nccl-topo.xml"), "gb300.xml");
  CHECK(gb300.gpu_count() == 8);
  CHECK(gb300.gpu_arch() == "blackwell");
  CHECK(path_class(gb300, gb300.gpu(0), gb300.gpu(5)) == "NV18");  // one fabric behind fffffff:ff:ff.0
  // Two hosts (trays) whose PCIe trees repeat the same bus ids: each host's devices are its own;
  // the SuperNICs' DMA functions (class 0x0801) that hold a <nic> are the NICs NCCL uses.
  CHECK(gb300.device(gb300.gpu(0)).name == "n0.gpu@0008:06:00.0");
  CHECK(gb300.device(gb300.gpu(4)).name == "n1.gpu@0008:06:00.0");
  REQUIRE(gb300.nics_of_node(0).size() == 8);
  CHECK(path_class(gb300, gb300.gpu(0), gb300.nics_of_node(0)[0]) == "PXB");
  CHECK(path_class(gb300, gb300.gpu(0), gb300.nics_of_node(0)[4]) == "PXN");  // the other tray's, through its GPU
  CHECK(path_class(gb300, gb300.nics_of_node(0)[0], gb300.nics_of_node(0)[4]) == "-");
  // Two hosts whose GPUs name their own NVSwitch by its bus id (not the fabric's hidden target)
  // keep a switch each: the same bus id on two hosts is two chips.
  const std::string two_hosts = R"(<system version="1">
  <cpu host_hash="0x1" numaid="0" vendor="GenuineIntel" modelid="143">
    <pci busid="0000:1b:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="90" rank="0"><nvlink target="0000:05:00.0" count="18" tclass="0x068000"/></gpu>
    </pci>
  </cpu>
  <cpu host_hash="0x2" numaid="0" vendor="GenuineIntel" modelid="143">
    <pci busid="0000:1b:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="90" rank="1"><nvlink target="0000:05:00.0" count="18" tclass="0x068000"/></gpu>
    </pci>
  </cpu>
</system>)";
  const Topology separate = import_nccl_xml(two_hosts, "two-hosts.xml");
  int nvswitches = 0;
  for (const auto& d : separate.devices()) nvswitches += d.kind == DeviceKind::nvswitch;
  CHECK(nvswitches == 2);
  CHECK(separate.device(separate.gpu(1)).name == "n1.gpu@0000:1b:00.0");
  // What `topo import --out` writes reads back the same, NVLS included.
  const Topology reread = topology_from_json(to_json(gb300), "gb300.json");
  CHECK(reread.has_nvls());
  CHECK(to_json(reread) == to_json(gb300));
  const std::string flat = read_shared("data/topologies/azure-ndv4-nccl-topo.xml");
  CHECK_THROWS_WITH_AS(import_nccl_xml(flat, "ndv4.xml"), doctest::Contains("has no sm attribute"), Error);
  const Topology ndv4 = import_nccl_xml(flat, "ndv4.xml", {"ampere"});
  CHECK(ndv4.gpu_count() == 8);
  CHECK(path_class(ndv4, ndv4.gpu(0), ndv4.nics_of_node(0)[0]) == "PIX");
  CHECK_THROWS_WITH_AS(import_nccl_xml("<system>\n<cpu>\n<pci class='0x0604'>\n</cpu>\n", "bad.xml"),
                       doctest::Contains("bad.xml:4: XML error"), Error);
  CHECK_THROWS_WITH_AS(import_nccl_xml("<graphs/>", "g.xml"), doctest::Contains("no <system> element"), Error);
}

TEST_CASE("XML import: Grace's NVLink-C2C, VMs' numaid -1, links it leaves out said, a repeated GPU refused") {
  // GH200: the GPU listed straight under its Grace reaches it by C2C alone, the NIC over PCIe.
  const std::string gh200 = R"(<system version="1">
  <cpu host_hash="0x1" numaid="0" arch="arm64">
    <pci busid="0009:01:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="90" rank="0"><c2c count="10" bw="45000"/></gpu>
    </pci>
    <pci busid="0000:01:00.0" class="0x020700" link_speed="32.0 GT/s PCIe" link_width="16"><nic/></pci>
  </cpu>
</system>)";
  const Topology t = import_nccl_xml(gh200, "gh200.xml");
  int c2c = 0, gpu_pcie = 0;
  for (const auto& l : t.links()) {
    c2c += l.kind == LinkKind::c2c;
    gpu_pcie += l.kind == LinkKind::pcie && (l.a == t.gpu(0) || l.b == t.gpu(0));
  }
  CHECK(c2c == 1);
  CHECK(gpu_pcie == 0);
  // GB300's GPUs sit behind their ConnectX-8's switch: C2C to the Grace, and that PCIe path to the NICs.
  const Topology gb300 = import_nccl_xml(read_shared("data/topologies/oci-gb300-2tray-nccl-topo.xml"), "gb300.xml");
  c2c = 0;
  for (const auto& l : gb300.links()) c2c += l.kind == LinkKind::c2c;
  CHECK(c2c == 8);
  CHECK(path_class(gb300, gb300.gpu(0), gb300.nics_of_node(0)[0]) == "PXB");
  // Two sockets a VM writes numaid="-1": two CPUs of their own names, which a topology file takes back.
  const std::string vm = R"(<system version="1">
  <cpu numaid="-1" vendor="AuthenticAMD">
    <pci busid="0001:00:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="80" rank="0"><nvlink target="0003:00:00.0" count="12" tclass="0x030200"/>
        <nvlink target="0009:00:00.0" count="2" tclass="0x030200"/></gpu>
    </pci>
  </cpu>
  <cpu numaid="-1" vendor="AuthenticAMD">
    <pci busid="0003:00:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="80" rank="1"><nvlink target="0000:00:00.0" count="2" tclass="0x060000"/></gpu>
    </pci>
  </cpu>
</system>)";
  std::vector<std::string> notes;
  const Topology two = import_nccl_xml(vm, "vm.xml", {"", &notes});
  std::set<std::string> cpu_names;
  for (const auto& d : two.devices())
    if (d.kind == DeviceKind::cpu) cpu_names.insert(d.name);
  CHECK(cpu_names.size() == 2);
  CHECK(to_json(topology_from_json(to_json(two), "vm.json")) == to_json(two));
  CHECK(path_class(two, two.gpu(0), two.gpu(1)) == "NV12");
  CHECK(notes == std::vector<std::string>{
                     "vm.xml:5: an NVLink to 0009:00:00.0, which the dump lists no GPU at: left out",
                     "vm.xml:10: an NVLink to 0000:00:00.0 of class 0x060000 (a CPU's, as POWER9's), which ccsim does not "
                     "model: left out"});
  std::string twice = vm;
  twice.replace(twice.find("0003:00:00.0\" class"), 12, "0001:00:00.0");
  CHECK_THROWS_WITH_AS(import_nccl_xml(twice, "twice.xml"), doctest::Contains("twice.xml:9: a second GPU at bus id 0001:00:00.0"), Error);
  // GB10 (sm 121) takes its own model, not its family's.
  const std::string spark = R"(<system version="1"><cpu numaid="0" arch="arm64">
    <pci busid="000f:01:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="0" sm="121" rank="0"/></pci>
  </cpu></system>)";
  CHECK(import_nccl_xml(spark, "spark.xml").gpu_arch() == "gb10");
  // Bridges nested past any machine's depth are refused, not followed down the stack.
  std::string deep = R"(<system version="1"><cpu numaid="0">)";
  for (int i = 0; i < 100; ++i) deep += R"(<pci busid="0000:01:00.0" class="0x060400">)";
  for (int i = 0; i < 100; ++i) deep += "</pci>";
  deep += "</cpu></system>";
  CHECK_THROWS_WITH_AS(import_nccl_xml(deep, "deep.xml"), doctest::Contains("nested more than 64 deep"), Error);
}

TEST_CASE("nvidia-smi import: sockets from NUMA or CPU affinity, colour codes, and matrices nvidia-smi cannot print") {
  auto cpu_count = [](const Topology& t) {
    int n = 0;
    for (const auto& d : t.devices()) n += d.kind == DeviceKind::cpu;
    return n;
  };
  auto cpu_links = [](const Topology& t) {
    int n = 0;
    for (const auto& l : t.links()) n += l.kind == LinkKind::cpu;
    return n;
  };
  // Tab-separated as nvidia-smi prints it; GPU2's and GPU3's CPU affinity empty (outside the job's
  // cpuset): the NUMA column still reads, two sockets.
  const std::string tabs =
      "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
      "GPU0\t X \tNV18\tNV18\tNV18\t0-15,56-71\t0\t\tN/A\n"
      "GPU1\tNV18\t X \tNV18\tNV18\t0-15,56-71\t0\t\tN/A\n"
      "GPU2\tNV18\tNV18\t X \tNV18\t\t1\t\tN/A\n"
      "GPU3\tNV18\tNV18\tNV18\t X \t\t1\t\tN/A\n";
  const SmiMatrix m = parse_nvidia_smi(tabs, "tabs.txt");
  CHECK(m.numa == std::map<std::string, int>{{"GPU0", 0}, {"GPU1", 0}, {"GPU2", 1}, {"GPU3", 1}});
  CHECK(cpu_count(import_nvidia_smi(tabs, "tabs.txt")) == 2);
  // An older nvidia-smi prints CPU affinity only: GPUs of one affinity share a socket.
  const std::string affinity_only =
      "        GPU0    GPU1    GPU2    GPU3    CPU Affinity\n"
      "GPU0     X      NV18    NV18    NV18    0-71\n"
      "GPU1    NV18     X      NV18    NV18    0-71\n"
      "GPU2    NV18    NV18     X      NV18    72-143\n"
      "GPU3    NV18    NV18    NV18     X      72-143\n";
  CHECK(cpu_count(import_nvidia_smi(affinity_only, "old.txt")) == 2);
  // Every pair SYS, NUMA 0 0 1 1 (an AMD socket's root complexes are SYS to each other): the
  // classes as printed (a CPU per GPU), the four joined through their two sockets, not pairwise.
  const std::string amd =
      "        GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity\n"
      "GPU0     X      SYS     SYS     SYS     0-31            0\n"
      "GPU1    SYS      X      SYS     SYS     0-31            0\n"
      "GPU2    SYS     SYS      X      SYS     32-63           1\n"
      "GPU3    SYS     SYS     SYS      X      32-63           1\n";
  const Topology epyc = import_nvidia_smi(amd, "amd.txt");
  CHECK(path_class(epyc, epyc.gpu(0), epyc.gpu(1)) == "SYS");
  CHECK(cpu_count(epyc) == 6);
  CHECK(cpu_links(epyc) == 5);
  // Colour codes of a terminal capture come off.
  std::string coloured = "        \x1b[4mGPU0\x1b[0m    \x1b[4mGPU1\x1b[0m\n\x1b[1mGPU0\x1b[0m     X      NV4\n"
                         "\x1b[1mGPU1\x1b[0m    NV4      X\n";
  CHECK(parse_nvidia_smi(coloured, "c.txt").cls("GPU0", "GPU1") == "NV4");
  // What nvidia-smi never prints: a row twice, a pair of two classes, NIC columns without NIC rows.
  CHECK_THROWS_WITH_AS(parse_nvidia_smi("\tGPU0\tGPU1\nGPU0\t X\tNV4\nGPU1\tNV4\t X\nGPU1\tNV4\t X\n", "t.txt"),
                       doctest::Contains("t.txt:4: row GPU1 again (first at line 3)"), Error);
  CHECK_THROWS_WITH_AS(parse_nvidia_smi("\tGPU0\tGPU1\nGPU0\t X\tNV4\nGPU1\tNV6\t X\n", "t.txt"),
                       doctest::Contains("t.txt: GPU0-GPU1 is NV4 in GPU0's row (line 2) but NV6 in GPU1's (line 3)"), Error);
  CHECK_THROWS_WITH_AS(
      parse_nvidia_smi("\tGPU0\tGPU1\tNIC0\tNIC1\nGPU0\t X\tNV12\tPIX\tPIX\nGPU1\tNV12\t X\tPIX\tPIX\n", "t.txt"),
      doctest::Contains("t.txt: row NIC0 is missing (a partial copy?)"), Error);
  // The links' generations a family's machines have, which the text does not say.
  CHECK(link_generations_of("volta").nvlink == "2");
  CHECK(link_generations_of("ampere-nccl2.8").pcie == "4");
  CHECK(link_generations_of("blackwell").nvlink == "5");
  CHECK(link_generations_of("h200").pcie == "5");
}

TEST_CASE("a topology file: unknown top-level keys refused, an import's input named as such") {
  const std::string two_gpus = R"({"name": "x", "p2p_levle": "SYS", "devices": [{"name": "g0", "kind": "gpu", "arch": "hopper"},
    {"name": "g1", "kind": "gpu", "arch": "hopper"}], "links": [{"from": "g0", "to": "g1", "kind": "nvlink", "generation": "4", "lanes": 1}]})";
  CHECK_THROWS_WITH_AS(topology_from_json(nlohmann::json::parse(two_gpus), "t.json"),
                       doctest::Contains("t.json: p2p_levle: unknown key (expected one of name, description"), Error);
  const auto dir = std::filesystem::temp_directory_path();
  const auto xml = (dir / "ccsim-import-first.xml").string(), smi = (dir / "ccsim-import-first.txt").string();
  std::ofstream(xml) << "<system version=\"1\"></system>\n";
  std::ofstream(smi) << "\tGPU0\tGPU1\nGPU0\t X\tNV4\nGPU1\tNV4\t X\n";
  CHECK_THROWS_WITH_AS(resolve_topology(xml, {}), doctest::Contains("an NCCL topology dump (XML), not a topology file: `ccsim topo import"), Error);
  CHECK_THROWS_WITH_AS(resolve_topology(smi, {}), doctest::Contains("`nvidia-smi topo -m` output, not a topology file"), Error);
  std::filesystem::remove(xml);
  std::filesystem::remove(smi);
}

TEST_CASE("fabrics: plain two- and three-tier fat trees, NIC generation, switch latency") {
  PresetOptions o;
  o.nodes = 8;
  o.leaf_ports = 16;  // 8 NICs per leaf: one node per leaf
  o.fabric = "fat-tree";
  const Topology two = make_preset("dgx-h100", o);
  // Same rail, different nodes: up to a spine and down again (leaf, spine, leaf).
  const auto r2 = route_names(two, 3, 11);
  CHECK(r2.size() == 8);
  CHECK(r2[3].rfind("spine", 0) == 0);
  o.fabric = "fat-tree-3";
  o.leaf_ports = 4;  // 2 NICs per leaf, 2 leaves per pod: nodes 0 and 5 sit in different pods
  const Topology three = make_preset("dgx-h100", o);
  const auto r3 = route_names(three, 0, 40);
  CHECK(r3.size() == 10);  // pcie, nic, leaf, agg, core, agg, leaf, nic, pcie, gpu
  CHECK(r3[3].find(".agg") != std::string::npos);
  CHECK(r3[4].rfind("spine", 0) == 0);
  o.fabric = "rail";
  o.nic = "xdr";
  o.switch_latency_us = 0.5;
  const Topology xdr = make_preset("dgx-h100", o);
  const Route r = xdr.route(0, 8);
  CHECK(r.device_latency_s == test::approx(0.5e-6));  // the rail's leaf
  // A file written from it (topo show --format json) keeps the switches' latency.
  CHECK(topology_from_json(to_json(xdr), "xdr.json").route(0, 8).device_latency_s == test::approx(0.5e-6));
  bool found_xdr = false;
  for (const auto& l : xdr.links()) found_xdr |= l.kind == LinkKind::net && l.generation == "xdr";
  CHECK(found_xdr);
  o.fabric = "torus";
  CHECK_THROWS_WITH_AS(make_preset("dgx-h100", o), doctest::Contains("unknown fabric \"torus\""), Error);
  o.fabric = "rail";
  o.nic = "ndr2";
  CHECK_THROWS_WITH_AS(make_preset("dgx-h100", o), doctest::Contains("no net generation \"ndr2\""), Error);
}

TEST_CASE("NCCL routes DGX-1 GPUs without a direct NVLink through a third GPU (NVB): nvidia-smi says SYS") {
  const Topology t = make_preset("dgx1-v100");
  CHECK(route_class(t, 0, 5) == "NVB");
  CHECK(path_class(t, t.gpu(0), t.gpu(5)) == "SYS");
  CHECK(route_class(t, 0, 1) == "NV1");
  const Route r = t.route(0, 5);
  REQUIRE(r.hops.size() == 2);
  CHECK(t.link(r.hops[0].links.front()).kind == LinkKind::nvlink);
  CHECK(t.link(r.hops[1].links.front()).kind == LinkKind::nvlink);
  // Straight on one CPU: PHB; behind PCIe switches on one CPU: NODE.
  const Topology polaris = resolve_topology("polaris-4xa100", {});
  CHECK(path_class(polaris, polaris.gpu(0), polaris.nics_of_node(0)[0]) == "PHB");
  const Topology h100 = make_preset("dgx-h100");
  CHECK(path_class(h100, h100.gpu(0), h100.nics_of_node(0)[1]) == "NODE");
}

TEST_CASE("keep_nics_per_node: fewer NICs, each next to the ranks it serves") {
  PresetOptions o;
  o.nodes = 2;
  Topology t = make_preset("dgx-a100", o);
  REQUIRE(t.nics_of_node(0).size() == 8);
  t.keep_nics_per_node(4);
  for (int node = 0; node < 2; ++node) {
    const auto nics = t.nics_of_node(node);
    REQUIRE(nics.size() == 4);
    // One NIC per PCIe switch pair: GPU 2q reaches its own NIC without leaving the pair.
    for (std::size_t q = 0; q < 4; ++q) {
      const std::string prefix = "n" + std::to_string(node) + ".pcie" + std::to_string(q);
      const Route r = t.path(t.gpu(static_cast<std::size_t>(node * 8) + 2 * q), nics[q]);
      for (const auto& hop : r.hops)
        for (auto l : hop.links) {
          const auto& link = t.link(l);
          for (auto d : {link.a, link.b}) {
            const std::string& name = t.device(d).name;
            if (t.device(d).kind == DeviceKind::pcie_switch) CHECK(name.rfind(prefix, 0) == 0);
          }
        }
    }
  }
  CHECK(t.gpu_count() == 16);
  CHECK(t.route(0, 8).latency_class == LatencyClass::net);
  CHECK_THROWS_WITH_AS(t.keep_nics_per_node(5), doctest::Contains("has 4 NICs, fewer than 5"), Error);
  CHECK_THROWS_WITH_AS(t.keep_nics_per_node(0), doctest::Contains("at least 1"), Error);
}

TEST_CASE("rings across nodes spread over NICs that GPUs share") {
  // 4 NICs for 8 GPUs (ABCI A-node, p4de): rotating the start GPU by the channel would send
  // channels 0-3 out through NICs 0, 0, 2, 2 and leave NIC 4 idle; each NIC takes one instead.
  PresetOptions o;
  o.nodes = 2;
  Topology t = make_preset("dgx-a100", o);
  t.keep_nics_per_node(4);
  const auto rs = rings(t, 16, 4);
  std::map<DeviceId, int> leaving, returning;
  for (const auto& ring : rs) {
    CHECK(ring[7] / 8 == 0);
    CHECK(ring[8] % 8 == ring[7] % 8);  // the node-to-node hop stays on one rail
    ++leaving[t.nic_of(static_cast<std::size_t>(ring[7]))];
    ++returning[t.nic_of(static_cast<std::size_t>(ring[0]))];
  }
  CHECK(leaving.size() == 4);
  CHECK(returning.size() == 4);
}

TEST_CASE("rings on a uniform NVLink mesh spread the channels over every link") {
  // 4 V100 all-to-all (NV2), 6 channels: every directed link carries two ring hops; rotations of
  // one order (what suits a switch) would load 4 links six times and leave 8 idle.
  const Topology t = make_preset("v100-sxm2-4gpu");
  std::map<std::pair<int, int>, int> hops;
  for (const auto& ring : rings(t, 4, 6))
    for (std::size_t i = 0; i < ring.size(); ++i) ++hops[{ring[i], ring[(i + 1) % ring.size()]}];
  CHECK(hops.size() == 12);
  for (const auto& [link, n] : hops) CHECK(n == 2);
  // Behind a switch any order is as good: channels keep the identity order, rotated.
  const auto sw = rings(make_preset("dgx-h100"), 8, 2);
  CHECK(sw[0] == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(sw[1] == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 0});
}

TEST_CASE("dgx-spark: one GB10 per node reaching its 200G NIC over C2C and PCIe Gen5 x8, never through a PCIe root") {
  PresetOptions o;
  o.nodes = 2;
  const Topology t = make_preset("dgx-spark", o);
  CHECK(t.gpu_count() == 2);
  CHECK(t.gpus_per_node() == 1);
  CHECK(t.gpu_arch() == "gb10");
  CHECK(route_names(t, 0, 1) == std::vector<std::string>{"n0.cpu0", "n0.nic0", "leaf0", "n1.nic0", "n1.cpu0", "n1.gpu0"});
  const Route r = t.route(0, 1);
  CHECK_FALSE(r.via_cpu);
  // The narrowest hop is the 200G port; the NIC's PCIe, two Gen5 x4 functions, carries 31.5 GB/s.
  double narrowest = 1e30;
  for (const auto& h : r.hops) narrowest = std::min(narrowest, t.link(h.links.front()).bandwidth_bytes_per_s);
  CHECK(narrowest == test::approx(25e9));
}

TEST_CASE("gh200-quad: NV6 between every GPU pair, each GPU reaching its NIC through its own Grace over C2C") {
  PresetOptions o;
  o.nodes = 2;
  const Topology t = make_preset("gh200-quad", o);
  CHECK(t.gpu_count() == 8);
  CHECK_FALSE(t.has_nvls());
  for (std::size_t a = 0; a < 4; ++a)
    for (std::size_t b = a + 1; b < 4; ++b) {
      const Route r = t.route(a, b);
      REQUIRE(r.hops.size() == 1);
      CHECK(t.link(r.hops[0].links.front()).lanes == 6);
    }
  // Across nodes: its Grace, its own NIC, the rail's leaf, and down the same rail.
  CHECK(route_names(t, 2, 6) == std::vector<std::string>{"n0.grace2", "n0.nic2", "leaf2", "n1.nic2", "n1.grace2", "n1.gpu2"});
  // The NIC reads the GPU's memory through NVLink-C2C: no PCIe peer-to-peer through a root complex.
  CHECK_FALSE(t.route(2, 6).via_cpu);
  // One NIC per GPU: a cycle fixes which NIC pairs can be a channel's exit and entry, so the rings
  // choose among the cycles the NVLinks rate alike: 4 rings leave and re-enter through 4 NICs (the
  // first least-used cycle each time sent two out through NIC 3 and none through NIC 2).
  std::set<int> leaving, returning;
  for (const auto& ring : rings(t, 8, 4)) {
    CHECK(ring[4] % 4 == ring[3] % 4);
    leaving.insert(ring[3]);
    returning.insert(ring[0]);
  }
  CHECK(leaving.size() == 4);
  CHECK(returning.size() == 4);
}

TEST_CASE("network transports: EFA's from links.json, none for NCCL's verbs, mixed ones refused") {
  const NetTransport efa = net_transport("efa100");
  CHECK(efa.name == "efa-sendrecv");
  CHECK_FALSE(efa.ll);
  CHECK_FALSE(efa.ll128);
  CHECK(efa.plugin_latency_us == test::approx(75));
  CHECK(efa.message_latency_s > 0);
  CHECK(efa.flush_latency_s > 0);
  const NetTransport v2 = net_transport("efa400");
  CHECK(v2.ll);
  CHECK(v2.ll128);
  const NetTransport ib = net_transport("ndr");
  CHECK(ib.name.empty());
  CHECK(ib.message_latency_s == 0);
  CHECK_THROWS_WITH_AS(net_transport("efa9"), doctest::Contains("no net generation \"efa9\""), Error);
  PresetOptions o;
  o.nodes = 2;
  o.nic = "efa400";
  Topology t = make_preset("dgx-h100", o);
  CHECK(t.net_transport().name == "efa-rdma");
  CHECK(make_preset("dgx-h100").net_transport().name.empty());  // one node: no network at all
  // A second network generation with another transport: which one a message pays is undefined.
  Device extra;
  extra.kind = DeviceKind::nic;
  extra.name = "extra-nic-a";
  const DeviceId a = t.add_device(extra);
  extra.name = "extra-nic-b";
  extra.node = 1;
  const DeviceId b = t.add_device(extra);
  t.add_link(a, b, LinkKind::net, "ndr", 1);
  CHECK_THROWS_WITH_AS(t.net_transport(), doctest::Contains("mixes network transports"), Error);
}

#include "sim/topology/gpu_models.hpp"

TEST_CASE("GPU names from device lines: compute capability, model family and the preset they come in") {
  struct Case {
    const char* name;
    int sm;
    const char* family;
    const char* preset;
    bool card = false;  // a PCIe card, not a baseboard part
  };
  const Case cases[] = {
      {"NVIDIA H100 80GB HBM3", 90, "hopper", "dgx-h100"},
      {"NVIDIA H100 NVL", 90, "hopper", "", true},
      {"NVIDIA H100 PCIe", 90, "hopper", "", true},
      {"NVIDIA H200", 90, "h200", "dgx-h200"},
      {"NVIDIA GH200 120GB", 90, "hopper", "gh200-quad"},
      {"NVIDIA H800", 90, "hopper", "hgx-h800"},
      {"NVIDIA H20", 90, "hopper", ""},
      {"A100-SXM4-40GB", 80, "ampere", "dgx-a100"},
      {"NVIDIA A100 80GB PCIe", 80, "ampere", "", true},
      {"NVIDIA A100-PCIE-40GB", 80, "ampere", "", true},
      {"Tesla V100-SXM2-16GB", 70, "volta", "dgx1-v100"},
      {"Tesla V100-SXM3-32GB", 70, "volta", "dgx2-v100"},
      {"Tesla V100-PCIE-32GB", 70, "volta", "", true},
      {"NVIDIA B200", 100, "blackwell", "hgx-b200"},
      {"NVIDIA GB200", 100, "gb200", "gb200-nvl72"},
      {"NVIDIA GB10", 121, "gb10", "dgx-spark"},
      {"NVIDIA L40S", 89, "ampere", "", true},
      {"NVIDIA GeForce RTX 4090", 89, "ampere", "", true},
      {"NVIDIA GeForce RTX 5090", 120, "blackwell", "", true},
      {"NVIDIA GeForce RTX 2080 Ti", 75, "volta", "", true},
      {"NVIDIA GeForce RTX 3090", 86, "ampere", "", true},
      {"NVIDIA RTX 6000 Ada Generation", 89, "ampere", "", true},
      {"NVIDIA RTX A6000", 86, "ampere", "", true},
      {"Quadro RTX 6000", 75, "volta", "", true},
      {"NVIDIA RTX 6000D", 120, "blackwell", "", true},
      {"Tesla T4", 75, "volta", "", true},
      {"NVIDIA A10G", 86, "ampere", "", true},
      {"NVIDIA A800-SXM4-80GB", 80, "ampere", ""},
      {"NVIDIA A800 80GB PCIe", 80, "ampere", "", true},
      {"NVIDIA B300 SXM6 AC", 103, "blackwell", "hgx-b300"},
      {"Tesla V100S-PCIE-32GB", 70, "volta", "", true},
      {"Quadro GV100", 70, "volta", "", true},
      {"Tesla P100-SXM2-16GB", 60, "volta", ""},
      {"Tesla P100-PCIE-16GB", 60, "volta", "", true},
      {"Tesla P40", 61, "volta", "", true},
      {"NVIDIA RTX A4000", 86, "ampere", "", true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto gpu = ccsim::topo::identify_gpu(c.name);
    REQUIRE(gpu);
    CHECK(gpu->sm == c.sm);
    CHECK(gpu->family == c.family);
    CHECK(gpu->preset == c.preset);
    CHECK(gpu->card == c.card);
  }
  // Every preset named is one ccsim has.
  for (const Case& c : cases)
    if (*c.preset) CHECK_NOTHROW(ccsim::topo::make_preset(c.preset));
  // A GeForce card's suffix names another card, which messages must not drop.
  CHECK(ccsim::topo::identify_gpu("NVIDIA GeForce RTX 2080 Ti")->name == "RTX 2080 Ti");
  CHECK(ccsim::topo::identify_gpu("NVIDIA GeForce RTX 4070 SUPER")->name == "RTX 4070 SUPER");
  CHECK(ccsim::topo::identify_gpu("NVIDIA GeForce RTX 5090")->name == "RTX 5090");
  CHECK(ccsim::topo::identify_gpu("NVIDIA GeForce RTX 5090")->geforce);
  CHECK_FALSE(ccsim::topo::identify_gpu("NVIDIA RTX A6000")->geforce);
  CHECK_FALSE(ccsim::topo::identify_gpu("NVIDIA RTX 6000D")->geforce);
  CHECK_FALSE(ccsim::topo::identify_gpu("NVIDIA Graphics Device"));
  CHECK_FALSE(ccsim::topo::identify_gpu(""));
  // File names (accuracy's fallback where a log has no device lines) glue the words together.
  CHECK(ccsim::topo::identify_gpu("rtx2080ti-2g-allreduce-1")->name == "RTX 2080 Ti");
  CHECK(ccsim::topo::identify_gpu("rtx5090-pcie-4g-allreduce-1")->name == "RTX 5090");
  CHECK(ccsim::topo::identify_gpu("h100nvl-slingshot-2n4g-allreduce-1")->name == "H100 NVL");
  CHECK(ccsim::topo::identify_gpu("vultr-hgx-b200-8g-alltoall-1")->preset == "hgx-b200");
  // GCP's A2 machines are A100s: the word names no GPU of its own.
  CHECK_FALSE(ccsim::topo::identify_gpu("gcp-a2-highgpu-8g-allreduce-1"));
  CHECK(ccsim::topo::identify_gpu("v100-sxm2-hcm-8g-allreduce-1")->preset == "dgx1-v100");
  CHECK(ccsim::topo::identify_gpu("a100pcie-4g")->name == "A100 PCIe");
  CHECK_FALSE(ccsim::topo::identify_gpu("nebius-8gpu-2n16g-allreduce-1"));
  CHECK(ccsim::topo::family_of_sm(75) == "volta");
  CHECK(ccsim::topo::family_of_sm(89) == "ampere");
  CHECK(ccsim::topo::family_of_sm(103) == "blackwell");
}

TEST_CASE("pcie-gen3-8gpu: Volta-family GPUs on PCIe Gen3 x16, no NVLink, EDR NICs") {
  ccsim::topo::PresetOptions two;
  two.nodes = 2;
  const ccsim::topo::Topology t = ccsim::topo::make_preset("pcie-gen3-8gpu", two);
  CHECK(t.gpu_arch() == "volta");
  CHECK(t.gpu_count() == 16);
  int pcie = 0, net = 0;
  for (const auto& l : t.links()) {
    CHECK(l.kind != ccsim::topo::LinkKind::nvlink);
    if (l.kind == ccsim::topo::LinkKind::pcie) {
      ++pcie;
      CHECK(l.generation == "3");
    }
    if (l.kind == ccsim::topo::LinkKind::net) {
      ++net;
      CHECK(l.generation == "edr");
    }
  }
  CHECK(pcie > 0);
  CHECK(net > 0);
}

TEST_CASE("a lane into an NVSwitch carries nvswitch_efficiency of what a lane between two GPUs does") {
  // Volta's direct NVLink2 (DGX-1) outruns its first-generation NVSwitch lanes (DGX-2).
  const Model volta = Model::builtin("volta");
  REQUIRE(volta.nvswitch_efficiency() < 1.0);
  auto lane_rate = [&](const Topology& t) {
    const Route r = t.route(0, 1);
    const LinkId l = r.hops.front().links.front();
    return t.effective_bandwidth(l, volta) / t.link(l).lanes;
  };
  const Topology dgx1 = make_preset("dgx1-v100"), dgx2 = make_preset("dgx2-v100");
  REQUIRE(dgx1.device(dgx1.route(0, 1).hops.front().from).kind == DeviceKind::gpu);
  CHECK(dgx1.route(0, 1).hops.size() == 1);  // GPU to GPU
  CHECK(dgx2.route(0, 1).hops.size() == 2);  // up to a switch and down
  CHECK(lane_rate(dgx2) == test::approx(lane_rate(dgx1) * volta.nvswitch_efficiency()));
  // Hopper's figure is read off switched systems: a switched lane keeps all of it.
  CHECK(Model::builtin("hopper").nvswitch_efficiency() == 1.0);
}

TEST_CASE("without PCIe P2P, GPU pairs go through host memory at the receiver's CPU: NVLink stays direct") {
  Topology t = make_preset("pcie-gen4-8gpu");
  // With P2P the two GPUs of a PCIe switch meet under it.
  CHECK(route_names(t, 0, 1) == std::vector<std::string>{"pcie0", "gpu1"});
  CHECK_FALSE(t.route(0, 1).shm);
  t.set_pcie_p2p(false);
  // NCCL diverts the pair through the receiver's local CPU (paths.cc), so the switch's uplink
  // carries the sender's stores up and the receiver's loads down.
  CHECK(route_names(t, 0, 1) == std::vector<std::string>{"pcie0", "cpu0", "pcie0", "gpu1"});
  CHECK(t.route(0, 1).shm);
  CHECK(t.route(0, 1).via_cpu);
  // Across sockets, the receiver's CPU: gpu7's socket.
  CHECK(route_names(t, 0, 7) == std::vector<std::string>{"pcie0", "cpu0", "cpu1", "pcie3", "gpu7"});
  // Copies keep the setting (a move rebuilds the graph).
  const Topology moved = std::move(t);
  CHECK_FALSE(moved.pcie_p2p());

  Topology bridged = make_preset("pcie-gen4-4gpu-nvbridge");
  bridged.set_pcie_p2p(false);
  CHECK_FALSE(bridged.route(0, 1).shm);  // the NVLink bridge
  CHECK(bridged.route(0, 2).shm);
}

TEST_CASE("beyond NCCL_NET_GDR_LEVEL the network stages in host memory at the GPU's CPU: PXN and C2C keep GPUDirect") {
  CHECK(parse_path_level("PHB") == PathLevel::phb);
  CHECK_FALSE(parse_path_level("phb"));
  CHECK_FALSE(parse_path_level("NODE"));

  // Two L40S servers: GPU0 and the NIC card on root ports of socket 0 (PHB), GPU1 on socket 1
  // (SYS); the card's two SR-IOV functions are the NICs NCCL sees, GPU0 on the first, GPU1 on the
  // second.
  Topology t = resolve_topology("l40s-2s-roce", PresetOptions{});
  REQUIRE(t.gpu_count() == 4);
  const DeviceId nic = t.nic_of(0);
  CHECK(t.device(nic).name == "n0-vf0");
  CHECK(t.device(t.nic_of(1)).name == "n0-vf1");
  CHECK(t.net_gdr_level() == PathLevel::pxb);
  CHECK_FALSE(t.gdr(t.gpu(0), nic, true));
  CHECK_FALSE(t.gdr(t.gpu(1), t.nic_of(1), false));
  // GPU1 stores into host memory at its own socket; the NIC reads it across UPI. At the far end
  // the NIC writes socket 0's memory and GPU0 loads from there: that last leg is the host leg.
  const Route staged = t.route(1, 2);
  CHECK(route_names(t, 1, 2) == std::vector<std::string>{"n0-cpu1", "n0-cpu0", "n0-cx7", "n0-vf1", "n0-port", "sw",
                                                         "n1-port", "n1-vf0", "n1-cx7", "n1-cpu0", "n1-gpu0"});
  CHECK(staged.host_leg == 10);
  CHECK_FALSE(staged.via_cpu);  // the GPUs' own host-memory accesses: not P2P through the CPU
  CHECK(staged.latency_class == LatencyClass::net);

  // NCCL_NET_GDR_LEVEL=SYS: the NIC reads and writes the GPUs through the CPUs (P2P through them).
  t.set_net_gdr_level(PathLevel::sys);
  CHECK(t.gdr(t.gpu(1), t.nic_of(1), true));
  const Route direct = t.route(1, 2);
  CHECK(direct.host_leg == SIZE_MAX);
  CHECK(direct.via_cpu);
  t.set_net_gdr_level(PathLevel::loc);  // LOC: never; a move keeps the level
  const Topology moved = std::move(t);
  CHECK(moved.net_gdr_level() == PathLevel::loc);
  CHECK_FALSE(moved.gdr(moved.gpu(0), nic, false));

  // Before Ampere a GPU without NVLink does not let the NIC read it (sends are staged); receives
  // under the shared PCIe switch stay direct.
  PresetOptions two;
  two.nodes = 2;
  const Topology volta = make_preset("pcie-gen3-8gpu", two);
  CHECK_FALSE(volta.gdr(volta.gpu(0), volta.nic_of(0), true));
  CHECK(volta.gdr(volta.gpu(0), volta.nic_of(0), false));
  CHECK(route_names(volta, 0, 8).front() == "n0.pcie0");
  CHECK(route_names(volta, 0, 8)[1] == "n0.cpu0");

  // NVLink machines: a GPU whose kept NIC sits across the CPU hands off to an NVLink peer next to
  // it (PXN); a Grace Hopper reaches the NIC on its own Grace over C2C.
  Topology dgx = make_preset("dgx-h100", two);
  dgx.keep_nics_per_node(4);
  for (std::size_t g = 0; g < 8; ++g) CHECK(dgx.gdr(dgx.gpu(g), dgx.nic_of(g), true));
  const Topology gh = make_preset("gh200-quad", two);
  CHECK(gh.gdr(gh.gpu(2), gh.nic_of(2), false));
  CHECK(gh.route(2, 6).host_leg == SIZE_MAX);
}

TEST_CASE("NCCL_P2P_LEVEL: GPU pairs farther than it go through host memory, NVLink ones too") {
  CHECK(parse_path_level("NVL") == PathLevel::nvl);
  CHECK(parse_path_level("2") == PathLevel::pxb);  // NCCL's old numbering
  Topology pcie = make_preset("pcie-gen4-8gpu");  // 2 GPUs per PCIe switch, 2 switches per socket
  CHECK(pcie.p2p_class(0, 1) == PathLevel::pix);
  CHECK(pcie.p2p_class(0, 2) == PathLevel::phb);
  CHECK(pcie.p2p_class(0, 7) == PathLevel::sys);
  pcie.set_p2p_level(PathLevel::pxb);  // what NCCL sets on Intel hosts
  CHECK_FALSE(pcie.route(0, 1).shm);
  CHECK(pcie.route(0, 2).shm);
  CHECK(route_names(pcie, 0, 2) == std::vector<std::string>{"pcie0", "cpu0", "pcie1", "gpu2"});
  pcie.set_p2p_level(PathLevel::phb);
  CHECK_FALSE(pcie.route(0, 2).shm);
  CHECK(pcie.route(0, 7).shm);

  Topology dgx = make_preset("dgx-h100");
  dgx.set_p2p_level(PathLevel::loc);  // NCCL_P2P_DISABLE=1: even NVLink pairs use SHM
  CHECK(dgx.route(0, 1).shm);
  CHECK(path_class(dgx, dgx.gpu(0), dgx.gpu(1)) == "NV18");  // nvidia-smi still sees the NVLink
  dgx.set_p2p_level(PathLevel::nvl);
  CHECK_FALSE(dgx.route(0, 1).shm);
  const Topology moved = std::move(dgx);
  CHECK(moved.p2p_level() == PathLevel::nvl);
}
