#pragma once
// Element types of a collective, named as nccl-tests prints them.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ccsim {

enum class DataType { int8, uint8, int32, uint32, int64, uint64, fp16, bf16, fp32, fp64 };

std::size_t element_bytes(DataType type);
bool is_floating(DataType type);
// nccl-tests' column spelling: int8 ... half, bfloat16, float, double.
std::string_view to_string(DataType type);
// Accepts nccl-tests names and the usual aliases (fp16, bf16, fp32, float32, fp64, ...).
DataType parse_data_type(std::string_view name);
const std::vector<DataType>& all_data_types();

}  // namespace ccsim
