//===- MatmulKernel.h - the matmul class of tile kernels --------*- C++ -*-===//
//
// `matchMatmulKernel` recognizes the tile kernels that
// `convert-tile-matmul-to-nvvm` lowers to tensor-core code and returns their
// parts: the K loop, its two loads and its mma, the output store, and the
// epilogue between them (Conversion/Passes.td states the class). It reads
// tile IR as the front end emits it (before `tile-hoist-loads` and
// `tile-version-interior`) and changes nothing; a kernel outside the class
// gets a one-line reason, for debugging output. It takes any tile shape: the
// shapes a lowering supports are that lowering's test (`isHopperTile` in
// `convert-tile-matmul-to-nvvm`, the warp layout of
// `convert-tile-matmul-to-mma-sync`).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LIB_CONVERSION_TILEMATMULTONVVM_MATMULKERNEL_H
#define TESSERA_LIB_CONVERSION_TILEMATMULTONVVM_MATMULKERNEL_H

#include "tessera/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::tessera::tile {

struct MatmulKernel {
  func::FuncOp func;
  /// The K loop: from 0, step 1, one iter_arg (the f32 accumulator, zeros).
  scf::ForOp loop;
  /// A's BM x BK tile at (pid0, k) and B's BK x BN tile at (k, pid1).
  LoadOp loadA, loadB;
  MmaOp mma;
  /// The BM x BN output tile at (pid0, pid1).
  StoreOp store;
  /// Kernel argument numbers of A, B and the output.
  unsigned argA = 0, argB = 0, argOut = 0;
  int64_t bm = 0, bn = 0, bk = 0;
  /// A's element type: bf16, f16, f32 (which the tensor cores multiply as
  /// tf32), f8E4M3FN or f8E5M2; B's is the same, or the other 8-bit float
  /// type (`inputTypeB`).
  Type inputType, inputTypeB;
  /// The bytes of one A or B element: 2, 4 for f32, 1 for the 8-bit floats.
  int64_t elementBytes() const { return inputType.getIntOrFloatBitWidth() / 8; }
  /// The operands are 8-bit floats: the tensor cores read them K-major only
  /// (both lowerings require a K-major B).
  bool float8() const { return isFloat8(inputType); }
  /// B's columns are contiguous (a transposed view of a row-major [N, K]
  /// matrix): its shared tile is K-major like A's. Otherwise B is row-major
  /// (MN-major).
  bool bKMajor = false;
  /// The epilogue calls device functions (tile.device_call), which are linked
  /// in as relocatable code (the wgmma lowering does not take such kernels).
  bool deviceCalls = false;
};

/// The kernel's parts if `func` is a kernel of the matmul class; otherwise
/// failure, with `why` set to the first requirement it misses.
FailureOr<MatmulKernel> matchMatmulKernel(func::FuncOp func, std::string &why);

/// True for the ops an epilogue may apply to the accumulator element by
/// element: arith and math ops on tensors of one shape (no tile ops, no
/// regions).
bool isElementwiseTensorOp(Operation *op);

/// Whether argument `arg` of `func` is a 2-d memref whose dimension `unitDim`
/// has the static stride 1, aligned to `align` bytes (its `tile.align`): rows
/// (1) or columns (0) contiguous.
bool isAligned(func::FuncOp func, unsigned arg, int64_t unitDim, int64_t align);

/// Helpers of both kernel-class matchers (this one and AttentionKernel.h):
/// some of `types` is a tensor; `v` is a splat constant of float zeros; `op`
/// only inserts or removes dimensions of extent 1.
bool hasTensor(TypeRange types);
bool isZeroSplat(Value v);
bool isUnitReshape(ReshapeOp op);

} // namespace mlir::tessera::tile

#endif // TESSERA_LIB_CONVERSION_TILEMATMULTONVVM_MATMULKERNEL_H
