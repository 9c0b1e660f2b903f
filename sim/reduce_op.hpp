#pragma once
// Reduction operators. avg is a sum whose final value is divided by the rank count (NCCL's
// ncclAvg); lor is MPI's logical or (result 1 where any input is non-zero, else 0).
#include <string_view>
#include <vector>

namespace ccsim {

enum class ReduceOp { sum, prod, min, max, avg, lor };

std::string_view to_string(ReduceOp op);
ReduceOp parse_reduce_op(std::string_view name);
const std::vector<ReduceOp>& all_reduce_ops();

}  // namespace ccsim
