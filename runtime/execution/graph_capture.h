// graph_capture.h: the hook through which launches made during Graph::capture() are recorded
// instead of submitted. A launch fills in its plan as for a submission (launch_plan.h) and hands
// it over with its arguments: the graph never compiles anything itself. Internal to libtessera.
#pragma once

#include <span>
#include <string_view>

#include "execution/launch_plan.h"
#include "tessera/kernel.h"

namespace tessera::detail {

class GraphCapture {
 public:
  virtual ~GraphCapture() = default;
  // The target a launch for `target` is compiled for while the graph is captured: the graph's.
  // Throws tessera::Error, naming `kernel`, when `options` ask for another target or for work to
  // order after (which a graph cannot record).
  virtual Target target_for(const LaunchOptions* options, Target target, std::string_view kernel) const = 0;
  // Records one launch of `plan` with `args` (checked already) as the graph's next node.
  virtual void record(std::string_view kernel, LaunchPlan plan, std::span<const ArgDesc> args) = 0;
};

// The graph being captured on this thread, or null.
GraphCapture* current_capture();

}  // namespace tessera::detail
