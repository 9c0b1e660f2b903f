// The CUDA backend on a real GPU: kernels against the host arithmetic on random data, odd sizes and
// misaligned offsets; the executor against the collective definitions. Without a usable GPU (or
// without CUDA in the build) the program says why and exits 77, which ctest reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstring>
#include <iostream>

#include "kernels/gpu.hpp"
#include "kernels/numeric.hpp"
#include "kernels/reference.hpp"
#include "sim/algorithms/registry.hpp"

using namespace ccsim;
using namespace ccsim::kernels;

namespace {

std::vector<std::byte> random_elements(DataType type, ReduceOp op, int source, std::uint64_t count) {
  std::vector<std::byte> out(count * element_bytes(type));
  dispatch(type, [&](auto tag) {
    using T = decltype(tag);
    T* p = reinterpret_cast<T*>(out.data());
    for (std::uint64_t i = 0; i < count; ++i) p[i] = test_value<T>(op, 7, source, i);
  });
  return out;
}

// The host's answer: fold the sources left to right in the computing type, as the CPU executor does.
std::vector<std::byte> host_reduce(DataType type, ReduceOp op, const std::vector<std::vector<std::byte>>& sources,
                                   std::uint64_t count, bool last, int nranks) {
  std::vector<std::byte> out(count * element_bytes(type));
  dispatch(type, [&](auto tag) {
    using T = decltype(tag);
    using E = Element<T>;
    T* o = reinterpret_cast<T*>(out.data());
    for (std::uint64_t i = 0; i < count; ++i) {
      auto v = E::load(reinterpret_cast<const T*>(sources[0].data())[i]);
      for (std::size_t s = 1; s < sources.size(); ++s) v = combine(op, v, E::load(reinterpret_cast<const T*>(sources[s].data())[i]));
      if (last) v = finalize(op, v, nranks);
      o[i] = E::store(v);
    }
  });
  return out;
}

}  // namespace

TEST_CASE("reduce-copy matches the host arithmetic for every type, op, source count, size and offset") {
  for (DataType type : all_data_types())
    for (ReduceOp op : all_reduce_ops())
      for (int k : {1, 2, 3, 8})
        for (std::uint64_t count : {1ULL, 7ULL, 4099ULL, 1000003ULL})
          for (auto [so, dof] : {std::pair<std::uint64_t, std::uint64_t>{0, 0}, {1, 1}, {3, 0}, {0, 5}}) {
            if (count == 1000003ULL && (k == 3 || so != dof)) continue;  // the large size: aligned and shifted alike
            std::vector<std::vector<std::byte>> sources;
            for (int s = 0; s < k; ++s) sources.push_back(random_elements(type, op, s, count));
            const bool last = op == ReduceOp::avg || op == ReduceOp::lor;
            const auto want = host_reduce(type, op, sources, count, last, k);
            for (int m : {1, 2}) {  // one destination and k <= 2: the fixed-shape kernel
              const auto got = gpu::reduce_copy_on_device(0, type, op, sources, m, count, so, dof, last, k);
              INFO(to_string(type), " ", to_string(op), " k=", k, " m=", m, " count=", count, " offsets=", so, ",", dof);
              REQUIRE(got.size() == static_cast<std::size_t>(m));
              for (const auto& g : got) CHECK(std::memcmp(g.data(), want.data(), want.size()) == 0);
            }
          }
}

TEST_CASE("reduce-copy is right where every thread keeps 8 vectors in flight") {
  // 4M vectors: more than a full grid of 8-vector threads on any GPU up to 256 multiprocessors.
  for (DataType type : {DataType::fp32, DataType::bf16, DataType::int8})
    for (auto [op, k] : {std::pair<ReduceOp, int>{ReduceOp::sum, 2}, {ReduceOp::avg, 1}}) {
      const std::uint64_t count = (4ULL << 20) * (16 / element_bytes(type)) + 3;
      std::vector<std::vector<std::byte>> sources;
      for (int s = 0; s < k; ++s) sources.push_back(random_elements(type, op, s, count));
      const bool last = op == ReduceOp::avg;
      const auto want = host_reduce(type, op, sources, count, last, 8);
      for (std::uint64_t offset : {0ULL, 1ULL}) {
        const auto got = gpu::reduce_copy_on_device(0, type, op, sources, 1, count, offset, offset, last, 8);
        INFO(to_string(type), " ", to_string(op), " k=", k, " offset=", offset);
        REQUIRE(got.size() == 1);
        CHECK(std::memcmp(got[0].data(), want.data(), want.size()) == 0);
      }
    }
}

TEST_CASE("the copy kernel copies every byte at any size and alignment") {
  for (std::uint64_t bytes : {1ULL, 15ULL, 16ULL, 17ULL, 4096ULL + 13, (1ULL << 22) + 5, (80ULL << 20) + 5})
    for (std::uint64_t so : {0ULL, 1ULL, 8ULL, 15ULL})
      for (std::uint64_t dof : {0ULL, 3ULL, 8ULL}) {
        std::vector<std::byte> src(bytes);
        for (std::uint64_t i = 0; i < bytes; ++i) src[i] = static_cast<std::byte>(mix64(i + 1) | 1);
        const auto got = gpu::copy_on_device(0, src, so, dof);
        INFO("bytes=", bytes, " offsets=", so, ",", dof);
        CHECK(got == src);
      }
}

TEST_CASE("the CUDA executor computes every algorithm's collectives right with virtual ranks") {
  std::uint64_t runs = 0;
  for (const auto& al : algo::algorithms())
    for (CollectiveKind kind : all_collectives()) {
      if (!al.supports(kind)) continue;
      for (int n : {3, 8}) {
        CollectiveSpec spec;
        spec.kind = kind;
        spec.type = DataType::fp32;
        spec.op = is_reduction(kind) ? ReduceOp::avg : ReduceOp::sum;
        spec.nranks = n;
        spec.root = 1;  // not the last endpoint: each endpoint's buffers must be sized by its own layout
        spec.count = count_is_per_rank(kind) ? 1031 : 37ULL * n;
        algo::AlgorithmOptions o;
        o.channels = 2;
        o.chunk_bytes = 256;
        o.nvls = true;
        o.sharp = true;
        o.ranks_per_node = al.node_aware && n % 4 == 0 ? 4 : 0;
        Schedule schedule;
        try {
          schedule = algo::compile(al.name, spec, o);
        } catch (const Error&) {
          continue;  // a rank count the algorithm refuses
        }
        for (bool in_place : {false, true}) {
          gpu::ExecutorOptions eo;
          eo.in_place = in_place;
          eo.iterations = 1;
          eo.warmup = 1;
          INFO(al.name, " ", to_string(kind), " N=", n, std::string(in_place ? " in place" : " out of place"));
          gpu::GpuRunResult r;
          try {
            r = gpu::run_schedule(schedule, eo);
          } catch (const std::exception& e) {  // name the schedule, and go on to the others
            FAIL_CHECK(e.what());
            continue;
          }
          CHECK(r.checked);
          CHECK(r.check.checked > 0);
          CHECK(r.check.wrong == 0);
          CHECK(r.time_s > 0);
          CHECK(r.timeline.steps.size() == schedule.step_count());
          ++runs;
        }
      }
    }
  CHECK(runs > 50);
}

TEST_CASE("the executor's step timings are ordered within a stream") {
  CollectiveSpec spec;
  spec.nranks = 8;
  spec.count = 1 << 20;
  algo::AlgorithmOptions o;
  o.channels = 2;
  o.chunk_bytes = 64 << 10;
  const Schedule schedule = algo::compile("ring", spec, o);
  const auto r = gpu::run_schedule(schedule, {});
  REQUIRE(r.check.wrong == 0);
  std::vector<double> last_end(schedule.streams.size(), 0);
  for (const auto& s : r.timeline.steps) {
    CHECK(s.end_s >= s.start_s);
    CHECK(s.start_s >= last_end[s.stream] - 1e-6);  // event resolution is about half a microsecond
    last_end[s.stream] = s.end_s;
  }
}

int main(int argc, char** argv) {
  const gpu::Inventory inv = gpu::inventory();
  if (!gpu::built_with_cuda() || !inv.problem.empty()) {
    std::cout << "skipped: " << (gpu::built_with_cuda() ? "no usable GPU: " + inv.problem : std::string("built without CUDA"))
              << "\n";
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
