#include <doctest/doctest.h>

#include <algorithm>

#include <cmath>
#include <set>
#include <string>

#include "kernels/cpu_executor.hpp"
#include "kernels/device_plan.hpp"
#include "sim/algorithms/registry.hpp"
#include "sim/algorithms/tree.hpp"
#include "sim/error.hpp"

using namespace ccsim;

namespace {

CollectiveSpec spec_of(CollectiveKind kind, int n, std::uint64_t count, int root = 0) {
  CollectiveSpec s;
  s.kind = kind;
  s.nranks = n;
  s.count = count;
  s.root = root;
  s.type = DataType::int32;
  return s;
}

algo::AlgorithmOptions one_channel(Bytes chunk = 1 << 20, int ranks_per_node = 0) {
  algo::AlgorithmOptions o;
  o.channels = 1;
  o.chunk_bytes = chunk;
  o.ranks_per_node = ranks_per_node;
  return o;
}

// Shifts the destination of the last data-carrying recv of the schedule by one element.
bool corrupt_last_recv(Schedule& s) {
  for (auto stream = s.streams.rbegin(); stream != s.streams.rend(); ++stream)
    for (auto step = stream->steps.rbegin(); step != stream->steps.rend(); ++step)
      if (step->kind == StepKind::recv && step->dst.count > 0) {
        if (step->dst.offset > 0) --step->dst.offset;
        else ++step->dst.offset;
        return true;
      }
  return false;
}

}  // namespace

TEST_CASE("the data check catches one corrupted step in every algorithm's schedules") {
  for (const auto& a : algo::algorithms())
    for (auto kind : a.collectives) {
      INFO(a.name, " ", std::string(to_string(kind)));
      const int n = 6;
      const std::uint64_t count = 12 * 37;
      const bool multi_node =
          a.name == "tree" || a.name == "hierarchical" || a.name == "nvls_tree" || a.name.rfind("collnet", 0) == 0;
      auto options = one_channel(256, multi_node ? 2 : 0);  // 3 nodes of 2 GPUs
      options.nvls = true;
      options.sharp = true;
      Schedule s = algo::compile(a.name, spec_of(kind, n, count, 2), options);
      REQUIRE(kernels::check(s, false).wrong == 0);
      REQUIRE(corrupt_last_recv(s));
      bool caught = false;
      try {
        s.validate();
        caught = kernels::check(s, false).wrong > 0;
      } catch (const Error&) {
        caught = true;  // a structurally broken schedule is refused outright
      }
      CHECK(caught);
    }
}

TEST_CASE("per-rank volumes match each algorithm's known cost") {
  const std::uint64_t bytes = 4 * 960;  // S, divisible by every N below
  auto volumes = [&](const std::string& algo, CollectiveKind kind, int n, int ppn = 0) {
    return rank_volumes(algo::compile(algo, spec_of(kind, n, 960), one_channel(1 << 20, ppn)));
  };
  SUBCASE("alltoall: (N-1)/N of the buffer leaves each rank") {
    for (const char* a : {"direct", "pairwise"})
      for (int n : {2, 5, 8})
        for (const auto& v : volumes(a, CollectiveKind::alltoall, n)) {
          CHECK(v.sent_bytes == bytes * (n - 1) / n);
          CHECK(v.received_bytes == bytes * (n - 1) / n);
        }
  }
  SUBCASE("recursive doubling all_reduce: log2(N) x S per rank for a power of two") {
    for (int n : {2, 4, 8, 16})
      for (const auto& v : volumes("recursive_doubling", CollectiveKind::all_reduce, n))
        CHECK(v.sent_bytes == bytes * static_cast<std::uint64_t>(std::log2(n)));
  }
  SUBCASE("halving-doubling all_reduce: 2(N-1)/N x S per rank for a power of two") {
    for (int n : {2, 4, 8, 16})
      for (const auto& v : volumes("halving_doubling", CollectiveKind::all_reduce, n))
        CHECK(v.sent_bytes == 2 * bytes * (n - 1) / n);
  }
  SUBCASE("tree all_reduce: about 2S through each interior rank, S at the ends") {
    const auto v = volumes("tree", CollectiveKind::all_reduce, 8);  // one node: a chain
    CHECK(v[0].sent_bytes == bytes);      // root: broadcast down only
    CHECK(v[7].sent_bytes == bytes);      // tail: reduce up only
    for (int r = 1; r < 7; ++r) CHECK(v[static_cast<std::size_t>(r)].sent_bytes == 2 * bytes);
  }
  SUBCASE("nvls all_reduce: S(N+1)/N each way per GPU, through the switch") {
    for (int n : {2, 4, 8}) {
      auto o = one_channel();
      o.nvls = true;
      const Schedule s = algo::compile("nvls", spec_of(CollectiveKind::all_reduce, n, 960), o);
      const auto v = rank_volumes(s);
      REQUIRE(v.size() == static_cast<std::size_t>(n + 1));  // the ranks, then the switch
      for (int r = 0; r < n; ++r) {
        CHECK(v[static_cast<std::size_t>(r)].sent_bytes == bytes * (n + 1) / n);
        CHECK(v[static_cast<std::size_t>(r)].received_bytes == bytes * (n + 1) / n);
      }
    }
  }
  SUBCASE("PAT: ceil(log2 N) aggregated messages per rank, (N-1)/N of the buffer") {
    for (auto kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter})
      for (int n : {2, 3, 5, 8, 12}) {
        const Schedule s = algo::compile("pat", spec_of(kind, n, 960), one_channel());
        for (const auto& stream : s.streams) {
          std::uint64_t messages = 0, sent = 0;
          for (const auto& step : stream.steps)
            if (step.kind == StepKind::send) {
              messages += step.fused ? 0 : 1;
              sent += step.src.count * 4;
            }
          CHECK(messages == static_cast<std::uint64_t>(std::ceil(std::log2(n))));
          CHECK(sent == bytes * (n - 1) / n);
        }
      }
  }
  SUBCASE("Bruck all_gather: ceil(log2 N) sends per rank") {
    for (int n : {2, 3, 5, 8, 12})
      for (const auto& v : volumes("bruck", CollectiveKind::all_gather, n))
        CHECK(v.sends == static_cast<std::uint64_t>(std::ceil(std::log2(n))));
  }
  SUBCASE("binomial broadcast: N-1 messages of S in all") {
    for (int n : {2, 6, 8}) {
      std::uint64_t total = 0;
      for (const auto& v : volumes("binomial", CollectiveKind::broadcast, n)) total += v.sent_bytes;
      CHECK(total == bytes * (n - 1));
    }
  }
}

TEST_CASE("the double binary tree: two spanning trees, no node interior in both") {
  for (int n = 1; n <= 64; ++n) {
    std::vector<int> children_in[2];
    for (int which : {0, 1}) {
      const auto parent = algo::double_binary_tree(n, which);
      int roots = 0;
      std::vector<int> kids(static_cast<std::size_t>(n), 0);
      for (int x = 0; x < n; ++x) {
        const int p = parent[static_cast<std::size_t>(x)];
        if (p < 0) ++roots;
        else ++kids[static_cast<std::size_t>(p)];
        // Every node reaches the root without a cycle.
        int hops = 0;
        for (int y = x; parent[static_cast<std::size_t>(y)] >= 0 && hops <= n; y = parent[static_cast<std::size_t>(y)]) ++hops;
        REQUIRE(hops < n + 1);
      }
      CHECK(roots == 1);
      for (int k : kids) CHECK(k <= 2);
      children_in[which] = kids;
    }
    if (n % 2 == 0 && n > 2) {
      int both = 0;
      for (int x = 0; x < n; ++x)
        if (children_in[0][static_cast<std::size_t>(x)] > 0 && children_in[1][static_cast<std::size_t>(x)] > 0) ++both;
      INFO("n=", n);
      CHECK(both <= 2);  // the two roots' single children aside, interior nodes differ
    }
  }
}

TEST_CASE("tree chains follow the channel's ring inside each node, headed by its first GPU") {
  // 2 nodes of 4 GPUs; the rings the planner laid out give each channel's order inside node 0.
  auto o = one_channel(1 << 20, 4);
  o.channels = 2;
  o.rings = {{2, 0, 1, 3, 7, 5, 4, 6}, {3, 1, 0, 2, 6, 4, 5, 7}};
  const Schedule s = algo::compile("tree", spec_of(CollectiveKind::all_reduce, 8, 1024), o);
  for (const auto& stream : s.streams) {
    const auto& ring = o.rings[static_cast<std::size_t>(stream.channel)];
    const int pos = static_cast<int>(std::find(ring.begin(), ring.begin() + 4, stream.rank % 4) - ring.begin());
    for (const auto& step : stream.steps) {
      if (step.kind != StepKind::send) continue;
      INFO("channel ", stream.channel, " rank ", stream.rank, " sends to ", step.peer);
      if (step.peer / 4 != stream.rank / 4) {
        CHECK(pos == 0);  // only the head crosses nodes
        CHECK(step.peer % 4 == stream.rank % 4);
      } else {
        const int peer_pos = static_cast<int>(std::find(ring.begin(), ring.begin() + 4, step.peer % 4) - ring.begin());
        CHECK(std::abs(peer_pos - pos) == 1);  // chain neighbours in ring order
      }
    }
  }
  CHECK(kernels::check(s, false).wrong == 0);
  // Rooted: the root heads its node's chain, the rest of the chain in ring order.
  for (int root : {1, 6}) {
    INFO("root ", root);
    CHECK(kernels::check(algo::compile("tree", spec_of(CollectiveKind::broadcast, 8, 1024, root), o), false).wrong == 0);
    CHECK(kernels::check(algo::compile("tree", spec_of(CollectiveKind::reduce, 8, 1024, root), o), false).wrong == 0);
  }
}

TEST_CASE("algorithms refuse what they cannot serve, with the reason") {
  CHECK_THROWS_WITH_AS(algo::compile("bruck", spec_of(CollectiveKind::all_reduce, 4, 16), one_channel()),
                       doctest::Contains("bruck does not implement all_reduce"), Error);
  CHECK_THROWS_WITH_AS(algo::compile("tree", spec_of(CollectiveKind::all_reduce, 6, 16), one_channel(1 << 20, 4)),
                       doctest::Contains("do not split into nodes"), Error);
  CHECK_THROWS_WITH_AS(algo::compile("direct", spec_of(CollectiveKind::alltoall, 4, 10), one_channel()),
                       doctest::Contains("divisible by the rank count"), Error);
  CHECK_THROWS_WITH_AS(algo::compile("nvls", spec_of(CollectiveKind::all_reduce, 4, 16), one_channel()),
                       doctest::Contains("nvls needs NVSwitches that reduce and multicast"), Error);
  auto with_nvls = one_channel();
  with_nvls.nvls = true;
  auto prod = spec_of(CollectiveKind::all_reduce, 4, 16);
  prod.op = ReduceOp::prod;
  CHECK_THROWS_WITH_AS(algo::compile("nvls", prod, with_nvls), doctest::Contains("not prod"), Error);
  auto float_max = spec_of(CollectiveKind::all_reduce, 4, 16);
  float_max.op = ReduceOp::max;
  float_max.type = DataType::fp32;
  CHECK_THROWS_WITH_AS(algo::compile("nvls", float_max, with_nvls), doctest::Contains("float with sum only"), Error);
  CHECK_THROWS_WITH_AS(algo::compile("collnet_direct", spec_of(CollectiveKind::all_reduce, 4, 16), one_channel(1 << 20, 2)),
                       doctest::Contains("needs network switches that reduce"), Error);
  with_nvls.ranks_per_node = 2;
  CHECK_THROWS_WITH_AS(algo::compile("nvls", spec_of(CollectiveKind::all_reduce, 4, 16), with_nvls),
                       doctest::Contains("nvls across nodes needs network switches that reduce"), Error);
  with_nvls.sharp = true;
  CHECK_THROWS_WITH_AS(algo::compile("nvls", spec_of(CollectiveKind::all_gather, 4, 16), with_nvls),
                       doctest::Contains("nvls across nodes serves all_reduce only"), Error);
}

TEST_CASE("NVLS across nodes with SHARP: each head's node sum through its rail's switch, proven on data") {
  for (int ppn : {1, 2, 4}) {
    for (auto op : {ReduceOp::sum, ReduceOp::avg, ReduceOp::max}) {
      INFO("ppn ", ppn, " op ", std::string(to_string(op)));
      auto spec = spec_of(CollectiveKind::all_reduce, 8, 1001);
      spec.op = op;
      auto o = one_channel(256, ppn);
      o.channels = 2;
      o.nvls = o.sharp = true;
      const Schedule s = algo::compile("nvls", spec, o);
      // One NVLS switch per node and one SHARP switch per rail (local GPU index).
      REQUIRE(s.switches.size() == static_cast<std::size_t>(8 / ppn + ppn));
      CHECK(s.switches.back().kind == SwitchEndpoint::Kind::sharp);
      CHECK(kernels::check(s, false).wrong == 0);
      CHECK(kernels::check(s, true).wrong == 0);
    }
  }
}

TEST_CASE("hierarchical composes any per-level algorithms and proves them on data") {
  for (const auto& levels : std::vector<std::vector<std::string>>{
           {"ring", "ring"}, {"direct", "halving_doubling"}, {"recursive_doubling", "recursive_doubling"},
           {"ring", "tree"}, {"direct", "direct"}}) {
    if (levels[0] == "recursive_doubling") continue;  // no reduce_scatter: refused below
    for (int ppn : {1, 2, 4}) {
      for (auto op : {ReduceOp::sum, ReduceOp::avg, ReduceOp::lor}) {
        auto spec = spec_of(CollectiveKind::all_reduce, 12, 1001);
        spec.op = op;
        auto o = one_channel(256, ppn);
        o.channels = 2;
        o.levels = levels;
        INFO(levels[0], "/", levels[1], " ppn=", ppn, " op=", std::string(to_string(op)));
        if (levels[1] == "tree") {
          CHECK_THROWS_WITH_AS(algo::compile("hierarchical", spec, o), doctest::Contains("cannot be nested"), Error);
          continue;
        }
        const Schedule s = algo::compile("hierarchical", spec, o);
        for (bool in_place : {false, true}) CHECK(kernels::check(s, in_place).wrong == 0);
      }
    }
  }
  auto o = one_channel(256, 4);
  o.levels = {"recursive_doubling", "ring"};
  CHECK_THROWS_WITH_AS(algo::compile("hierarchical", spec_of(CollectiveKind::all_reduce, 8, 64), o),
                       doctest::Contains("recursive_doubling does not implement reduce_scatter"), Error);
}

TEST_CASE("LL and LL128 chains stream chunks in pieces inside a node, whole chunks across nodes") {
  // Hops: a piece is one thread block pass (LL 4096 data bytes, LL128 38400); NCCL's proxy moves
  // whole FIFO steps between nodes, and Simple whole slices everywhere.
  const std::uint64_t ll_piece = 4096 / 4, ll128_piece = 38400 / 4;  // int32 elements
  for (Protocol protocol : {Protocol::ll, Protocol::ll128, Protocol::simple}) {
    const std::uint64_t grain = protocol == Protocol::ll ? ll_piece : ll128_piece;
    for (int ppn : {0, 4}) {
      auto o = one_channel(10 * grain * 4, ppn);  // chunks of 10 pieces
      o.channels = 2;
      o.protocol = protocol;
      struct Case {
        const char* algorithm;
        CollectiveKind kind;
      };
      for (const Case c : {Case{"ring", CollectiveKind::broadcast}, Case{"ring", CollectiveKind::reduce},
                           Case{"tree", CollectiveKind::all_reduce}, Case{"tree", CollectiveKind::broadcast},
                           Case{"tree", CollectiveKind::reduce}}) {
        for (int root : {0, 5}) {
          auto spec = spec_of(c.kind, 8, 2 * 25 * grain + 7, root);  // ragged last chunk and piece
          for (ReduceOp op : {ReduceOp::avg, ReduceOp::max}) {  // avg: the final touch lands once
            spec.op = op;
            INFO(c.algorithm, " ", to_string(c.kind), " ", to_string(protocol), " ppn ", ppn, " root ", root, " ", to_string(op));
            const Schedule s = algo::compile(c.algorithm, spec, o);
            CHECK(kernels::check(s, false).wrong == 0);
            CHECK(kernels::check(s, true).wrong == 0);
            // The GPU backend's issue order and staging slots take the pieces too.
            CHECK(kernels::check_with(s, false, 1, [&](std::vector<kernels::RankMemory>& memory) {
                    kernels::execute_plan(s, kernels::plan_for_device(s), memory);
                  }).wrong == 0);
            int parts = 0, whole_across = 0;
            for (const auto& stream : s.streams)
              for (const auto& step : stream.steps) {
                if (step.kind != StepKind::send) continue;
                const bool across = ppn > 0 && step.peer / ppn != stream.rank / ppn;
                CHECK(step.src.count <= (protocol == Protocol::simple || across ? 10 * grain : grain));
                if (across) CHECK(!step.part);
                parts += step.part ? 1 : 0;
                whole_across += across && step.src.count > grain ? 1 : 0;
              }
            if (protocol == Protocol::simple) CHECK(parts == 0);
            else CHECK(parts > 0);
            if (ppn > 0) CHECK(whole_across > 0);
          }
        }
      }
    }
  }
}

TEST_CASE("a direct exchange issues its sends together, 8 per thread block as NCCL's do, pairwise one round at a time") {
  // A stream of several blocks (a folded one) issues 8 per block together.
  for (const auto& [channels, blocks] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}}) {
    auto o = one_channel();
    o.channels = channels;
    o.blocks = blocks;
    const auto spec = spec_of(CollectiveKind::alltoall, 24, 24 * 64);
    const Schedule direct = algo::compile("direct", spec, o);
    CHECK(kernels::check(direct, false).wrong == 0);
    for (const auto& stream : direct.streams) {
      // Runs of sends issued together: each run ends with a send not marked to go with the next.
      std::vector<int> runs{0};
      for (const auto& step : stream.steps) {
        if (step.kind != StepKind::send) continue;
        ++runs.back();
        if (!step.overlap) runs.push_back(0);
      }
      runs.pop_back();
      const int together = 8 * channels * blocks;
      int sends = 0;
      for (std::size_t k = 0; k < runs.size(); ++k) {
        CHECK(runs[k] == std::min(together, 23 - sends));
        sends += runs[k];
      }
      CHECK(sends == 23);
    }
    for (const auto& stream : algo::compile("pairwise", spec, o).streams)
      for (const auto& step : stream.steps)
        if (step.kind == StepKind::send) CHECK(!step.overlap);
  }
}
