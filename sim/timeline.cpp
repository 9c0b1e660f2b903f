#include "sim/timeline.hpp"

#include <nlohmann/json.hpp>

namespace ccsim {

void to_json(nlohmann::json& j, const Timeline& t) {
  j = nlohmann::json{{"makespan_s", t.makespan_s},
                     {"launch_latency_s", t.launch_latency_s},
                     {"period_s", t.period_s},
                     {"total_s", t.total_s()},
                     {"messages", t.messages}};
  auto& steps = j["steps"] = nlohmann::json::array();
  for (const auto& s : t.steps)
    steps.push_back({{"stream", s.stream}, {"step", s.step}, {"start_s", s.start_s}, {"end_s", s.end_s},
                     {"wire_bytes", s.wire_bytes}});
  auto& links = j["links"] = nlohmann::json::array();
  for (const auto& l : t.links)
    links.push_back({{"name", l.name}, {"bandwidth_bytes_per_s", l.bandwidth_bytes_per_s}, {"bytes", l.bytes}});
}

void from_json(const nlohmann::json& j, Timeline& t) {
  t.makespan_s = j.at("makespan_s").get<double>();
  t.launch_latency_s = j.at("launch_latency_s").get<double>();
  t.period_s = j.value("period_s", 0.0);
  t.messages = j.at("messages").get<std::uint64_t>();
  t.steps.clear();
  for (const auto& s : j.at("steps"))
    t.steps.push_back({s.at("stream").get<std::uint32_t>(), s.at("step").get<std::uint32_t>(),
                       s.at("start_s").get<double>(), s.at("end_s").get<double>(),
                       s.at("wire_bytes").get<std::uint64_t>()});
  t.links.clear();
  for (const auto& l : j.at("links"))
    t.links.push_back({l.at("name").get<std::string>(), l.at("bandwidth_bytes_per_s").get<double>(),
                       l.at("bytes").get<std::uint64_t>()});
}

}  // namespace ccsim
