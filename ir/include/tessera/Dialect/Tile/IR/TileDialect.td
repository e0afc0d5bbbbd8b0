//===- TileDialect.td - tessera tile dialect definition ----*- tablegen -*-===//
//
// The `tile` dialect: tile-level operations of tessera kernels.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DIALECT_TILE_IR_TILEDIALECT_TD
#define TESSERA_DIALECT_TILE_IR_TILEDIALECT_TD

include "mlir/IR/OpBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::mlir::tessera::tile";
  let summary = "Tile-level operations of tessera kernels";
  let description = [{
    A tessera kernel is a `func.func` carrying the unit attribute `tile.kernel`.
    Its tile values are builtin ranked, static-shaped tensors whose dimensions
    are powers of two (`tensor<64x64xf32>`); its scalars are builtin scalars;
    its global tensors (kernel parameters) are dynamically shaped, strided
    memrefs of rank 1 to 4 (statically shaped in a kernel compiled for one
    launch's shapes, which then also carries its grid as `tile.grid`).
    Elementwise math, casts, selects and constants use
    the upstream `arith` and `math` dialects directly on tensors; loops use
    `scf.for` with tensor `iter_args`. This dialect adds what those dialects
    lack: program ids, masked tile loads and stores, layout-changing ops
    (broadcast, reshape, transpose, reduce, iota) and matrix multiply-accumulate.

    The `tile.*` attributes that the front end and the passes exchange are
    declared below, each with its meaning; the dialect verifies their values
    (a unit attribute, an i32 block size that is a power of two up to 1024,
    ...) wherever they appear, and rejects a `tile.*` attribute it does not
    declare:

    ```mlir
    func.func @k(%o: memref<?xf32> {tile.align = 16 : i64})
        attributes {tile.kernel, tile.block_size = 128 : i32} { ... }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the i64 argument attribute of a kernel memref: its base
    /// address and row strides are multiples of this many bytes, a power of
    /// two (set by the front end from the launch's arguments).
    static constexpr ::llvm::StringLiteral getAlignAttrName() {
      return ::llvm::StringLiteral("tile.align");
    }
    /// Name of the unit argument attribute of a kernel memref that no kernel
    /// still running may write: the launcher's promise for a frozen tensor
    /// (Tensor::freeze), so the kernel may read it before it waits for the
    /// grids it depends on (`tile.grid_dependency_wait`).
    static constexpr ::llvm::StringLiteral getSettledAttrName() {
      return ::llvm::StringLiteral("tile.settled");
    }
    /// Name of the unit attribute of a tile.load/tile.store whose tile is
    /// known to be in bounds (set by `tile-version-interior`).
    static constexpr ::llvm::StringLiteral getInteriorAttrName() {
      return ::llvm::StringLiteral("tile.interior");
    }
    /// Name of the unit attribute of the scf.if made by
    /// `tile-version-interior`: its then branch is the interior copy, its else
    /// branch the edge copy.
    static constexpr ::llvm::StringLiteral getVersionsAttrName() {
      return ::llvm::StringLiteral("tile.versions");
    }
    /// Name of the unit attribute of an arith.extf of a bf16 tile that widens
    /// it again after a reduction (set by `tile-rewiden-after-reduce`).
    static constexpr ::llvm::StringLiteral getRewidenAttrName() {
      return ::llvm::StringLiteral("tile.rewiden");
    }
    /// Name of the unit attribute that marks a `func.func` as a tile kernel.
    static constexpr ::llvm::StringLiteral getKernelAttrName() {
      return ::llvm::StringLiteral("tile.kernel");
    }
    /// Name of the function attribute holding the grid of programs (three
    /// positive sizes, `array<i64: X, Y, Z>`) of a kernel compiled for one
    /// launch's static shapes: program ids are below it, and the program
    /// counts are it (read by `convert-tile-to-loops`).
    static constexpr ::llvm::StringLiteral getGridAttrName() {
      return ::llvm::StringLiteral("tile.grid");
    }
    /// Name of the i32 function attribute holding the threads per CTA, the
    /// CUDA block size (set by `convert-tile-to-loops` for the gpu target, a
    /// power of two; by `convert-tile-matmul-to-nvvm`, whole warpgroups of
    /// 128 threads).
    static constexpr ::llvm::StringLiteral getBlockSizeAttrName() {
      return ::llvm::StringLiteral("tile.block_size");
    }
    /// Name of the i32 function attribute holding the CTAs that share one
    /// program, when more than one (set by `convert-tile-to-loops` for the gpu
    /// target; the launch grid's x dimension is multiplied by it).
    static constexpr ::llvm::StringLiteral getCtasPerProgramAttrName() {
      return ::llvm::StringLiteral("tile.ctas_per_program");
    }
    /// Name of the i32 function attribute of a kernel whose programs each run
    /// as S CTAs of one cluster sharing its K loop's iterations (set by
    /// `tile-split-k-loop`: S, 2 to 8, a power of two; read by
    /// `convert-tile-to-loops`, which also sets `tile.ctas_per_program` to S).
    static constexpr ::llvm::StringLiteral getSplitKAttrName() {
      return ::llvm::StringLiteral("tile.split_k");
    }
    /// Name of the i32 function attribute holding the programs that share one
    /// CTA, when more than one (set by `convert-tile-to-loops` for the gpu
    /// target; the launch grid's x dimension is divided by it, rounded up).
    static constexpr ::llvm::StringLiteral getProgramsPerCtaAttrName() {
      return ::llvm::StringLiteral("tile.programs_per_cta");
    }
    /// Name of the i32 function attribute holding the bytes of dynamic shared
    /// memory a CTA needs, present when its scratch exceeds the 48 KiB of
    /// static shared memory (set by `convert-tile-to-loops` for the gpu target;
    /// the launch passes that many bytes and opts into them above 48 KiB).
    static constexpr ::llvm::StringLiteral getDynamicSharedBytesAttrName() {
      return ::llvm::StringLiteral("tile.dynamic_shared_bytes");
    }
    /// Name of the unit function attribute of a kernel whose CTAs are
    /// persistent (set by `convert-tile-matmul-to-nvvm`): the launch starts
    /// at most one CTA per SM, each CTA runs programs in turn until all have
    /// run, and every program still owns its own output tile. The kernel
    /// derives the number of programs from its output's shape.
    static constexpr ::llvm::StringLiteral getPersistentAttrName() {
      return ::llvm::StringLiteral("tile.persistent");
    }
    /// Name of the unit function attribute of a kernel that
    /// `convert-tile-matmul-to-mma-sync` or
    /// `convert-tile-attention-to-mma-sync` lowered: its body holds no tile ops
    /// (convert-tile-to-loops has nothing left to do), it runs one CTA per
    /// program as every other kernel, and its warp layout is fixed (the
    /// launcher compiles no variants of it).
    static constexpr ::llvm::StringLiteral getMmaSyncAttrName() {
      return ::llvm::StringLiteral("tile.mma_sync");
    }
    /// Name of the function attribute listing the TMA tensor maps a kernel
    /// takes after its other parameters (set by `convert-tile-matmul-to-nvvm`):
    /// one `array<i64: param, box_inner, box_outer, swizzle_bytes>` per map, in
    /// parameter order; the launch encodes each for the 2-d tensor argument
    /// `param` (its innermost dimension first, boxes of box_inner x box_outer
    /// elements, zero fill outside the tensor) and passes it as a 128-byte
    /// grid-constant parameter.
    static constexpr ::llvm::StringLiteral getTensorMapsAttrName() {
      return ::llvm::StringLiteral("tile.tensor_maps");
    }
    /// Name of the unit function attribute marking a kernel whose body
    /// `tile-version-interior` has split into a copy for programs wholly in
    /// bounds (taken first) and one for the tensors' edges.
    static constexpr ::llvm::StringLiteral getVersionedAttrName() {
      return ::llvm::StringLiteral("tile.versioned");
    }
    /// Name of the unit function attribute promising that every tile the
    /// kernel's programs access lies wholly within its memref (set by the
    /// front end for a launch whose tiles the launcher found whole, see
    /// src/compiler/whole_tiles.h). `tile-version-interior` then marks every
    /// access `tile.interior` instead of testing per program.
    static constexpr ::llvm::StringLiteral getWholeTilesAttrName() {
      return ::llvm::StringLiteral("tile.whole_tiles");
    }
    /// Name of the unit function attribute marking a gpu kernel whose threads
    /// never exchange data (no reduce, transpose, mma, device call or
    /// broadcast across threads; set by `convert-tile-to-loops`).
    static constexpr ::llvm::StringLiteral getExchangeFreeAttrName() {
      return ::llvm::StringLiteral("tile.exchange_free");
    }
    /// Name of the unit function attribute marking a kernel whose programs
    /// store an eighth of the bytes they load or less, a tile inside a loop
    /// counted four times (a reduction; set by `convert-tile-to-loops` on gpu,
    /// read by `llvm-load-cache-hints`, which then gives its loads no L2
    /// policy).
    static constexpr ::llvm::StringLiteral getReductionAttrName() {
      return ::llvm::StringLiteral("tile.reduction");
    }
    /// Name of the unit attribute of a scalar `math.exp` whose argument is
    /// known to lie strictly between -80 and 80 (set by `convert-tile-to-loops`
    /// on gpu, read by `convert-math-to-nvvm`, which then drops the handling of
    /// results near the ends of the float range).
    static constexpr ::llvm::StringLiteral getExpInRangeAttrName() {
      return ::llvm::StringLiteral("tile.exp_in_range");
    }
    /// The bound of that range: beyond it exp's result may overflow or be
    /// subnormal (|x| >= 80 takes exp's plain 2^(x log2 e) on the gpu).
    static constexpr double getExpInRangeLimit() { return 80.0; }
    /// The bound `convert-tile-to-loops` tests a group of exps against before
    /// marking them: tighter than the range, so that the group's results lie
    /// within [2^-99.6, 2^99.6] (e^69 < 2^99.6), where a division of them by
    /// one divisor in [2^-24, 2^24] may take the shared reciprocal without a
    /// test of its own (see lowerDivisionOfTestedExps).
    static constexpr double getExpGroupTestLimit() { return 69.0; }
    /// Name of the unit function attribute set by `convert-tile-to-loops` on a
    /// kernel where it emitted such range tests (the launcher then also
    /// compiles the kernel without them and keeps the variant that fits more
    /// programs per SM).
    static constexpr ::llvm::StringLiteral getExpRangeTestedAttrName() {
      return ::llvm::StringLiteral("tile.exp_range_tested");
    }
    /// Name of the i64 function attribute holding the bytes of the workspace
    /// a cpu kernel takes as its last argument (`memref<?xi8>`, 64-byte
    /// aligned, one per thread running programs; set by `tile-cpu-workspace`
    /// when the kernel's private arrays do not all fit its stack budget).
    static constexpr ::llvm::StringLiteral getWorkspaceBytesAttrName() {
      return ::llvm::StringLiteral("tile.workspace_bytes");
    }
    /// Name of the unit function attribute set by `tile-rewiden-after-reduce`
    /// on a kernel where it widened a bf16 tile again after a reduction (or
    /// moved its widening after it); the launcher keeps such a variant if it
    /// fits more programs per SM.
    static constexpr ::llvm::StringLiteral getRewidenedAttrName() {
      return ::llvm::StringLiteral("tile.rewidened");
    }
    /// Name of the unit function attribute set by
    /// `tile-unroll-streaming-loops` on a kernel where it unrolled a loop (the
    /// launcher may compile the kernel again with a smaller budget, keeping
    /// that variant if it fits more programs per SM).
    static constexpr ::llvm::StringLiteral getUnrolledStreamsAttrName() {
      return ::llvm::StringLiteral("tile.unrolled_streams");
    }
  }];
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

#endif // TESSERA_DIALECT_TILE_IR_TILEDIALECT_TD
