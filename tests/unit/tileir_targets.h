// tileir_targets.h: `tessera_unit_tests --tileir-targets`, the check that every kernel the unit
// tests launch compiles through the tileir backend (tileiras) for sm_90 and sm_100a (issue #24).
//
// The suite runs as usual (on the CPU target where there is no GPU); a launch observer
// (detail::set_launch_observer) compiles each kernel it sees, once per specialization, through
// tileiras for both architectures with the launch's own arguments and options. A kernel Tile IR
// cannot express (TileIrUnsupported: an op without a Tile IR form, a broadcast view) is listed
// with its reason and does not fail the run; any other error of that compile does. Tests whose
// assertions count or time compiles carry the tag [counts-compiles]: the observer's compiles would
// fail them, so the check runs without them (tests/CMakeLists.txt); so do tests tagged [cpu-only],
// whose kernels are made for the CPU target alone (tiles of a million elements, which tileiras
// refuses: "estimated per-thread register usage exceeds the available budget"). Assumes one observer per
// process and tileiras installed (backend_available(Backend::tileir)).
#pragma once

#include <functional>

namespace tessera::testing {

// Runs the tests (`run_tests`: Catch's session) under the check: prints "tileir targets skipped:
// ..." (ctest's skip pattern; plain "skipped: " is what tests print where they need a GPU) and
// returns 0 without running them where tileiras is not installed; else installs the observer, runs
// them and prints the report. Returns the tests' status, or 1 when they passed and a compile failed.
int run_with_tileir_targets(const std::function<int()>& run_tests);

}  // namespace tessera::testing
