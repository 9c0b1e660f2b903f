#include "sim/algorithms/recursive.hpp"

#include "sim/algorithms/pipeline.hpp"

namespace ccsim::algo {

namespace {

struct Fold {
  int p = 1;    // power-of-two group size
  int rem = 0;  // ranks folded away
  explicit Fold(int n) {
    while (p * 2 <= n) p *= 2;
    rem = n - p;
  }
  bool folded_out(int r) const { return r < 2 * rem && r % 2 == 0; }  // hands its data to r + 1
  bool absorbs(int r) const { return r < 2 * rem && r % 2 == 1; }     // holds r - 1's data too
  int virtual_rank(int r) const { return r < 2 * rem ? r / 2 : r - rem; }
  int real_rank(int v) const { return v < rem ? 2 * v + 1 : v + rem; }
  // Real ranks [first, last) that virtual ranks [a, b) stand for: contiguous.
  int first_real(int a) const { return a < rem ? 2 * a : a + rem; }
  int end_real(int b) const { return b - 1 < rem ? 2 * (b - 1) + 2 : b + rem; }
};

// The all_reduce fold: a lone rank just copies; a folded-out rank hands its data up and waits for
// the result; the others start from their input (plus the folded neighbour's). False when the
// rank has nothing more to do.
bool fold_in(const CollectiveSpec& spec, const Fold& f, int r, const Region& in, const Region& out, StepWriter& w) {
  if (spec.nranks == 1) {
    w.copy(in, out, true);
    return false;
  }
  if (f.folded_out(r)) {
    w.send(r + 1, in);
    w.recv(r + 1, out);
    return false;
  }
  if (f.absorbs(r)) w.recv_reduce(r - 1, in, out);
  else w.copy(in, out);
  return true;
}

void rd_all_reduce(const CollectiveSpec& spec, const Fold& f, int r, const Part& part, StepWriter& w) {
  const Region in{BufferId::input, part.offset, part.count}, out{BufferId::output, part.offset, part.count};
  if (!fold_in(spec, f, r, in, out, w)) return;
  const int v = f.virtual_rank(r);
  for (int mask = 1; mask < f.p; mask <<= 1) {
    const int partner = f.real_rank(v ^ mask);
    w.send(partner, out);
    w.recv_reduce(partner, out, out, mask * 2 == f.p);
  }
  if (f.absorbs(r)) w.send(r - 1, out);
}

void rd_all_gather(const CollectiveSpec& spec, const Fold& f, int r, const Part& part, StepWriter& w) {
  const int n = spec.nranks;
  const std::uint64_t block = spec.count / static_cast<std::uint64_t>(n);
  const Region in{BufferId::input, part.offset, part.count};
  if (f.folded_out(r)) {
    w.send(r + 1, in);
    w.recv(r + 1, block_span(BufferId::output, 0, n, block, part));
    return;
  }
  w.copy(in, block_region(BufferId::output, r, block, part));
  if (f.absorbs(r)) w.recv(r - 1, block_region(BufferId::output, r - 1, block, part));
  const int v = f.virtual_rank(r);
  for (int mask = 1; mask < f.p; mask <<= 1) {
    const int mine = v & ~(mask - 1), theirs = (v ^ mask) & ~(mask - 1);
    const int partner = f.real_rank(v ^ mask);
    w.send(partner, block_span(BufferId::output, f.first_real(mine), f.end_real(mine + mask), block, part));
    w.recv(partner, block_span(BufferId::output, f.first_real(theirs), f.end_real(theirs + mask), block, part));
  }
  if (f.absorbs(r)) w.send(r - 1, block_span(BufferId::output, 0, n, block, part));
}

void hd_all_reduce(const CollectiveSpec& spec, const Fold& f, int r, const Part& part, StepWriter& w) {
  const Region in{BufferId::input, part.offset, part.count}, out{BufferId::output, part.offset, part.count};
  if (!fold_in(spec, f, r, in, out, w)) return;
  // Elements of parts [lo, hi) when the channel's part is cut into p near-equal pieces.
  const auto p = static_cast<std::uint64_t>(f.p);
  auto range = [&](int lo, int hi) {
    const std::uint64_t a = part.count * static_cast<std::uint64_t>(lo) / p;
    const std::uint64_t b = part.count * static_cast<std::uint64_t>(hi) / p;
    return Region{BufferId::output, part.offset + a, b - a};
  };
  const int v = f.virtual_rank(r);
  int lo = 0, hi = f.p;
  for (int mask = f.p / 2; mask >= 1; mask >>= 1) {  // reduce-scatter by recursive halving
    const int partner = f.real_rank(v ^ mask), mid = (lo + hi) / 2;
    const bool upper = (v & mask) != 0;
    w.send(partner, upper ? range(lo, mid) : range(mid, hi));
    if (upper) lo = mid;
    else hi = mid;
    w.recv_reduce(partner, range(lo, hi), range(lo, hi), mask == 1);
  }
  for (int mask = 1; mask < f.p; mask <<= 1) {  // all-gather by recursive doubling
    const int partner = f.real_rank(v ^ mask), width = hi - lo;
    const bool upper = (v & mask) != 0;
    w.send(partner, range(lo, hi));
    if (upper) {
      w.recv(partner, range(lo - width, lo));
      lo -= width;
    } else {
      w.recv(partner, range(hi, hi + width));
      hi += width;
    }
  }
  if (f.absorbs(r)) w.send(r - 1, out);
}

Schedule build(const CollectiveSpec& spec, const AlgorithmOptions& options, const std::string& name,
               void (*write)(const CollectiveSpec&, const Fold&, int, const Part&, StepWriter&)) {
  Schedule schedule{spec, name, {}, 0, {}};
  const Fold fold(spec.nranks);
  const std::uint64_t unit =
      spec.kind == CollectiveKind::all_gather ? spec.count / static_cast<std::uint64_t>(spec.nranks) : spec.count;
  for (int c = 0; c < options.channels; ++c)
    for (int r = 0; r < spec.nranks; ++r) {
      Stream stream{r, c, {}};
      StepWriter w(stream, options.protocol, c);
      write(spec, fold, r, channel_part(unit, options.channels, c), w);
      schedule.streams.push_back(std::move(stream));
    }
  return schedule;
}

}  // namespace

Schedule recursive_doubling(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  return build(spec, options, "recursive_doubling",
               spec.kind == CollectiveKind::all_gather ? rd_all_gather : rd_all_reduce);
}

Schedule halving_doubling(const CollectiveSpec& spec, const AlgorithmOptions& options) {
  return build(spec, options, "halving_doubling", hd_all_reduce);
}

}  // namespace ccsim::algo
