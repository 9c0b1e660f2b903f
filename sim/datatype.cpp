#include "sim/datatype.hpp"

#include "sim/error.hpp"

namespace ccsim {

namespace {
struct TypeInfo {
  DataType type;
  std::string_view name;
  std::size_t bytes;
  bool floating;
  std::vector<std::string_view> aliases;
};

const std::vector<TypeInfo>& type_table() {
  static const std::vector<TypeInfo> table = {
      {DataType::int8, "int8", 1, false, {"char"}},
      {DataType::uint8, "uint8", 1, false, {}},
      {DataType::int32, "int32", 4, false, {"int"}},
      {DataType::uint32, "uint32", 4, false, {}},
      {DataType::int64, "int64", 8, false, {}},
      {DataType::uint64, "uint64", 8, false, {}},
      {DataType::fp16, "half", 2, true, {"fp16", "float16"}},
      {DataType::bf16, "bfloat16", 2, true, {"bf16"}},
      {DataType::fp32, "float", 4, true, {"fp32", "float32"}},
      {DataType::fp64, "double", 8, true, {"fp64", "float64"}},
  };
  return table;
}

const TypeInfo& info(DataType type) { return type_table().at(static_cast<std::size_t>(type)); }
}  // namespace

std::size_t element_bytes(DataType type) { return info(type).bytes; }
bool is_floating(DataType type) { return info(type).floating; }
std::string_view to_string(DataType type) { return info(type).name; }

DataType parse_data_type(std::string_view name) {
  std::string known;
  for (const auto& t : type_table()) {
    if (t.name == name) return t.type;
    for (auto alias : t.aliases)
      if (alias == name) return t.type;
    known += (known.empty() ? "" : ", ") + std::string(t.name);
  }
  throw Error("unknown data type \"" + std::string(name) + "\" (expected one of: " + known + ")");
}

const std::vector<DataType>& all_data_types() {
  static const std::vector<DataType> all = [] {
    std::vector<DataType> v;
    for (const auto& t : type_table()) v.push_back(t.type);
    return v;
  }();
  return all;
}

}  // namespace ccsim
