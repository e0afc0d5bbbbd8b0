// build_id.h: the identity of the compiled tessera code itself, for cache keys.
//
// The version string does not change while tessera is developed, so cubins compiled by one build of
// the compiler must not be served to another: the disk-cache key includes the GNU build ID (a hash
// of the linked binary, which every Debian/Ubuntu toolchain emits) of the shared library or
// executable that contains this code. Without a build ID it falls back to that file's path, size
// and modification time.
#pragma once

#include <string>

namespace tessera::detail {

// Hex build ID of the binary holding tessera's code (computed once; "" if nothing identifies it).
const std::string& self_build_id();

}  // namespace tessera::detail
