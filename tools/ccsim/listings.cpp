// Listings: `ccsim topo list`, `ccsim algos`, `ccsim model [NAME|--file F]`.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "ccsim/commands.hpp"
#include "sim/algorithms/registry.hpp"
#include "sim/model.hpp"
#include "sim/topology/presets.hpp"

namespace ccsim::cli {

Runner add_listings(CLI::App& app) {
  auto* topo_cmd = app.add_subcommand("topo", "Topology presets");
  topo_cmd->require_subcommand(1);
  auto* topo_list = topo_cmd->add_subcommand("list", "List the topology presets");
  auto* algos = app.add_subcommand("algos", "List the algorithms and the collectives each serves");
  auto model_name = std::make_shared<std::string>();
  auto model_file = std::make_shared<std::string>();
  auto* model_cmd = app.add_subcommand("model", "Print a timing model (every parameter with its unit and source)");
  model_cmd->add_option("name", *model_name, "Built-in model name (default: list them)");
  model_cmd->add_option("--file", *model_file, "Print a model file instead, after validating it");

  return [=] {
    if (topo_list->parsed()) {
      for (const auto& p : topo::presets()) std::printf("%-16s %s\n", p.name.c_str(), p.description.c_str());
      return 0;
    }
    if (algos->parsed()) {
      for (const auto& a : algo::algorithms()) {
        std::string kinds;
        for (auto k : a.collectives) kinds += (kinds.empty() ? "" : ",") + std::string(to_string(k));
        std::printf("%s\n  collectives: %s\n  topologies:  %s\n  %s\n", a.name.c_str(), kinds.c_str(),
                    a.topologies.c_str(), a.description.c_str());
      }
      return 0;
    }
    if (!model_file->empty() || !model_name->empty()) {
      const Model m = model_file->empty() ? Model::builtin(*model_name) : Model::load_file(*model_file);
      std::cout << m.to_json().dump(2) << "\n";
      return 0;
    }
    for (const auto& n : Model::builtin_names()) std::printf("%s\n", n.c_str());
    return 0;
  };
}

}  // namespace ccsim::cli
