//===- Passes.td - tessera conversion passes ---------------*- tablegen -*-===//
//
// The passes that convert between dialects: the tile dialect to per-thread
// loops (`convert-tile-to-loops`) and scalar math to NVVM intrinsics
// (`convert-math-to-nvvm`). Each pass's description says what it guarantees,
// with one example of its input and output.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_CONVERSION_PASSES_TD
#define TESSERA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTileToLoops : Pass<"convert-tile-to-loops", "::mlir::ModuleOp"> {
  let summary = "Lower tile kernels to per-thread scalar loops over private buffers";
  let description = [{
    Guarantees: every `func.func` carrying `tile.kernel` is rewritten so that
    no tensor values and no tile ops remain, only func, scf, arith, math (on
    scalars), memref, vector (global accesses) and, for the gpu target, nvvm
    ops; or the pass fails with an error naming the op, type or option it
    cannot lower, and nothing is half lowered.

    ```mlir
    // before (target=cpu; the accesses marked in bounds by
    // tile-version-interior)
    func.func @add(%a: !m, %o: !m) attributes {tile.kernel} {
      %p = tile.program_id 0
      %x = tile.load %a[%p] {tile.interior} : !m -> tensor<4xf32>
      %y = arith.addf %x, %x : tensor<4xf32>
      tile.store %y, %o[%p] {tile.interior} : tensor<4xf32>, !m
      return
    }
    // after: six trailing program-id arguments, a private buffer per tile,
    // scalar code per element (elements 1 to 3 alike)
    func.func @add(%a: !m, %o: !m, %pid0: i32, %pid1: i32, %pid2: i32,
                   %nprog0: i32, %nprog1: i32, %nprog2: i32)
        attributes {tile.kernel} {
      %x = memref.alloca() : memref<4xf32>
      %y = memref.alloca() : memref<4xf32>
      %i = arith.index_cast %pid0 : i32 to index
      %base = arith.muli %i, %c4 : index
      %x0 = memref.load %a[%base] : !m
      memref.store %x0, %x[%c0] : memref<4xf32>
      %e0 = memref.load %x[%c0] : memref<4xf32>
      %y0 = arith.addf %e0, %e0 : f32
      memref.store %y0, %y[%c0] : memref<4xf32>
      %v0 = memref.load %y[%c0] : memref<4xf32>
      memref.store %v0, %o[%base] : !m
      return
    }
    ```
    (`canonicalize`, `cse` and `tile-promote-private-arrays`, which run next,
    leave the loads, the four `arith.addf` and the stores.)

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

    With `carried-sums`, a loop that carries a tile only to add tiles to it
    (`acc = acc + x`, once or in a chain per iteration), whose result is only
    summed along its last axis, and whose thread chunks each lie in one row
    (f32, f64 and integer tiles), keeps each chunk's sum in the chunk's first
    element and carries the other elements unchanged: one register per chunk
    instead of one per element (a matrix-vector product's accumulator). The
    row sums are the same sums in another order.

    `tile.reduce` along an axis followed only by size-1 dimensions (rows of L
    contiguous elements, owned by g = clamp(L/v, 1, T) aligned threads):
    each thread combines its elements of a row in registers, the g threads
    combine by `nvvm.shfl.sync bfly`; rows wider than a warp, and results
    held by other threads, exchange one partial per warp and row through
    shared memory (one barrier). On gpu, a broadcast whose input is loaded
    from a read-only argument (through reshapes, used by nothing else, the
    innermost dimension kept) is read by each thread from memory in the
    broadcast's layout, in place of the load; one whose input is a small
    element-wise computation on such loads, single elements and splats is
    first rewritten as that computation in the broadcast's shape (a
    matrix-vector product's normalized vector chunk, broadcast over the
    weight tile's rows). Other reductions, broadcasts whose results
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
    `llvm-load-cache-hints`), and `tile.exchange_free` if its threads never
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

    A kernel marked `tile.split_k = K` (`tile-split-k-loop`; gpu only, an
    error on cpu) runs each program as K CTAs of all its T threads: along
    grid x, CTA c runs program c / K as rank c mod K (`tile.split_rank`),
    and the function gets `tile.ctas_per_program = K`. `tile.split_sum`
    exchanges through the shared region of the scratch: ranks 1 and up
    store each private element k of input i at (base_i + k) * T + t, a
    cluster barrier (`barrier.cluster.arrive.release`,
    `barrier.cluster.wait.acquire`), rank 0 adds the other ranks' slots in
    rank order through `mapa` and `ld.shared::cluster`, and a second
    cluster barrier keeps their shared memory until it has.

    ```mlir
    %s = tile.split_sum %r : tensor<16x1xf32> -> tensor<16x1xf32>
    // becomes (K = 4, this thread's one element of a replicated tile)
    scf.if %rank_is_not_0 { memref.store %mine, %scratch[%t] }
    llvm.inline_asm "barrier.cluster.arrive.release; barrier.cluster.wait.acquire;"
    scf.if %rank_is_0 {
      %p1 = llvm.inline_asm "mapa.shared::cluster.u32 ...; ld.shared::cluster.f32 ..." %addr, %c1
      (%mine + %p1, then ranks 2 and 3)
    }
    llvm.inline_asm "barrier.cluster.arrive.release; barrier.cluster.wait.acquire;"
    ```

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
    marked `tile.exp_in_range` (see `convert-math-to-nvvm`), else the plain ones;
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
           "are marked tile.exp_in_range)">,
    Option<"carriedSums", "carried-sums", "bool", /*default=*/"false",
           "Keep one partial sum per chunk of a loop-carried tile that is "
           "only added to and then summed along its last axis (see the "
           "description)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::func::FuncDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect"
  ];
}

def ConvertTileMatmulToNVVM
    : Pass<"convert-tile-matmul-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "Lower matmul tile kernels to warp-specialized wgmma code "
                "for sm_90a";
  let description = [{
    Guarantees: with `arch=sm_90a`, every `tile.kernel` function of the
    matmul class below is rewritten into code with no tile ops and no tensor
    values (func, scf, arith, math, memref, vector, llvm and nvvm ops only),
    marked `tile.persistent`, `tile.tensor_maps`, `tile.block_size` and
    `tile.dynamic_shared_bytes`, and given one trailing `!llvm.ptr`
    parameter per tensor map (`llvm.byval = !llvm.array<128 x i8>`,
    `llvm.align = 64`; whoever makes the function a PTX entry marks them
    `nvvm.grid_constant`, which NVVM accepts on kernels only, so that TMA
    reads them where they are). Every other function, and
    every function for another `arch`, is left unchanged, so
    `convert-tile-to-loops` lowers it as before.

    The matmul class: one `scf.for` from 0 with step 1 carrying a
    `tensor<BMxBNxf32>` that starts as zeros and is only updated by
    `tile.mma` of `tile.load %A[%pid0, %k]` (BM x BK) and
    `tile.load %B[%k, %pid1]` (BK x BN), `%k` the induction variable, A and
    B kernel arguments of bf16 or f16 (or f32, multiplied as tf32 by wgmma
    m64nNk8; wgmma reads tf32 from shared memory K-major only, so with a
    row-major B the product is computed transposed, C^T = B^T A^T, B^T's
    fragments loaded into registers as wgmma's A operand; or 8-bit floats,
    f8E4M3FN or f8E5M2 or one of each, multiplied by wgmma m64nNk32, which reads 8-bit floats
    K-major only: this pass takes them with a K-major B only, and adds each
    k-tile's partial sum to the f32 accumulator after its wait, as wgmma keeps
    13 bits of an 8-bit sum) with
    `tile.align` of 16 bytes or more,
    no padding, A with unit inner stride, B with unit inner stride (read
    MN-major) or unit outer stride (`strided<[1, ?]>`, the transposed view of
    an N x K matrix, read K-major); after the loop, elementwise
    arith and math ops on the accumulator, splats, unit-dimension reshapes,
    broadcasts and loads from other arguments at scalar indices (a bias row,
    a residual tile); one `tile.store` of the BM x BN result at
    `[%pid0, %pid1]`. The class also admits `tile.device_call` in the
    epilogue, which this pass leaves alone (linked device code is
    relocatable, and ptxas ignores `setmaxnreg` there) and
    convert-tile-matmul-to-mma-sync takes. BM is 64 or 128, BN 64, 128 or 256 (64 or 128 for 8-bit
    floats: the partial sum needs registers too), BK 64 or 128 (32
    or 64 for f32, 128 or 256 for 8-bit floats: rows of 128 or 256 bytes);
    computed transposed, BN is 64 or 128 and BM 64, 128 or 256.

    ```mlir
    // before
    %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros)
        -> (tensor<128x256xf32>) {
      %ki = arith.index_cast %k : index to i32
      %a = tile.load %A[%pid0, %ki] : !m -> tensor<128x64xbf16>
      %b = tile.load %B[%ki, %pid1] : !m -> tensor<64x256xbf16>
      %d = tile.mma %a, %b, %c : ... -> tensor<128x256xf32>
      scf.yield %d : tensor<128x256xf32>
    }
    %y = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
    tile.store %y, %O[%pid0, %pid1] : tensor<128x256xbf16>, !m
    // after (abridged): 384 threads; warpgroup 0 loads, 1 and 2 multiply
    %wg = arith.divui %tid, %c128_i32 : i32
    scf.if %producer {
      llvm.inline_asm has_side_effects "setmaxnreg.dec.sync.aligned.u32 40;"
      scf.for %tile = %cta to %tiles step %ctas ... {     // programs in turn
        scf.for %kt = %c0 to %n step %c1 ... {
          // wait until the stage is free, then TMA A and B into it
          llvm.inline_asm has_side_effects "cp.async.bulk.tensor.2d...", ...
        }
      }
    } else {
      llvm.inline_asm has_side_effects "setmaxnreg.inc.sync.aligned.u32 232;"
      scf.for %tile = %cta to %tiles step %ctas ... {
        %acc = scf.for %kt ... iter_args(%d = %zero) -> (!llvm.struct<...>) {
          // wait for the stage, 4 x wgmma.mma_async m64n256k16, release it
        }
        // epilogue per accumulator element: the ops after the loop on
        // scalars (the loads of each batch of 16 columns issued before
        // their arithmetic), written to the consumer's staging boxes in
        // shared memory, then TMA-stored by its first thread (an f32
        // output or an epilogue that loads, in tiles of 256 columns: stored
        // from registers with a bounds test)
      }
    }
    ```

    Structure (docs/compiler.md, "Tensor cores"): a producer warpgroup
    (`setmaxnreg` 40) whose first thread issues TMA loads of A and B boxes
    into a ring of `stages` shared-memory stages with 128-byte swizzle,
    tracked by full/empty mbarriers; BM/64 consumer warpgroups (`setmaxnreg`
    232), each multiplying its 64 rows with `wgmma.mma_async` from shared
    memory descriptors into f32 registers; persistent CTAs that take the
    programs in grouped order (`group-m` rows of programs sweep the columns
    together, for L2 reuse). Ragged M, N and K: TMA fills out-of-bounds
    elements with zeros; TMA stores clip the tile at the output's edges,
    and the register epilogue tests each element's bounds. An epilogue's
    load of the output's own tile of another aligned argument (a residual,
    a gate) is a TMA load the producer issues after the program's k-tiles
    into each consumer's shared memory, with a full and an empty mbarrier
    per consumer, where its bytes leave 5 stages or cost none; the
    epilogue then reads it from there.

    Without a split (`halve-tail`, on by default; BN 128 or 256, not
    computed transposed), the programs of the last round, where they are
    no more than half the launch's CTAs, run as halves: CTA c < 2 tail runs
    columns [BN/2 (c mod 2), BN/2 (c mod 2 + 1)) of program whole + c / 2
    with all of its k-tiles (wgmma m64n(BN/2), half of B's boxes per stage;
    a K-major B's through one more tensor map, the last, of BN/2-row
    boxes), its epilogue reading other arguments' tiles from global memory.

    With `split-k` S > 1 (the function also gets `tile.split_k = S` and
    `tile.ctas_per_program = S`: the launch's persistent CTAs run in
    clusters of S along x), the programs run whole, one per CTA, except
    those of the last, partial round where they are no more than the
    clusters: each of those runs on a cluster, rank r = `ctaid.x mod S`
    loading and multiplying k-tiles [n r / S, n (r + 1) / S) of the
    program's n; after its k-tiles the consumers meet at a named barrier,
    ranks 1..S-1 write their accumulators over the stages, and after a
    cluster barrier (the producer's threads take part) rank 0 adds them
    (`mapa`, `ld.shared::cluster`), a second cluster barrier, and rank 0
    alone runs the epilogue (its tiles of other arguments from global
    memory). For products whose last round would leave most SMs idle (an
    LLM's 2560-wide projections of 1024 tokens: 160 tiles on 132 SMs). The
    pass fails only for a `split-k` other than 1, 2, 4 or 8.

    With `ping-pong` (without a split; BM x BN at most 128 x 128, bf16 or
    f16 inputs, not computed transposed), the CTA's two consumer
    warpgroups take its programs in turn: program j of the CTA (its j-th
    of the loop) is consumer j mod 2's, which multiplies all BM rows
    (BM / 64 wgmma per K step, BM / 64 accumulators) and runs the
    epilogue, while the other steps its ring state over the program's
    k-tiles. Each stage is released by one consumer (empty barriers
    count one arrival). Named barriers 4 and 5 order the products: the
    consumer of program j > 0 waits (`bar.sync`) until the consumer of
    program j - 1 has multiplied its k-tiles (`bar.arrive`), so that a
    consumer never waits on a stage whose earlier phase is still to come,
    and one consumer's epilogue runs beside the other's products. A
    consumer's k-loop keeps one k-tile's products in flight
    (`wgmma.wait_group 1`, then the stage before is released; after the
    loop `wait_group 0` and the last stage), its accumulators starting
    undefined (scale-d 0) and zeros selected after the wait for K = 0. Each
    consumer stages and stores BM rows; the epilogue's tiles of other
    arguments are read from global memory, and the last round is not
    halved.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::vector::VectorDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"
  ];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"\"",
           "The target; the pass lowers only for sm_90a">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "Shared-memory stages of the load pipeline; 0: as many as fit "
           "max-shared-bytes, at most 6">,
    Option<"groupM", "group-m", "int64_t", /*default=*/"8",
           "Rows of programs that a persistent CTA sweeps together">,
    Option<"maxSharedBytes", "max-shared-bytes", "int64_t",
           /*default=*/"232448",
           "Shared memory a CTA may use (the device's opt-in limit)">,
    Option<"splitK", "split-k", "int64_t", /*default=*/"1",
           "CTAs of one cluster sharing each program's k-tiles: 1 (none), 2, "
           "4 or 8; taken where every consumer thread's accumulators fit the "
           "stages, else ignored">,
    Option<"halveTail", "halve-tail", "bool", /*default=*/"true",
           "Without a split, run the programs of the last round, where they "
           "are no more than half the CTAs, as two halves of BN / 2 columns "
           "on two CTAs (BN 128 or 256, not computed transposed)">,
    Option<"pingPong", "ping-pong", "bool", /*default=*/"false",
           "Two consumer warpgroups that take the CTA's programs in turn, "
           "each multiplying all BM rows of its own, so that one's epilogue "
           "runs beside the other's products; taken without a split, for "
           "BM x BN of at most 128 x 128 (128 accumulators a thread), "
           "16-bit inputs, not computed transposed; else ignored">
  ];
}

def ConvertTileMatmulToMmaSync
    : Pass<"convert-tile-matmul-to-mma-sync", "::mlir::ModuleOp"> {
  let summary = "Lower matmul tile kernels to warp-level mma.sync code with "
                "cp.async and ldmatrix for sm_80 and newer";
  let description = [{
    Guarantees: with `arch` an NVIDIA target of compute capability 8.0 or
    more (`sm_80`, `sm_86`, `sm_89`, `sm_90`, `sm_100a`, `sm_120`, ...),
    every `tile.kernel` function of the matmul class of
    `convert-tile-matmul-to-nvvm` (the same matcher, any tile shape) whose
    tile this pass can lay out is rewritten into code with no tile ops and
    no tensor values (func, scf, arith, math, memref, vector, llvm and nvvm
    ops only), marked `tile.mma_sync`, `tile.block_size` (its warps) and
    `tile.dynamic_shared_bytes` (its stages). One CTA runs one program, as
    for any kernel: program ids 0, 1, 2 are `ctaid.x`, `.y`, `.z`, unless
    `group-rows` G > 0: the CTAs, in launch order (`ctaid.x` fastest), then
    walk the programs of ids 0 and 1 in groups of G rows, column by column
    inside a group. Every
    other function, and every function for another `arch` (or none), is
    left unchanged, so `convert-tile-to-loops` lowers it as before. The
    pass fails only for a `split-k` other than 1, 2, 4 or 8, a
    `group-rows` outside 0 to 64, or `warps` other than 0, 4 or 8.

    f32 inputs (which the matcher accepts; convert-tile-matmul-to-nvvm takes
    only those with a K-major B in its tiles) run on the tf32 tensor cores: mma.sync m16n8k8 per k-step
    of 8, each operand element rounded to tf32 (cvt.rna) first, a row-major
    B read one f32 at a time (ldmatrix transposes 16-bit elements only).
    8-bit float inputs run on mma.sync m16n8k32 (compute capability 8.9 or
    more, emitted as inline asm: NVVM's mma op has no dense fp8 form) with a
    K-major B only (ldmatrix cannot transpose bytes); others are left
    unchanged.

    Tiles: BM and BN powers of two from 16 to 256, BK a power of two from
    16 to 128 (8 to 64 for f32, 32 to 256 for 8-bit floats), with at most 128 accumulators per thread (BM x BN up to
    32768 elements over 8 warps) and two stages fitting `max-shared-bytes`.
    Warps: `warps` where the tile takes them (at most 128 accumulators per
    thread, a warp tile of at least 16 x 16), else BM x BN / 4096 for bf16
    and f16 with BK up to 64 (128 x 128: 4 warps of 64 x 64) and BM x BN /
    2048 for the others, at least 4 and at most 8 (fewer where the tile has
    fewer 16 x 16 blocks); in the grid whose warp tile is squarest.

    ```mlir
    // before: the kernel of convert-tile-matmul-to-nvvm's example, in
    // 64 x 64 x 32 tiles
    // after (abridged): 128 threads, 3 stages of 8 KiB
    %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 128> : i32
    scf.if %first_in_range {   // k-tiles 0 and 1 in flight
      nvvm.cp.async.shared.global %dst, %src, 16, cache = cg, %bytes
          : !llvm.ptr<3>, !llvm.ptr<1>, i32
    }
    nvvm.cp.async.commit.group
    %acc:33 = scf.for %kt = %c0 to %n step %c1 iter_args(%s = %c0, ...) {
      nvvm.cp.async.wait.group 1
      nvvm.barrier0
      %a = nvvm.ldmatrix %pa {layout = #nvvm.mma_layout<row>, num = 4 ...}
      %b = nvvm.ldmatrix %pb {layout = #nvvm.mma_layout<col>, num = 4 ...}
      // k-tile kt + 2, no branch: empty copies past the last k-tile
      nvvm.cp.async.shared.global %dst2, %src2, 16, cache = cg, %bytes2 ...
      nvvm.cp.async.commit.group
      %d = nvvm.mma.sync A[...] B[...] C[...] {shape = #nvvm.shape<m = 16,
          n = 8, k = 16>, ...} -> !llvm.struct<(f32, f32, f32, f32)>
      scf.yield ...
    }
    // epilogue per accumulator element (the loads of each batch of 16
    // columns issued before their arithmetic), stored with a bounds test
    ```

    Structure (docs/compiler.md, "Tensor cores on sm_80 and newer"): a ring
    of `stages` shared-memory stages filled by 16-byte `cp.async` copies
    (one commit group per k-tile, `wait_group stages-2`, one CTA barrier
    per k-tile; a k-tile's copies issued after the first k-step's fragment
    loads of the k-tile before it, in the same basic block, each thread's
    global addresses computed once and advanced per k-tile); the A and B
    tiles stored as rows of 16-byte chunks with an XOR swizzle (chunk L of the tile at L xor ((L / max(chunks per row, 8))
    mod 8)), so that `ldmatrix` reads eight rows from eight different bank
    groups; per k-step of 16, `ldmatrix.x4` of A's fragments and of B's
    (`.trans` for a row-major B, plain for a K-major one, the transposed
    view of an N x K matrix) and one `mma.sync.m16n8k16.row.col` f32 +=
    bf16 x bf16 (or f16) per 16 x 8 fragment of the warp tile, the f32
    accumulators in registers; the epilogue evaluated per accumulator
    element as in `convert-tile-matmul-to-nvvm`, a `tile.device_call` as a
    call of a private declaration of the scalar function (as
    convert-tile-to-loops declares it; nvJitLink links its code in). Ragged M, N and K: a
    copy reads only the bytes inside the tensor and zero-fills the rest of
    its 16 bytes; stores test their bounds.

    With `split-k` S > 1 on compute capability 9.0 and newer, a program is
    the S CTAs of a cluster (the function gets `tile.split_k = S` and
    `tile.ctas_per_program = S`: the grid's x is S times the programs'):
    program id 0 is `ctaid.x / S`, rank r = `ctaid.x mod S` multiplies
    k-tiles [n r / S, n (r + 1) / S) of the program's n; ranks 1..S-1 store
    their accumulators in their shared memory, and after a cluster barrier
    rank 0 adds them (`mapa`, `ld.shared::cluster`), a second cluster
    barrier, and rank 0 alone runs the epilogue.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::vector::VectorDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"
  ];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"\"",
           "The target (sm_XY); the pass lowers for sm_80 and newer">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "Shared-memory stages of the copy pipeline; 0: 3, or 2 where 3 do "
           "not fit max-shared-bytes">,
    Option<"maxSharedBytes", "max-shared-bytes", "int64_t",
           /*default=*/"101376",
           "Shared memory a CTA may use (the device's opt-in limit; 99 KiB, "
           "the least of sm_80 and newer)">,
    Option<"splitK", "split-k", "int64_t", /*default=*/"1",
           "CTAs of one cluster sharing each program's k-tiles: 1 (none), 2, "
           "4 or 8; taken on compute capability 9.0 and newer where every "
           "thread's accumulators fit max-shared-bytes, else ignored">,
    Option<"groupRows", "group-rows", "int64_t", /*default=*/"0",
           "Rows of programs the CTAs walk together, 1 to 64, so that the "
           "CTAs resident at once share their A and B tiles in L2; 0: the "
           "launch's order (program ids are the CTA's ids)">,
    Option<"warps", "warps", "int64_t", /*default=*/"0",
           "Warps of a CTA, 4 or 8, where the tile takes them (at most 128 "
           "accumulators a thread, warp tiles of 16 x 16 or more), else the "
           "pass's choice; 0: the pass's choice">
  ];
}

def ConvertTileAttentionToMmaSync
    : Pass<"convert-tile-attention-to-mma-sync", "::mlir::ModuleOp"> {
  let summary = "Lower attention tile kernels to mma.sync code with the "
                "softmax and both products on registers, for sm_80 and newer";
  let description = [{
    Guarantees: with `arch` an NVIDIA target of compute capability 8.0 or
    more, every `tile.kernel` function of the attention class below whose
    tiles this pass supports is rewritten into code with no tile ops and no
    tensor values (func, scf, arith, math, memref, vector, llvm and nvvm ops
    only), marked `tile.mma_sync`, `tile.block_size` (BQ / 16 warps) and
    `tile.dynamic_shared_bytes`. One CTA runs one program, over the
    programs' grid, in the order of decreasing program id 0 (in a causal
    kernel the last query tiles walk the most key tiles): CTA (x, y, z) runs
    program (X - 1 - L / Y, L mod Y, z), L = x + X y for a grid of X x Y x Z.
    Every other function, and every function for
    another `arch` (or none), is left unchanged, so `convert-tile-to-loops`
    lowers it as before (its in-place mma, through shared memory). The pass
    never fails.

    The class (`AttentionKernel.h`): one block with one `scf.for` (from 0 by
    1) and one `tile.store` after it; no other loop or region. The loop
    carries f32 tiles: one [BQ, D] accumulator and any number of [BQ, 1]
    rows. Its body has two `tile.mma`: S = mma(Q, transpose(K), zeros), with
    Q a [BQ, D] tile loaded before the loop or in it at loop-invariant
    indices (the front end emits a load the user wrote before the loop at
    its use) and K a [BKV, D] tile loaded in it, and the accumulator's next value mma(P, V, A), with P a [BQ, BKV]
    tile of Q's element type (bf16 or f16), V a [BKV, D] tile loaded in the
    loop and A any [BQ, D] f32 tile. Q, K and V are loads of arguments (unit
    dimensions before the tile's two allowed) padded with zeros, their last
    dimension contiguous and `tile.align` at least 16. Every other tensor op,
    in the loop and outside it, is a load, an elementwise arith or math op, a
    splat, a splat constant, a same-rank broadcast, a unit reshape, an iota,
    or (in the loop) a `tile.reduce` along the rows of an f32 [BQ, BKV] or
    [BQ, D] tile. The store writes a [1, ..., 1, BQ, D] tile of a bf16, f16 or
    f32 argument that no load reads. Tiles: BQ, BKV and D powers of two from 16
    to 128, the Q tile and two stages of K and V within `max-shared-bytes`.

    ```mlir
    // before: online-softmax attention, 64 queries against 64-key tiles
    %q = tile.load %qs[%p0, %c0] : !m -> tensor<64x128xbf16>
    %r:3 = scf.for %i = %c0 to %n step %c1
        iter_args(%m = %ninf, %l = %zero1, %o = %zero) -> (...) {
      %k = tile.load %ks[%ii, %c0] : !m -> tensor<64x128xbf16>
      %v = tile.load %vs[%ii, %c0] : !m -> tensor<64x128xbf16>
      %kt = tile.transpose %k : tensor<64x128xbf16> -> tensor<128x64xbf16>
      %s = tile.mma %q, %kt, %zeros : ... -> tensor<64x64xf32>
      %mx = tile.reduce %s {kind = max, axis = 1} : ... -> tensor<64x1xf32>
      ...   // m_new, alpha = exp(m - m_new), p = exp(s - m_new), l_new
      %o2 = tile.mma %p16, %v, %oa : ... -> tensor<64x128xf32>
      scf.yield %m2, %l2, %o2 : ...
    }
    %y = arith.divf %r#2, %lb : tensor<64x128xf32>
    tile.store %yb, %out[%p0, %p1] : tensor<64x128xbf16>, !m
    // after (abridged): 128 threads; Q and K/V tile 0 copied, Q's
    // fragments loaded once; per iteration one barrier, the next tiles'
    // copies, then
    %kf = nvvm.ldmatrix %pk {layout = #nvvm.mma_layout<row>, num = 4 ...}
    %s = nvvm.mma.sync A[%q0, ...] B[...] C[...] ...   // scores, registers
    %x = nvvm.shfl.sync bfly %all, %mx, %c1, %c31 : f32 -> f32  // row max
    %vf = nvvm.ldmatrix %pv {layout = #nvvm.mma_layout<col>, num = 4 ...}
    %o = nvvm.mma.sync A[%p0, ...] B[...] C[...] ...   // P V, registers
    ```

    Structure (docs/compiler.md, "Attention on the tensor cores"): warp w
    owns query rows 16 w .. 16 w + 15 of every [BQ, *] tile, each thread
    holding the elements of the mma.sync m16n8k16 accumulator layout (rows
    l / 4 and l / 4 + 8 of its warp's, columns 2 (l mod 4) and the next of
    every 8). The scores arrive in that layout, every other op of the loop
    is evaluated per element there (a row reduction over the thread's
    elements, then two xor shuffles within the quad), and P's elements are
    packed into the second product's A fragments, whose layout is the same.
    Q, K and V go to shared memory by 16-byte `cp.async` (rows of 16-byte
    chunks, XOR-swizzled as `convert-tile-matmul-to-mma-sync` lays them out),
    K and V in `stages` stages (2 by default): iteration t waits for its
    tiles, synchronizes the CTA once, and issues tile t + stages - 1's copies
    before it computes.
    Ragged edges: copies read only the bytes inside a tensor and zero-fill
    the rest (the loads' zero padding); stores test their bounds.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::vector::VectorDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"
  ];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"\"",
           "The target (sm_XY); the pass lowers for sm_80 and newer">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "Shared-memory stages of K and V tiles; 0: 2. Fewer (at least 2) "
           "where they do not fit max-shared-bytes">,
    Option<"maxSharedBytes", "max-shared-bytes", "int64_t",
           /*default=*/"101376",
           "Shared memory a CTA may use (the device's opt-in limit; 99 KiB, "
           "the least of sm_80 and newer)">
  ];
}

def ConvertMathToNVVM : Pass<"convert-math-to-nvvm"> {
  let summary = "Rewrite scalar f32 math ops into forms NVPTX selects without libdevice";
  let description = [{
    Guarantees: no `math` op is left that NVPTX would have to call libm or
    libdevice for; each such scalar f32 (or f16/bf16, computed in f32) op is
    replaced by arithmetic around PTX approximate instructions, called through
    `llvm.call_intrinsic` (for example exp(x) = ex2.approx(x * log2(e))), to
    the accuracy measured in MathToNVVM.cpp. Ops that NVPTX selects directly
    (sqrt, fma, abs, floor, ...) are left alone. Vector or f64 operands of the
    ops it would rewrite, and ops with no lowering here (atan, asin, ...), are
    rejected with an error naming the op. Run it before
    `convert-math-to-llvm`.

    A `math.exp` marked `tile.exp_in_range` (its argument lies within +-80,
    see `convert-tile-to-loops`) becomes the accurate value without the
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

#endif // TESSERA_CONVERSION_PASSES_TD
