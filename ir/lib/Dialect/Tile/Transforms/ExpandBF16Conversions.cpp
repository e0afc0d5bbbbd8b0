//===- ExpandBF16Conversions.cpp - bf16 conversions as integer ops --------===//
//
// Implements `tile-expand-bf16-conversions`, for the cpu target: every
// f32 <-> bf16 `arith.extf`/`arith.truncf` becomes integer arithmetic
// (MLIR's expansion: a shift to widen; to narrow, rounding to nearest even by
// a rounding bias and a NaN to a quiet NaN). The x86 backend would otherwise
// use the host's conversion instructions where it has them (AVX512-BF16),
// which flush subnormal results to zero, while the GPU's cvt.rn.bf16.f32
// keeps them: a softmax of bf16 rows has results near 6e-39 where the row
// holds max - 88. Assumes nothing; any op may hold the conversions.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "tile-expand-bf16-conversions"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILEEXPANDBF16CONVERSIONS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;

namespace {

struct TileExpandBF16Conversions
    : mlir::tessera::tile::impl::TileExpandBF16ConversionsBase<
          TileExpandBF16Conversions> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation()->emitError(
          "tile-expand-bf16-conversions: the expansion did not converge");
      signalPassFailure();
    }
  }
};

} // namespace
