//===- CpuWorkspace.cpp - bound a cpu kernel's stack ----------------------===//
//
// Implements `tile-cpu-workspace`. On cpu one thread runs a whole program, so
// `convert-tile-to-loops` gives each tile value a private array (`memref.alloca`)
// of the whole tile: a kernel with a tile of 2^26 elements, or with hundreds
// of 16 KiB tiles, would need more stack than a host thread has. This pass
// keeps a kernel's allocas in the entry block on the stack while each holds
// at most `buffer-bytes` and together at most `stack-bytes`; every other
// alloca (larger, beyond the budget, or outside the entry block, where each
// execution would take new stack) becomes a `memref.view` into a workspace
// appended as the kernel's last argument, `memref<?xi8>` (`llvm.noalias`,
// `llvm.align` 64), at an offset of its own (aligned to 64 bytes, or to the
// alloca's alignment if larger). The kernel then carries
// `tile.workspace_bytes`, the bytes the caller must pass (64-byte aligned, one
// workspace per thread running programs). A kernel whose allocas all fit is
// left unchanged.
//
// A private array is only ever used by the program that allocates it, so
// distinct arrays at distinct offsets never overlap; an alloca inside a loop
// reuses its region at each iteration, which assumes that the array does not
// outlive its iteration: the pass rejects one passed to a terminator or a
// call, and arrays of dynamic size or with a layout or memory space (neither
// of which the lowering makes).
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "tile-cpu-workspace"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILECPUWORKSPACE
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
namespace tt = mlir::tessera::tile;

namespace {

/// Alignment of every array in the workspace (and of the workspace itself).
constexpr int64_t kWorkspaceAlignment = 64;

/// The bytes of an alloca of static shape (elements rounded up to a power of
/// two bytes, as LLVM pads them), or std::nullopt for a dynamic shape or an
/// element type without a fixed size.
std::optional<int64_t> staticBytes(memref::AllocaOp alloca,
                                   const DataLayout &layout) {
  MemRefType type = alloca.getType();
  if (!type.hasStaticShape())
    return std::nullopt;
  llvm::TypeSize size = layout.getTypeSize(type.getElementType());
  if (size.isScalable() || size.getFixedValue() == 0)
    return std::nullopt;
  int64_t bytes = static_cast<int64_t>(llvm::PowerOf2Ceil(size.getFixedValue()));
  for (int64_t dim : type.getShape())
    if (llvm::MulOverflow(bytes, dim, bytes))
      return std::nullopt;
  return bytes;
}

/// Why `alloca` cannot move to the workspace, or "" if it can.
StringRef unmovable(memref::AllocaOp alloca, bool inEntry) {
  MemRefType type = alloca.getType();
  if (!type.getLayout().isIdentity() || type.getMemorySpace())
    return "has a layout or memory space";
  if (!inEntry)
    for (Operation *user : alloca->getUsers())
      if (user->hasTrait<OpTrait::IsTerminator>() || isa<CallOpInterface>(user))
        return "may outlive its block (passed to a terminator or a call)";
  return "";
}

LogicalResult placeArrays(func::FuncOp fn, int64_t stackBytes,
                          int64_t bufferBytes) {
  if (fn.getBody().empty())
    return success();
  Block &entry = fn.getBody().front();
  DataLayout layout = DataLayout::closest(fn);
  SmallVector<memref::AllocaOp> allocas;
  fn.walk([&](memref::AllocaOp a) { allocas.push_back(a); });

  int64_t onStack = 0;
  SmallVector<std::pair<memref::AllocaOp, int64_t>> moved;
  for (memref::AllocaOp alloca : allocas) {
    std::optional<int64_t> bytes = staticBytes(alloca, layout);
    if (!bytes)
      return alloca.emitOpError(
          "is a private array of no static size: tile-cpu-workspace cannot "
          "bound the kernel's stack");
    bool inEntry = alloca->getBlock() == &entry;
    if (inEntry && *bytes <= bufferBytes && onStack + *bytes <= stackBytes) {
      onStack += *bytes;
      continue;
    }
    if (StringRef why = unmovable(alloca, inEntry); !why.empty())
      return alloca.emitOpError("cannot move to the workspace: it ") << why;
    moved.emplace_back(alloca, *bytes);
  }
  if (moved.empty())
    return success();

  MLIRContext *ctx = fn.getContext();
  unsigned index = fn.getNumArguments();
  auto workspaceType =
      MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8));
  // No other pointer of the kernel reaches the workspace (llvm.noalias: LLVM
  // keeps the freedom it had with allocas); its base is 64-byte aligned.
  Builder b(ctx);
  NamedAttribute workspaceAttrs[] = {
      b.getNamedAttr(LLVM::LLVMDialect::getNoAliasAttrName(), b.getUnitAttr()),
      b.getNamedAttr(LLVM::LLVMDialect::getAlignAttrName(),
                     b.getI64IntegerAttr(kWorkspaceAlignment))};
  if (failed(fn.insertArgument(index, workspaceType,
                               b.getDictionaryAttr(workspaceAttrs),
                               fn.getLoc())))
    return fn.emitOpError("tile-cpu-workspace: cannot add the workspace");
  Value workspace = fn.getArgument(index);
  int64_t offset = 0;
  for (auto [alloca, bytes] : moved) {
    int64_t align = std::max<int64_t>(kWorkspaceAlignment,
                                      alloca.getAlignment().value_or(1));
    offset = static_cast<int64_t>(llvm::alignTo(offset, align));
    OpBuilder b(alloca);
    Value at = arith::ConstantIndexOp::create(b, alloca.getLoc(), offset);
    Value view = memref::ViewOp::create(b, alloca.getLoc(), alloca.getType(),
                                        workspace, at, ValueRange());
    alloca.getResult().replaceAllUsesWith(view);
    alloca.erase();
    if (llvm::AddOverflow(offset, bytes, offset))
      return fn.emitOpError("tile-cpu-workspace: the workspace overflows");
  }
  offset = static_cast<int64_t>(llvm::alignTo(offset, kWorkspaceAlignment));
  fn->setAttr(tt::TileDialect::getWorkspaceBytesAttrName(),
              IntegerAttr::get(IntegerType::get(ctx, 64), offset));
  return success();
}

struct TileCpuWorkspacePass
    : tt::impl::TileCpuWorkspaceBase<TileCpuWorkspacePass> {
  using TileCpuWorkspaceBase::TileCpuWorkspaceBase;

  void runOnOperation() override {
    if (stackBytes < 0 || bufferBytes < 0) {
      getOperation().emitError(
          "tile-cpu-workspace: stack-bytes and buffer-bytes must be >= 0");
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> kernels;
    getOperation().walk([&](func::FuncOp fn) {
      if (fn->hasAttr(tt::TileDialect::getKernelAttrName()))
        kernels.push_back(fn);
    });
    bool failed = false;
    for (func::FuncOp fn : kernels)
      if (mlir::failed(placeArrays(fn, stackBytes, bufferBytes)))
        failed = true;
    if (failed)
      signalPassFailure();
  }
};

} // namespace
