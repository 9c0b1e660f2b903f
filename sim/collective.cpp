#include "sim/collective.hpp"

#include <string>

#include "sim/error.hpp"

namespace ccsim {

namespace {
constexpr std::string_view kNames[] = {"broadcast", "reduce",  "all_reduce", "reduce_scatter", "all_gather",
                                       "gather",    "scatter", "alltoall",   "sendrecv"};


std::string squash(std::string_view name) {
  std::string s;
  for (char c : name)
    if (c != '_' && c != '-') s += c;
  return s;
}
}  // namespace

std::string_view to_string(CollectiveKind kind) { return kNames[static_cast<int>(kind)]; }

CollectiveKind parse_collective(std::string_view name) {
  std::string wanted = squash(name);
  if (wanted.size() > 5 && wanted.ends_with("perf")) wanted.resize(wanted.size() - 4);  // all_reduce_perf
  for (auto kind : all_collectives())
    if (squash(to_string(kind)) == wanted) return kind;
  std::string known;
  for (auto kind : all_collectives()) known += (known.empty() ? "" : ", ") + std::string(to_string(kind));
  throw Error("unknown collective \"" + std::string(name) + "\" (expected one of: " + known + ")");
}

const std::vector<CollectiveKind>& all_collectives() {
  static const std::vector<CollectiveKind> all = {
      CollectiveKind::broadcast, CollectiveKind::reduce,  CollectiveKind::all_reduce,
      CollectiveKind::reduce_scatter, CollectiveKind::all_gather, CollectiveKind::gather,
      CollectiveKind::scatter,   CollectiveKind::alltoall, CollectiveKind::sendrecv};
  return all;
}

bool count_is_per_rank(CollectiveKind k) {
  return k == CollectiveKind::all_reduce || k == CollectiveKind::broadcast || k == CollectiveKind::reduce ||
         k == CollectiveKind::sendrecv;
}

bool is_reduction(CollectiveKind kind) {
  return kind == CollectiveKind::all_reduce || kind == CollectiveKind::reduce ||
         kind == CollectiveKind::reduce_scatter;
}

bool is_rooted(CollectiveKind kind) {
  return kind == CollectiveKind::broadcast || kind == CollectiveKind::reduce || kind == CollectiveKind::gather ||
         kind == CollectiveKind::scatter;
}

std::uint64_t count_for_size(CollectiveKind kind, DataType type, Bytes size, int nranks) {
  std::uint64_t count = size / element_bytes(type);
  if (!count_is_per_rank(kind)) count -= count % static_cast<std::uint64_t>(nranks);
  return count;
}

double bus_bandwidth_factor(CollectiveKind kind, int nranks) {
  const double n = nranks;
  switch (kind) {
    case CollectiveKind::all_reduce: return 2.0 * (n - 1) / n;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
    case CollectiveKind::alltoall:
    case CollectiveKind::gather:
    case CollectiveKind::scatter: return (n - 1) / n;
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce:
    case CollectiveKind::sendrecv: return 1.0;
  }
  return 1.0;
}

std::uint64_t CollectiveSpec::block_count() const {
  return count_is_per_rank(kind) ? count : count / static_cast<std::uint64_t>(nranks);
}

std::uint64_t CollectiveSpec::input_count(int rank) const {
  const std::uint64_t block = block_count();
  switch (kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::gather: return block;
    case CollectiveKind::scatter: return rank == root ? count : 0;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::alltoall: return count;
    default: return count;
  }
}

std::uint64_t CollectiveSpec::output_count(int rank) const {
  const std::uint64_t block = block_count();
  switch (kind) {
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::scatter: return block;
    case CollectiveKind::gather: return rank == root ? count : 0;
    default: return count;
  }
}

std::uint64_t CollectiveSpec::in_place_input_offset(int rank) const {
  if (kind == CollectiveKind::all_gather || kind == CollectiveKind::gather)
    return static_cast<std::uint64_t>(rank) * (count / static_cast<std::uint64_t>(nranks));
  return 0;
}

std::uint64_t CollectiveSpec::in_place_output_offset(int rank) const {
  if (kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::scatter)
    return static_cast<std::uint64_t>(rank) * (count / static_cast<std::uint64_t>(nranks));
  return 0;
}

void CollectiveSpec::validate() const {
  if (nranks < 1) throw Error("rank count must be at least 1, got " + std::to_string(nranks));
  if (count == 0) throw Error("element count must be positive");
  if (is_rooted(kind) && (root < 0 || root >= nranks))
    throw Error("root " + std::to_string(root) + " is not a rank of a " + std::to_string(nranks) +
                "-rank communicator");
  if (!count_is_per_rank(kind) && count % static_cast<std::uint64_t>(nranks) != 0)
    throw Error(std::string(to_string(kind)) + " needs a count divisible by the rank count (" +
                std::to_string(count) + " elements over " + std::to_string(nranks) + " ranks)");
}

}  // namespace ccsim
