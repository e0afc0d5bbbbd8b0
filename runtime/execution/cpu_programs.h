// cpu_programs.h: how the CPU target runs a launch's programs (run_programs): on the calling
// thread and up to 15 more, each with a workspace for the private arrays that do not fit its stack
// (tile-cpu-workspace), on threads of known stack where the caller's has too little room
// (threads.h). Used by launches (launch_work.cpp) and graph replays (graph.cpp). Internal to
// libtessera.
#pragma once

#include <cstdint>
#include <span>

#include "execution/launch_plan.h"

namespace tessera::detail {

// Runs every program of `grid` of `program` with the parameter slots `slots`
// (ArgumentAbi::memref): up to 16 threads, the calling thread among them, or fewer where the
// system refuses threads (then the calling thread runs the rest). Throws tessera::Error, or
// std::bad_alloc for a workspace, once every thread has ended.
void run_programs(const CpuProgram& program, std::span<const int64_t> slots, const Grid& grid);

}  // namespace tessera::detail
