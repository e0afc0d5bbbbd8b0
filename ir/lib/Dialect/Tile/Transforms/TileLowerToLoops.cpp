#include "tessera/Dialect/Tile/Transforms/Passes.h"

#define DEBUG_TYPE "tile-lower-to-loops"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILELOWERTOLOOPS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
namespace {
struct TileLowerToLoopsPass : tessera::tile::impl::TileLowerToLoopsBase<TileLowerToLoopsPass> {
  using TileLowerToLoopsBase::TileLowerToLoopsBase;
  void runOnOperation() override {}
};
} // namespace
