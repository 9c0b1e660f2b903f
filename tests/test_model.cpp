#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <nlohmann/json.hpp>

#include "sim/error.hpp"
#include "sim/model.hpp"
#include "sim/text_file.hpp"

using namespace ccsim;

TEST_CASE("the built-in hopper model is complete and every value has a source") {
  const Model m = Model::builtin("hopper");
  CHECK(m.parameters().size() == model_parameter_specs().size());
  for (const auto& [name, p] : m.parameters()) {
    INFO(name);
    CHECK_FALSE(p.source.empty());
  }
  CHECK(m.hop_latency_s(LatencyClass::nvlink, Protocol::simple) == test::approx(3.4e-6));
  CHECK(m.chunk_bytes(Protocol::simple) == 2u << 20);
}

TEST_CASE("a step's latency comes from NCCL's row for its algorithm") {
  const Model m = Model::builtin("hopper");
  CHECK(m.step_latency_s(LatencyClass::net, Protocol::simple, "ring") == test::approx(14.0e-6));
  CHECK(m.step_latency_s(LatencyClass::net, Protocol::ll, "tree") == test::approx(5.0e-6));
  CHECK(m.step_latency_s(LatencyClass::net, Protocol::simple, "nvls_tree") == test::approx(20.9e-6));
  CHECK(m.step_latency_s(LatencyClass::nvlink, Protocol::simple, "nvls_tree") == test::approx(3.4e-6));
  CHECK(m.step_latency_s(LatencyClass::nvlink, Protocol::simple, "nvls") == test::approx(3.4e-6));
}

TEST_CASE("a model file may start from a built-in one and override parameters") {
  const auto j = nlohmann::json::parse(R"({"base": "hopper", "name": "faster",
    "parameters": {"nvlink_efficiency": {"value": 1.0, "unit": "fraction", "source": "what-if"}}})");
  const Model m = Model::from_json(j, "test.json");
  CHECK(m.name() == "faster");
  CHECK(m.nvlink_efficiency() == 1.0);
  CHECK(m.hbm_bandwidth_bytes_per_s() == test::approx(3.35e12));
}

TEST_CASE("a thread issuing a call pays for every channel of it under NCCL 2.8, not later") {
  // One thread driving 8 GPUs, a call of 8 channels: 8 x (4.2 + 8 x 0.2) us under NCCL 2.8.
  const Model old_nccl = Model::builtin("ampere-nccl2.8");
  CHECK(old_nccl.host_issue_s(8, 0, 8) == test::approx(8 * (4.2 + 8 * 0.2) * 1e-6));
  CHECK(old_nccl.host_issue_s(8) == test::approx(8 * 4.2e-6));
  // Point-to-point operations cost what host_p2p_op_us says each, on top.
  CHECK(old_nccl.host_issue_s(1, 16, 0) == test::approx((4.2 + 16 * 0.4) * 1e-6));
  const Model later = Model::builtin("ampere");
  CHECK(later.host_issue_s(8, 0, 8) == test::approx(later.host_issue_s(8)));
}

TEST_CASE("model errors name the file and the JSON path") {
  auto bad = [](const char* text) { return Model::from_json(nlohmann::json::parse(text), "m.json"); };
  CHECK_THROWS_WITH_AS(bad(R"({"base": "hopper", "parameters": {"nvlink_eff": {"value": 1, "source": "x"}}})"),
                       doctest::Contains("m.json: parameters.nvlink_eff: unknown parameter"), Error);
  CHECK_THROWS_WITH_AS(bad(R"({"base": "hopper", "parameters": {"channels": {"value": "8", "source": "x"}}})"),
                       doctest::Contains("parameters.channels.value: expected a number"), Error);
  CHECK_THROWS_WITH_AS(bad(R"({"base": "hopper", "parameters": {"channels": {"value": 8}}})"),
                       doctest::Contains("parameters.channels.source"), Error);
  CHECK_THROWS_WITH_AS(bad(R"({"base": "hopper", "parameters": {"channels": {"value": 8, "unit": "GB/s", "source": "x"}}})"),
                       doctest::Contains("parameters.channels.unit: expected \"count\""), Error);
  CHECK_THROWS_WITH_AS(bad(R"({"parameters": {}})"), doctest::Contains("missing"), Error);
  CHECK_THROWS_WITH_AS(bad(R"({"base": "kepler", "parameters": {}})"), doctest::Contains("unknown model \"kepler\""), Error);
  CHECK_THROWS_WITH_AS(Model::load_file("/nonexistent/m.json"), doctest::Contains("cannot open"), Error);
  // A fraction of none (or past whole) of a link, or no memory bandwidth, would stall the engine.
  CHECK_THROWS_WITH_AS(bad(R"({"base": "hopper", "parameters": {"nvlink_efficiency": {"value": 0, "source": "x"}}})"),
                       doctest::Contains("parameters.nvlink_efficiency.value: expected a fraction above 0 and at most 1"), Error);
  CHECK_THROWS_WITH_AS(bad(R"({"base": "hopper", "parameters": {"nvls_efficiency": {"value": 5, "source": "x"}}})"),
                       doctest::Contains("expected a fraction above 0 and at most 1"), Error);
  CHECK_THROWS_WITH_AS(bad(R"({"base": "hopper", "parameters": {"hbm_bandwidth_gbps": {"value": 0, "source": "x"}}})"),
                       doctest::Contains("parameters.hbm_bandwidth_gbps.value: expected a bandwidth above 0"), Error);
  Model m = Model::builtin("hopper");
  CHECK_THROWS_WITH_AS(m.set("nvswitch_efficiency", 0, "scenario s"), doctest::Contains("expected a fraction above 0"), Error);
  CHECK_THROWS_WITH_AS(parse_json("{\"x\": 1e400}", "big.json"), doctest::Contains("big.json: invalid JSON"), Error);
}

TEST_CASE("every built-in model loads, complete, with a source for every value") {
  const auto names = Model::builtin_names();
  CHECK(names.size() >= 5);
  for (const auto& name : names) {
    const Model m = Model::builtin(name);
    INFO(name);
    CHECK(m.parameters().size() == model_parameter_specs().size());
    for (const auto& [key, p] : m.parameters()) CHECK_FALSE(p.source.empty());
  }
}

TEST_CASE("a GB200 NVL72 rack's GPUs take the Blackwell model but for the rack's NVLS rate") {
  const Model rack = Model::builtin("gb200");
  const Model board = Model::builtin("blackwell");
  CHECK(rack.nvlink_efficiency() == board.nvlink_efficiency());  // rings and point-to-point as on a board
  CHECK(rack.get("nvls_efficiency") < board.get("nvls_efficiency"));
  CHECK(rack.get("nvls_efficiency.tree") < board.get("nvls_efficiency.tree"));
  CHECK(rack.get("hop_latency_us.nvlink.simple.nvls") == board.get("hop_latency_us.nvlink.simple.nvls"));
}

TEST_CASE("a log's NCCL release picks the built-in model that stands for it") {
  CHECK(Model::builtin_name_for("ampere", "2.8.4") == "ampere-nccl2.8");
  CHECK(Model::builtin_name_for("ampere", "2.7.8") == "ampere-nccl2.8");
  CHECK(Model::builtin_name_for("ampere", "2.18.5") == "ampere");
  CHECK(Model::builtin_name_for("ampere", "") == "ampere");
  CHECK(Model::builtin_name_for("hopper", "2.8.4") == "hopper");  // releases belong to a family
  CHECK(Model::builtin_name_for("blackwell", "2.26.6") == "blackwell");  // its NVLink rate is every release's
  // The release model is the family's but for what its era measured.
  CHECK(Model::builtin("ampere-nccl2.8").to_json()["for_nccl"]["releases"] == nlohmann::json{"2.7", "2.8"});
  CHECK_FALSE(Model::builtin("ampere").to_json().contains("for_nccl"));  // not inherited
  CHECK_THROWS_WITH_AS(
      Model::from_json(nlohmann::json::parse(R"({"base": "hopper", "for_nccl": {"family": "hopper"}, "parameters": {}})"), "m.json"),
      doctest::Contains("m.json: for_nccl: expected"), Error);
}
