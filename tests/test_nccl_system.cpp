// What ccsim tells NCCL's cost model about a machine, and what the model then picks.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include "sim/error.hpp"
#include "sim/nccl_system.hpp"
#include "sim/topology/json_io.hpp"
#include "sim/topology/presets.hpp"
#include "sim/topology/rings.hpp"
#include "sim/topology/paths.hpp"

#include <map>
#include <tuple>
#include <string>

#include <nlohmann/json.hpp>

using namespace ccsim;

TEST_CASE("a DGX H100 looks to NCCL like 18 NVLink4 lanes per GPU and NVLS") {
  const auto t = topo::make_preset("dgx-h100");
  const nccl::System s = nccl::describe(t, 8);
  CHECK(s.arch == nccl::Arch::hopper);
  CHECK(s.nodes == 1);
  CHECK(s.nvls);
  CHECK(s.ll128_enabled);
  CHECK_FALSE(s.collnet);
  // 18 x 20.6 = 370.8 GB/s; the SM90 ladder's 60 fits 6 times, duplicated into 12 x 30.
  CHECK(s.ring.channels == 12);
  CHECK(s.ring.bw_intra == test::approx(30));
  CHECK(s.nvls_graph.channels == 16);
}

TEST_CASE("NCCL's choice on one H100 node: LL ring for tiny messages, NVLS for large ones") {
  const auto t = topo::make_preset("dgx-h100");
  const nccl::System s = nccl::describe(t, 8);
  CollectiveSpec spec;
  spec.kind = CollectiveKind::all_reduce;
  spec.nranks = 8;
  spec.count = 2;
  nccl::Choice c = nccl::choose(s, spec);
  CHECK(c.algorithm == "ring");
  CHECK(c.protocol == Protocol::ll);
  CHECK(c.channels == 1);  // 8 bytes keep no more than one channel busy
  REQUIRE(c.estimate_us.has_value());
  CHECK(*c.estimate_us == test::approx(15.0).epsilon(0.01));  // 6.6 + 14 x 0.6 (nccl-model.md §3.7)
  spec.count = Bytes{1} << 28;
  c = nccl::choose(s, spec);
  CHECK(c.algorithm == "nvls");
  CHECK(c.protocol == Protocol::simple);
  // NVLS only where NCCL has an NVLS kernel for the op and type (ncclNvlsSupported): not prod,
  // not avg, not max of floats, no 8-bit types; max of half is fine, and all_gather always.
  for (auto [op, type, nvls] : {std::tuple{ReduceOp::prod, DataType::fp32, false}, {ReduceOp::avg, DataType::fp32, false},
                                {ReduceOp::max, DataType::fp32, false}, {ReduceOp::sum, DataType::int8, false},
                                {ReduceOp::max, DataType::fp16, true}, {ReduceOp::min, DataType::int32, true},
                                {ReduceOp::sum, DataType::fp64, true}}) {
    INFO(std::string(to_string(op)), " ", std::string(to_string(type)));
    spec.op = op;
    spec.type = type;
    CHECK(nccl::nvls_supported(spec) == nvls);
    CHECK((nccl::choose(s, spec).algorithm == "nvls") == nvls);
  }
  spec.kind = CollectiveKind::all_gather;
  CHECK(nccl::nvls_supported(spec));  // int8 from the last case: NCCL copies bytes
  // CollNet likewise by its plugin's ops: avg as a sum, no prod.
  spec.kind = CollectiveKind::all_reduce;
  spec.op = ReduceOp::avg;
  CHECK(nccl::collnet_supported(spec));
  spec.op = ReduceOp::prod;
  CHECK_FALSE(nccl::collnet_supported(spec));
  nccl::System sharp = s;
  sharp.collnet = true;
  CHECK_FALSE(nccl::for_call(sharp, spec).collnet);
  // PAT: NCCL has no reduce_scatter kernel for it that scales, so avg leaves it out there only.
  nccl::System pat = s;
  pat.pat_allowed = true;
  spec.op = ReduceOp::avg;
  spec.kind = CollectiveKind::reduce_scatter;
  CHECK_FALSE(nccl::for_call(pat, spec).pat_allowed);
  spec.op = ReduceOp::sum;
  CHECK(nccl::for_call(pat, spec).pat_allowed);
  spec.op = ReduceOp::avg;
  spec.kind = CollectiveKind::all_gather;
  CHECK(nccl::for_call(pat, spec).pat_allowed);
}

TEST_CASE("across nodes the rings leave through the NICs and tree becomes possible") {
  topo::PresetOptions o;
  o.nodes = 2;
  const auto t = topo::make_preset("dgx-h100", o);
  const nccl::System s = nccl::describe(t, 16);
  CHECK(s.nodes == 2);
  // 8 NDR NICs at 50 GB/s: one ring per NIC at the inter ladder's 45 (8 x 48 would exceed 370.8).
  CHECK(s.ring.channels == 8);
  CHECK(s.ring.bw_inter == test::approx(45));
  CollectiveSpec spec;
  spec.kind = CollectiveKind::all_reduce;
  spec.nranks = 16;
  spec.count = 2;
  CHECK(nccl::choose(s, spec).algorithm == "tree");
}

TEST_CASE("a DGX-1's rings run over all six NVLink lanes of each V100, as NCCL's search finds them") {
  // Hybrid cube-mesh: GPU 3 and 4 are not NVLink neighbours, so rank order would cross PCIe; the
  // search follows NVLink. 6 lanes x 20 GB/s = 120: the ladder's 40 fits 3 times, duplicated into
  // 6 x 20, one ring per lane (NV2 links carry two, NV1 links one).
  const auto t = topo::make_preset("dgx1-v100");
  const nccl::System s = nccl::describe(t, 8);
  CHECK(s.ring.type_intra == nccl::PathType::nvlink);
  CHECK(s.ring.channels == 6);
  CHECK(s.ring.bw_intra == test::approx(20));
  std::map<std::pair<int, int>, int> rings_on;  // directed GPU pair -> rings over it
  for (const auto& ring : topo::rings(t, 8, 6))
    for (std::size_t i = 0; i < ring.size(); ++i) ++rings_on[{ring[i], ring[(i + 1) % ring.size()]}];
  for (const auto& [pair, n] : rings_on) {
    const int lanes = topo::path_class(t, t.gpu(static_cast<std::size_t>(pair.first)), t.gpu(static_cast<std::size_t>(pair.second))) == "NV2" ? 2 : 1;
    CHECK(n == lanes);
  }
  CHECK(rings_on.size() == 8 * 4);  // every GPU's 4 NVLink neighbours, both directions
}

TEST_CASE("a PCIe box gets neither LL128 nor NVLS, and alltoall is point-to-point") {
  const auto t = topo::make_preset("pcie-gen4-8gpu");
  const nccl::System s = nccl::describe(t, 8);
  CHECK(s.ring.type_intra == nccl::PathType::pci);
  CHECK_FALSE(s.ll128_enabled);
  CHECK_FALSE(s.nvls);
  CollectiveSpec spec;
  spec.kind = CollectiveKind::alltoall;
  spec.nranks = 8;
  spec.count = 1 << 20;
  const nccl::Choice c = nccl::choose(s, spec);
  CHECK(c.algorithm == "direct");
  CHECK_FALSE(c.estimate_us.has_value());
}

TEST_CASE("NCCL_PROTO naming LL128 runs it past the rule that keeps it off by default, an exclusion does not") {
  const auto t = topo::make_preset("pcie-gen5-8gpu");
  CollectiveSpec spec;
  spec.kind = CollectiveKind::all_reduce;
  spec.nranks = 8;
  spec.count = (1 << 20) / 4;  // 1 MiB of floats: LL128's range once allowed
  auto under = [&](const char* proto) {
    nccl::EnvSettings set;
    CHECK(nccl::set_env_setting(set, "NCCL_PROTO", proto));
    return set;
  };
  CHECK(nccl::ll128_requested(under("LL128"), nccl::Func::all_reduce));
  CHECK(nccl::ll128_requested(under("ll,ll128,simple"), nccl::Func::all_reduce));
  CHECK_FALSE(nccl::ll128_requested(under("^LL"), nccl::Func::all_reduce));  // left at its default
  CHECK_FALSE(nccl::ll128_requested(under("allgather:LL128"), nccl::Func::all_reduce));
  CHECK(nccl::ll128_requested(under("simple;allreduce:ll128"), nccl::Func::all_reduce));
  CHECK_FALSE(nccl::ll128_requested({}, nccl::Func::all_reduce));
  CHECK(nccl::choose(nccl::describe(t, 8, 0, under("LL128")), spec).protocol == Protocol::ll128);
  CHECK(nccl::choose(nccl::describe(t, 8, 0, under("LL,LL128,Simple")), spec).protocol == Protocol::ll128);
  CHECK(nccl::choose(nccl::describe(t, 8, 0, under("^LL")), spec).protocol != Protocol::ll128);
  CHECK(nccl::choose(nccl::describe(t, 8), spec).protocol != Protocol::ll128);
}

TEST_CASE("NCCL charges P2P through an Intel CPU x6/5 and through an AMD one nothing") {
  // Two GPUs on one socket of a two-socket host: UPI makes it Intel, xGMI AMD (§3.1).
  auto host = [](const char* cpu_link) {
    return topo::topology_from_json(nlohmann::json::parse(std::string(R"({"name": "two-gpus", "devices": [
        {"name": "gpu0", "kind": "gpu", "arch": "hopper"}, {"name": "gpu1", "kind": "gpu", "arch": "hopper"},
        {"name": "cpu0", "kind": "cpu"}, {"name": "cpu1", "kind": "cpu"}],
      "links": [{"from": "gpu0", "to": "cpu0", "kind": "pcie", "generation": "4", "lanes": 16},
                {"from": "gpu1", "to": "cpu0", "kind": "pcie", "generation": "4", "lanes": 16},
                {"from": "cpu0", "to": "cpu1", "kind": "cpu", "generation": ")") + cpu_link + R"("}]})"), "test");
  };
  const auto intel = nccl::describe(host("upi-spr"), 2);
  const auto amd = nccl::describe(host("xgmi"), 2);
  CHECK_FALSE(intel.amd_cpu);
  CHECK(amd.amd_cpu);
  // PCIe Gen4 x16 is 24 GB/s to NCCL (§5.3), a rung of Hopper's ladder; 24 / 1.2 = 20 is the next.
  CHECK(amd.ring.bw_intra == test::approx(24));
  CHECK(intel.ring.bw_intra == test::approx(20));
}

TEST_CASE("LL128 crosses nodes only where every GPU's path to its NIC is PXB or nearer, or PXN/P2C from Hopper") {
  // Two nodes of two NVLink-joined GPUs, one NIC each. `nic_under_switch`: the NIC shares a PCIe
  // switch with gpu0 (PIX), so gpu1 (on the CPU) reaches it through gpu0 (PXN); otherwise the NIC
  // sits on the CPU beside both GPUs (PHB).
  auto cluster = [](const char* arch, bool nic_under_switch) {
    nlohmann::json j = {{"name", "two-nodes"}, {"devices", nlohmann::json::array()}, {"links", nlohmann::json::array()}};
    auto link = [&](const std::string& a, const std::string& b, const char* kind, const char* gen, int lanes) {
      j["links"].push_back({{"from", a}, {"to", b}, {"kind", kind}, {"generation", gen}, {"lanes", lanes}});
    };
    for (int n = 0; n < 2; ++n) {
      const std::string k = std::to_string(n);
      for (const char* g : {"gpu0", "gpu1"}) j["devices"].push_back({{"name", g + k}, {"kind", "gpu"}, {"arch", arch}, {"node", n}});
      j["devices"].push_back({{"name", "cpu" + k}, {"kind", "cpu"}, {"node", n}});
      j["devices"].push_back({{"name", "nic" + k}, {"kind", "nic"}, {"node", n}});
      link("gpu0" + k, "gpu1" + k, "nvlink", "3", 4);
      link("gpu1" + k, "cpu" + k, "pcie", "4", 16);
      if (nic_under_switch) {
        j["devices"].push_back({{"name", "sw" + k}, {"kind", "pcie_switch"}, {"node", n}});
        link("gpu0" + k, "sw" + k, "pcie", "4", 16);
        link("nic" + k, "sw" + k, "pcie", "4", 16);
        link("sw" + k, "cpu" + k, "pcie", "4", 16);
      } else {
        link("gpu0" + k, "cpu" + k, "pcie", "4", 16);
        link("nic" + k, "cpu" + k, "pcie", "4", 16);
      }
      link("nic" + k, "leaf", "net", "hdr", 4);
    }
    j["devices"].push_back({{"name", "leaf"}, {"kind", "net_switch"}});
    return topo::topology_from_json(j, "test");
  };
  using NicPath = topo::Topology::NicPath;
  const auto far = cluster("ampere", false);
  CHECK(far.nic_path(0) == NicPath::phb);
  CHECK(far.nic_path(1) == NicPath::phb);
  CHECK_FALSE(nccl::describe(far, 4).ll128_enabled);
  CHECK(nccl::describe(far, 2).ll128_enabled);  // one node: no NIC on its rings
  CHECK_FALSE(nccl::describe(cluster("hopper", false), 4).ll128_enabled);
  const auto relayed = cluster("ampere", true);
  CHECK(relayed.nic_path(0) == NicPath::pix);
  CHECK(relayed.nic_path(1) == NicPath::pxn);
  CHECK_FALSE(nccl::describe(relayed, 4).ll128_enabled);
  CHECK(nccl::describe(cluster("hopper", true), 4).ll128_enabled);
  // A GH200's NIC hangs off its Grace, which its GPU reaches by NVLink-C2C (P2C).
  topo::PresetOptions two;
  two.nodes = 2;
  const auto gh200 = topo::make_preset("gh200-quad", two);
  CHECK(gh200.nic_path(0) == NicPath::p2c);
  CHECK(nccl::describe(gh200, 8).ll128_enabled);
  // NCCL_LL128_C2C=0 keeps Hopper to PXB as well: no P2C, no PXN.
  nccl::EnvSettings no_c2c;
  CHECK(nccl::set_env_setting(no_c2c, "NCCL_LL128_C2C", "0"));
  CHECK_FALSE(nccl::describe(gh200, 8, 0, no_c2c).ll128_enabled);
  CHECK_FALSE(nccl::describe(cluster("hopper", true), 4, 0, no_c2c).ll128_enabled);
  CHECK(nccl::describe(topo::make_preset("dgx-h100", two), 16, 0, no_c2c).ll128_enabled);  // PIX
  // DGX A100: GPU and NIC share a PCIe switch pair (PXB).
  CHECK(nccl::describe(topo::make_preset("dgx-a100", two), 16).ll128_enabled);
}

TEST_CASE("NCCL launches fewer channels for small messages") {
  const auto t = topo::make_preset("dgx-h100");
  const nccl::System s = nccl::describe(t, 8);
  // Simple: 64 bytes per thread of 512 threads per channel.
  CHECK(nccl::launched_channels(s, nccl::Algo::ring, Protocol::simple, 64 * 512 * 3, 8) == 3);
  // Its search finds 12 rings; NCCL runs each on two blocks.
  CHECK(nccl::collective_channels(s) == 24);
  // Two such nodes: "16 coll channels" in NCCL's init log of two p5.48xlarge.
  topo::PresetOptions two;
  two.nodes = 2;
  CHECK(nccl::collective_channels(nccl::describe(topo::make_preset("dgx-h100", two), 16)) == 16);
  CHECK(nccl::launched_channels(s, nccl::Algo::ring, Protocol::simple, Bytes{1} << 30, 8) == 24);
  CHECK(nccl::launched_channels(s, nccl::Algo::ring, Protocol::simple, 8, 8) == 1);
}

TEST_CASE("NCCL's channel settings: the maximum first, then copies up to the minimum, NVLS within the CTA limits") {
  const auto t = topo::make_preset("dgx-h100");
  nccl::EnvSettings set;
  CHECK(nccl::set_env_setting(set, "NCCL_MAX_NCHANNELS", "8"));
  nccl::System s = nccl::describe(t, 8, 0, set);
  CHECK(nccl::collective_channels(s) == 8);
  CHECK(nccl::launched_channels(s, nccl::Algo::ring, Protocol::simple, Bytes{1} << 30, 8) == 8);
  // Point-to-point channels follow the collective ones (p2pnChannels).
  CHECK(s.p2p_channels == 8);
  // The cost model's graphs stay as the search found them: NCCL picks as it would.
  CHECK(s.ring.channels == nccl::describe(t, 8).ring.channels);
  // NVLS keeps its 16 blocks: only NCCL_MAX_CTAS and NCCL_MIN_CTAS (and its own setting) bound them.
  CHECK(nccl::launched_channels(s, nccl::Algo::nvls, Protocol::simple, Bytes{1} << 30, 8) == 16);
  CHECK(nccl::set_env_setting(set, "NCCL_MAX_CTAS", "4"));
  s = nccl::describe(t, 8, 0, set);
  CHECK(nccl::collective_channels(s) == 4);
  CHECK(nccl::launched_channels(s, nccl::Algo::nvls, Protocol::simple, Bytes{1} << 30, 8) == 4);
  // A minimum above what the search found duplicates channels, up to MAXCHANNELS.
  nccl::EnvSettings more;
  CHECK(nccl::set_env_setting(more, "NCCL_MIN_NRINGS", "40"));
  CHECK(nccl::env_setting(more, "NCCL_MIN_NCHANNELS") == "40");
  CHECK(nccl::collective_channels(nccl::describe(t, 8, 0, more)) == 40);
  CHECK(nccl::set_env_setting(more, "NCCL_NVLS_NCHANNELS", "32"));
  CHECK(nccl::launched_channels(nccl::describe(t, 8, 0, more), nccl::Algo::nvls, Protocol::simple, 1 << 20, 8) == 32);
  CHECK(nccl::to_string(more) == "NCCL_MIN_NCHANNELS=40 NCCL_NVLS_NCHANNELS=32");
  // A network peer's channels: NCCL_NCHANNELS_PER_NET_PEER replaces 2.20's halving (NVIDIA/nccl
  // issue 1272: 24.2 GB/s again with 4 on 8 GH200 nodes).
  topo::PresetOptions o;
  o.nodes = 8;
  nccl::EnvSettings net;
  CHECK(nccl::set_env_setting(net, "NCCL_NCHANNELS_PER_NET_PEER", "4"));
  CHECK(nccl::describe(topo::make_preset("gh200-quad", o), 32, 20, net).p2p_channels_per_peer == 4);
  nccl::EnvSettings p2p;
  CHECK(nccl::set_env_setting(p2p, "NCCL_MAX_P2P_NCHANNELS", "4"));
  CHECK(nccl::describe(t, 8, 0, p2p).p2p_channels == 4);
  CHECK(nccl::describe(t, 8, 0, p2p).p2p_channels_per_peer <= 4);
  // NCCL_NVLS_ENABLE=0 takes NVLS and NVLS tree away from the cost model (nvlsSupport 0); 1 and 2
  // leave the machine's.
  nccl::EnvSettings no_nvls;
  CHECK_FALSE(nccl::env_setting(no_nvls, "NCCL_NVLS_ENABLE"));
  CHECK(nccl::set_env_setting(no_nvls, "NCCL_NVLS_ENABLE", "0"));
  CHECK(nccl::env_setting(no_nvls, "NCCL_NVLS_ENABLE") == "0");
  CHECK(nccl::describe(t, 8).nvls);
  CHECK_FALSE(nccl::describe(t, 8, 0, no_nvls).nvls);
  CHECK(nccl::to_string(no_nvls) == "NCCL_NVLS_ENABLE=0");
  CHECK(nccl::set_env_setting(no_nvls, "NCCL_NVLS_ENABLE", "2"));
  CHECK(nccl::describe(t, 8, 0, no_nvls).nvls);
  CHECK_THROWS_AS(nccl::set_env_setting(no_nvls, "NCCL_NVLS_ENABLE", "3"), Error);
  // Other names are not settings ccsim follows; values must be whole channel counts.
  CHECK_FALSE(nccl::set_env_setting(set, "NCCL_NTHREADS", "256"));
  // Byte counts: the Simple FIFO and the point-to-point steps.
  CHECK(nccl::set_env_setting(set, "NCCL_BUFFSIZE", "8388608"));
  CHECK(nccl::env_setting(set, "NCCL_BUFFSIZE") == "8388608");
  CHECK_THROWS_AS(nccl::set_env_setting(set, "NCCL_BUFFSIZE", "8M"), Error);
  CHECK_THROWS_AS(nccl::set_env_setting(set, "NCCL_P2P_NET_CHUNKSIZE", "1024"), Error);
  CHECK_THROWS_AS(nccl::set_env_setting(set, "NCCL_MAX_NCHANNELS", "0"), Error);
  CHECK(nccl::set_env_setting(set, "NCCL_MIN_NCHANNELS", "0"));  // NCCL's default: no minimum
  CHECK(nccl::env_setting(set, "NCCL_MIN_NCHANNELS") == std::nullopt);  // 0 is the unset value
  CHECK_THROWS_AS(nccl::set_env_setting(set, "NCCL_MAX_NCHANNELS", "65"), Error);
  CHECK_THROWS_AS(nccl::set_env_setting(set, "NCCL_MAX_NCHANNELS", "8x"), Error);
}

TEST_CASE("NCCL_ALGO and NCCL_PROTO as NCCL's parseList reads them: lists, exclusions, per collective") {
  using nccl::Algo;
  using nccl::Func;
  nccl::EnvSettings set;
  CHECK_FALSE(nccl::enabled_algos(set, Func::all_reduce));  // unset: NCCL's default, all
  CHECK(nccl::set_env_setting(set, "NCCL_ALGO", "Ring,tree"));  // any case
  CHECK(nccl::enabled_algos(set, Func::all_reduce) == std::vector<Algo>{Algo::tree, Algo::ring});
  CHECK(nccl::enabled_algos(set, Func::broadcast) == std::vector<Algo>{Algo::tree, Algo::ring});
  CHECK(nccl::set_env_setting(set, "NCCL_ALGO", "^NVLS,NVLSTree"));
  CHECK(nccl::enabled_algos(set, Func::all_gather) ==
        std::vector<Algo>{Algo::tree, Algo::ring, Algo::collnet_direct, Algo::collnet_chain, Algo::pat});
  // NCCL 2.24+: the first entry for all, later ones per function; the last that speaks wins.
  CHECK(nccl::set_env_setting(set, "NCCL_ALGO", "ring;allreduce:tree,nvls;AllReduce:^tree"));
  CHECK(nccl::enabled_algos(set, Func::broadcast) == std::vector<Algo>{Algo::ring});
  CHECK(nccl::enabled_algos(set, Func::all_reduce) ==
        std::vector<Algo>{Algo::ring, Algo::collnet_direct, Algo::collnet_chain, Algo::nvls, Algo::nvls_tree, Algo::pat});
  // Only per function: the others keep NCCL's default.
  CHECK(nccl::set_env_setting(set, "NCCL_PROTO", "allreduce:^LL128"));
  CHECK_FALSE(nccl::enabled_protocols(set, Func::reduce_scatter));
  CHECK(nccl::enabled_protocols(set, Func::all_reduce) == std::vector<Protocol>{Protocol::ll, Protocol::simple});
  CHECK(nccl::to_string(set) == "NCCL_ALGO=ring;allreduce:tree,nvls;AllReduce:^tree NCCL_PROTO=allreduce:^LL128");
  // What NCCL refuses is refused where it is given, and leaves the setting as it was.
  CHECK_THROWS_WITH_AS(nccl::set_env_setting(set, "NCCL_ALGO", "ring,hypercube"),
                       doctest::Contains("unknown name \"hypercube\""), Error);
  CHECK_THROWS_WITH_AS(nccl::set_env_setting(set, "NCCL_ALGO", "alltoall:ring"),
                       doctest::Contains("unknown function \"alltoall\""), Error);
  CHECK_THROWS_WITH_AS(nccl::set_env_setting(set, "NCCL_PROTO", "allreduce:LL;Simple"),
                       doctest::Contains("every entry but the first"), Error);
  CHECK_THROWS_AS(nccl::set_env_setting(set, "NCCL_PROTO", "^"), Error);
  CHECK_THROWS_AS(nccl::set_env_setting(set, "NCCL_PROTO", ""), Error);
  CHECK(nccl::env_setting(set, "NCCL_PROTO") == "allreduce:^LL128");
  // The command's settings over the log's: a list replaces a list.
  nccl::EnvSettings log;
  CHECK(nccl::set_env_setting(log, "NCCL_PROTO", "Simple"));
  CHECK(nccl::set_env_setting(log, "NCCL_ALGO", "Tree"));
  nccl::EnvSettings command;
  CHECK(nccl::set_env_setting(command, "NCCL_PROTO", "LL"));
  nccl::overlay_env_settings(log, command);
  CHECK(nccl::to_string(log) == "NCCL_ALGO=Tree NCCL_PROTO=LL");
}

TEST_CASE("chunks as NCCL sizes them: a step for non-ring Simple, smaller NVLS, Tree LL128 and CollNet chunks for small calls") {
  using nccl::Algo;
  using nccl::Func;
  constexpr Bytes K = 1024, M = 1024 * 1024;
  const nccl::System one = nccl::describe(topo::make_preset("dgx-h100"), 8);
  topo::PresetOptions two_nodes;
  two_nodes.nodes = 2;
  const nccl::System two = nccl::describe(topo::make_preset("dgx-h100", two_nodes), 16);
  const Func ar = Func::all_reduce;
  // Ring Simple keeps CHUNKSTEPS steps; every other algorithm moves one step with Simple.
  CHECK(nccl::chunk_bytes(one, ar, Algo::ring, Protocol::simple, 64 * M, 16, 2 * M) == 2 * M);
  CHECK(nccl::chunk_bytes(two, ar, Algo::tree, Protocol::simple, 64 * M, 16, 2 * M) == 512 * K);
  // NVLS on 8 GPUs and 16 channels: 128 chunks run at once.
  CHECK(nccl::chunk_bytes(one, ar, Algo::nvls, Protocol::simple, 2 * M, 16, 2 * M) == 16 * K);
  CHECK(nccl::chunk_bytes(one, ar, Algo::nvls, Protocol::simple, 8 * M, 16, 2 * M) == 32 * K);
  CHECK(nccl::chunk_bytes(one, ar, Algo::nvls, Protocol::simple, 64 * M, 16, 2 * M) == 64 * K);
  CHECK(nccl::chunk_bytes(one, ar, Algo::nvls, Protocol::simple, 1024 * M, 16, 2 * M) == 128 * K);
  CHECK(nccl::chunk_bytes(two, ar, Algo::nvls_tree, Protocol::simple, 2 * M, 16, 2 * M) == 32 * K);
  CHECK(nccl::chunk_bytes(two, ar, Algo::nvls_tree, Protocol::simple, 16 * M, 16, 2 * M) == 64 * K);
  CHECK(nccl::chunk_bytes(two, ar, Algo::nvls_tree, Protocol::simple, 128 * M, 16, 2 * M) == 128 * K);
  // NVLS across nodes (with SHARP) keeps 128 KiB chunks where NCCL's model rates it at 150 GB/s or
  // more, and moves 32 KiB ones where it is slower.
  topo::PresetOptions sharp_nodes = two_nodes;
  sharp_nodes.sharp = true;
  nccl::System sharp = nccl::describe(topo::make_preset("dgx-h100", sharp_nodes), 16);
  CHECK(nccl::chunk_bytes(sharp, ar, Algo::nvls, Protocol::simple, 1024 * M, 16, 2 * M) == 128 * K);
  sharp.nvls_graph.bw_intra = sharp.nvls_graph.bw_inter = 2;
  CHECK(nccl::chunk_bytes(sharp, ar, Algo::nvls, Protocol::simple, 1024 * M, 16, 2 * M) == 32 * K);
  // Tree LL128 across 2 nodes of 8: 1 + log2(2) + 0.8 = 2.8 steps.
  CHECK(nccl::chunk_bytes(two, ar, Algo::tree, Protocol::ll128, 1 * M, 8, 576000) == 18000);
  CHECK(nccl::chunk_bytes(two, ar, Algo::tree, Protocol::ll128, 1024 * M, 8, 576000) == 576000);
  // PAT all_gather: the chunk times channels times 32 must fit the call.
  CHECK(nccl::chunk_bytes(two, Func::all_gather, Algo::pat, Protocol::simple, 1 * M, 1, 2 * M) == 64 * K);
  // CollNet chain (enqueue.cc calcCollChunking): at most 256 KiB, halved while each of 16 channels
  // gets fewer than 64, 8 and 1 chunks per GPU of the chain (8 a node).
  CHECK(nccl::chunk_bytes(two, ar, Algo::collnet_chain, Protocol::simple, 4096 * M, 16, 2 * M) == 256 * K);
  CHECK(nccl::chunk_bytes(two, ar, Algo::collnet_chain, Protocol::simple, 1024 * M, 16, 2 * M) == 128 * K);
  CHECK(nccl::chunk_bytes(two, ar, Algo::collnet_chain, Protocol::simple, 64 * M, 16, 2 * M) == 64 * K);
  CHECK(nccl::chunk_bytes(two, ar, Algo::collnet_chain, Protocol::simple, 4 * M, 16, 2 * M) == 32 * K);
  // CollNet direct: a step, halved while each of 16 channels x 8 heads gets fewer than 128, 16
  // and 16 chunks (depth 2).
  CHECK(nccl::chunk_bytes(two, ar, Algo::collnet_direct, Protocol::simple, 16384 * M, 16, 2 * M) == 512 * K);
  CHECK(nccl::chunk_bytes(two, ar, Algo::collnet_direct, Protocol::simple, 1024 * M, 16, 2 * M) == 128 * K);
  CHECK(nccl::chunk_bytes(two, ar, Algo::collnet_direct, Protocol::simple, 200 * M, 16, 2 * M) == 64 * K);
  CHECK(nccl::chunk_bytes(two, ar, Algo::collnet_direct, Protocol::simple, 64 * M, 16, 2 * M) == 32 * K);
}

TEST_CASE("on two nodes NCCL's search lets a tree's chain inside a node outrun its NICs (pass 2)") {
  // 4 HDR NICs for 8 A100s: each ring leaves through one NIC at 24 GB/s. A tree sends each byte
  // across nodes once where a ring sends it 2(N-1)/N times, so the search raises the tree's intra-
  // node speed up to twice the inter-node one (48: 4 x 48 still fits NV12's 240 GB/s), and
  // duplicates it; the cost model reads that speed on up to 2 nodes.
  topo::PresetOptions o;
  o.nodes = 2;
  auto t = topo::make_preset("dgx-a100", o);
  t.keep_nics_per_node(4);
  const nccl::System s = nccl::describe(t, 16);
  CHECK(s.ring.channels == 4);
  CHECK(s.ring.bw_intra == test::approx(24));
  CHECK(s.tree.bw_inter * s.tree.channels == test::approx(4 * 24));
  CHECK(s.tree.bw_intra * s.tree.channels == test::approx(4 * 48));
  // A ring all_reduce puts 1.875 S through the NICs, a tree S: NCCL runs the tree for large calls.
  CollectiveSpec spec;
  spec.kind = CollectiveKind::all_reduce;
  spec.nranks = 16;
  spec.count = Bytes{1} << 28;
  CHECK(nccl::choose(s, spec).algorithm == "tree");
  // An NDR NIC per H100: the rings already fill the node's NVLink (8 x 45 of 370.8), so the tree
  // gains nothing.
  const nccl::System h = nccl::describe(topo::make_preset("dgx-h100", o), 16);
  CHECK(h.tree.bw_intra == test::approx(h.ring.bw_intra));
  CHECK(h.tree.channels == h.ring.channels);
}

TEST_CASE("an EFA network: the plugin forces Simple on first-generation EFA and reports 75 us to NCCL's model") {
  topo::PresetOptions o;
  o.nodes = 2;
  o.nic = "efa100";
  auto t = topo::make_preset("dgx-a100", o);
  t.keep_nics_per_node(4);  // p4de.24xlarge: 4 x 100 Gb/s
  const nccl::System s = nccl::describe(t, 16);
  CHECK_FALSE(s.net_allows_ll);
  CHECK_FALSE(s.net_allows_ll128);
  CHECK(s.ring.latency_inter_us == test::approx(75));
  CHECK(s.tree.latency_inter_us == test::approx(75));
  CollectiveSpec spec;
  spec.kind = CollectiveKind::all_reduce;
  spec.nranks = 16;
  spec.count = 2;
  const nccl::Choice c = nccl::choose(s, spec);
  CHECK(c.algorithm == "tree");
  CHECK(c.protocol == Protocol::simple);
  // Tree Simple: 8.4 + 2 x (7 NVLink hops x 4.0 + 1 level x (14 + 2 x 75)), the plugin's latency
  // counted twice for Simple (nccl-model.md §3.5).
  REQUIRE(c.estimate_us.has_value());
  CHECK(*c.estimate_us == test::approx(8.4 + 2 * (7 * 4.0 + 14 + 2 * 75)));
  // One node never touches the network: its protocols stay open.
  CHECK(nccl::describe(topo::make_preset("dgx-a100", o), 8).net_allows_ll);
  // p5's EFA v2 (aws-ofi-nccl's RDMA protocol) keeps LL and LL128.
  o.nic = "efa400";
  const nccl::System p5 = nccl::describe(topo::make_preset("dgx-h100", o), 16);
  CHECK(p5.net_allows_ll);
  CHECK(p5.net_allows_ll128);
  CHECK(p5.nvls_graph.latency_inter_us == test::approx(75));
  // NCCL's own verbs transport adds nothing.
  o.nic = "ndr";
  CHECK(nccl::describe(topo::make_preset("dgx-h100", o), 16).ring.latency_inter_us == 0);
}

TEST_CASE("a point-to-point operation spreads over NCCL's p2p channels by its size") {
  // One DGX A100: 12 NVLink3 lanes of 20 GB/s to every peer allow 24 channels each, rounded up to
  // 32, the p2p channel count too; 8 ranks leave each of them 4 channels (4 x 8 = 32).
  const nccl::System a100 = nccl::describe(topo::make_preset("dgx-a100"), 8);
  CHECK(a100.p2p_channels == 32);
  CHECK(a100.p2p_channels_per_peer == 32);
  CHECK(a100.p2p_chunk_bytes == (512u << 10));
  CHECK(nccl::p2p_operation_channels(a100, 0) == 1);
  CHECK(nccl::p2p_operation_channels(a100, 64 << 10) == 1);   // parts of at least 64 KiB (a step / 8)
  CHECK(nccl::p2p_operation_channels(a100, 256 << 10) == 4);
  CHECK(nccl::p2p_operation_channels(a100, 64 << 20) == 4);   // 16 MiB parts: 32 steps
  CHECK(nccl::p2p_operation_channels(a100, 128 << 20) == 8);  // doubled while a part exceeds that
  CHECK(nccl::p2p_operation_channels(a100, 256 << 20) == 16);
  CHECK(nccl::p2p_operation_channels(a100, std::uint64_t{4} << 30) == 32);  // at most the per-peer limit
  // NCCL 2.18 and before stopped at 16: 32 channels on each of the 8 ranks' operations would put 8
  // on a channel, past 4.
  const nccl::System a100_218 = nccl::describe(topo::make_preset("dgx-a100"), 8, 18);
  CHECK(nccl::p2p_operation_channels(a100_218, 256 << 20) == 16);
  CHECK(nccl::p2p_operation_channels(a100_218, std::uint64_t{4} << 30) == 16);
  const nccl::System a100_219 = nccl::describe(topo::make_preset("dgx-a100"), 8, 19);
  CHECK(nccl::p2p_operation_channels(a100_219, std::uint64_t{4} << 30) == 32);
  // Two B200 nodes under NCCL 2.20-2.28: a network peer allows 2 channels, which then bound every
  // peer, NVLink ones too; 16 ranks on 16 p2p channels start from one each, parts of at most a
  // 128 KiB step.
  topo::PresetOptions o;
  o.nodes = 2;
  const nccl::System b200 = nccl::describe(topo::make_preset("hgx-b200", o), 16, 28);
  CHECK(b200.p2p_channels == 16);
  CHECK(b200.p2p_channels_per_peer == 2);
  CHECK(b200.p2p_chunk_bytes == (128u << 10));
  // NCCL_P2P_NET_CHUNKSIZE sets a step across nodes, NCCL_P2P_NVL_CHUNKSIZE on an all-NVLink node;
  // each leaves the other's machines alone.
  nccl::EnvSettings chunks;
  nccl::set_env_setting(chunks, "NCCL_P2P_NET_CHUNKSIZE", "524288");
  nccl::set_env_setting(chunks, "NCCL_P2P_NVL_CHUNKSIZE", "1048576");
  CHECK(nccl::describe(topo::make_preset("hgx-b200", o), 16, 28, chunks).p2p_chunk_bytes == (512u << 10));
  CHECK(nccl::describe(topo::make_preset("dgx-a100"), 8, 0, chunks).p2p_chunk_bytes == (1u << 20));
  nccl::set_env_setting(chunks, "NCCL_P2P_PCI_CHUNKSIZE", "65536");
  CHECK(nccl::describe(topo::make_preset("pcie-gen4-8gpu"), 8, 0, chunks).p2p_chunk_bytes == (64u << 10));
  CHECK(nccl::p2p_operation_channels(b200, 32 << 10) == 1);
  CHECK(nccl::p2p_operation_channels(b200, 128 << 10) == 1);
  CHECK(nccl::p2p_operation_channels(b200, 256 << 10) == 2);
  CHECK(nccl::p2p_operation_channels(b200, std::uint64_t{1} << 30) == 2);
  // From NCCL 2.29 a network peer takes a channel per 14 GB/s of its GPU's NICs: 4 on a 400G NIC
  // (50 GB/s), so two B200 nodes' sendrecv runs 4 blocks a peer, kept while 4 x 2 rounds of 8
  // peers fit the 16 p2p channels; a 200G HDR NIC (25 GB/s) gives 2.
  const nccl::System b200_now = nccl::describe(topo::make_preset("hgx-b200", o), 16);
  CHECK(b200_now.p2p_channels_per_peer == 4);
  CHECK(nccl::describe(topo::make_preset("hgx-b200", o), 16, 29).p2p_channels_per_peer == 4);
  CHECK(nccl::p2p_operation_channels(b200_now, std::uint64_t{1} << 30) == 4);
  CHECK(nccl::describe(topo::make_preset("dgx-a100", o), 16).p2p_channels_per_peer == 2);
  // NCCL reads a NIC at the GPU's path to it: an A100's PCIe Gen4 x16 (24 GB/s) caps a 400G NIC,
  // so 2 channels still.
  topo::PresetOptions ndr = o;
  ndr.nic = "ndr";
  CHECK(nccl::describe(topo::make_preset("dgx-a100", ndr), 16).p2p_channels_per_peer == 2);
  // ... and halves while the rounds of 8 peers times it exceed the p2p channels: 128 ranks are
  // 16 rounds.
  o.nodes = 16;
  const nccl::System h100_16 = nccl::describe(topo::make_preset("dgx-h100", o), 128);
  CHECK(h100_16.p2p_channels_per_peer * 16 <= h100_16.p2p_channels);
  CHECK(h100_16.p2p_channels_per_peer * 32 > h100_16.p2p_channels);
  // Eight 4-GPU GH200 nodes (32 ranks on 16 p2p channels): NCCL 2.20-2.28 halve a network peer's
  // 2 channels to 1 (2 x 32 > 4 x 16); 2.19 keeps 2 (NVIDIA/nccl issue 1272: sendrecv 24.2 GB/s
  // under 2.19.4, 18.3 under 2.20.5); 2.29+ gives Slingshot's 25 GB/s 2, and 2 x 4 rounds fit.
  o.nodes = 8;
  CHECK(nccl::describe(topo::make_preset("gh200-quad", o), 32).p2p_channels_per_peer == 2);
  CHECK(nccl::describe(topo::make_preset("gh200-quad", o), 32, 28).p2p_channels_per_peer == 1);
  CHECK(nccl::describe(topo::make_preset("gh200-quad", o), 32, 20).p2p_channels_per_peer == 1);
  CHECK(nccl::describe(topo::make_preset("gh200-quad", o), 32, 19).p2p_channels_per_peer == 2);
  // A DGX-1: one NVLink lane to some peers, none to others (through a GPU or PCIe): 2 per peer.
  CHECK(nccl::describe(topo::make_preset("dgx1-v100"), 8).p2p_channels_per_peer == 2);
  // Small operations go with LL: up to 16 KiB times the per-peer limit (2.19+), 16 KiB before,
  // Simple before 2.12; across nodes too, where the per-peer limit is the network peer's.
  CHECK(nccl::p2p_protocol(a100, 512 << 10) == Protocol::ll);
  CHECK(nccl::p2p_protocol(a100, (512 << 10) + 1) == Protocol::simple);
  nccl::System older = a100;
  older.release = 18;
  CHECK(nccl::p2p_protocol(older, 16 << 10) == Protocol::ll);
  CHECK(nccl::p2p_protocol(older, 32 << 10) == Protocol::simple);
  older.release = 8;
  CHECK(nccl::p2p_protocol(older, 8) == Protocol::simple);
  CHECK(nccl::p2p_protocol(b200, 32 << 10) == Protocol::ll);  // 2 channels a peer under 2.28
  CHECK(nccl::p2p_protocol(b200, (32 << 10) + 1) == Protocol::simple);
  // What an operation moves: a sendrecv's buffer, an alltoall's block per peer.
  CollectiveSpec spec;
  spec.kind = CollectiveKind::alltoall;
  spec.nranks = 8;
  spec.count = 1 << 20;
  CHECK(nccl::p2p_peer_bytes(spec) == (1u << 20) / 8 * 4);  // float
  spec.kind = CollectiveKind::sendrecv;
  CHECK(nccl::p2p_peer_bytes(spec) == (1u << 20) * 4);
}
