//===- TileOps.td - tessera tile dialect operations --------*- tablegen -*-===//
//
// IR semantics of tile kernels (these rules hold for every op below and for
// the upstream arith/math/scf ops used on tile values):
//
//  * Tile values are ranked, static-shaped tensors; every dimension is a power
//    of two. Elements are ordered row-major wherever a linear order matters
//    (reshape, iota, the mapping of elements to threads).
//  * Broadcasting is explicit: elementwise ops require operands of one shape;
//    size-1 dimensions are expanded only by `tile.broadcast`, scalars only by
//    `tile.splat`.
//  * Global memory is accessed only by `tile.load` and `tile.store`, one tile
//    at a time. Tile index `i` along a dimension of tile size `S` addresses the
//    elements `[i*S, i*S + S)`. Elements outside the memref's bounds (below 0
//    or at/after `memref.dim`) are never accessed: a load yields its padding
//    value for them (zero unless it says otherwise), a store does not write
//    them.
//  * 16-bit floats (f16, bf16) are storage types: arithmetic, comparisons and
//    math functions on them are computed in f32 and rounded back to the 16-bit
//    type per operation.
//  * Reductions and `tile.mma` accumulate in f32 for floating-point operands
//    (f16, bf16, f32) and in the operand type for integers; the reduction
//    order is unspecified.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DIALECT_TILE_IR_TILEOPS_TD
#define TESSERA_DIALECT_TILE_IR_TILEOPS_TD

include "tessera/Dialect/Tile/IR/TileDialect.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "tile.reduce combiner", [
      I32EnumAttrCase<"sum", 0>,
      I32EnumAttrCase<"max", 1>,
      I32EnumAttrCase<"min", 2>
    ]> {
  let cppNamespace = "::mlir::tessera::tile";
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Tile_GridDimAttr : ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>;

defvar Tile_Tensor = AnyStaticShapeTensor;
defvar Tile_GlobalMemRef = AnyStridedMemRef;

//===----------------------------------------------------------------------===//
// Program ids
//===----------------------------------------------------------------------===//

def Tile_ProgramIdOp : Tile_Op<"program_id", [Pure]> {
  let summary = "index of this program along a grid axis";
  let description = [{
    Returns the index of the running program (a CTA on the gpu target) along
    grid axis `dim` (0, 1 or 2).

    ```mlir
    %pid = tile.program_id 0
    ```
  }];
  let arguments = (ins Tile_GridDimAttr:$dim);
  let results = (outs I32:$result);
  let assemblyFormat = "$dim attr-dict";
}

def Tile_NumProgramsOp : Tile_Op<"num_programs", [Pure]> {
  let summary = "number of programs along a grid axis";
  let description = [{
    Returns the number of programs of the launch grid along axis `dim`
    (0, 1 or 2).

    ```mlir
    %n = tile.num_programs 1
    ```
  }];
  let arguments = (ins Tile_GridDimAttr:$dim);
  let results = (outs I32:$result);
  let assemblyFormat = "$dim attr-dict";
}

//===----------------------------------------------------------------------===//
// Global memory
//===----------------------------------------------------------------------===//

def Tile_LoadOp : Tile_Op<"load"> {
  let summary = "masked load of one tile from a global tensor";
  let description = [{
    Loads the tile with tile indices `indices` (one i32 per memref dimension)
    from `source`: the result element at tile coordinates `c` is the source
    element at `indices[d] * tileDim[d] + c[d]`. The tile's rank and element
    type equal those of `source`.

    Elements outside the bounds of `source` read as `padding`, zero when it
    is absent. The padding is a value of the element type, held as an f64
    (every value of f32, f16, bf16 and i32 is one): `inf`, `-inf` or `nan` (a
    quiet NaN) for float types, a finite value within the type's range (for
    f16 and bf16 rounded to nearest even), or an integer within the range of
    an integer type (0 or 1 for i1). Written after the indices, in the custom
    form without its type: `padding = -inf`, `padding = 2.5`,
    `padding = -2147483648`.

    ```mlir
    %t = tile.load %src[%i, %j] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<64x64xf32>
    %m = tile.load %src[%i, %j] padding = -inf : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<64x64xf32>
    %n = tile.load %idx[%i] padding = -1 : memref<?xi32, strided<[?], offset: ?>> -> tensor<128xi32>
    ```
  }];
  let arguments = (ins Arg<Tile_GlobalMemRef, "global tensor", [MemRead]>:$source,
                       Variadic<I32>:$indices,
                       OptionalAttr<F64Attr>:$padding);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = [{
    $source `[` $indices `]` `` custom<Padding>($padding) attr-dict
    `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store"> {
  let summary = "masked store of one tile into a global tensor";
  let description = [{
    Stores `value` as the tile with tile indices `indices` of `dest`: the
    element at tile coordinates `c` goes to `indices[d] * tileDim[d] + c[d]`.
    Elements that fall outside the bounds of `dest` are not written. The
    tile's rank and element type equal those of `dest`.

    ```mlir
    tile.store %t, %dst[%i, %j] : tensor<64x64xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
    ```
  }];
  let arguments = (ins Tile_Tensor:$value,
                       Arg<Tile_GlobalMemRef, "global tensor", [MemWrite]>:$dest,
                       Variadic<I32>:$indices);
  let assemblyFormat = [{
    $value `,` $dest `[` $indices `]` attr-dict `:` type($value) `,` type($dest)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Streamed loads (made by tile-stream-loads)
//
// A loop that reads one tile of a read-only tensor per iteration may copy the
// tiles of later iterations ahead into a ring of stages while it computes on
// the current one. The copies are asynchronous and program-private: the ring
// holds each tile in the layout of the program's threads, so the thread that
// reads an element back is the one that copied it, and no barrier is needed.
// Copies are grouped by `tile.stream_commit`; `tile.stream_wait` waits for
// groups to complete; `tile.stream_take` reads a slot whose group completed.
//===----------------------------------------------------------------------===//

def Tile_StreamBufferOp : Tile_Op<"stream_buffer"> {
  let summary = "program-private ring of tile stages for streamed loads";
  let description = [{
    Allocates a ring of S slots, each holding one tile of the shape and
    element type given by the result type's trailing dimensions (the first
    dimension is S, at least 2). Its storage is on-chip memory of the
    program (shared memory on gpu), alive for the whole kernel; the layout of
    a slot is the lowering's (each thread's elements where that thread copies
    and reads them), so the ring is accessed only by `tile.stream_copy` and
    `tile.stream_take`.

    With `bulk`, a slot holds its tile in row-major order, which any thread
    of the program may read, and the ring has a full and an empty barrier
    per slot: copies complete on the full barrier (`tile.stream_ready` waits
    for it), and `tile.stream_release` marks the slot read, which a copy
    into it waits for. Commit and wait do not apply to a bulk ring.

    ```mlir
    %ring = tile.stream_buffer : memref<4x16x512xbf16>
    %bulk = tile.stream_buffer bulk : memref<4x16x512xbf16>
    ```
  }];
  let arguments = (ins UnitAttr:$bulk);
  let results = (outs Res<AnyStaticShapeMemRef, "ring",
                          [MemAlloc<DefaultResource>]>:$ring);
  let assemblyFormat = "(`bulk` $bulk^)? attr-dict `:` type($ring)";
  let hasVerifier = 1;
}

def Tile_StreamCopyOp : Tile_Op<"stream_copy", [AttrSizedOperandSegments]> {
  let summary = "asynchronous copy of one tile into a ring slot";
  let description = [{
    If `valid` is true, starts copying the tile of `source` with tile indices
    `indices` (as `tile.load` reads it: elements outside the bounds of
    `source` read as zero) into slot `slot` of `ring`; if false, does
    nothing. The copy belongs to the next group that `tile.stream_commit`
    closes; the slot may be read once `tile.stream_wait` has seen that group
    complete. `source` must not be written by the kernel.

    A copy into a bulk ring (see `tile.stream_buffer`) takes the `round` of
    the slot (how many times it was filled before): a copy of round r > 0
    first waits until the slot's round r - 1 is released, and
    `tile.stream_ready` of round r then waits for it. Every program thread
    executes the copy (the lowering elects one to issue it).

    ```mlir
    tile.stream_copy %w[%i, %k] to %ring[%slot] if %valid
        : memref<?x?xbf16, strided<[?, 1], offset: ?>>, memref<4x16x512xbf16>
    tile.stream_copy %w[%i, %k] to %bulk[%slot] if %valid round %r
        : memref<?x?xbf16, strided<[?, 1], offset: ?>>, memref<4x16x512xbf16>
    ```
  }];
  let arguments = (ins Arg<Tile_GlobalMemRef, "global tensor", [MemRead]>:$source,
                       Variadic<I32>:$indices,
                       Arg<AnyStaticShapeMemRef, "ring", [MemWrite]>:$ring,
                       Index:$slot, I1:$valid, Optional<Index>:$round);
  let assemblyFormat = [{
    $source `[` $indices `]` `to` $ring `[` $slot `]` `if` $valid
    (`round` $round^)? attr-dict `:` type($source) `,` type($ring)
  }];
  let hasVerifier = 1;
}

def Tile_StreamCommitOp : Tile_Op<"stream_commit"> {
  let summary = "closes the group of the copies started since the last one";
  let description = [{
    Makes the `tile.stream_copy` ops executed by the program since the
    previous `tile.stream_commit` one group (possibly empty), which
    `tile.stream_wait` counts.

    ```mlir
    tile.stream_commit
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Tile_StreamWaitOp : Tile_Op<"stream_wait"> {
  let summary = "waits until at most `pending` committed groups are incomplete";
  let description = [{
    Blocks the program until at most `pending` of the groups closed by
    `tile.stream_commit` are still being copied: with one group committed per
    loop iteration and `pending` = S - 1, the group of the current iteration
    is then complete.

    ```mlir
    tile.stream_wait 3
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<0>, IntMaxValue<7>]>:$pending);
  let assemblyFormat = "$pending attr-dict";
  let hasVerifier = 1;
}

def Tile_StreamTakeOp : Tile_Op<"stream_take"> {
  let summary = "reads the tile of a ring slot";
  let description = [{
    Returns the tile in slot `slot` of `ring`, whose copy must have completed
    (see `tile.stream_wait`, or `tile.stream_ready` for a bulk ring, before
    the slot's `tile.stream_release`). The result type is the ring's slot
    type.

    ```mlir
    %t = tile.stream_take %ring[%slot] : memref<4x16x512xbf16> -> tensor<16x512xbf16>
    ```
  }];
  let arguments = (ins Arg<AnyStaticShapeMemRef, "ring", [MemRead]>:$ring,
                       Index:$slot);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = [{
    $ring `[` $slot `]` attr-dict `:` type($ring) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_GridDependencyWaitOp : Tile_Op<"grid_dependency_wait"> {
  let summary = "waits for the grids the kernel depends on";
  let description = [{
    Blocks the program until every grid the launch depends on has ended and
    its writes are visible (`griddepcontrol.wait` on sm_90 and later; nothing
    on the cpu target). Without this op the wait is at the kernel's entry
    (the LLVM pass `tessera-grid-dependency-wait` puts it there); with it,
    only what comes before it runs before the wait: copies of tensors that
    no kernel still running may write (kernel arguments marked
    `tile.settled`), which then overlap the end of the kernel before. It is
    in the kernel's entry block, once.

    ```mlir
    tile.stream_copy %w[%p, %c0i] to %ring[%c0] if %valid round %c0 : ...
    tile.grid_dependency_wait
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Tile_SplitRankOp : Tile_Op<"split_rank", [Pure]> {
  let summary = "index of this CTA among those that share a program's K loop";
  let description = [{
    In a kernel marked `tile.split_k = S` (see `tile-split-k-loop`), each
    program runs as the S CTAs of one cluster, which share the iterations of
    its K loop. Returns this CTA's index among them, 0 to S - 1 (its rank in
    the cluster). Only in such a kernel.

    ```mlir
    %r = tile.split_rank
    ```
  }];
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Tile_SplitSumOp : Tile_Op<"split_sum"> {
  let summary = "sums of tiles over the CTAs that share a program's K loop";
  let description = [{
    In a kernel marked `tile.split_k = S`, the elementwise sum of each input
    over the S CTAs of the program (each holds its partial sums of the K
    loop's iterations it ran), in the CTA of rank 0 (`tile.split_rank`),
    which runs the rest of the program; in the other CTAs the results are
    their own inputs. Every CTA of the program reaches one such op once: it
    is outside loops (only `scf.if` around it, whose branches the CTAs of a
    program may take differently as long as each reaches one split_sum of
    the same types). On gpu the partials meet in distributed shared memory
    between two cluster barriers; elements are f32.

    ```mlir
    %s:2 = tile.split_sum %acc, %squares : tensor<16x1xf32>, tensor<1xf32>
        -> tensor<16x1xf32>, tensor<1xf32>
    ```
  }];
  let arguments = (ins Variadic<Tile_Tensor>:$inputs);
  let results = (outs Variadic<Tile_Tensor>:$results);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($results)";
  let hasVerifier = 1;
}

def Tile_StreamReadyOp : Tile_Op<"stream_ready"> {
  let summary = "waits until a bulk ring slot's copy of a round has completed";
  let description = [{
    Blocks the program until the copy of round `round` into slot `slot` of
    the bulk ring `ring` (see `tile.stream_copy`) has completed; the slot
    may then be read by `tile.stream_take` until `tile.stream_release`.

    ```mlir
    tile.stream_ready %bulk[%slot] round %r : memref<4x16x512xbf16>
    ```
  }];
  let arguments = (ins Arg<AnyStaticShapeMemRef, "ring", [MemRead, MemWrite]>:$ring,
                       Index:$slot, Index:$round);
  let assemblyFormat = [{
    $ring `[` $slot `]` `round` $round attr-dict `:` type($ring)
  }];
  let hasVerifier = 1;
}

def Tile_StreamReleaseOp : Tile_Op<"stream_release"> {
  let summary = "marks a bulk ring slot read";
  let description = [{
    The program has taken what it reads of slot `slot` of the bulk ring
    `ring` in this round: the next copy into the slot may overwrite it. Every
    program thread executes it once per round, after its last
    `tile.stream_take` of the slot.

    ```mlir
    tile.stream_release %bulk[%slot] : memref<4x16x512xbf16>
    ```
  }];
  let arguments = (ins Arg<AnyStaticShapeMemRef, "ring", [MemRead, MemWrite]>:$ring,
                       Index:$slot);
  let assemblyFormat = "$ring `[` $slot `]` attr-dict `:` type($ring)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tile construction and layout
//===----------------------------------------------------------------------===//

def Tile_SplatOp : Tile_Op<"splat", [Pure]> {
  let summary = "tile filled with one scalar";
  let description = [{
    Returns a tile whose elements all equal `input`; the scalar type equals the
    tile's element type.

    ```mlir
    %t = tile.splat %s : f32 -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[AnySignlessInteger, AnyFloat, Index]>:$input);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure]> {
  let summary = "expand size-1 dimensions of a tile";
  let description = [{
    Returns a tile of the result shape in which every size-1 dimension of
    `input` is repeated. Ranks and element types are equal; each input
    dimension equals the result dimension or is 1.

    ```mlir
    %b = tile.broadcast %row : tensor<1x64xf32> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Tile_Tensor:$input);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ReshapeOp : Tile_Op<"reshape", [Pure]> {
  let summary = "reinterpret a tile with another shape";
  let description = [{
    Returns the elements of `input`, in row-major order, arranged in the
    result shape. Element count and element type are unchanged.

    ```mlir
    %r = tile.reshape %t : tensor<64x64xf32> -> tensor<4096xf32>
    ```
  }];
  let arguments = (ins Tile_Tensor:$input);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_TransposeOp : Tile_Op<"transpose", [Pure]> {
  let summary = "transpose a rank-2 tile";
  let description = [{
    Returns the transpose of a rank-2 tile: `result[i, j] = input[j, i]`.

    ```mlir
    %t = tile.transpose %x : tensor<64x32xf32> -> tensor<32x64xf32>
    ```
  }];
  let arguments = (ins Tile_Tensor:$input);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ReduceOp : Tile_Op<"reduce", [Pure]> {
  let summary = "reduce a tile along one axis";
  let description = [{
    Combines the elements of `input` along dimension `axis` with `kind`
    (`sum`, `max` or `min`). The result keeps the reduced axis with size 1 and
    has the input's element type. f16 and bf16 inputs are accumulated in f32
    and rounded once at the end; integer inputs accumulate in their own type.

    ```mlir
    %s = tile.reduce %x {kind = sum, axis = 1} : tensor<64x64xf32> -> tensor<64x1xf32>
    ```
  }];
  let arguments = (ins Tile_Tensor:$input, Tile_ReduceKind:$kind,
                       ConfinedAttr<I32Attr, [IntNonNegative]>:$axis);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = [{
    $input ` ` `{` `kind` `=` $kind `,` `axis` `=` $axis `}` attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_IotaOp : Tile_Op<"iota", [Pure]> {
  let summary = "tile of consecutive integers";
  let description = [{
    Returns the rank-1 i32 tile `[0, 1, ..., N-1]`.

    ```mlir
    %r = tile.iota : tensor<128xi32>
    ```
  }];
  let results = (outs 1DTensorOf<[I32]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_DeviceCallOp : Tile_Op<"device_call"> {
  let summary = "elementwise call of an external device function";
  let description = [{
    Applies the external scalar function `callee` to the tiles `args`
    element by element: result element `i` is `callee(args[0][i], ...)`.
    Every argument and the result have one shape; element types are f32 or
    i32. The function is not defined in the module: on GPU targets it is
    linked in with its own code (CUDA C++ compiled by NVRTC, or PTX) as an
    `extern "C"` device function of signature `result(args...)`; the lowering
    declares it as a private `func.func`. It may have effects, so the op is
    neither moved nor removed.

    ```mlir
    %r = tile.device_call @twice_plus(%x, %y) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<Tile_Tensor>:$args);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = [{
    $callee `(` $args `)` attr-dict `:` functional-type($args, $result)
  }];
  let hasVerifier = 1;
}

def Tile_MmaOp : Tile_Op<"mma", [Pure]> {
  let summary = "matrix multiply-accumulate of tiles";
  let description = [{
    Returns `acc + a * b` where `a` is MxK, `b` is KxN and `acc` and the result
    are MxN f32. `a` and `b` have one element type, f16, bf16, f32, f8E4M3FN
    or f8E5M2, or are one of each 8-bit float type (e4m3 x e5m2, as FP8
    training multiplies gradients by weights); products are summed in f32.

    ```mlir
    %d = tile.mma %a, %b, %c : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Tile_Tensor:$a, Tile_Tensor:$b, Tile_Tensor:$acc);
  let results = (outs Tile_Tensor:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` type($a) `,` type($b) `,` type($acc)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // TESSERA_DIALECT_TILE_IR_TILEOPS_TD
