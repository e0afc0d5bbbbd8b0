#include "tessera/Dialect/Tile/Transforms/Passes.h"

#define DEBUG_TYPE "tile-math-to-nvvm"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILEMATHTONVVM
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
namespace {
struct TileMathToNVVMPass : tessera::tile::impl::TileMathToNVVMBase<TileMathToNVVMPass> {
  using TileMathToNVVMBase::TileMathToNVVMBase;
  void runOnOperation() override {}
};
} // namespace
