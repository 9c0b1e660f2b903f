#include "sim/algorithms/binomial.hpp"

#include "sim/algorithms/pipeline.hpp"

namespace ccsim::algo {

namespace {

struct Node {
  int n = 1, root = 0, v = 0;
  int real(int rel) const { return (rel + root) % n; }
  int lowbit() const { return v == 0 ? n : (v & -v); }  // the root spans everything
  int parent() const { return v - (v & -v); }
  std::vector<int> children_ascending() const {
    std::vector<int> c;
    for (int m = 1; m < lowbit() && v + m < n; m <<= 1) c.push_back(v + m);
    return c;
  }
  int span(int rel) const {  // relative ranks [rel, rel + span) form rel's subtree
    const int low = rel == 0 ? n : (rel & -rel);
    return std::min(low, n - rel);
  }
};

void broadcast(const Node& t, const Part& part, StepWriter& w) {
  const Region in{BufferId::input, part.offset, part.count}, out{BufferId::output, part.offset, part.count};
  if (t.v == 0) w.copy(in, out);
  else w.recv(t.real(t.parent()), out);
  const auto kids = t.children_ascending();
  for (auto it = kids.rbegin(); it != kids.rend(); ++it) w.send(t.real(*it), out, true);
}

void reduce(const Node& t, const Part& part, StepWriter& w) {
  const Region in{BufferId::input, part.offset, part.count}, out{BufferId::output, part.offset, part.count};
  const auto kids = t.children_ascending();
  if (kids.empty() && t.v == 0) w.copy(in, out, true);
  for (std::size_t i = 0; i < kids.size(); ++i)
    w.recv_reduce(t.real(kids[i]), i == 0 ? in : out, out, t.v == 0 && i + 1 == kids.size());
  if (t.v != 0) w.send(t.real(t.parent()), kids.empty() ? in : out, true);
}

// Gather and scatter stage blocks in a scratch buffer ordered by relative rank, so that a subtree's
// blocks are one span.
void gather(const Node& t, const Part& part, std::uint64_t block, StepWriter& w) {
  const Region in{BufferId::input, part.offset, part.count};
  w.copy(in, block_region(BufferId::scratch, t.v, block, part));
  for (int c : t.children_ascending()) w.recv(t.real(c), block_span(BufferId::scratch, c, c + t.span(c), block, part));
  if (t.v != 0) {
    w.send(t.real(t.parent()), block_span(BufferId::scratch, t.v, t.v + t.span(t.v), block, part), true);
    return;
  }
  const int head = t.n - t.root;  // relative ranks [0, head) are real ranks [root, n)
  w.copy(block_span(BufferId::scratch, 0, head, block, part), block_span(BufferId::output, t.root, t.n, block, part));
  w.copy(block_span(BufferId::scratch, head, t.n, block, part), block_span(BufferId::output, 0, t.root, block, part));
}

void scatter(const Node& t, const Part& part, std::uint64_t block, StepWriter& w) {
  if (t.v == 0) {
    const int head = t.n - t.root;
    w.copy(block_span(BufferId::input, t.root, t.n, block, part), block_span(BufferId::scratch, 0, head, block, part));
    w.copy(block_span(BufferId::input, 0, t.root, block, part), block_span(BufferId::scratch, head, t.n, block, part));
  } else {
    w.recv(t.real(t.parent()), block_span(BufferId::scratch, t.v, t.v + t.span(t.v), block, part));
  }
  const auto kids = t.children_ascending();
  for (auto it = kids.rbegin(); it != kids.rend(); ++it)
    w.send(t.real(*it), block_span(BufferId::scratch, *it, *it + t.span(*it), block, part), true);
  w.copy(block_region(BufferId::scratch, t.v, block, part), Region{BufferId::output, part.offset, part.count});
}

}  // namespace

Schedule binomial(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  const int n = spec.nranks;
  Schedule schedule{spec, "binomial", {}, 0, {}};
  const bool blocked = spec.kind == CollectiveKind::gather || spec.kind == CollectiveKind::scatter;
  const std::uint64_t block = spec.count / static_cast<std::uint64_t>(n);
  if (blocked) schedule.scratch_count = spec.count;
  for (int c = 0; c < options.channels; ++c) {
    const Part part = channel_part(blocked ? block : spec.count, options.channels, c);
    for (int r = 0; r < n; ++r) {
      const Node t{n, spec.root, (r - spec.root + n) % n};
      Stream stream{r, c, {}};
      StepWriter w(stream, options.protocol, c);
      switch (spec.kind) {
        case CollectiveKind::broadcast: broadcast(t, part, w); break;
        case CollectiveKind::reduce: reduce(t, part, w); break;
        case CollectiveKind::gather: gather(t, part, block, w); break;
        case CollectiveKind::scatter: scatter(t, part, block, w); break;
        default: break;
      }
      schedule.streams.push_back(std::move(stream));
    }
  }
  return schedule;
}

}  // namespace ccsim::algo
