// The engine entry point of a build without SimGrid (CCSIM_WITH_SIMGRID=OFF): simulation refuses.
#include "sim/engine.hpp"
#include "sim/error.hpp"

namespace ccsim {

Timeline simulate_in_process(const Schedule&, const PlatformPlan&, const Model&, const EngineOptions&) {
  throw Error("built without SimGrid (CCSIM_WITH_SIMGRID=OFF): simulation is unavailable in this build");
}

}  // namespace ccsim
