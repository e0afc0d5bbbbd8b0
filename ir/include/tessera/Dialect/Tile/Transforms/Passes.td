//===- Passes.td - tessera tile dialect passes -------------*- tablegen -*-===//

#ifndef TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_TD
#define TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileLowerToLoops : Pass<"tile-lower-to-loops", "::mlir::ModuleOp"> {
  let summary = "Lower tile kernels to per-thread scalar loops over private buffers";
  let description = [{
    Rewrites every `func.func` carrying `tile.kernel` so that no tensor values
    and no tile ops remain: only func, scf, arith, math (on scalars), memref,
    vector (global accesses) and, for the gpu target, nvvm ops.

    Thread mapping: a tile of P elements (row-major) is spread over the
    program's T threads (T = `block-size` on gpu, 1 on cpu; with
    `block-size=0`, T is chosen per kernel from its largest tile, Pmax
    elements, a tile inside a loop counting four times its elements:
    T = clamp(Pmax/32, 32, 512)). Each thread owns
    n = max(1, P/T) elements in C = n/v chunks of v = min(V, n) contiguous
    elements: thread t owns linear indices (c*T + t)*v + j. When P < T,
    thread t owns element t mod P (replicated; only threads t < P store to
    global memory). V is chosen per kernel: `vector-bytes` divided by the size
    of the narrowest element type of the kernel's tiles (i1 aside), at most
    `vector-width`; so the map depends only on P and all values of one shape
    share it, whatever their dtypes (e.g. bf16 load, f32 math, bf16 store).

    Each tile value lives in a per-thread buffer `memref<n x T>` allocated by
    `memref.alloca` in the entry block (on cpu, `tile-cpu-workspace` then
    moves those a host thread's stack cannot hold). Elementwise ops run per
    element on scalars (16-bit floats computed in f32); `tile.device_call`
    becomes one `func.call` per element.

    `tile.load`/`tile.store` check bounds once per tile: a tile wholly in
    bounds is accessed unconditionally; a ragged tile element by element, in
    a loop over chunks (not unrolled) on a staged copy of the buffer, loads
    reading index 0 and selecting the padding value when out of bounds,
    stores under `scf.if`. The edge copy of a versioned kernel (the else
    branch of an `scf.if` marked `tile.versions`, see `tile-version-interior`)
    that holds only loads, stores, splats and elementwise ops on tiles of one
    shape, and stores to any memref it reads at that one tile only, is
    instead one loop over the thread's elements with no buffers: per element
    each load under its own bounds check (`scf.if` yielding the element or
    the padding value), the ops on scalars, each store under a bounds check.
    Memref arguments with a static unit inner stride
    and the argument attribute `tile.align = A : i64` (the address of element
    0 and every row stride are multiples of A bytes) get `vector.load` /
    `vector.store` of min(v, row length, `vector-bytes`, A) bytes with that
    alignment; other memrefs (and i1) get scalar accesses.

    `tile.reduce` along an axis followed only by size-1 dimensions (rows of L
    contiguous elements, owned by g = clamp(L/v, 1, T) aligned threads):
    each thread combines its elements of a row in registers, the g threads
    combine by `nvvm.shfl.sync bfly`; rows wider than a warp, and results
    held by other threads, exchange one partial per warp and row through
    shared memory (one barrier). Other reductions, broadcasts whose results
    come from other threads, transpose and mma exchange data through a
    scratch buffer (an entry block alloca on cpu) between barriers
    (`nvvm.barrier0` on gpu). On gpu the scratch is a shared memory
    `memref.global` in address space 3 when it fits the 48 KiB of static
    shared memory. Above that it is dynamic shared memory, up to
    `max-shared-bytes` (the device's opt-in limit): an external
    `memref.global` of no elements (`.extern .shared .align 16 .b8 name[]` in
    PTX) viewed past its declared size, and the function gets
    `tile.dynamic_shared_bytes = N : i32`, the bytes each launch must pass
    (and opt into). A kernel needing more is an error naming the bytes
    needed and the limit. Example: a 128x128 f32 tile summed along axis 0
    writes its 64 KiB to the scratch:

    ```mlir
    memref.global @__tile_dynamic_scratch_k : memref<0xi8, 3> {alignment = 16 : i64}
    func.func @k(...) attributes {tile.dynamic_shared_bytes = 65536 : i32, ...} {
      %s = memref.get_global @__tile_dynamic_scratch_k : memref<0xi8, 3>
      %v = memref.view %s[%c0][] : memref<0xi8, 3> to memref<16384xf32, 3>
    ``` Broadcasts of a single element or of a tile
    whose elements stay in their threads are copied within the thread. Loops
    carrying tiles are rebuilt with the tiles in private buffers.

    Program ids come from `nvvm.read.ptx.sreg.ctaid/nctaid` on gpu; on cpu the
    kernel gets six trailing i32 arguments (pid0, pid1, pid2, nprog0, nprog1,
    nprog2). A kernel compiled for one launch's shapes carries its grid
    (`tile.grid = array<i64: X, Y, Z>`, three positive counts; anything else
    is an error): on gpu the CTA ids then carry their range (`range <i32, 0,
    X>`, so that LLVM folds the bounds tests of whole tiles) and the program
    counts are constants. On gpu the function gets
    `tile.block_size = T/S : i32`, the threads of one CTA, and `tile.reduction` if its programs store an eighth
    of the bytes they load or less, counted over its `tile.load` and
    `tile.store` tiles, those inside a loop four times (read by
    `tile-load-cache-hints`), and `tile.exchange_free` if its threads never
    exchange data (read by the launcher's register cap).

    A program may run as S CTAs (`ctas-per-program`, a power of two) when its
    threads never exchange data (no reduce, transpose, mma or device call, no
    broadcast across threads): thread t of the program is thread t mod (T/S)
    of CTA t / (T/S); along grid x, CTA c runs program c / S, so the launch
    grid's x dimension is S times the number of programs, and the function
    gets `tile.ctas_per_program = S : i32`. With `block-size=0` and
    `ctas-per-program=0`, such a kernel whose largest tile has
    Pmax >= 512 C V elements gets T = Pmax / (C V) threads of C chunks each
    (C = `split-chunks`) in CTAs of 256 / C, CTA s of a program owning its
    s-th contiguous part of every tile (thread u of CTA s owns linear indices
    s*(P/S) + (c*(T/S) + u)*v + j): a CTA then moves 4 KiB of contiguous
    elements of each tile of the narrowest type, which measured faster on an
    H200 than one CTA per program (see ThreadMapping.h). Example: a bf16 add
    of 4096-element tiles (C = 2, V = 8) runs as 2 CTAs of 128 threads per
    program.

    Conversely, with `block-size=0` and `ctas-per-program=0`, up to G =
    256 / T programs of T < 256 threads share one CTA when they need no
    scratch (so no barrier) and make no device call: program
    ctaid.x * (ntid.x / T) + tid.x / T runs on threads tid.x mod T, the
    function gets `tile.programs_per_cta = G : i32`, `tile.block_size = 256`
    (the largest CTA) and a trailing i32 argument, the number of programs
    along x (`tile.num_programs 0`). The launcher runs g = G programs per CTA,
    or fewer for a grid of fewer programs along x, in CTAs of g * T threads,
    and divides the grid's x dimension by g, rounded up (the code generator
    makes the programs past the end return at once). Example: a row sum over 1024-wide
    bf16 rows (one warp per program, shuffles only) runs eight programs per
    CTA.

    Before rewriting, the pass checks that each kernel only uses supported
    ops, element types (i1, i8, i16, i32, i64, f16, bf16, f32, f64),
    power-of-two static tile shapes and valid `tile.align` attributes, and
    reports an error otherwise.

    On gpu, code for a value is fully unrolled (constant buffer indices) when
    n <= `unroll-limit`, so that SROA promotes the buffers to registers.

    A block of only elementwise ops, splats, splat constants, loads and
    stores, on tiles of one shape, with more than `fuse-above` tile ops, is
    lowered as one rolled loop over each thread's elements that computes
    every op on scalars (as the edge copy of a versioned kernel is at any
    size): op by op, such a block is a loop per op on cpu and every op
    unrolled over the thread's elements on gpu, and LLVM and ptxas take time
    superlinear in that code (SCEV's walks over the loops before each loop,
    InstCombine sinking values through the chain of unrolled loop bodies,
    ptxas on one basic block of N ops times the thread's elements). Loads
    and stores marked `tile.interior` are not bounds-checked there.

    On gpu, a max or min along rows of a widened 16-bit float tile
    (`tile.reduce` of `arith.extf`) combines each thread's elements two per op
    on the narrow values, as `vector<2xbf16>` or `vector<2xf16>` pairs
    (`max.NaN.bf16x2`), then the two lanes in f32: the same result, since
    widening is exact and monotonic.

    With `exp-range-test` (the default), an accurate f32 or 16-bit `math.exp`
    whose thread holds 4 or more unrolled elements is tested per group of up
    to 32 of them: if every argument lies strictly within +-69 (inside the
    range +-80 that `tile.exp_in_range` promises), an `scf.if` takes the exps
    marked `tile.exp_in_range` (see `tile-math-to-nvvm`), else the plain ones;
    the function is marked `tile.exp_range_tested`. For softmax's shift,
    `exp(x - broadcast(max(x)))` with `x` a widened 16-bit tile and the max of
    the whole tile, every argument lies in [fl(x_min - max), 0], so a group's
    test is the one compare fl(x_min - max) > -69, `x_min` taken on the narrow
    pairs:

    ```mlir
    %lo = arith.minimumf %p0, %p1 : vector<2xbf16>   // ... down to one pair
    %m = arith.minimumf %lo0, %lo1 : f32             // its lanes, widened
    %least = arith.subf %m, %max : f32
    %ok = arith.cmpf ogt, %least, %minus69 : f32
    ```

    An f32 division of such
    exps by a tile broadcast from one element then takes, per group that
    passed and for a divisor within [2^-24, 2^24], one correctly rounded
    reciprocal and two fma per quotient (the IEEE quotient: the exps lie within
    2^+-99.6), and the plain divisions otherwise:

    ```mlir
    %q = arith.divf %e, %b : tensor<32xf32>   // %e: tested exps, %b: %s broadcast
    // becomes, per group of exps and their test %ok
    %y = arith.divf %one, %s : f32
    %r:8 = scf.if %ok_and_s_in_range -> (f32, ...) {
      %q0 = arith.mulf %e0, %y : f32
      %n0 = arith.negf %q0 : f32
      %d0 = math.fma %n0, %s, %e0 : f32
      %c0 = math.fma %d0, %y, %q0 : f32
      ...
    } else {
      %c0 = arith.divf %e0, %s : f32
      ...
    }
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Code generation target: cpu or gpu">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"128",
           "Threads per program on the gpu target, 0: chosen per kernel "
           "(the cpu target uses 1)">,
    Option<"ctasPerProgram", "ctas-per-program", "int64_t", /*default=*/"1",
           "CTAs sharing one program on the gpu target (a power of two, at "
           "most block-size; more than 1 only for kernels whose threads "
           "never exchange data); 0: chosen per kernel with block-size=0, "
           "else 1">,
    Option<"splitChunks", "split-chunks", "int64_t", /*default=*/"2",
           "Chunks per thread of a program split over CTAs by "
           "ctas-per-program=0 (CTAs of 256 / split-chunks threads)">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "Maximum contiguous elements per thread chunk">,
    Option<"vectorBytes", "vector-bytes", "int64_t", /*default=*/"16",
           "Bytes of a chunk of the kernel's narrowest element type, and of "
           "the widest global vector access">,
    Option<"unrollLimit", "unroll-limit", "int64_t", /*default=*/"64",
           "Fully unroll per-thread element loops of at most this many "
           "elements (gpu target)">,
    Option<"fuseAbove", "fuse-above", "int64_t", /*default=*/"256",
           "Lower a purely elementwise block of more than this many tile ops "
           "as one loop over each thread's elements (see the description)">,
    Option<"maxSharedBytes", "max-shared-bytes", "int64_t",
           /*default=*/"232448",
           "Shared memory a CTA may use on the gpu target (the device's "
           "opt-in limit; 232448 = 227 KiB on sm_90 and sm_100a): scratch "
           "above 48 KiB is dynamic shared memory up to this many bytes">,
    Option<"expRangeTest", "exp-range-test", "bool", /*default=*/"true",
           "On gpu, test per group of up to 32 unrolled elements whether "
           "all arguments of an accurate exp lie within +-69 (then the exps "
           "are marked tile.exp_in_range)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::func::FuncDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::NVVM::NVVMDialect"
  ];
}

def TileHoistLoads : Pass<"tile-hoist-loads", "::mlir::ModuleOp"> {
  let summary = "Schedule tile loads from read-only kernel arguments";
  let description = [{
    In every `func.func` carrying `tile.kernel`, moves each `tile.load` whose
    source is a read-only memref argument (an entry block argument that no
    `tile.store` of the function writes). Outputs never alias inputs (the
    launcher guarantees it), so such a load reads the same values wherever it
    runs.

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

def TileRewidenAfterReduce : Pass<"tile-rewiden-after-reduce", "::mlir::ModuleOp"> {
  let summary = "Widen a bf16 tile again after a reduction instead of keeping it widened";
  let description = [{
    In every `func.func` carrying `tile.kernel`, takes each `arith.extf` of a
    bf16 tile whose users include ops after a `tile.reduce` of its block (the
    first such reduce after the extf). If some users come before that reduce,
    a copy of the extf marked `tile.rewiden` is inserted just before the first
    user after it, and the users after the reduce use the copy; if none do,
    the extf is moved down to its first user instead. Each thread then keeps
    the bf16 values across the reduction, half the registers of the f32 ones.

    On gpu, `tile-lower-to-loops` widens each element of a `tile.rewiden`
    extf from its bf16 value passed through `llvm.arithmetic.fence`, which CSE
    does not merge with the first widening (in the PTX a `cvt.f32.bf16`, the
    first a shift or mask of the loaded bf16 pairs). f16 tiles, copies, and
    reduces in nested regions are left alone. The kernel is marked
    `tile.rewidened` when the pass changed it. The launcher compiles this
    variant for kernels that leave an SM half empty (see
    src/compiler/variant_search.cpp). Measured on the H200: RMSNorm over
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
    attribute `tile.interior`, a promise to `tile-lower-to-loops` that the
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
    A `memref.alloca` of static shape and identity layout whose every use is
    a `memref.load` or `memref.store` (as the memref) at constant in-bounds
    indices, all directly in one block, where every load reads an element
    stored before it in that block, is removed: each load is replaced by the
    value last stored at its position. Other allocas are left alone.
    `tile-lower-to-loops` keeps a thread's part of each tile in such arrays;
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
    On cpu one thread runs a whole program and `tile-lower-to-loops` keeps
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
    next iteration reuses) is an error. Run after `tile-lower-to-loops`
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

def TileMathToNVVM : Pass<"tile-math-to-nvvm"> {
  let summary = "Rewrite scalar f32 math ops into forms NVPTX selects without libdevice";
  let description = [{
    Replaces scalar f32 `math` ops that the NVPTX backend cannot select (they
    would become libm calls) by sequences built from PTX approximate
    instructions, called through `llvm.call_intrinsic` (for example
    exp(x) = ex2.approx(x * log2(e))). Ops that NVPTX selects directly
    (sqrt, fma, abs, floor, ...) are left alone. Run it before
    `convert-math-to-llvm`. Vector or f64 operands of the rewritten ops are
    rejected with an error; f16/bf16 ones are computed in f32.

    A `math.exp` marked `tile.exp_in_range` (its argument lies within +-80,
    see `tile-lower-to-loops`) becomes the accurate value without the
    handling of the float range's ends: ex2.approx.ftz and the correction,
    no select (the same result bit for bit, in fewer instructions).

    `math.exp`, `math.sqrt`, `math.tanh` and `arith.divf` carrying the `afn`
    fast-math flag become the hardware approximations (ex2.approx.ftz,
    sqrt.approx, tanh.approx, div.full):

    ```mlir
    %e = math.exp %x fastmath<afn> : f32
    // becomes
    %t = arith.mulf %x, %cst : f32   // log2(e)
    %e = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%t) : (f32) -> f32
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

def TileLoadCacheHints : Pass<"tile-load-cache-hints", "::mlir::ModuleOp"> {
  let summary = "Give loads from read-only kernel parameters an L2 cache policy";
  let description = [{
    Runs on the LLVM dialect form of gpu kernels (`llvm.func` carrying
    `tile.kernel`, after the conversion to the LLVM dialect). Every aligned 4-, 8- or
    16-byte `llvm.load` of integers or floats whose pointer is computed (by
    `llvm.getelementptr`, through the memref descriptor's `llvm.insertvalue`
    and `llvm.extractvalue`) from a pointer parameter that nothing in the
    kernel stores through becomes a PTX `ld.global.nc.L2::cache_hint` with the
    policy `createpolicy.fractional.L2::<policy>` made once at the entry, as
    side-effect-free `llvm.inline_asm`. A kernel with a store, atomic or memory
    intrinsic whose pointer cannot be traced, a call, or side-effecting inline
    asm is left alone. Writes to shared or private memory (address spaces 3
    and 5) are no parameter's, however their address was computed. A kernel
    marked `tile.reduction` (by `tile-lower-to-loops`: its programs store an
    eighth of the bytes they load or less, a tile in a loop counted four
    times) takes `reduction-policy` instead (default evict_first; `none`
    leaves its loads plain), and only on the loads whose address depends on
    every CTA id (`nvvm.read.ptx.sreg.ctaid.*`, followed through op results and
    block arguments) that some load's address depends on: the streams each
    program reads for itself. Data that several programs read, such as a
    weight vector or a matrix product's operand tiles (one on ctaid.x, the
    other on ctaid.y), keeps plain loads. With evict_last
    the row sum and row max ran 0.45% slower on the H200; with evict_first
    the row sum gained 0.1-0.6%.

    Why evict_last for the other kernels (H200):
    with evict_last (presumably: the L2 then evicts the kernel's written lines
    before the lines it read) streaming kernels ran faster: bf16 add 4.387 -> 4.424 TB/s,
    copy 4.24 -> 4.30, softmax with fast math 4.20 -> 4.29, transpose 3.71 ->
    3.79 (the accurate fused chain, bound by arithmetic, 2.236 -> 2.209);
    evict_first made every kernel slower.

    ```mlir
    %v = llvm.load %p {alignment = 16 : i64} : !llvm.ptr -> vector<8xbf16>
    // becomes
    %pol = llvm.inline_asm "createpolicy.fractional.L2::evict_last.b64 $0, 1.0;", "=l" : () -> i64
    %r = llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;",
         "=r,=r,=r,=r,l,l" %p, %pol : (!llvm.ptr, i64) -> !llvm.struct<(i32, i32, i32, i32)>
    %v = ... (the four words as vector<4xi32>, bitcast to vector<8xbf16>)
    ```
  }];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"evict_last\"",
           "L2 eviction priority: evict_last, evict_first or evict_normal">,
    Option<"reductionPolicy", "reduction-policy", "std::string", /*default=*/"\"evict_first\"",
           "L2 eviction priority of a tile.reduction kernel's streamed loads: evict_first, "
           "evict_last, evict_normal or none">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_TD
