#pragma once
// NCCL's three wire protocols. Their wire formats fix how many bytes cross a link per byte of data
// (reference/nccl-model.md §2): Simple sends data as is; LL packs 4 data bytes with a 4-byte flag in
// every 8-byte store; LL128 carries 120 data bytes in every 128-byte line.
#include <string_view>
#include <vector>

namespace ccsim {

enum class Protocol : unsigned char { simple, ll, ll128 };

std::string_view to_string(Protocol protocol);
Protocol parse_protocol(std::string_view name);  // "simple", "ll", "ll128" (any case)
const std::vector<Protocol>& all_protocols();
// Wire bytes per data byte.
double wire_bytes_per_data_byte(Protocol protocol);

}  // namespace ccsim
