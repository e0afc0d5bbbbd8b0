//===- Passes.td - tessera tile dialect passes -------------*- tablegen -*-===//
//
// Passes on tile kernels: on tile IR before the conversion to loops
// (Conversion/Passes.td), and on the lowered kernel after it. Each pass's
// description says what it guarantees, with one example of its input and
// output.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_TD
#define TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileHoistInvariants : Pass<"tile-hoist-invariants", "::mlir::ModuleOp"> {
  let summary = "Compute a loop's invariant reductions and scalars once, before the loop";
  let description = [{
    Guarantees: the kernel computes the same values; ops that are invariant
    in an `scf.for` and worth computing once move from its body to just
    before it.

    The front end emits a value the user computes before a `for_range` and
    uses in its body where it is used: inside the body (the AST has no
    bindings). In every `func.func` carrying `tile.kernel`, for each `scf.for`
    (innermost first), an op of the body is *invariant* when every value it
    and its regions use is defined outside the loop or by an invariant op,
    and it has no effect other than reading: pure ops, `tile.load` from a
    memref argument that no `tile.store` of the function writes, and ops
    with regions (loops, ifs) made only of such ops. Invariant ops with
    regions, `tile.reduce` ops, and ops (other than constants) whose results
    are scalars or tiles of one element move before the loop, in program order, with the
    invariant ops of the body they use. Other invariant ops (a load of a
    weight vector, element-wise ops on whole tiles) stay: reading them again
    from the caches costs less than keeping them in registers across the
    loop. Running a moved op when the loop runs no iteration only reads
    inputs (loads are bounds-checked, or proven in bounds for every access by
    the launcher under `tile.whole_tiles`).

    A kernel already lowered by `convert-tile-to-loops` (it carries
    `tile.block_size`) is an error: this pass runs on tile IR.

    ```mlir
    // before: the inverse RMS of %x is recomputed at every step of the K loop
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<512xf32>) {
      %sq = scf.for %j = %c0 to %n step %c1 iter_args(%s = %z) -> (tensor<512xf32>) { ... }
      %t = tile.reduce %sq {kind = sum, axis = 0} : tensor<512xf32> -> tensor<1xf32>
      %inv = math.rsqrt %t : tensor<1xf32>
      %b = tile.broadcast %inv : tensor<1xf32> -> tensor<512xf32>
      ...
    }
    // after: %sq, %t and %inv are computed once, before the loop; %b stays
    %sq = scf.for %j = %c0 to %n step %c1 iter_args(%s = %z) -> (tensor<512xf32>) { ... }
    %t = tile.reduce %sq {kind = sum, axis = 0} : tensor<512xf32> -> tensor<1xf32>
    %inv = math.rsqrt %t : tensor<1xf32>
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<512xf32>) {
      %b = tile.broadcast %inv : tensor<1xf32> -> tensor<512xf32>
      ...
    }
    ```
  }];
}

def TileSplitKLoop : Pass<"tile-split-k-loop", "::mlir::ModuleOp"> {
  let summary = "Run each program's K loop as the CTAs of a cluster, each a share of its iterations";
  let description = [{
    Guarantees: each program computes the same values up to the order of
    its sums: its K loop's iterations are shared among `ctas` CTAs, whose
    partial sums are added once after the loop; the rest of the program
    runs once, in the first of them. Which program owns which tile does not
    change.

    A batch-1 product of few output rows (2560 rows of 8 or 16 are 160 to
    320 programs for 132 SMs) walks long rows with few programs in flight,
    so each program waits several memory latencies in turn. With S CTAs per
    program, S times as many CTAs each walk 1/S of the row.

    In every `func.func` carrying `tile.kernel` with one block, whose top
    level has exactly one `scf.for` (the K loop), no other op with regions,
    and no op writing memory before the loop, and whose loop body writes no
    memory and has no ops with regions, and carries only f32 tiles that start
    at zero (a zero splat constant) and are each updated by one `arith.addf`
    of the carried value and another, whose only use is the yield: with
    S = `ctas` (a power of two from 2 to 8; 1 leaves every kernel alone)
    the loop runs, in the CTA of rank r (`tile.split_rank`), the iterations
    [n r / S, n (r + 1) / S) of its n; after it, each carried result (or,
    where its only use is a `tile.reduce` of kind sum, that reduction, moved
    right after the loop) goes through one `tile.split_sum`, and the rest of
    the kernel runs under `scf.if` in rank 0. The function gets
    `tile.split_k = S`. Other kernels are left as they were.

    ```mlir
    // before
    %acc = scf.for %k = %c0 to %n step %c1 iter_args(%a = %zero) -> (tensor<16x512xf32>) {
      ...
      %a2 = arith.addf %a, %prod : tensor<16x512xf32>
      scf.yield %a2 : tensor<16x512xf32>
    }
    %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
    (the epilogue: reshape, store)
    // after (ctas = 4)
    %rank = tile.split_rank
    %first = (the rank's first iteration)   %end = (the next rank's first)
    %acc = scf.for %k = %first to %end step %c1 iter_args(%a = %zero) -> ... { (as before) }
    %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
    %s = tile.split_sum %r : tensor<16x1xf32> -> tensor<16x1xf32>
    %lead = arith.cmpi eq, %rank, %c0_i32 : i32
    scf.if %lead {
      (the epilogue, on %s)
    }
    ```

    A `ctas` other than 1, 2, 4 or 8 is an error.
  }];
  let options = [
    Option<"ctas", "ctas", "int64_t", /*default=*/"1",
           "CTAs per program sharing its K loop (1: none; 2, 4 or 8)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileLoadSettledBeforeWait
    : Pass<"tile-load-settled-before-wait", "::mlir::ModuleOp"> {
  let summary = "Load a K loop's first tiles of frozen tensors before the grid dependency wait";
  let description = [{
    Guarantees: the kernel computes the same values with the same arithmetic
    in the same order; the tiles its K loop's first `steps` iterations load
    from arguments marked `tile.settled` (frozen tensors, which no kernel
    still running writes) are loaded before `tile.grid_dependency_wait`,
    everything else after it.

    A batch-1 product launched programmatically behind the kernel that
    writes its vector may start while that kernel ends, but waits for it
    before any load: its weight stream starts only then. Loading the first
    weight tiles into registers before the wait overlaps them with the end
    of the kernel before (on the H200, a plain-CUDA chain of Qwen3-4B's
    decode layers ran at 0.824 of the copy bandwidth with two steps loaded
    early against 0.767 without; four or more steps were slower; the
    engine's own kernels gain in chains of products but not in its decode
    step: docs/performance.md).

    In every `func.func` carrying `tile.kernel` and `tile.whole_tiles`
    (elsewhere the peeled iterations' `scf.if` would keep
    tile-version-interior from versioning the kernel) with no
    `tile.grid_dependency_wait` yet, the first `scf.for` of the entry block
    whose body loads from a settled argument (directly, or through a
    `memref.transpose` of it) is taken if the indices of those loads are
    computed in the body by pure, region-free ops from the induction
    variable and values of the entry block, and those values, and the loop's
    bounds, by pure, region-free ops of the entry block. Then at the top of
    the kernel: those ops, an `scf.if` that loads the settled tiles of the
    iterations lb, lb + step, ... lb + (steps - 1) step when the loop has at
    least `steps` iterations (else zeros, unused), and the wait. Before the
    loop, an `scf.if` on the same condition runs those iterations' bodies
    with the loaded tiles, and the loop starts after them. Kernels without
    such a loop get the wait nowhere (the LLVM pass puts it at the entry).

    ```mlir
    // before
    %acc = scf.for %k = %c0 to %n step %c1 iter_args(%a = %zero) -> (tensor<16x512xf32>) {
      %j = arith.index_cast %k : index to i32
      %wt = tile.load %w[%p, %j] : !w -> tensor<16x512xbf16>   // %w: tile.settled
      ...
    }
    // after (steps = 2)
    %enough = arith.cmpi slt, %c1, %n : index
    %w0, %w1 = scf.if %enough -> (tensor<16x512xbf16>, tensor<16x512xbf16>) {
      (iterations 0 and 1's index ops and loads of %w)
    } else { (zero tiles) }
    tile.grid_dependency_wait
    %a1 = scf.if %enough -> (tensor<16x512xf32>) {
      (the bodies of iterations 0 and 1, on %w0 and %w1)
    } else { scf.yield %zero }
    %from = arith.select %enough, %c2, %c0 : index
    %acc = scf.for %k = %from to %n step %c1 iter_args(%a = %a1) -> ... { (as before) }
    ```

    `steps` must be 1 to 4; other values are an error.
  }];
  let options = [
    Option<"steps", "steps", "int64_t", /*default=*/"2",
           "iterations whose settled tiles are loaded before the wait (1 to 4)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileStreamLoads : Pass<"tile-stream-loads", "::mlir::ModuleOp"> {
  let summary = "Copy the tiles a loop streams ahead into a ring of stages";
  let description = [{
    Guarantees: the kernel computes the same values with the same arithmetic;
    a streamed tile is read from a ring slot instead of from global memory,
    and holds the same elements (zero outside the tensor, as the load's
    padding was).

    In every `func.func` carrying `tile.kernel`, an `scf.for` whose body has
    no ops with regions and no `tile.reduce`, `tile.transpose`, `tile.mma` or
    `tile.device_call` (the loops tile-unroll-streaming-loops takes) has its
    streamable loads rewritten: `tile.load` ops directly in the body from a
    memref argument that no `tile.store` writes (or a `memref.transpose` of
    one), carrying `tile.align` of at least 16 and a unit innermost stride,
    with indices computed from the induction variable by side-effect-free
    scalar ops, zero padding, a last tile dimension of a multiple of 16
    bytes, no `tile.broadcast` or `tile.reshape` among their users, and no
    path through the body's ops to the input of a `tile.broadcast` (a
    broadcast of loads, and of elementwise ops on them, reads its loads in
    its own layout, which a ring in the load's layout would turn into an
    exchange between threads). With B the bytes of one iteration's
    streamable tiles, a loop with B < `min-bytes` is left alone (a few KiB
    per iteration, as a row read in 2048-element chunks, are a few registers
    per thread, which tile-unroll-streaming-loops multiplies at no cost in
    shared memory); else the ring has S = min(`stages`, `max-bytes` / B)
    slots, and a loop with S < 2 is left alone.

    Each such load gets a `tile.stream_buffer` of S slots before the loop.
    Before the loop the tiles of the first S - 1 iterations are copied (each
    iteration's copies one committed group, valid only if that iteration
    runs); at the top of the body the tiles of iteration i + S - 1 are
    copied into slot (i + S - 1) mod S and committed; where the first of the
    loads was, `tile.stream_wait S-1` waits for iteration i's group (the
    body's other loads, issued before it, are not held back), and each load
    becomes a `tile.stream_take` of slot i mod S. On gpu the copies are `cp.async`:
    the bytes in flight no longer take registers, so a matrix-vector
    product's K loop keeps S - 1 weight tiles in flight per program.

    ```mlir
    // before
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<16x512xf32>) {
      %j = arith.index_cast %k : index to i32
      %w = tile.load %wt[%p, %j] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<16x512xbf16>
      ...
    }
    // after (stages = 4, max-bytes = 65536)
    %ring = tile.stream_buffer : memref<4x16x512xbf16>
    tile.stream_copy %wt[%p, %j0] to %ring[%c0] if %v0 : ...   (iterations 0, 1, 2)
    tile.stream_commit
    ...
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<16x512xf32>) {
      tile.stream_copy %wt[%p, %j3] to %ring[%ahead] if %v : ...  (iteration %k + 3)
      tile.stream_commit
      %j = arith.index_cast %k : index to i32
      tile.stream_wait 3
      %w = tile.stream_take %ring[%slot] : memref<4x16x512xbf16> -> tensor<16x512xbf16>
      ...
    }
    ```

    With `bulk` (sm_90 and later), the rings are bulk rings (see
    `tile.stream_buffer`): each copy is a `cp.async.bulk` per row issued by
    one thread of the program into a row-major slot, completed on the slot's
    full barrier; `tile.stream_ready` of slot i mod S, round i / S, stands
    where the wait would, and `tile.stream_release` of it ends the body.
    Any thread may read any element of a row-major slot, so loads whose
    values reach a `tile.broadcast` (a matrix-vector product's vector chunk)
    are streamed too: a broadcast of a take reads the slot in its own layout.

    ```mlir
    // after, with bulk
    %ring = tile.stream_buffer bulk : memref<4x16x512xbf16>
    tile.stream_copy %wt[%p, %j0] to %ring[%c0] if %v0 round %c0 : ...
    ...
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<16x512xf32>) {
      tile.stream_copy %wt[%p, %j3] to %ring[%ahead] if %v round %aheadRound : ...
      tile.stream_ready %ring[%slot] round %round : memref<4x16x512xbf16>
      %w = tile.stream_take %ring[%slot] : memref<4x16x512xbf16> -> tensor<16x512xbf16>
      ...
      tile.stream_release %ring[%slot] : memref<4x16x512xbf16>
      scf.yield ...
    }
    ```

    When the kernel has one streamed loop, in its entry block, the bulk
    rings of arguments marked `tile.settled` (no kernel still running
    writes them: the launcher's promise for frozen tensors), their copies
    before the loop and the pure ops those compute from move to the top of
    the kernel, followed by a `tile.grid_dependency_wait`: under a
    programmatic launch those tiles (a product's first weight tiles) are
    copied while the kernel before is still running; everything else,
    the vector chunks included, is read after the wait.

    Options out of range (`stages` outside 2..8, a non-positive
    `max-bytes`, a negative `min-bytes`) are an error.
  }];
  let options = [
    Option<"stages", "stages", "int64_t", /*default=*/"4",
           "Ring slots per streamed load (tiles of S - 1 later iterations in "
           "flight)">,
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"65536",
           "Bytes all rings of one loop may take">,
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"8192",
           "Bytes of streamable tiles per iteration below which a loop is "
           "left alone">,
    Option<"bulk", "bulk", "bool", /*default=*/"false",
           "Bulk rings: one thread's cp.async.bulk copies per row into "
           "row-major slots, with full and empty barriers (sm_90 and later)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TileUnrollStreamingLoops : Pass<"tile-unroll-streaming-loops", "::mlir::ModuleOp"> {
  let summary = "Unroll loops that stream tiles, to keep more loads in flight";
  let description = [{
    Guarantees: the kernel computes the same values, with the same
    operations in the same order for each value; only the loop structure
    changes.

    In every `func.func` carrying `tile.kernel`, an `scf.for` whose body has
    no ops with regions and no `tile.reduce`, `tile.transpose`, `tile.mma` or
    `tile.device_call`, and that has streaming loads (`tile.load` from a
    memref argument that no `tile.store` of the function writes, with an
    index computed from the induction variable) is unrolled by U: the largest
    power of two up to `max-factor` with U times the streaming loads' bytes
    per iteration at most `bytes-in-flight`. The main loop runs U iterations
    per step, an epilogue loop the remaining trip count mod U. Loops with
    U = 1 are left alone. Options out of range (a non-positive byte count, a
    factor that is not a positive power of two) are an error. A function in
    which a loop was unrolled gets the unit attribute `tile.unrolled_streams`.

    On gpu a loop that streams a tile per iteration waits a memory latency
    per iteration; with tile-hoist-loads after it, the U iterations' loads of
    the unrolled body are issued together.

    ```mlir
    // before (a [16, 512] bf16 weight tile, 16 KiB, per iteration)
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<16x512xf32>) {
      %j = arith.index_cast %k : index to i32
      %w = tile.load %wt[%p, %j] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<16x512xbf16>
      ...
    }
    // after (bytes-in-flight = 131072): four iterations per step, then the rest
    %r0 = scf.for %k = %c0 to %n4 step %c4 iter_args(%a = %z) -> (tensor<16x512xf32>) {
      (the body for %k, %k + 1, %k + 2 and %k + 3)
    }
    %r = scf.for %k = %n4 to %n step %c1 iter_args(%a = %r0) -> (tensor<16x512xf32>) { ... }
    ```
  }];
  let options = [
    Option<"bytesInFlight", "bytes-in-flight", "int64_t", /*default=*/"131072",
           "Bytes of streaming loads an unrolled iteration may read">,
    Option<"maxFactor", "max-factor", "int64_t", /*default=*/"4",
           "Largest unroll factor">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TileVectorMma : Pass<"tile-vector-mma", "::mlir::ModuleOp"> {
  let summary = "Run a K loop's one-row mma as element-wise multiply-adds, reduced once after the loop";
  let description = [{
    Guarantees: the kernel computes the same product (in f32; the sums are
    grouped differently: by k lane across the loop, then across lanes once).

    A matrix-vector product written as a matmul (`mma` of a 1 x BK row of A
    and a BK x BN tile of B in a K loop, a batch-1 linear layer) is bound by
    the bytes of B, not by multiplies: on the tensor cores or through shared
    memory each step waits for an exchange among the program's threads. In
    every `func.func` carrying `tile.kernel`, each `tile.mma` directly in an
    `scf.for` body whose `a` is 1 x BK, whose accumulator is an iter_arg used
    by that mma alone, and whose result is yielded as that iter_arg and used
    by nothing else, becomes, with BK x BN at most 16384 elements:

      - the iter_arg a BK x BN f32 tile starting at zero, to which each step
        adds `broadcast(reshape(a) : BK x 1) * b` element by element (A's row
        broadcast along B's columns: on the GPU each thread loads the element
        of A its row needs, `convert-tile-to-loops`' broadcast loads, no
        exchange);
      - after the loop, the sum over its rows (`tile.reduce` axis 0, once per
        program) added to the loop's initial accumulator.

    When B is loaded from a kernel argument whose columns are contiguous
    (strides [1, s]: the transposed view of an N x K weight), the accumulator
    is BN x BK instead: B's tile is loaded as BN x BK from a `memref.transpose`
    of the argument (contiguous rows), A's row is broadcast over its rows, and
    the sum after the loop is along axis 1, reshaped to 1 x BN.

    The loop is then a stream of B's tiles with no exchange per step, which
    `tile-unroll-streaming-loops` unrolls like the engine's matrix-vector
    products. Other mma ops are left alone. A kernel already lowered by
    `convert-tile-to-loops` (it carries `tile.block_size`) is an error.

    ```mlir
    // before
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<1x64xf32>) {
      %a = tile.load %A[%p0, %k32] : !a -> tensor<1x64xbf16>
      %b = tile.load %B[%k32, %p1] : !b -> tensor<64x64xbf16>
      %m = tile.mma %a, %b, %acc : tensor<1x64xbf16>, tensor<64x64xbf16>, tensor<1x64xf32> -> tensor<1x64xf32>
      scf.yield %m : tensor<1x64xf32>
    }
    // after
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %s = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
      %a = tile.load %A[%p0, %k32] : !a -> tensor<1x64xbf16>
      %b = tile.load %B[%k32, %p1] : !b -> tensor<64x64xbf16>
      %at = tile.reshape %a : tensor<1x64xbf16> -> tensor<64x1xbf16>
      %ab = tile.broadcast %at : tensor<64x1xbf16> -> tensor<64x64xbf16>
      %af = arith.extf %ab : tensor<64x64xbf16> to tensor<64x64xf32>
      %bf = arith.extf %b : tensor<64x64xbf16> to tensor<64x64xf32>
      %p = arith.mulf %af, %bf : tensor<64x64xf32>
      %n2 = arith.addf %acc, %p : tensor<64x64xf32>
      scf.yield %n2 : tensor<64x64xf32>
    }
    %t = tile.reduce %s {kind = sum, axis = 0} : tensor<64x64xf32> -> tensor<1x64xf32>
    %r = arith.addf %z, %t : tensor<1x64xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

def TileHoistLoads : Pass<"tile-hoist-loads", "::mlir::ModuleOp"> {
  let summary = "Schedule tile loads from read-only kernel arguments";
  let description = [{
    Guarantees: the kernel computes the same values; only the position of
    `tile.load` ops from read-only kernel arguments (and, for an invariant
    load, of the pure ops computed from it alone) changes, within their block,
    and `tile.program_id` ops in nested regions move to the start of the
    function.

    In every `func.func` carrying `tile.kernel`, moves each `tile.load` whose
    source is a read-only memref argument (an entry block argument that no
    `tile.store` of the function writes). Outputs never alias inputs (the
    launcher guarantees it), so such a load reads the same values wherever it
    runs.

    Every `tile.program_id` in a nested region (the same value everywhere in
    a program) first moves to the start of the function, so that an index computed from it
    inside a loop body does not hold a streaming load below a broadcast or a
    reduction.

    A *streaming* load, whose indices depend on a `tile.program_id` or on a
    block argument other than the kernel's (a loop variable), moves up within
    its block, to just after the last op of that block that defines one of
    its operands, or to the start of the block. Loads are processed in
    program order and never move above a load hoisted before them in the same
    block, so hoisted loads keep their relative order. On gpu this issues the
    next row's or loop iteration's data before reductions and barriers, so
    its latency overlaps them.

    An *invariant* load (the same indices in every program, e.g. a
    normalization's weight vector) is served by the caches after the first
    programs; it moves down instead, together with the pure ops computed from
    it alone (and constants), to just before the first op of its block that
    uses them, so that its values do not occupy registers across reductions.

    Loads stay in their block (a load in an `scf.for` body is only moved
    within the body); loads from memrefs that some `tile.store` writes, or
    that are not kernel arguments, are left alone.

    ```mlir
    // before: w's load is first, x's load follows the program id
    %w = tile.load %wt[%c0] : memref<?xf32, strided<[1], offset: ?>> -> tensor<64xf32>
    %p = tile.program_id 0
    %x = tile.load %a[%p] : memref<?xf32, strided<[1], offset: ?>> -> tensor<64xf32>
    %s = tile.reduce %x {kind = sum, axis = 0} : tensor<64xf32> -> tensor<1xf32>
    %b = tile.broadcast %s : tensor<1xf32> -> tensor<64xf32>
    %y = arith.mulf %b, %w : tensor<64xf32>
    // after: %x stays right after %p; %w moves down to just before %y
    ```
  }];
}

def TileGuardTileIndices : Pass<"tile-guard-tile-indices", "::mlir::ModuleOp"> {
  let summary = "Put every access that may reach a tile wholly outside its tensor under a test";
  let description = [{
    Guarantees: the kernel computes what tessera defines -- a load of a tile
    wholly outside its tensor reads its padding, a store there is dropped --
    with no access to such a tile left. CUDA Tile IR leaves those accesses
    undefined, so the tileir backend runs this pass before its writer.

    In every `func.func` carrying `tile.kernel` but not `tile.whole_tiles`
    (where the launcher proved every tile whole), each `tile.load` and
    `tile.store` not marked `tile.interior` is tested: along every dimension
    the tile's origin (index times the tile's extent) must lie in [0, size),
    compared unsigned. A load becomes an `scf.if` yielding it, or else a tile
    of its padding (zero without one); a store goes inside an `scf.if`.

    ```mlir
    %t = tile.load %a[%i] : memref<?xf32, strided<[1], offset: ?>> -> tensor<128xf32>
    // becomes
    %o = arith.muli (arith.index_cast %i), 128 : index
    %in = arith.cmpi ult, %o, (memref.dim %a, 0) : index
    %t = scf.if %in -> (tensor<128xf32>) {
      %l = tile.load %a[%i] : memref<?xf32, strided<[1], offset: ?>> -> tensor<128xf32>
      scf.yield %l : tensor<128xf32>
    } else {
      %z = tile.splat %c0 : f32 -> tensor<128xf32>
      scf.yield %z : tensor<128xf32>
    }
    ```

    A kernel already lowered by `convert-tile-to-loops` is an error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileRewidenAfterReduce : Pass<"tile-rewiden-after-reduce", "::mlir::ModuleOp"> {
  let summary = "Widen a bf16 tile again after a reduction instead of keeping it widened";
  let description = [{
    Guarantees: the kernel computes the same values (widening bf16 to f32 is
    exact, so a second widening equals the first); only where the f32 tile
    is made changes.

    In every `func.func` carrying `tile.kernel`, takes each `arith.extf` of a
    bf16 tile whose users include ops after a `tile.reduce` of its block (the
    first such reduce after the extf). If some users come before that reduce,
    a copy of the extf marked `tile.rewiden` is inserted just before the first
    user after it, and the users after the reduce use the copy; if none do,
    the extf is moved down to its first user instead. Each thread then keeps
    the bf16 values across the reduction, half the registers of the f32 ones.

    On gpu, `convert-tile-to-loops` widens each element of a `tile.rewiden`
    extf from its bf16 value passed through `llvm.arithmetic.fence`, which CSE
    does not merge with the first widening (in the PTX a `cvt.f32.bf16`, the
    first a shift or mask of the loaded bf16 pairs). f16 tiles, copies, and
    reduces in nested regions are left alone. The kernel is marked
    `tile.rewidened` when the pass changed it. The launcher compiles this
    variant for kernels that leave an SM half empty (see "Variants the
    launcher compiles" in docs/compiler.md). Measured on the H200: RMSNorm over
    32768-wide bf16 rows at 512 threads then fits two programs per SM in 64
    registers, 4.25 TB/s against 3.84 with one (torch.compile: 4.16).

    ```mlir
    %t = arith.extf %x : tensor<1x8192xbf16> to tensor<1x8192xf32>
    %q = arith.mulf %t, %t : tensor<1x8192xf32>
    %s = tile.reduce %q {kind = sum, axis = 1} : tensor<1x8192xf32> -> tensor<1x1xf32>
    %b = tile.broadcast %s : tensor<1x1xf32> -> tensor<1x8192xf32>
    // inserted: %t2 = arith.extf %x {tile.rewiden} : ...
    %y = arith.mulf %t, %b : tensor<1x8192xf32>    // becomes arith.mulf %t2, %b
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TileVersionInterior : Pass<"tile-version-interior", "::mlir::ModuleOp"> {
  let summary = "Test once per program whether all of a kernel's tiles are in bounds";
  let description = [{
    Guarantees: the kernel computes the same values; every access marked
    `tile.interior` is proven in bounds by the test that guards it (or, in a
    `tile.whole_tiles` kernel, by the launcher), and the unmarked edge copy
    is the body as it was.

    In every `func.func` carrying `tile.kernel` that has one block, a
    `return` without operands, at least one `tile.load` op at the top level
    or directly in a top-level `scf.for`, and `tile.load`/`tile.store` ops
    there on kernel arguments whose indices are computed by scalar ops free
    of memory effects: moves those index computations to the top, tests there
    whether the tile of every such access lies wholly within its memref, and
    puts the rest of the body in an `scf.if` on that test. An access in a
    loop (signed bounds, a constant positive step) is tested at the loop's
    first and last iterations (or the loop runs none); its indices must not
    change from one iteration to the next, or
    must not decrease: built from the induction variable by a narrowing
    `arith.index_cast`, `arith.addi` and `arith.subi` of values that do not
    change, and `arith.muli` by a non-negative constant. Then every
    iteration's tile lies between those two, and with an i32 index below 2^31
    at the last iteration (also tested) no iteration's index wraps around.
    Kernels with other loops (`scf.while`, loops with regions inside, or with
    accesses whose indices fall or come from the values the loop carries)
    are left alone. The else branch is the body as it was;
    the then branch is a copy whose top-level accesses carry the unit
    attribute `tile.interior`, a promise to `convert-tile-to-loops` that the
    tile is in bounds (it then emits the unconditional vector accesses alone,
    with no ragged path and no join after each access); the `scf.if` carries
    the unit attribute `tile.versions` (its else branch, the edge copy, may
    then be lowered as one element loop). The function is
    marked `tile.versioned` and not versioned again. Other kernels are left
    as they are.

    On gpu this keeps every load of a program in flight together: with one
    in-bounds branch per access, the join after a load made ptxas wait for it
    before the next operand's load was issued.

    A loop over a row's chunks: the test covers its first and last chunk.

    ```mlir
    // before
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (tensor<1x64xf32>) {
      %j = arith.index_cast %i : index to i32
      %x = tile.load %a[%p, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<1x64xf32>
      ...
    }
    // after
    %last = ... (%n - 1 - %c0) / %c1 * %c1 + %c0
    %ok = (%n <= %c0) or ((tile (%p, %c0) and tile (%p, %last) in bounds) and %last < 2^31)
    scf.if %ok {
      %r = scf.for ... {
        %x = tile.load %a[%p, %j] {tile.interior} : ...
        ...
      }
    } else {
      (the body as it was)
    } {tile.versions}
    ```

    ```mlir
    // before
    %p = tile.program_id 0
    %x = tile.load %a[%p] : memref<?xf32, strided<[1], offset: ?>> -> tensor<64xf32>
    %y = tile.load %b[%p] : memref<?xf32, strided<[1], offset: ?>> -> tensor<64xf32>
    %s = arith.addf %x, %y : tensor<64xf32>
    tile.store %s, %o[%p] : tensor<64xf32>, memref<?xf32, strided<[1], offset: ?>>
    // after
    %p = tile.program_id 0
    %ok = ... (%p * 64 + 63 < dim %a) and (... < dim %b) and (... < dim %o)
    scf.if %ok {
      %x = tile.load %a[%p] {tile.interior} : ...
      %y = tile.load %b[%p] {tile.interior} : ...
      %s = arith.addf %x, %y : tensor<64xf32>
      tile.store %s, %o[%p] {tile.interior} : ...
    } else {
      (the body as it was)
    } {tile.versions}
    ```

    A kernel marked `tile.whole_tiles` (a unit attribute: the launcher found
    every tile of every program of the launch in bounds and compiled the
    kernel for such launches) is not tested: every `tile.load` and
    `tile.store` in it, at any depth, is marked `tile.interior` in place, and
    there is no edge copy. Any other value of that attribute is an error.

    ```mlir
    // before
    func.func @add(...) attributes {tile.kernel, tile.whole_tiles} {
      %x = tile.load %a[%p] : memref<?xf32, strided<[1], offset: ?>> -> tensor<64xf32>
      ...
    // after
      %x = tile.load %a[%p] {tile.interior} : ...
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def TilePromotePrivateArrays : Pass<"tile-promote-private-arrays"> {
  let summary = "Replace private arrays accessed at constant indices by SSA values";
  let description = [{
    Guarantees: the same values; an alloca it removes was only ever read
    where its value was known, and every other alloca is untouched.

    A `memref.alloca` of static shape and identity layout whose every use is
    a `memref.load` or `memref.store` (as the memref) at constant in-bounds
    indices, all directly in one block, where every load reads an element
    stored before it in that block, is removed: each load is replaced by the
    value last stored at its position. Other allocas are left alone.
    `convert-tile-to-loops` keeps a thread's part of each tile in such arrays;
    run after it so that the conversions to the LLVM dialect and LLVM's
    optimizer do not have to handle (and then remove) these accesses, which
    were most of a small kernel's ops.

    ```mlir
    %a = memref.alloca() : memref<2xf32>
    memref.store %x, %a[%c0] : memref<2xf32>
    memref.store %y, %a[%c1] : memref<2xf32>
    %u = memref.load %a[%c1] : memref<2xf32>
    %s = arith.addf %u, %x : f32
    // becomes
    %s = arith.addf %y, %x : f32
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def TileCpuWorkspace : Pass<"tile-cpu-workspace", "::mlir::ModuleOp"> {
  let summary = "Move a cpu kernel's private arrays beyond its stack budget to a workspace";
  let description = [{
    Guarantees: a kernel's entry-block allocas take at most `stack-bytes` of
    stack together; everything else lives at disjoint, aligned offsets of a
    workspace of `tile.workspace_bytes` bytes that the caller passes; or an
    error names the alloca it cannot move.

    On cpu one thread runs a whole program and `convert-tile-to-loops` keeps
    each tile in a private array (`memref.alloca`) of the whole tile, so a
    kernel's arrays can need more stack than a host thread has (a tile of
    2^26 f32, hundreds of 16 KiB tiles). In every `func.func` carrying
    `tile.kernel`, allocas in the entry block stay on the stack while each
    holds at most `buffer-bytes` and all of them at most `stack-bytes`, in
    program order; every other alloca (too large, beyond the budget, or in a
    nested block, where each execution would take new stack) becomes a
    `memref.view` of a workspace appended as the kernel's last argument,
    `memref<?xi8>` (marked `llvm.noalias` and `llvm.align = 64`), at an
    offset of its own (64-byte aligned, or to the alloca's alignment if
    larger). The kernel then carries
    `tile.workspace_bytes`: the size of the workspace its caller passes,
    64-byte aligned, one per thread that runs programs. A kernel whose arrays
    all fit is left as it is. An alloca of dynamic size, with a layout or a
    memory space, or one outside the entry block that is passed to a
    terminator or a call (it could outlive its iteration, whose region the
    next iteration reuses) is an error. Run after `convert-tile-to-loops`
    (target cpu) and `tile-promote-private-arrays`.

    ```mlir
    %big = memref.alloca() : memref<65536xf32>
    // becomes, with %ws the new last argument (memref<?xi8>)
    %c0 = arith.constant 0 : index
    %big = memref.view %ws[%c0][] : memref<?xi8> to memref<65536xf32>
    ```
  }];
  let options = [
    Option<"stackBytes", "stack-bytes", "int64_t", /*default=*/"131072",
           "Bytes of private arrays a kernel may keep on the stack">,
    Option<"bufferBytes", "buffer-bytes", "int64_t", /*default=*/"16384",
           "Largest private array kept on the stack">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def TileExpandBF16Conversions : Pass<"tile-expand-bf16-conversions"> {
  let summary = "Expand f32 <-> bf16 conversions into integer arithmetic (cpu target)";
  let description = [{
    Guarantees: no `arith.extf` from bf16 and no `arith.truncf` to bf16 is
    left; each becomes integer arithmetic on the bits with the same result as
    the GPU's conversion: widening is a 16-bit shift, narrowing rounds to
    nearest even through a rounding bias and turns a NaN into a quiet NaN
    (MLIR's `populateExpandBFloat16Patterns`). Other ops are left alone.

    Run on the cpu target after `convert-tile-to-loops`: the x86 backend
    would otherwise use the host's conversion instructions where it has them
    (AVX512-BF16), which flush subnormal results to zero, while the GPU's
    cvt.rn.bf16.f32 keeps them (a softmax of bf16 rows has results near 6e-39
    where the row holds max - 88).

    ```mlir
    %w = arith.extf %x : bf16 to f32
    // becomes
    %b = arith.bitcast %x : bf16 to i16
    %e = arith.extui %b : i16 to i32
    %s = arith.shli %e, %c16 : i32
    %w = arith.bitcast %s : i32 to f32
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TileExpandF8Conversions : Pass<"tile-expand-f8-conversions"> {
  let summary = "Expand 8-bit float conversions and constants into integer arithmetic";
  let description = [{
    Guarantees: no `arith.extf`, `arith.truncf`, `arith.sitofp`,
    `arith.uitofp`, `arith.fptosi`, `arith.fptoui` or `arith.cmpf` with an
    `f8E4M3FN` or `f8E5M2` operand or result, no `arith.constant` of them, and
    no other arith or math op (but `arith.bitcast` and `arith.select`) with
    one is left: LLVM has no 8-bit float types, and the conversion to the LLVM
    dialect stores them as i8.

    Every conversion goes through f32: the front end writes them so, and
    canonicalization folds such chains (`truncf(extf x)`, `truncf(sitofp x)`)
    into one op, which this pass splits again; from f16, bf16 and integers
    that gives what was written exactly. The f32 <-> f8 steps become integer
    arithmetic. Widening is exact: a normal code's exponent is rebiased, a
    subnormal one is its mantissa times the smallest subnormal, the all-ones
    codes are NaN (E5M2: 0x7c is infinity). To f16 (the operands of the warp
    mma) it takes no f32: an E5M2 code is the high byte of its f16, an E4M3
    code's bits shifted into an f16's are scaled by 2^8. Narrowing rounds to nearest even
    and saturates, as the GPU's `cvt.rn.satfinite` and tessera's host
    conversion (dtype.h) do: magnitudes past the largest finite value,
    infinities included, become it (448, 57344); NaN becomes the code 0x7f;
    the sign is kept. A comparison compares the f32 values. A constant becomes
    an i8 constant of its bits and a bitcast.

    With `hardware-conversions` (GPU targets of compute capability 8.9 and
    more), the f32 -> f8 and f8 -> f16 steps of scalars and vectors are
    instead the instructions sm_89 has for them, two elements at a time:
    `nvvm.convert.f32x2.to.f8x2` (`cvt.rn.satfinite`, the same rounding and
    saturation) and `nvvm.convert.f8x2.to.f16x2` (exact; f8 -> f32 is then
    f16 -> f32). A vector's elements go in pairs (an odd one with a zero);
    other shapes keep the integer arithmetic. Then scalar narrowings of one
    block (the loops lowering converts a tile element by element) are joined
    two to an instruction where the second one's value is computed before the
    first conversion.

    Fails, naming the op, where an 8-bit float is computed on (the front end
    rejects arithmetic on these types). Run after `convert-tile-to-loops` on
    every target, and after a tensor-core lowering's epilogue.

    ```mlir
    %w = arith.extf %x : f8E4M3FN to f32
    // becomes, with %m the code's low 7 bits as an i32:
    //   (%m << 4) + (120 << 23)      for a normal code
    //   uitofp(%m) * 2^-9            for a subnormal one
    //   0x7fc00000                   for 0x7f (NaN)
    // with the sign bit or-ed in, and bitcast to f32

    // with hardware-conversions=true:
    %n = arith.truncf %y : f32 to f8E4M3FN
    // becomes
    //   %p = nvvm.convert.f32x2.to.f8x2 %zero, %y {rnd = #nvvm.fp_rnd_mode<rn>,
    //          sat = #nvvm.sat_mode<satfinite>} : vector<2xi8> (f8E4M3FN)
    //   %c = vector.extract %p[0] : i8 from vector<2xi8>
    //   %n = arith.bitcast %c : i8 to f8E4M3FN
    ```
  }];
  let options = [
    Option<"hardwareConversions", "hardware-conversions", "bool", "false",
           "Convert scalars and vectors with sm_89's cvt instructions "
           "(f32 -> f8 pairs, f8 pairs -> f16)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::vector::VectorDialect"];
}

#endif // TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_TD
