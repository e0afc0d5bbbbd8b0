// graph_capture.h: the hook through which launches made during Graph::capture() are recorded
// instead of submitted. Internal to libtessera.
#pragma once

#include "tessera/kernel.h"
#include "tessera/unsafe.h"

namespace tessera::detail {

class GraphCapture {
 public:
  virtual ~GraphCapture() = default;
  virtual void record_kernel(const LaunchRequest& request, Target target) = 0;
  virtual void record_unsafe(const UnsafeLaunchRequest& request, Target target) = 0;
};

// The graph being captured on this thread, or null.
GraphCapture* current_capture();

}  // namespace tessera::detail
