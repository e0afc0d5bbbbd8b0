// engine_main.cpp: the Catch2 entry point of qwen3_engine_tests. `--tileir-targets` (before
// Catch's own arguments) also compiles every kernel the engine's tests launch through tileiras for
// sm_90 and sm_100a, and fails the run when one that Tile IR can express does not compile
// (tests/unit/tileir_targets.h; the ctest qwen3.tileir_targets).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <string_view>
#include <vector>

#include "tileir_targets.h"

int main(int argc, char* argv[]) {
  std::vector<char*> args;
  bool tileir_targets = false;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::string_view(argv[i]) == "--tileir-targets")
      tileir_targets = true;
    else
      args.push_back(argv[i]);
  }
  auto run = [&] { return Catch::Session().run(static_cast<int>(args.size()), args.data()); };
  return tileir_targets ? tessera::testing::run_with_tileir_targets(run) : run();
}
