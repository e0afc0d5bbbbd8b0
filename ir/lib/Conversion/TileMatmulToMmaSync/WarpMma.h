//===- WarpMma.h - sm_80 warp-level tensor-core instructions ----*- C++ -*-===//
//
// `WarpMma` emits, at a builder's insertion point, the NVVM ops of an sm_80
// tensor-core main loop: 16-byte `cp.async` copies from global to shared
// memory with their commit and wait groups, `ldmatrix` of four 8 x 8 b16
// matrices (transposed or not), and `mma.sync` m16n8k16 of bf16 or f16 into
// four f32. NVVM ops rather than inline asm: LLVM knows what each reads and
// writes, so it may schedule the loads of the next k-step between the
// products of this one. `swizzledChunk` is the shared-memory layout both the
// copies and the ldmatrix reads use.
//
// f32 inputs run on the tf32 tensor cores (`mma.sync` m16n8k8): a 16-byte row
// of an 8 x 8 b16 matrix is four f32, so the same `ldmatrix` (untransposed)
// loads 8 x 4 blocks of them, and `toTf32` rounds each element to tf32
// (round to nearest, ties away from zero, as cvt.rna does) before the mma.
//
// Shared-memory addresses are `!llvm.ptr<3>`, global ones `!llvm.ptr<1>`;
// offsets are i32 bytes (shared) and i64 bytes (global).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LIB_CONVERSION_TILEMATMULTOMMASYNC_WARPMMA_H
#define TESSERA_LIB_CONVERSION_TILEMATMULTOMMASYNC_WARPMMA_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <array>
#include <utility>

namespace mlir::tessera::tile {

class WarpMma {
public:
  WarpMma(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// `base` (ptr<3> or ptr<1>) advanced by `bytes` (i32 or i64).
  Value offset(Value base, Value bytes);
  /// cp.async.cg of 16 bytes from `src` to `dst`, of which the first
  /// `srcBytes` (i32, 0-16) are read and the rest filled with zeros.
  void copy16(Value dst, Value src, Value srcBytes);
  /// The copy of one 16-byte chunk (`chunkElements` elements of
  /// `elementBytes`) of a tensor at `base` (ptr<1>) to `dst`: the elements at
  /// element offset `at` (i64) onwards that lie inside the tensor, `left`
  /// (i32) of them left in its row and none unless `inside` (i1); the rest of
  /// the 16 bytes zero-filled. An empty chunk's address is not read
  /// (cp.async's source size 0), wherever it points: the copies of the
  /// matmul and attention lowerings follow this one rule.
  void copyChunk(Value dst, Value base, Value at, Value left, Value inside,
                 int64_t chunkElements, int64_t elementBytes);
  /// The elements of a chunk of `chunkElements` that lie inside the tensor
  /// when `left` (i32, negative past the end) are left in its row: `left`
  /// clamped to 0 .. chunkElements.
  Value chunkElementsLeft(Value left, int64_t chunkElements);
  void commitGroup();
  /// Waits until at most `pending` of this thread's committed groups are
  /// outstanding.
  void waitGroup(int64_t pending);
  /// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: each lane gives the
  /// address of one 16-byte row (lanes 8 q .. 8 q + 7 those of matrix q) and
  /// receives one i32 (two b16) of each of the four matrices.
  std::array<Value, 4> loadMatrices(Value rowAddress, bool transpose);
  /// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}: `c` plus the product
  /// of the A fragment `a` (four i32 of two elements) and the B fragment `bb`
  /// (two i32), as four f32. For f32 `inputType`, m16n8k8 of tf32: `a` is
  /// four and `bb` two tf32 (i32, from `toTf32`). For the 8-bit floats,
  /// m16n8k32 of e4m3 or e5m2 (sm_89): four elements an i32, inline asm
  /// without side effects (NVVM's mma op has no dense fp8 form); B may be
  /// the other 8-bit format (`inputTypeB`, default `inputType`).
  std::array<Value, 4> mma(ArrayRef<Value> a, ArrayRef<Value> bb,
                           ArrayRef<Value> c, Type inputType,
                           Type inputTypeB = {});
  /// The tf32 (i32) nearest the f32 `v` (an f32, or the i32 of its bits).
  Value toTf32(Value v);
  /// The k-step of one mma.sync: 16 for bf16 and f16, 8 for f32 (tf32), 32
  /// for the 8-bit floats: always 32 bytes of a row.
  static int64_t kStep(Type inputType) {
    return 32 / (inputType.getIntOrFloatBitWidth() / 8);
  }

  /// The global address (ptr<1>) of element 0 of the view `memref`, whose
  /// elements are `elementBytes` wide, and the view's strided metadata (its
  /// sizes and strides).
  std::pair<Value, memref::ExtractStridedMetadataOp>
  viewBase(Value memref, int64_t elementBytes);

  /// The address (ptr<3>) of the dynamic shared memory of `kernel`: an
  /// external array of no elements named `prefix` + the kernel's name, whose
  /// size the launch gives (tile.dynamic_shared_bytes), 128-byte aligned (the
  /// swizzle repeats every 128 bytes), inserted before the kernel.
  Value dynamicSharedBase(func::FuncOp kernel, StringRef prefix);

  /// The compute capability of an NVIDIA target name ("sm_80", "sm_90a",
  /// "sm_100f"), or 0.
  static int64_t computeCapability(StringRef arch);

  /// The byte offset (i32) of the 16-byte chunk `chunk` of row `row` in a
  /// tile of `chunksPerRow` chunks per row (a power of two) stored with an
  /// XOR swizzle: the chunk's linear index L = row * chunksPerRow + chunk is
  /// XORed with (L / max(chunksPerRow, 8)) mod 8. Eight consecutive rows at
  /// one chunk column (what one ldmatrix matrix reads) then fall in eight
  /// different 16-byte bank groups of the 128-byte bank line, and a warp's
  /// copies of consecutive chunks of a row stay in distinct groups too.
  Value swizzledChunk(Value row, Value chunk, int64_t chunksPerRow);

private:
  /// m16n8k32 of an A of `formatA` and a B of `formatB` ("e4m3" or "e5m2")
  /// into f32.
  std::array<Value, 4> mmaFloat8(ArrayRef<Value> a, ArrayRef<Value> bb,
                                 ArrayRef<Value> c, StringRef formatA,
                                 StringRef formatB);

  OpBuilder &b;
  Location loc;
};

} // namespace mlir::tessera::tile

#endif // TESSERA_LIB_CONVERSION_TILEMATMULTOMMASYNC_WARPMMA_H
