// The SimGrid 3.32 engine. One actor per (rank, channel) stream replays its steps; links are
// split-duplex with zero latency so that bandwidth sharing is pure max-min, and each send pays its
// route's latency explicitly (reference/simgrid-notes.md §2b-3): before it starts, or for a
// network step partly as a delay on its arrival (run_stream).
#include <algorithm>
#include <chrono>
#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include <simgrid/s4u.hpp>

#include "sim/engine.hpp"
#include "sim/error.hpp"
#include "sim/nccl_tuning.hpp"

namespace sg4 = simgrid::s4u;

namespace ccsim {

namespace {

// A message's payload: when it was posted, how long after that its data can first arrive, and
// the FIFO slot it holds at its receiver (null: none). Transfers start when posted (every
// mailbox has its receiving stream as permanent receiver: NCCL writes into the peer's FIFO
// whatever step that peer is at); the receiver sees the data at the transfer's end, or at
// post + delay + transfer time if that is later.
struct Envelope {
  double posted = 0;
  double delay = 0;
  sg4::Semaphore* slot = nullptr;
};

// A connection of one call: sending endpoint, receiving endpoint, tag, call (pass). Kept whole:
// composed schedules (algo::Composer) offset each phase's tags by multiples of 2^16, which no
// packing of the four into 64 bits could be sure to keep apart.
struct ConnectionKey {
  int src, dst, tag, pass;
  bool operator==(const ConnectionKey&) const = default;
};
struct ConnectionKeyHash {
  std::size_t operator()(const ConnectionKey& k) const {
    const std::uint64_t a = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.src)) << 32) | static_cast<std::uint32_t>(k.dst);
    const std::uint64_t b = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.tag)) << 32) | static_cast<std::uint32_t>(k.pass);
    return std::hash<std::uint64_t>{}(a * 0x9e3779b97f4a7c15ULL ^ b);
  }
};

struct Context {
  const Schedule& schedule;
  const PlatformPlan& plan;
  const Model& model;
  EngineOptions options;
  std::vector<sg4::Host*> hosts;
  bool run_reduce_kernels = true;  // false when no receive-reduce kernel can outlast its transfer
  double hop_latency_s[3][3] = {};         // [latency class][protocol]
  std::deque<Envelope> envelopes;  // of the messages that arrive later than their transfer ends
  std::vector<Envelope*> spare_envelopes;  // received ones, for reuse: memory stays what is in flight
  double channel_cap_bytes_per_s[3][3] = {};  // [latency class of the route][protocol], 0: none
  std::unordered_map<ConnectionKey, sg4::Mailbox*, ConnectionKeyHash> mailboxes;
  std::unordered_map<ConnectionKey, sg4::SemaphorePtr, ConnectionKeyHash> slots;  // pass 0: all calls share them
  std::vector<StepRecord> records;
  std::uint64_t messages = 0;
  std::size_t finished_streams = 0;
  // Back-to-back calls (EngineOptions::back_to_back): a rank's next kernel starts once all its
  // streams (thread blocks) have ended the last one; pass_end[p][endpoint] is when they had.
  int passes = 1;
  double launch_gap_s = 0;
  std::vector<sg4::BarrierPtr> rank_barriers;
  std::vector<double> pass_end[2];
  double direct_nvlink_saving_s = 0;  // less per hop over a lane between two GPUs
  // The most one Simple send of each stream moves (0: no cap), from what its thread block can load
  // and store (memory_bytes_per_sent_byte) on its share of the block's threads (Stream::block_share):
  // point-to-point kernels, and ring and tree collectives where the model sets
  // collective_block_memory_gbps.
  std::vector<double> block_cap_bytes_per_s;
  // EngineOptions::progress: steps run (of all calls) out of steps_total, and when to say so next.
  std::uint64_t steps_run = 0, steps_total = 0;
  std::chrono::steady_clock::time_point next_report;
  // A point-to-point kernel's group (the direct algorithm): NCCL's proxy posts each of its network
  // operations in turn, and posting and completing an operation cost it the same whatever the
  // protocol: Simple's overhead (three times the LL one's in NCCL's model) for all of them.
  bool point_to_point = false;
  // NCCL's collective primitives act on a Simple connection's FIFO a slice at a time: a receive
  // waits until the whole slice is there, then its block copies it out (or reduces it and stores
  // the result) while the next slices arrive. Only the last slice's copy has nothing left to hide
  // behind: a stream's last receive through a FIFO (EngineOptions::ranks_per_process) costs, after
  // its data, that slice's loads and stores at the block's rate. fifo_copy_s_per_byte: a byte of
  // them (0: no such copy, as in a point-to-point kernel, whose network store-and-forward is its own).
  double fifo_copy_s_per_byte = 0;
  double fifo_slice_bytes = 0;  // NCCL's slice: Simple steps of NCCL_BUFFSIZE / NCCL_STEPS (512 KiB by default)

  void ran_steps(std::uint64_t n) {
    steps_run += n;
    // The clock is read every 64Ki steps: a few per second of simulation.
    if (!options.progress || (steps_run & 0xffff) >= n) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_report) return;
    next_report = now + kProgressEvery;
    options.progress(static_cast<double>(steps_run) / static_cast<double>(std::max<std::uint64_t>(1, steps_total)));
  }
  static constexpr std::chrono::seconds kProgressEvery{2};

  sg4::Mailbox* mailbox(int src, int dst, int tag, int pass) {
    const ConnectionKey key{src, dst, tag, pass};
    auto it = mailboxes.find(key);
    if (it != mailboxes.end()) return it->second;
    auto* mb = sg4::Mailbox::by_name(std::to_string(src) + ">" + std::to_string(dst) + "#" + std::to_string(tag) + "/" +
                                     std::to_string(pass));
    mailboxes.emplace(key, mb);
    return mb;
  }
  sg4::Semaphore* slot(int src, int dst, int tag);
};

constexpr int kActorStackKiB = 64;

// The memory mappings a process may hold (Linux's vm.max_map_count, 65530 unless raised), less
// what the rest of a run maps (libraries, allocator arenas), which guarded stacks may take.
std::size_t mappings_for_stacks() {
  std::size_t limit = 65530;
  if (std::ifstream in("/proc/sys/vm/max_map_count"); in) in >> limit;
  constexpr std::size_t kRestOfRun = 25000;
  return limit > kRestOfRun ? limit - kRestOfRun : 0;
}

Envelope no_delay;  // the payload of a message that arrives as its transfer ends

// NCCL's FIFO has NCCL_STEPS = 8 slots per connection: a sender runs at most that many messages
// ahead of its receiver (reference/nccl-model.md §1.2), a slot freeing when the receiver has
// consumed its step. Each connection (sending rank, receiving rank, tag) has a semaphore of 8:
// the sender takes one before it posts a message (the fused legs of one aggregated message count
// once), the receiver gives it back once the step is done.
constexpr std::size_t kMessagesInFlight = 8;

sg4::Semaphore* Context::slot(int src, int dst, int tag) {
  const ConnectionKey key{src, dst, tag, 0};
  auto it = slots.find(key);
  if (it != slots.end()) return it->second.get();
  return slots.emplace(key, sg4::Semaphore::create(kMessagesInFlight)).first->second.get();
}
// The fused legs of one aggregated message, and the later pieces of a chunk streamed line by line,
// share the slot of the message or chunk they belong to.
bool takes_slot(const Step& step) { return !step.fused && !step.part; }

struct InFlight {
  sg4::CommPtr comm;
  std::uint32_t step;
  double start;
  std::uint64_t bytes;
  bool net;     // to another node: NCCL's proxy carries it, not the kernel
  bool record;  // a step of the first call
};

// Makes `actor` the permanent receiver of the stream's messages of one call (Envelope).
void accept_messages(Context& ctx, const Stream& stream, int pass, const sg4::ActorPtr& actor) {
  for (const Step& step : stream.steps)
    if (step.kind == StepKind::recv) ctx.mailbox(step.peer, stream.rank, step.tag, pass)->set_receiver(actor);
}

void run_stream(Context& ctx, std::uint32_t stream_index) {
  const Stream& stream = ctx.schedule.streams[stream_index];
  const std::size_t elem = element_bytes(ctx.schedule.spec.type);
  bool record = ctx.options.record_steps;  // the first call's steps only
  // In-network switches reduce at line rate: their arithmetic costs no time.
  const bool computes = !ctx.schedule.is_switch(stream.rank);
  // A block writes one step after the other: a transfer to a peer starts when the last one to it
  // has ended. `in_flight` holds each peer's transfer (retired before the next is posted), which
  // also keeps SimGrid fast: 3.32 scans an actor's list of unwaited activities on every completion.
  std::map<int, std::optional<InFlight>> in_flight;  // by peer
  // What the stream's Simple sends may move by its block's loads and stores (0: no cap).
  const double block_cap = ctx.block_cap_bytes_per_s.empty() ? 0.0 : ctx.block_cap_bytes_per_s[stream_index];
  // Returns when the transfer ended (-1: none was in flight).
  auto retire = [&](std::optional<InFlight>& f) {
    if (!f) return -1.0;
    f->comm->wait();
    const double end = f->comm->get_finish_time();
    if (f->record) ctx.records.push_back({stream_index, f->step, f->start, end, f->bytes});
    f.reset();
    return end;
  };
  auto retire_all = [&] {
    for (auto& [peer, f] : in_flight) retire(f);
  };

  // Sends a stream posts back to back with the same data to different peers (a tree node's
  // children; a direct broadcast's or all_gather's peers) leave together: one kernel pass writes
  // the buffer to every peer (NCCL's primitives do so for a tree's children), so their latencies
  // overlap and the group pays the longest. So do sends of different data that one kernel issues
  // together (Step::overlap: an alltoall's blocks, point-to-point operations NCCL runs side by side
  // on warps of their own); other sends of different data pay one each; successive sends to one
  // GPU (pipelined chunks) do not hold the stream at all (below). `batch_peers` holds the peers of
  // the current group, `batch_slept` its latency so far.
  std::vector<int> batch_peers;
  int last_peer = -1;     // of the stream's last send
  bool run_held = false;  // whether the run of sends to last_peer began by holding the stream
  // Whether the stream has received since its last send: a send to last_peer after none (a copy
  // or a reduce may come between, as a broadcast root's copy of its own data does) is the next
  // step of the same run.
  bool received_since_send = true;
  std::deque<Envelope*> envelopes;  // where a group of receives stores its messages' payloads
  Region batch_src;
  double batch_slept = 0;
  // How far the GPU is ahead of the stream: of a network send, the part of the time it held the
  // stream that was NCCL's proxy posting it (net_post_overhead beyond the GPU's own NVLink-class
  // part), which the kernel does not wait for. Local copies and reductions after it keep the lead;
  // a receive or another send ends it.
  double proxy_tail = 0;
  // Network sends of the current group of separate point-to-point operations: one proxy thread per
  // GPU posts them to the NIC one after the other, so each arrives that many posts later.
  int batch_net_posts = 0;
  auto end_batch = [&] {
    batch_peers.clear();
    batch_slept = 0;
    batch_net_posts = 0;
  };
  // Posts send step i (and its data) to the peer; returns at once unless the step waits.
  auto send = [&](std::uint32_t i, const Step& step, double start, int pass, bool p2p_group) {
    std::optional<InFlight>& previous = in_flight[step.peer];
    const PlatformRoute& route = ctx.plan.route(stream.rank, step.peer);
    // `alpha` holds the stream before the transfer; `delay` holds back the message's arrival.
    // On an NVLink or PCIe step the sending GPU's threads copy and flag the peer's buffer, so
    // the step's latency holds the stream. On a network step the GPU pays only its local part
    // (the NVLink hop latency, at least NCCL's network post overhead) and goes on; NCCL's
    // proxy thread and the NIC carry the rest, by which the message arrives later. A ring
    // across nodes so pays the network latency only where its chain of steps crosses (NCCL:
    // nInter x interLat, reference/nccl-model.md §3.5). A send to the GPU the stream sent to
    // last (the next chunk of a pipeline) does not hold the stream at all: with NCCL's 8 slots
    // per connection the sender writes step k+1 while step k's flag is on its way, so only the
    // arrival waits and the pipeline runs at the link's rate. A send to another peer (the next
    // work item) pays its local part first, and so does every step to or from an NVLS switch
    // (all GPUs meet at each chunk there).
    double alpha = 0, delay = 0, proxy = 0;  // proxy: the part of alpha that is the proxy's post
    double streamed_alpha = 0;  // a pipelined step's latency, paid only if its data does not stream on
    if (!step.fused) {
      const int proto = static_cast<int>(step.protocol);
      const bool net = route.latency_class == LatencyClass::net;
      alpha = ctx.hop_latency_s[static_cast<int>(route.latency_class)][proto];
      // NCCL's NVLink latencies are NVSwitch systems'; a lane between two GPUs skips the switch.
      if (route.direct_nvlink) alpha = std::max(0.0, alpha - ctx.direct_nvlink_saving_s);
      if (net) {
        const double gpu = ctx.hop_latency_s[static_cast<int>(LatencyClass::nvlink)][proto];
        const double local = std::max(gpu, ctx.plan.net_post_overhead_s(step.protocol));
        delay = std::max(0.0, alpha - local);
        alpha = std::min(alpha, local);
        proxy = std::max(0.0, alpha - gpu);
        if (p2p_group)
          delay += ctx.plan.net_post_overhead_s(ctx.point_to_point ? Protocol::simple : step.protocol) * batch_net_posts++;
      }
      delay += route.extra_latency_s + (step.protocol == Protocol::simple ? route.flush_latency_s : 0.0);
      if (step.peer == last_peer && !net && computes && !ctx.schedule.is_switch(step.peer)) {
        // After a send to the same GPU with nothing received in between (the next chunk or
        // piece, a copy aside) the run's latency was paid once, by its first step holding the
        // stream, if this step's data streams on behind the last one's; a wait for a free FIFO
        // slot breaks the stream, and from there each step's flag waits out the latency after
        // its data.
        if (!received_since_send && run_held) {
          streamed_alpha = alpha;
        } else {
          delay += alpha;
          run_held = false;
        }
        alpha = 0;
      } else {
        run_held = alpha > 0;
      }
      last_peer = step.peer;
    }
    const double previous_end = retire(previous);
    sg4::Semaphore* slot = takes_slot(step) ? ctx.slot(stream.rank, step.peer, step.tag) : nullptr;
    if (slot) slot->acquire();
    if (streamed_alpha > 0 && !(previous_end >= 0 && sg4::Engine::get_clock() <= previous_end)) {
      delay += streamed_alpha;
      run_held = false;
    }
    if (alpha > batch_slept) sg4::this_actor::sleep_for(alpha - batch_slept);
    proxy_tail = std::min(proxy, std::max(0.0, alpha - batch_slept));  // of what this send slept
    // Across the network a Simple point-to-point operation is stored and forwarded a chunk at a
    // time: the sending block copies a chunk into the buffer the NIC reads before the proxy posts
    // it, and the receiving block copies it out of the buffer the NIC wrote once the proxy sees it
    // land. Pipelined over NCCL's slots the stages overlap, but for the first chunk's copy in and
    // the last one's copy out, each at the block's rate (NCCL_P2P_NET_CHUNKSIZE: 128 KiB by default).
    if (ctx.point_to_point && step.protocol == Protocol::simple && route.latency_class == LatencyClass::net &&
        block_cap > 0) {
      const double chunk = static_cast<double>(ctx.options.p2p_net_chunk_bytes);
      const double blocks = std::max(1, ctx.schedule.blocks_per_stream);  // a folded stream's identical blocks
      delay += 2 * std::min(chunk, static_cast<double>(step.count() * elem) / blocks) / (block_cap / blocks);
    }
    Envelope* envelope = &no_delay;
    if (delay > 0 || slot) {
      if (ctx.spare_envelopes.empty()) {
        envelope = &ctx.envelopes.emplace_back();
      } else {
        envelope = ctx.spare_envelopes.back();
        ctx.spare_envelopes.pop_back();
      }
      *envelope = {sg4::Engine::get_clock(), delay, slot};
    }
    batch_slept = std::max(batch_slept, alpha);
    batch_peers.push_back(step.peer);
    batch_src = step.src;
    const std::uint64_t bytes = ctx.plan.send_wire_bytes(ctx.schedule, stream.rank, step);
    sg4::CommPtr comm = ctx.mailbox(stream.rank, step.peer, step.tag, pass)->put_init(envelope, bytes);
    double cap = ctx.channel_cap_bytes_per_s[static_cast<int>(route.latency_class)][static_cast<int>(step.protocol)];
    if (step.protocol == Protocol::simple && block_cap > 0) cap = cap > 0 ? std::min(cap, block_cap) : block_cap;
    if (cap > 0) comm->set_rate(cap);
    comm->start();
    if (pass == 0) ++ctx.messages;
    previous = InFlight{comm, i, start, bytes, route.latency_class == LatencyClass::net, record};
    if (step.wait) {
      retire_all();
      end_batch();
      proxy_tail = 0;
    }
  };

  // Posts the receives that start at step i (one, or a group that overlaps) and waits until their
  // data has arrived and been combined; returns the group's last step.
  auto receive = [&](std::uint32_t i, double start, int pass) -> std::uint32_t {
    std::vector<sg4::CommPtr> comms;
    envelopes.clear();
    double reduce_bytes = 0;
    std::uint32_t last = i;
    for (;; ++last) {
      const Step& r = stream.steps[last];
      comms.push_back(ctx.mailbox(r.peer, stream.rank, r.tag, pass)->get_async<Envelope>(&envelopes.emplace_back(nullptr)));
      if (r.reduce) reduce_bytes += static_cast<double>(r.count() * elem);
      if (!r.overlap || last + 1 >= stream.steps.size() || stream.steps[last + 1].kind != StepKind::recv) break;
    }
    std::vector<sg4::Semaphore*> freed;  // the slots these messages hold, given back once consumed
    auto arrive = [&] {
      for (auto& comm : comms) comm->wait();
      double arrival = 0;
      for (std::size_t k = 0; k < comms.size(); ++k) {
        Envelope* e = envelopes[k];
        arrival = std::max(arrival, comms[k]->get_finish_time() + std::max(0.0, e->posted + e->delay - comms[k]->get_start_time()));
        if (e->slot) freed.push_back(e->slot);
        if (e != &no_delay) ctx.spare_envelopes.push_back(e);
      }
      const double now = sg4::Engine::get_clock();
      if (arrival > now) sg4::this_actor::sleep_for(arrival - now);
    };
    auto consumed = [&] {
      for (auto* slot : freed) slot->release();
    };
    if (ctx.options.staged_receives) {
      arrive();
      if (ctx.options.staged_launch_s > 0) sg4::this_actor::sleep_for(ctx.options.staged_launch_s);
      double kernel_bytes = 0;  // read the slot (and the local operand), write the destination
      const double slot = ctx.options.staged_slot_hbm_share;
      for (std::uint32_t k = i; k <= last; ++k)
        kernel_bytes += (slot + (stream.steps[k].reduce ? 2.0 : 1.0)) * static_cast<double>(stream.steps[k].count() * elem);
      if (ctx.options.charge_compute && computes && kernel_bytes > 0) sg4::this_actor::execute(kernel_bytes);
      consumed();
      if (record)
        for (std::uint32_t k = i; k <= last; ++k) ctx.records.push_back({stream_index, k, start, sg4::Engine::get_clock(), 0});
      return last;
    }
    // A fused receive-reduce kernel streams its HBM traffic (read both operands, write the
    // result) while the data arrives: the two overlap and the slower one decides.
    sg4::ExecPtr exec;
    if (ctx.run_reduce_kernels && computes && reduce_bytes > 0) exec = sg4::this_actor::exec_async(3.0 * reduce_bytes);
    arrive();
    if (exec) exec->wait();
    consumed();
    if (record)
      for (std::uint32_t k = i; k <= last; ++k) ctx.records.push_back({stream_index, k, start, sg4::Engine::get_clock(), 0});
    return last;
  };

  // The time the stream's block takes to copy the last slice of receives first..last out of their
  // FIFOs, if they are its last transfers (0 otherwise; Context::fifo_copy_s_per_byte).
  std::uint32_t last_transfer = 0;  // the stream's last send or receive
  if (ctx.fifo_copy_s_per_byte > 0)
    for (std::uint32_t k = 0; k < stream.steps.size(); ++k)
      if (stream.steps[k].kind == StepKind::send || stream.steps[k].kind == StepKind::recv) last_transfer = k;
  auto last_fifo_slice_s = [&](std::uint32_t first, std::uint32_t last) {
    if (ctx.fifo_copy_s_per_byte <= 0 || !computes || !ctx.options.charge_compute || ctx.options.staged_receives ||
        last < last_transfer)
      return 0.0;
    const int process = stream.rank / std::max(1, ctx.options.ranks_per_process);
    double slowest = 0;
    for (std::uint32_t k = first; k <= last; ++k) {
      const Step& r = stream.steps[k];
      if (r.protocol != Protocol::simple || ctx.schedule.is_switch(r.peer)) continue;  // NVLS: multimem loads, no FIFO
      const PlatformRoute& route = ctx.plan.route(r.peer, stream.rank);
      if (route.latency_class != LatencyClass::net && !route.via_host &&
          r.peer / std::max(1, ctx.options.ranks_per_process) == process)
        continue;  // the peer wrote into this rank's own buffers
      const double per_block = static_cast<double>(r.count() * elem) / std::max(1, ctx.schedule.blocks_per_stream);
      slowest = std::max(slowest, std::min(ctx.fifo_slice_bytes, per_block) * (r.reduce ? 3.0 : 2.0));
    }
    return slowest * ctx.fifo_copy_s_per_byte;
  };

  for (int pass = 0; pass < ctx.passes; ++pass) {
    if (pass > 0) {
      // The next call: its kernel starts when every block of this rank has ended the last one.
      record = false;
      ctx.rank_barriers[static_cast<std::size_t>(stream.rank)]->wait();
      const double resume = ctx.pass_end[pass - 1][static_cast<std::size_t>(stream.rank)] + ctx.launch_gap_s;
      if (resume > sg4::Engine::get_clock()) sg4::this_actor::sleep_for(resume - sg4::Engine::get_clock());
      // A call's data goes into the peer's buffers for that call: a sender ahead of its peer
      // waits until the peer's kernel has started, then writes eagerly again.
      accept_messages(ctx, stream, pass, sg4::Actor::self());
      last_peer = -1;
      run_held = false;
      received_since_send = true;
      end_batch();
    }
    std::uint32_t ran = 0;  // steps of this call counted for EngineOptions::progress
    for (std::uint32_t i = 0; i < stream.steps.size(); ++i, ctx.ran_steps(i - ran), ran = i) {
      const Step& step = stream.steps[i];
      const bool issued_with_last = i > 0 && stream.steps[i - 1].kind == StepKind::send && stream.steps[i - 1].overlap;
      const bool p2p_group = step.kind == StepKind::send && (step.overlap || issued_with_last);
      if (step.kind != StepKind::send || std::find(batch_peers.begin(), batch_peers.end(), step.peer) != batch_peers.end() ||
          !(step.src == batch_src || issued_with_last))
        end_batch();
      const double start = sg4::Engine::get_clock();
      if (step.kind == StepKind::send) {
        send(i, step, start, pass, p2p_group);
        received_since_send = false;
      } else if (step.kind == StepKind::recv) {
        proxy_tail = 0;
        const std::uint32_t first = i;
        i = receive(i, start, pass);
        received_since_send = true;
        if (const double copy = last_fifo_slice_s(first, i); copy > 0) sg4::this_actor::sleep_for(copy);
      } else {  // copy or reduce
        const std::uint64_t data_bytes = step.count() * elem;
        // Where a ring's or a tree's Simple sends move at its block's load and store rate, that
        // rate already holds this step's loads and stores (memory_bytes_per_sent_byte), as NCCL's
        // collective primitives fuse them into the pass that sends (directCopySend: a ring
        // all_gather's own block, a broadcast root's data): running it as well would charge its
        // bytes twice. A point-to-point kernel copies a rank's own block as an operation of its own.
        const bool in_block_rate = step.protocol == Protocol::simple && !ctx.point_to_point && block_cap > 0;
        if (ctx.options.charge_compute && computes && data_bytes > 0 && !in_block_rate)
          sg4::this_actor::execute((step.kind == StepKind::copy ? 2.0 : 3.0) * static_cast<double>(data_bytes));
        if (record) ctx.records.push_back({stream_index, i, start, sg4::Engine::get_clock(), 0});
      }
    }
    // The kernel ends when the GPU has written its last data: its NVLink and PCIe sends it writes
    // itself, so they end with it; a network send it hands to NCCL's proxy thread, which posts
    // it to the NIC while the next call's kernel runs (the FIFO slots still pace the two calls).
    const double posted = sg4::Engine::get_clock();
    for (auto& [peer, f] : in_flight)
      if (f && !f->net) retire(f);
    if (ctx.passes > 1) {
      const double now = sg4::Engine::get_clock();
      double& end = ctx.pass_end[pass][static_cast<std::size_t>(stream.rank)];
      end = std::max(end, now > posted ? now : now - proxy_tail);
    }
  }
  retire_all();
  ++ctx.finished_streams;
}

// The most one stream's transfer over a route of class `route` may use (0: no cap), in a kernel of
// `blocks` thread blocks per GPU (Schedule::blocks_per_rank): a stream standing for k identical
// blocks (Schedule::blocks_per_stream) runs at up to k blocks' rate.
double stream_cap_bytes_per_s(const Model& model, const Schedule& schedule, double blocks, LatencyClass route,
                              Protocol protocol) {
  double block = model.channel_bandwidth_bytes_per_s(protocol);
  auto cap_at = [&block](double limit) {
    if (limit > 0) block = block > 0 ? std::min(block, limit) : limit;
  };
  if (protocol == Protocol::ll) {
    // LL's flag-carrying stores from every block of a GPU also pass one shared stage: each byte
    // costs a block's time plus the GPU's, so n blocks move n / (1/block + n/gpu) together.
    const double gpu = model.get("gpu_bandwidth_gbps.ll") * 1e9;
    if (block > 0 && gpu > 0) block = 1 / (1 / block + blocks / gpu);
    // And together they move no more than the GPU's LL ceiling, each block an equal share of it.
    cap_at(model.get("gpu_max_bandwidth_gbps.ll") * 1e9 / blocks);
    // A block sending to another node stores its lines into host memory: NCCL keeps a network
    // connection's LL send buffer there (src/transport/net.cc: under GPUDirect only the Simple
    // and LL128 buffers are GPU memory), so they cross PCIe, not NVLink, before the NIC reads them.
    if (route == LatencyClass::net)
      cap_at(model.get(is_point_to_point_kernel(schedule.algorithm) ? "channel_bandwidth_gbps.ll.net.p2p"
                                                                      : "channel_bandwidth_gbps.ll.net") *
             1e9);
  }
  // LL128's blocks share a ceiling of the GPU's too, where measured runs show one (Ampere).
  if (protocol == Protocol::ll128) cap_at(model.get("gpu_max_bandwidth_gbps.ll128") * 1e9 / blocks);
  return block * schedule.blocks_per_stream;
}

// Bytes of loads and stores a Simple thread block issues per byte it sends. NCCL's primitives load
// each source once and store it to every destination: a send of data the block has just received,
// copied or sent (a forward, a copy-and-send, one of several sends of one buffer) costs only its
// store; a send from a buffer a load and a store; a receive into a buffer the load of the FIFO
// and a store; a receive that reduces, or a local reduce, two loads and a store, which is the send's
// where it passes on a partial sum; a copy a load and a store. 0: the stream sends nothing with
// Simple.
double memory_bytes_per_sent_byte(const Stream& stream) {
  double memory = 0, sent = 0;
  const Step* previous = nullptr;
  for (const Step& step : stream.steps) {
    const double n = static_cast<double>(step.count());
    if (step.protocol == Protocol::simple) switch (step.kind) {
        case StepKind::send: {
          const Step* p = previous && previous->protocol == Protocol::simple ? previous : nullptr;
          sent += n;
          // A partial sum passed on (recvReduceSend) is stored once, to the peer: the reduce's
          // store was this send's. A final one is also kept (recvReduceCopySend).
          if (p && p->kind == StepKind::recv && p->reduce && !p->finalize && p->dst == step.src) break;
          const bool loaded = p && (p->kind == StepKind::send   ? p->src == step.src
                                    : p->kind == StepKind::copy ? p->src == step.src || p->dst == step.src
                                                                : p->dst == step.src);
          memory += (loaded ? 1 : 2) * n;
          break;
        }
        case StepKind::recv: memory += (step.reduce ? 3 : 2) * n; break;
        case StepKind::reduce: memory += 3 * n; break;
        case StepKind::copy: memory += 2 * n; break;
      }
    previous = &step;
  }
  return sent > 0 ? memory / sent : 0;
}

// Streams (thread blocks) per endpoint: how many kernels share a GPU's HBM, and how many blocks a
// rank's kernel has.
std::vector<unsigned> streams_per_endpoint(const Schedule& schedule) {
  std::vector<unsigned> n(static_cast<std::size_t>(schedule.endpoint_count()), 0);
  for (const auto& stream : schedule.streams) ++n[static_cast<std::size_t>(stream.rank)];
  return n;
}

// A receive-reduce kernel starts when the recv is posted, and k concurrent kernels on a GPU share
// its HBM, so it lasts at most 3 x bytes x k / HBM (k: streams on that GPU); the transfer it
// overlaps lasts at least wire bytes / (bottleneck link or channel cap). When every kernel of the
// schedule fits inside its transfer, none can change any time, and the engine skips them all
// (each is a SimGrid activity: skipping them roughly halves the run time of a large ring). Since
// transfers fill the receiver's FIFO, a chunk already there when its receive is posted would pay
// its kernel whole; a receiver that keeps pace (a ring's) never finds one: running every kernel
// moved no row of the accuracy map by more than 0.02%.
bool reduce_kernels_matter(const Schedule& schedule, const PlatformPlan& plan, const Model& model,
                           const double (&stream_cap_bytes_per_s)[3][3]) {
  const double hbm = model.hbm_bandwidth_bytes_per_s();
  const std::size_t elem = element_bytes(schedule.spec.type);
  const std::vector<unsigned> streams_on_rank = streams_per_endpoint(schedule);
  for (const auto& stream : schedule.streams)
    for (const auto& step : stream.steps) {
      if (schedule.is_switch(stream.rank)) continue;
      if (step.kind == StepKind::recv && step.reduce && step.overlap) return true;  // grouped kernels: keep
      if (step.kind != StepKind::recv || !step.reduce || step.count() == 0) continue;
      const PlatformRoute& route = plan.route(step.peer, stream.rank);
      double bottleneck = stream_cap_bytes_per_s[static_cast<int>(route.latency_class)][static_cast<int>(step.protocol)];
      for (const auto& [link, forward] : route.hops) {
        const double bw = plan.links()[link].bandwidth_bytes_per_s;
        bottleneck = bottleneck > 0 ? std::min(bottleneck, bw) : bw;
      }
      const double kernel_max_s =
          3.0 * static_cast<double>(step.count() * elem) * streams_on_rank[static_cast<std::size_t>(stream.rank)] / hbm;
      const double transfer_min_s = static_cast<double>(wire_bytes(step, elem)) / bottleneck;
      if (kernel_max_s > transfer_min_s) return true;
    }
  return false;
}

}  // namespace

Timeline simulate_in_process(const Schedule& schedule, const PlatformPlan& plan, const Model& model,
                             const EngineOptions& options) {
  int argc = 2;
  char arg0[] = "ccsim";
  char arg1[] = "--log=root.thres:critical";
  char* argv[] = {arg0, arg1, nullptr};
  sg4::Engine engine(&argc, argv);
  // Exact max-min sharing (reference/simgrid-notes.md §2b): no latency/bandwidth fudge factors, no
  // TCP ack cross-traffic, no TCP window bound. Must precede the platform.
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
  // Tens of thousands of actors (1024 ranks x 16 channels x 2 streams) each have a stack, which
  // was most of a large run's memory. The actors' own frames are shallow: the test suite ran in
  // 8 KiB stacks with guard pages, and a small all_reduce faulted at 4 KiB (Release build), so
  // 64 KiB leaves eight times that. A guard page turns an overflow into a fault instead of another
  // actor's corrupted stack, and a guarded stack is mapped rather than allocated, so only its
  // touched pages are resident (an unguarded one is in full); but it makes a stack two memory
  // mappings, so guards are kept while they stay well under the process's limit (mappings_for_stacks).
  sg4::Engine::set_config("contexts/stack-size:" + std::to_string(kActorStackKiB));
  const bool guards = 2 * schedule.streams.size() < mappings_for_stacks();
  sg4::Engine::set_config(std::string("contexts/guard-size:") + (guards ? "1" : "0"));
  // SimGrid's lazy action update (the default) re-rates only the flows an event touches, which pays
  // where events touch few of them (a ring's, a tree's). Every rank of a direct exchange talks to every
  // other at once, so most flows share a link with the one that ended and the lazy bookkeeping is
  // pure overhead: a full update of all flows ran `ccsim perf alltoall --nodes 8 -b 1G -e 1G -c 0`
  // in 2.9 s instead of 5.4 s (16 nodes: 94 s instead of 180 s), while it slowed the NVLS tree at
  // 32 nodes 3.5 times (README "Engine speed").
  const bool point_to_point = is_point_to_point_kernel(schedule.algorithm);
  if (point_to_point) sg4::Engine::set_config("network/optim:Full");

  Context ctx{schedule, plan, model, options, {}, true, {}, {}, {}, {}, {}, {}, {}, 0, 0, 1, 0, {}, {}, 0, {}, 0, 0, {},
              point_to_point};
  ctx.direct_nvlink_saving_s = model.get("nvlink_direct_hop_saving_us") * 1e-6;
  if (const double block = model.get("p2p_block_memory_gbps") * 1e9; block > 0 && !point_to_point) {
    // NCCL's collectives on a Simple FIFO (a ring's, a tree's, the network legs of NVLS and CollNet
    // trees) in slices of NCCL_STEPS/4 steps (ring all_reduce, all_gather and reduce_scatter) or
    // one step (the rest; reference/nccl-model.md §1.2); a step is a quarter of the ring's chunk.
    if (nccl::is_nccl_algo(schedule.algorithm)) {
      const CollectiveKind k = schedule.spec.kind;
      const bool two_steps = schedule.algorithm == "ring" && (k == CollectiveKind::all_reduce || k == CollectiveKind::all_gather ||
                                                              k == CollectiveKind::reduce_scatter);
      ctx.fifo_copy_s_per_byte = 1 / block;
      ctx.fifo_slice_bytes = model.get("chunk_bytes.simple") / 4 * (two_steps ? 2 : 1);
    }
  }
  const double blocks = std::max(1, schedule.blocks_per_rank());
  for (auto p : all_protocols())
    for (auto c : {LatencyClass::nvlink, LatencyClass::pcie, LatencyClass::net}) {
      ctx.hop_latency_s[static_cast<int>(c)][static_cast<int>(p)] = model.step_latency_s(c, p, schedule.algorithm);
      ctx.channel_cap_bytes_per_s[static_cast<int>(c)][static_cast<int>(p)] =
          stream_cap_bytes_per_s(model, schedule, blocks, c, p);
    }
  ctx.run_reduce_kernels =
      options.charge_compute && reduce_kernels_matter(schedule, plan, model, ctx.channel_cap_bytes_per_s);
  // NCCL's point-to-point kernel gives each operation's part a block of its own (and a send and a
  // receive of one round the same block, half its warps each): what that block loads and stores
  // bounds the part, however wide the links (p2p_block_memory_gbps). A ring's or a tree's block
  // loads and stores as its primitives do too (collective_block_memory_gbps, where a model sets it);
  // a tree's non-root block splits its threads, and with them that rate, between its two streams.
  const bool collective_block = schedule.algorithm == "ring" || schedule.algorithm == "tree";
  const char* block_parameter = point_to_point     ? "p2p_block_memory_gbps"
                                : collective_block ? "collective_block_memory_gbps"
                                                   : nullptr;
  if (const double block = block_parameter ? model.get(block_parameter) * 1e9 : 0; block > 0) {
    ctx.block_cap_bytes_per_s.assign(schedule.streams.size(), 0);
    for (std::size_t i = 0; i < schedule.streams.size(); ++i)
      if (const double per_byte = memory_bytes_per_sent_byte(schedule.streams[i]); per_byte > 0)
        ctx.block_cap_bytes_per_s[i] = block * schedule.streams[i].block_share * schedule.blocks_per_stream / per_byte;
  }
  auto* zone = sg4::create_full_zone("platform");
  // A host's speed is its HBM bandwidth: one flop stands for one byte of memory traffic.
  const double speed = model.hbm_bandwidth_bytes_per_s();
  for (int r = 0; r < plan.endpoints(); ++r)
    ctx.hosts.push_back(zone->create_host((r < plan.ranks() ? "rank" : "switch") + std::to_string(r), speed)->seal());
  std::vector<sg4::SplitDuplexLink*> links;
  for (std::size_t i = 0; i < plan.links().size(); ++i) {
    auto* l = zone->create_split_duplex_link("l" + std::to_string(i), plan.links()[i].bandwidth_bytes_per_s);
    l->set_latency(0)->seal();
    links.push_back(l);
  }
  for (const auto& [pair, route] : plan.routes()) {
    std::vector<sg4::LinkInRoute> hops;
    for (const auto& [link, forward] : route.hops)
      hops.emplace_back(links[link], forward ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
    zone->add_route(ctx.hosts[static_cast<std::size_t>(pair.first)]->get_netpoint(),
                    ctx.hosts[static_cast<std::size_t>(pair.second)]->get_netpoint(), nullptr, nullptr, hops, false);
  }
  zone->seal();

  if (options.back_to_back) {
    ctx.passes = 2;
    // Between rooted calls timed back to back a rank pays the launch latency, not the set-up of
    // its blocks (block_setup_s), which only the first call pays: the NCCL 2.8 broadcasts of
    // the accuracy map take none of it from 8 MiB up (charged on every call, ABCI's 8-GPU one
    // went from 4.4% to 17.1% median error), though they do at 1-4 MiB (docs/accuracy-history.md).
    ctx.launch_gap_s = kernel_launch_s(schedule, model);
    const std::vector<unsigned> streams_on = streams_per_endpoint(schedule);
    for (unsigned n : streams_on) ctx.rank_barriers.push_back(n > 0 ? sg4::Barrier::create(n) : nullptr);
    for (auto& end : ctx.pass_end) end.assign(streams_on.size(), 0);
  }
  ctx.steps_total = schedule.step_count() * static_cast<std::uint64_t>(ctx.passes);
  ctx.next_report = std::chrono::steady_clock::now() + Context::kProgressEvery;
  for (std::uint32_t s = 0; s < schedule.streams.size(); ++s) {
    const Stream& stream = schedule.streams[s];
    sg4::ActorPtr actor = sg4::Actor::create("r" + std::to_string(stream.rank) + "c" + std::to_string(stream.channel),
                                             ctx.hosts[static_cast<std::size_t>(stream.rank)], [&ctx, s] { run_stream(ctx, s); });
    // Every stream takes its first call's messages from the start (before any actor runs, so
    // that no early send waits for its receiver); later calls' messages once it starts them.
    accept_messages(ctx, stream, 0, actor);
  }
  engine.run();
  if (ctx.finished_streams != schedule.streams.size())
    throw Error("simulation of " + schedule.algorithm + " deadlocked: " +
                std::to_string(schedule.streams.size() - ctx.finished_streams) + " streams never finished");

  Timeline timeline;
  timeline.makespan_s = sg4::Engine::get_clock();
  if (ctx.passes > 1) {
    timeline.makespan_s = *std::max_element(ctx.pass_end[0].begin(), ctx.pass_end[0].end());
    for (std::size_t r = 0; r < ctx.pass_end[0].size(); ++r)
      if (ctx.rank_barriers[r]) timeline.period_s = std::max(timeline.period_s, ctx.pass_end[1][r] - ctx.pass_end[0][r]);
  }
  timeline.messages = ctx.messages;  // simulated: a folded stream's message stands for its blocks' ones
  timeline.steps = std::move(ctx.records);
  std::sort(timeline.steps.begin(), timeline.steps.end(), [](const StepRecord& a, const StepRecord& b) {
    return a.stream != b.stream ? a.stream < b.stream : a.step < b.step;
  });
  return timeline;
}

}  // namespace ccsim
