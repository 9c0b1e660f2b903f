#pragma once
// The machine graph: devices and the links between them, held in a Boost.Graph, plus the router
// that turns a GPU pair into the links its traffic crosses.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <optional>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "sim/model.hpp"

namespace ccsim::topo {

enum class DeviceKind { gpu, nvswitch, pcie_switch, cpu, nic, net_switch };
enum class LinkKind { nvlink, pcie, c2c, cpu, net };
std::string_view to_string(DeviceKind kind);
std::string_view to_string(LinkKind kind);

struct Device {
  std::string name;
  DeviceKind kind = DeviceKind::gpu;
  int node = 0;              // machine (server) index
  std::string arch;          // GPUs: timing-model family, e.g. "hopper"
  bool in_switch_reduction = false;  // switches: can reduce / multicast (NVLS, SHARP)
  double latency_s = 0;              // switches: added to every route that crosses them
};

struct Link {
  LinkKind kind = LinkKind::nvlink;
  std::string generation;  // "4" for NVLink4, "5" for PCIe Gen5, "ndr" for InfiniBand NDR
  int lanes = 1;
  double bandwidth_bytes_per_s = 0;  // per direction, signalling rate of all lanes together
  std::size_t a = 0, b = 0;          // endpoint device ids; "forward" means a -> b
  // A CPU link's share of a PCIe peer-to-peer write's rate inside one socket that a peer-to-peer
  // write across it gets (1: the same). Some sockets forward peer writes to another socket's root
  // ports slower than they forward them among their own (EPYC Rome: 0.85), whatever the link's own
  // width; a machine's p2pBandwidthLatencyTest shows it.
  double p2p_fraction = 1.0;
};

// What a network generation's transport (NCCL's net plugin and the NIC behind it) changes against
// NCCL's own InfiniBand/RoCE verbs transport, whose costs the timing model's NET figures are
// (configs/links.json "transports"). A generation without a transport changes nothing.
struct NetTransport {
  std::string name;               // empty: NCCL's own verbs transport
  bool ll = true;                 // NCCL may run LL over it
  bool ll128 = true;              // ... and LL128
  double plugin_latency_us = 0;   // what the plugin reports as the network's latency: NCCL's
                                  // cost model adds it to every inter-node step (latencyInter)
  double message_latency_s = 0;   // each network message arrives this much later than NCCL's NET
                                  // hop latency says
  double flush_latency_s = 0;     // ...and a Simple message this much more on GPUs that flush
                                  // received data before reading it (before Hopper)
};
// Whether a network generation is InfiniBand (configs/links.json "fabric"), whose ports carry data
// at their own efficiency (smaller headers than RoCE's); Error for an unknown generation.
bool is_infiniband(const std::string& generation);
// The transport of a network generation, from configs/links.json; Error for an unknown generation.
NetTransport net_transport(const std::string& generation);

using DeviceId = std::size_t;
using LinkId = std::size_t;
// Vertex = device id; edge property = link id (links live in Topology::links()).
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property, LinkId>;

// One stage of a route: the traffic crosses these links together, striped across them (the NVLink
// lanes of a GPU to the planes of an NVSwitch fabric), leaving device `from`.
struct RouteHop {
  std::vector<LinkId> links;
  DeviceId from = 0;
};

struct Route {
  std::vector<RouteHop> hops;
  LatencyClass latency_class = LatencyClass::nvlink;
  double device_latency_s = 0;  // switches crossed (Device::latency_s), beyond the model's per-class latency
  bool via_cpu = false;         // crosses a CPU (PCIe root complex): P2P there is slower
  bool through_gpu = false;     // NVB: NVLink through an intermediate GPU
  bool shm = false;             // through host memory at the receiver's CPU (no PCIe P2P between the GPUs)
  // Across nodes without GPUDirect RDMA at the receiving end: from this hop on, the receiver's
  // loads bring the data up from the host memory its NIC wrote (SIZE_MAX: the NIC writes the GPU).
  std::size_t host_leg = SIZE_MAX;
};

// NCCL's path classes as levels (NCCL_P2P_LEVEL, NCCL_NET_GDR_LEVEL), nearest first: LOC (the
// GPU itself: never), NVL (NVLink, direct or through NVSwitch), NVB (NVLink through another GPU),
// PIX (one PCIe switch), PXB (several), PHB (through a CPU: nvidia-smi's PHB and NODE), SYS (across
// CPUs).
enum class PathLevel { loc, nvl, nvb, pix, pxb, phb, sys };
std::string_view to_string(PathLevel level);
// "LOC", "NVL", "NVB", "PIX", "PXB", "PHB" or "SYS", or NCCL's old numbers 0-4 (LOC, PIX, PXB, PHB,
// SYS; ncclGetLevel); nullopt for anything else.
std::optional<PathLevel> parse_path_level(const std::string& name);

class Topology {
 public:
  explicit Topology(std::string name = "") : name_(std::move(name)) {}
  // Moves rebuild the graph from the links: Boost 1.74's adjacency_list has no move (its swap
  // copies), and that copy trips GCC 12's -Wmaybe-uninitialized wherever a Topology is moved.
  Topology(const Topology&) = default;
  Topology& operator=(const Topology&) = default;
  Topology(Topology&& other) noexcept { *this = std::move(other); }
  Topology& operator=(Topology&& other) noexcept;

  DeviceId add_device(Device device);
  LinkId add_link(DeviceId a, DeviceId b, LinkKind kind, const std::string& generation, int lanes);
  // Link::p2p_fraction of a CPU link; Error (what the field's reader prefixes with its path) for
  // another kind or a fraction outside (0, 1].
  void set_p2p_fraction(LinkId id, double fraction);

  const std::string& name() const { return name_; }
  const Graph& graph() const { return graph_; }
  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<Link>& links() const { return links_; }
  const Device& device(DeviceId id) const { return devices_.at(id); }
  const Link& link(LinkId id) const { return links_.at(id); }

  // GPUs in rank order (the order they were added).
  std::size_t gpu_count() const { return gpus_.size(); }
  DeviceId gpu(std::size_t index) const { return gpus_.at(index); }
  // Reorders the ranks: `order` lists every GPU device once.
  void set_gpu_order(const std::vector<DeviceId>& order);
  // Only the first `per_node` GPUs of every node stay ranks (a job that uses part of each node);
  // the others stay in the graph, idle. Error when a node has fewer.
  void keep_gpus_per_node(int per_node);
  // Only `per_node` NICs of every node stay (a machine cabled with fewer NICs than the preset has):
  // spread over the node's ranks, each kept NIC the nearest free one to rank k x NICs/per_node
  // of the node. The others are removed. Error when a node has fewer NICs.
  void keep_nics_per_node(int per_node);
  // The timing-model family of the GPUs ("hopper"); Error if they differ or there are none.
  std::string gpu_arch() const;
  // The transport of the network joining the nodes (NetTransport{} without one); Error when
  // its links mix transports.
  NetTransport net_transport() const;
  // GPUs per node when every node has the same number (consecutive ranks share a node); Error
  // otherwise.
  int gpus_per_node() const;

  // Whether GPUs of a node reach each other's memory over PCIe (default). Off (GeForce cards on
  // NVIDIA's stock driver, NCCL_P2P_DISABLE=1), NCCL's SHM transport carries what NVLink does not:
  // the sender stores into host memory at the receiver's CPU, the receiver loads it from there
  // (src/graph/paths.cc diverts such pairs through ncclGetLocalCpu of the receiver).
  void set_pcie_p2p(bool on) { pcie_p2p_ = on; }
  bool pcie_p2p() const { return pcie_p2p_; }

  // Whether a NIC moves data straight from (read: the GPU sends) or into GPU memory, as NCCL's
  // ncclTopoCheckGdr decides (src/graph/paths.cc): the GPU-NIC path must be no farther than
  // net_gdr_level (default PXB: a PCIe switch tree without the CPU), except a NIC on the CPU a GPU
  // is joined to by NVLink-C2C (NCCL_NET_GDR_C2C=1); and before Ampere a GPU without NVLink to
  // another GPU of its node does not let the NIC read it. Without GDR the GPU stores what it sends
  // into host memory, and loads what it receives from there (Route::host_leg).
  // NCCL_P2P_LEVEL: GPUs of a node whose path is farther than this talk through host memory (SHM)
  // instead of P2P, NVLink ones too (NCCL_P2P_DISABLE=1 is LOC). Default SYS: P2P wherever
  // pcie_p2p allows. NCCL itself lowers it to PXB on Intel and ARM hosts (ncclTopoCheckP2p); ccsim
  // leaves that to the machine's description.
  void set_p2p_level(PathLevel level) { p2p_level_ = level; }
  PathLevel p2p_level() const { return p2p_level_; }
  void set_net_gdr_level(PathLevel level) {
    net_gdr_level_ = level;
    forget_gdr();
  }
  PathLevel net_gdr_level() const { return net_gdr_level_; }
  bool gdr(DeviceId gpu, DeviceId nic, bool read) const;
  // NCCL's type of the path between rank `gpu_index`'s GPU and the NIC it reaches other nodes
  // through (nic_of), as its graph search records it (a graph's typeInter; src/include/graph.h),
  // nearest first: PIX, PXB, P2C (the NIC hangs off the CPU the GPU shares memory with over
  // NVLink-C2C), PXN (the GPU is farther than PXB and hands its traffic over NVLink to a GPU of its
  // node within PXB of the NIC, src/graph/paths.cc), PHB, SYS.
  enum class NicPath { pix, pxb, p2c, pxn, phb, sys };
  NicPath nic_path(std::size_t gpu_index) const;

  // The links traffic from GPU `src` to GPU `dst` crosses, as NCCL would route it: direct NVLink,
  // else a shared NVSwitch fabric (striped over every switch both GPUs reach), else NVLink through
  // one intermediate GPU (NVB), else the shortest path that only transits switches, CPUs and NICs
  // (within a node without PCIe P2P: up to the receiver's nearest CPU and down, Route::shm).
  // Error when the GPUs are not connected.
  Route route(std::size_t src_gpu, std::size_t dst_gpu) const;
  // route() as P2P would go, whatever p2p_level says (the hardware's path, as nvidia-smi shows it).
  Route p2p_route(std::size_t src_gpu, std::size_t dst_gpu) const;
  // The route of NCCL's point-to-point operations (send/recv: alltoall, sendrecv, gather, scatter),
  // which is route() but across nodes under PXN (NCCL_P2P_PXN_LEVEL, src/graph/topo.cc
  // ncclTopoGetNetDev): the sender uses the NIC of the peer's rail, the one local to the GPU of
  // its node with the peer's device index, so that traffic stays on that rail. Level 2 (NCCL's
  // default) hands the data over NVLink to the GPU closest to that NIC, which the NIC reads from,
  // wherever that GPU is NVLink-near (NVL) and itself within PXB of the NIC; level 1 only where
  // the sender is farther from that NIC than PXB (else it uses that NIC itself); 0 keeps route().
  // Only the first `ranks` GPUs are in the communicator, and only they relay.
  Route p2p_operation_route(std::size_t src_gpu, std::size_t dst_gpu, std::size_t ranks) const;
  void set_p2p_pxn_level(int level);
  int p2p_pxn_level() const { return p2p_pxn_level_; }
  // The path class NCCL gives the P2P route of two GPUs of a node (NVL, NVB or the PCIe class).
  PathLevel p2p_class(std::size_t src_gpu, std::size_t dst_gpu) const;
  // The shortest path between any two devices (GPUs never forward).
  Route path(DeviceId src, DeviceId dst) const;
  // `path`, or nothing where no path passes through no GPU (another tray's NIC of a rack-scale node).
  std::optional<Route> try_path(DeviceId src, DeviceId dst) const;
  // NICs in device order (their index is the rail) of one node.
  std::vector<DeviceId> nics_of_node(int node) const;
  // The NIC rank `gpu_index` sends to and receives from other nodes through (see gpu_nic). Error
  // when its node has none.
  DeviceId nic_of(std::size_t gpu_index) const { return gpu_nic(gpus_.at(gpu_index)); }

  // The NVLink lanes from a GPU to the NVSwitch chips of its node that reduce and multicast (NVLS),
  // striped together. Error when the GPU reaches no such switch.
  RouteHop nvls_port(std::size_t gpu_index) const;
  bool has_nvls() const;
  // The route from a GPU to the in-network reduction switch (SHARP) nearest to the NIC it sends
  // across nodes with (nic_of). Error when there is none.
  Route route_to_sharp(std::size_t gpu_index) const;
  bool has_sharp() const;

  // Bandwidth per direction of a link once protocol overhead is taken off (model efficiencies).
  double effective_bandwidth(LinkId id, const Model& model) const;

  // What-if edits (scenarios). Removals renumber devices and links: look devices up by name
  // afterwards. Every edit leaves the topology unchanged when it throws.
  std::optional<DeviceId> find_device(const std::string& name) const;
  // Error naming a few devices when there is none called `name`.
  DeviceId device_named(const std::string& name) const;
  // The links joining two devices (parallel lanes of one connection count separately).
  std::vector<LinkId> links_between(DeviceId a, DeviceId b) const;
  // Multiplies the bandwidth of every link of `kind` (a faster or slower generation; lanes, and so
  // NCCL's own view of the machine, stay as they are). Returns the number of links scaled.
  std::size_t scale_links(LinkKind kind, double factor);
  // Multiplies the bandwidth of the links joining a and b (a link trained at reduced width); their
  // lane count follows when it stays whole. Error when no link joins them.
  void scale_link(DeviceId a, DeviceId b, double factor);
  // Removes every link joining a and b. Error when none does, or when some GPU pair is left
  // without a route.
  void remove_link(DeviceId a, DeviceId b);
  // Removes a failed device (a switch, NIC, CPU) and its links; GPUs cannot be removed (they are
  // the ranks: shrink the job with keep_gpus_per_node or fewer nodes). Error when some GPU pair is
  // left without a route.
  void remove_device(DeviceId id);
  // Error naming the first pair of ranks route() cannot join.
  void check_gpus_connected() const;

 private:
  // Breadth-first path from `src` to the first device `is_target` accepts, never through a GPU;
  // `spread` picks among equal-cost branches.
  Route shortest_path(DeviceId src, const std::function<bool(DeviceId)>& is_target, std::size_t spread) const;
  // shortest_path, or nothing where no target is reached.
  std::optional<Route> find_path(DeviceId src, const std::function<bool(DeviceId)>& is_target, std::size_t spread) const;
  // A copy without the devices and links `drop` selects (and the links of dropped devices), the
  // ranks kept in their order.
  Topology without(const std::function<bool(DeviceId)>& drop_device, const std::function<bool(LinkId)>& drop_link) const;
  void rebuild_graph();  // graph_ from devices_ and links_
  // The NIC a GPU's inter-node traffic uses, as NCCL assigns them: one of its nearest NICs, the
  // GPUs that share the same nearest NICs taking them in turn (GPU 2j and 2j+1 of a DGX A100 PCIe
  // switch use its NICs 2j and 2j+1), so that rings on different rails use different NICs.
  DeviceId gpu_nic(DeviceId gpu) const;
  // p2p_class of the P2P route r the two GPUs already have.
  PathLevel p2p_class_of(const Route& r, std::size_t src_gpu, std::size_t dst_gpu) const;
  // The CPU nearest a device (whose memory NCCL's host buffers for it live in); Error without one.
  DeviceId nearest_cpu(DeviceId device, std::size_t spread) const;
  // The path from a to b through the memory of `cpu`: a's path up to it, then its path to b.
  Route through_memory(DeviceId a, DeviceId cpu, DeviceId b, std::size_t spread) const;
  // From the memory of GPU `sender` through its node's NIC `nic` to GPU `dst` of another node,
  // which receives through its own NIC; an end without GPUDirect RDMA is staged in host memory.
  Route across_nodes(DeviceId sender, DeviceId nic, DeviceId dst, std::size_t spread) const;
  // gdr() answers, by (GPU, NIC, read): each takes graph searches, and route() asks for every pair
  // across nodes. Guarded: simulations on several threads may share one topology.
  struct GdrCache {
    std::mutex mutex;
    std::map<std::tuple<DeviceId, DeviceId, bool>, bool> answers;
  };
  void forget_gdr() { gdr_cache_ = std::make_shared<GdrCache>(); }
  bool gdr_uncached(DeviceId gpu, DeviceId nic, bool read) const;
  // P2C: the NIC hangs off the CPU the GPU shares memory with over NVLink-C2C (Grace).
  bool nic_on_c2c_cpu(DeviceId gpu, DeviceId nic) const;
  // PXN: whether another GPU of `gpu`'s node that it reaches over NVLink (a lane or a shared
  // NVSwitch) satisfies `near` (is close enough to a NIC to relay for it).
  bool nvlink_peer_where(DeviceId gpu, const std::function<bool(DeviceId)>& near) const;
  std::string name_;
  Graph graph_;
  std::vector<Device> devices_;
  std::vector<Link> links_;
  std::vector<DeviceId> gpus_;
  bool pcie_p2p_ = true;
  PathLevel net_gdr_level_ = PathLevel::pxb;
  PathLevel p2p_level_ = PathLevel::sys;
  int p2p_pxn_level_ = 2;  // NCCL_P2P_PXN_LEVEL's default
  std::shared_ptr<GdrCache> gdr_cache_ = std::make_shared<GdrCache>();
};

// Per-direction signalling bandwidth of one lane of a link generation, from configs/links.json.
double lane_bandwidth_bytes_per_s(LinkKind kind, const std::string& generation);

// "PIX", "PXB", "P2C", "PXN", "PHB" or "SYS".
std::string_view nic_path_name(Topology::NicPath path);

}  // namespace ccsim::topo
