// ccsim: simulate GPU collectives on GPU cluster interconnects.
#include <iostream>

#include "ccsim/commands.hpp"
#include "sim/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"ccsim: a discrete-event simulator of GPU cluster interconnects and collective algorithms"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ccsim 0.1.0");
  auto perf = ccsim::cli::add_perf(app);
  auto run = ccsim::cli::add_run(app);
  auto bench = ccsim::cli::add_bench(app);
  auto verify = ccsim::cli::add_verify(app);
  auto listings = ccsim::cli::add_listings(app);
  auto accuracy = ccsim::cli::add_accuracy(app);
  auto gpu = ccsim::cli::add_gpu(app);
  auto validate = ccsim::cli::add_validate(app);
  auto calibrate = ccsim::cli::add_calibrate(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "ccsim: error: " << e.what() << " (see ccsim --help)\n";
    return 2;
  }
  try {
    if (app.got_subcommand("perf")) return perf();
    if (app.got_subcommand("run")) return run();
    if (app.got_subcommand("bench")) return bench();
    if (app.got_subcommand("verify")) return verify();
    if (app.got_subcommand("accuracy")) return accuracy();
    if (app.got_subcommand("gpu")) return gpu();
    if (app.got_subcommand("validate")) return validate();
    if (app.got_subcommand("calibrate")) return calibrate();
    return listings();
  } catch (const ccsim::Error& e) {
    std::cerr << "ccsim: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "ccsim: internal error: " << e.what() << "\n";
    return 3;
  }
}
