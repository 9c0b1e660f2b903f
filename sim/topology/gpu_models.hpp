#pragma once
// What a GPU's name (as nvidia-smi and nccl-tests' device lines print it: "NVIDIA H100 80GB HBM3",
// "Tesla V100-SXM2-16GB", "NVIDIA GeForce RTX 4090") says about it: its compute capability, the
// timing-model family NCCL's tables put it in, and the preset that describes the machine it
// usually comes in. Used to check a measured log against the machine it is simulated on, and to
// pick that machine when the user names none.
#include <optional>
#include <string>
#include <vector>
#include <string_view>

namespace ccsim::topo {

struct GpuModel {
  std::string name;    // the GPU as recognised, e.g. "H100 SXM"
  int sm = 0;          // compute capability x 10, e.g. 90
  std::string family;  // timing-model family: volta | ampere | hopper | h200 | blackwell
  // The preset of the machine this GPU comes in (an 8-GPU NVSwitch baseboard, a DGX); empty for
  // GPUs sold as PCIe cards or in machines no preset describes.
  std::string preset;
  // Sold as a card for a PCIe slot (GeForce, workstation and PCIe data-center parts), whose servers
  // come in many layouts; false for a baseboard part (SXM) even where no preset has its board.
  bool card = false;
  // A GeForce card (RTX 4090, GTX 1080 Ti): from Turing (RTX 20) on, NVIDIA's stock driver gives
  // it no P2P over PCIe.
  bool geforce = false;
};

// The family NCCL's cost tables put a compute capability in: Volta below SM 80, Ampere 80-89,
// Hopper 90-99, Blackwell from 100 (reference/nccl-model.md §3.3).
std::string family_of_sm(int sm);

// Every family a timing model and NCCL's tables exist for (a topology's GPUs name one).
const std::vector<std::string>& gpu_families();

// The GPU a device name describes, or nothing when the name is not one of the known models.
std::optional<GpuModel> identify_gpu(std::string_view device_name);

}  // namespace ccsim::topo
