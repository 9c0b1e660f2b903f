// Listings: `ccsim topo list`, `ccsim algos`, `ccsim model [NAME|--file F]`.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ccsim/commands.hpp"
#include "ccsim/validators.hpp"
#include "ccsim/topology_args.hpp"
#include "sim/algorithms/registry.hpp"
#include "sim/model.hpp"
#include "sim/topology/paths.hpp"
#include "sim/error.hpp"
#include "sim/text_file.hpp"
#include "sim/topology/import_smi.hpp"
#include "sim/topology/import_xml.hpp"
#include "sim/topology/json_io.hpp"
#include "sim/topology/presets.hpp"

namespace ccsim::cli {

Runner add_listings(CLI::App& app) {
  auto* topo_cmd = app.add_subcommand("topo", "Machines: list the presets, show one (path matrix), import a real one");
  topo_cmd->require_subcommand(1);
  auto* topo_list = topo_cmd->add_subcommand("list", "List the topology presets and the shipped topology files");
  auto* topo_show = topo_cmd->add_subcommand("show", "Summary and GPU/NIC path matrix (nvidia-smi topo -m style)");
  auto show_topology = std::make_shared<TopologyArgs>();
  auto show_format = std::make_shared<std::string>("text");
  add_topology_options(topo_show, *show_topology);
  topo_show->add_option("--format", *show_format, "text, json or dot (Graphviz)")
      ->check(CLI::IsMember({"text", "json", "dot"}))
      ->capture_default_str();
  auto* topo_import = topo_cmd->add_subcommand(
      "import",
      "Build a topology from an NCCL topology dump (.xml) or `nvidia-smi topo -m` text, print its summary and "
      "derived path matrix, write it as JSON");
  auto import_file = std::make_shared<std::string>();
  auto import_out = std::make_shared<std::string>();
  auto import_options = std::make_shared<topo::SmiImportOptions>();
  topo_import->add_option("file", *import_file,
                          "An NCCL topology dump (NCCL_TOPO_DUMP_FILE, XML) or `nvidia-smi topo -m` output, told apart by "
                          "their text")
      ->required();
  auto arch_given = std::make_shared<bool>(false);
  topo_import->add_option("--arch", import_options->arch,
                          "GPU timing model (`ccsim model` lists them): `nvidia-smi topo -m` names no GPU; XML dumps with `sm` need none")
      ->capture_default_str()
      ->each([arch_given](const std::string&) { *arch_given = true; });
  auto pcie_given = std::make_shared<bool>(false), nvlink_given = std::make_shared<bool>(false);
  topo_import
      ->add_option("--pcie", import_options->pcie_generation,
                   "PCIe generation of `nvidia-smi topo -m` text (default: the GPU family's: Volta 3, Ampere 4, Hopper and "
                   "Blackwell 5)")
      ->each([pcie_given](const std::string&) { *pcie_given = true; });
  topo_import
      ->add_option("--nvlink", import_options->nvlink_generation,
                   "NVLink generation of `nvidia-smi topo -m` text (default: the GPU family's: Volta 2, Ampere 3, Hopper 4, "
                   "Blackwell 5)")
      ->each([nvlink_given](const std::string&) { *nvlink_given = true; });
  topo_import->add_option("--out", *import_out, "Write the topology as JSON (usable with --topo)")->check(writable_file());
  auto* algos = app.add_subcommand("algos", "List the algorithms and the collectives each serves");
  auto model_name = std::make_shared<std::string>();
  auto model_file = std::make_shared<std::string>();
  auto* model_cmd = app.add_subcommand("model", "Print a timing model (every parameter with its unit and source)");
  model_cmd->add_option("name", *model_name, "Built-in model name (default: list them)");
  model_cmd->add_option("--file", *model_file, "Print a model file instead, after validating it");

  return [=] {
    if (topo_list->parsed()) {
      // Presets, then the machines shipped as files (configs/topologies), which --topo takes by name
      // as well; one name column wide enough for all.
      std::vector<std::pair<std::string, std::string>> presets, aliases, files;
      for (const auto& p : topo::presets()) presets.emplace_back(p.name, p.description);
      for (const auto& a : topo::preset_aliases()) aliases.emplace_back(a.name, "= " + a.preset + ": " + a.why);
      for (const auto& f : topo::shipped_topologies())
        files.emplace_back(f.name, nlohmann::json::parse(f.json).value("description", std::string()));
      std::size_t width = 0;
      for (const auto* list : {&presets, &aliases, &files})
        for (const auto& [name, description] : *list) width = std::max(width, name.size());
      const int w = static_cast<int>(width);
      for (const auto& [name, description] : presets) std::printf("%-*s  %s\n", w, name.c_str(), description.c_str());
      if (!aliases.empty()) std::printf("\nother names (the preset after = is built):\n");
      for (const auto& [name, description] : aliases) std::printf("%-*s  %s\n", w, name.c_str(), description.c_str());
      if (!files.empty()) std::printf("\nshipped topology files (configs/topologies; each file is the whole machine, all its nodes: no --nodes):\n");
      for (const auto& [name, description] : files) std::printf("%-*s  %s\n", w, name.c_str(), description.c_str());
      return 0;
    }
    if (topo_import->parsed()) {
      const std::string text = read_text_file(*import_file);
      Model::builtin(import_options->arch);  // an unknown model fails before anything is built
      const bool xml = topo::looks_like_xml(text);
      // The text names no link generation: the GPU family's own, unless given.
      const auto family = topo::link_generations_of(import_options->arch);
      if (!*pcie_given) import_options->pcie_generation = family.pcie;
      if (!*nvlink_given) import_options->nvlink_generation = family.nvlink;
      if (xml && (*pcie_given || *nvlink_given))
        std::cerr << "ccsim: note: " << *import_file << ": an NCCL topology dump gives its links' generations: --pcie and "
                  << "--nvlink are not used\n";
      std::vector<std::string> notes;
      const topo::Topology t = xml ? topo::import_nccl_xml(text, *import_file, {*arch_given ? import_options->arch : "", &notes})
                                   : topo::import_nvidia_smi(text, *import_file, *import_options);
      for (const auto& note : notes) std::cerr << "ccsim: note: " << note << "\n";
      if (!xml && !*arch_given)
        std::cerr << "ccsim: note: " << *import_file << ": nvidia-smi topo -m names no GPU: taken as " << import_options->arch
                  << " (--arch), NVLink " << import_options->nvlink_generation << " and PCIe Gen"
                  << import_options->pcie_generation << " (--nvlink, --pcie)\n";
      std::cout << topo::summary(t);
      if (!import_out->empty()) {
        std::ofstream out(*import_out);
        if (!out) throw Error(*import_out + ": cannot open for writing");
        out << topo::to_json(t).dump(2) << "\n";
      }
      return 0;
    }
    if (topo_show->parsed()) {
      refuse_idle_fabric_options(*topo_show, *show_topology);
      const topo::Topology t = build_topology(*show_topology);
      if (*show_format == "json") std::cout << topo::to_json(t).dump(2) << "\n";
      else if (*show_format == "dot") std::cout << topo::to_dot(t);
      else std::cout << topo::summary(t);
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
