#include "sim/reduce_op.hpp"

#include <string>

#include "sim/error.hpp"

namespace ccsim {

namespace {
constexpr std::string_view kNames[] = {"sum", "prod", "min", "max", "avg", "lor"};
}

std::string_view to_string(ReduceOp op) { return kNames[static_cast<int>(op)]; }

ReduceOp parse_reduce_op(std::string_view name) {
  for (auto op : all_reduce_ops())
    if (to_string(op) == name) return op;
  throw Error("unknown reduce op \"" + std::string(name) +
              "\" (expected one of: sum, prod, min, max, avg, lor)");
}

const std::vector<ReduceOp>& all_reduce_ops() {
  static const std::vector<ReduceOp> ops = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min,
                                            ReduceOp::max, ReduceOp::avg,  ReduceOp::lor};
  return ops;
}

}  // namespace ccsim
