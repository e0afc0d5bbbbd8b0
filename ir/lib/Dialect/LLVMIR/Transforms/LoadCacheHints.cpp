//===- LoadCacheHints.cpp - L2 policies on loads of read-only parameters --===//
//
// Implements `llvm-load-cache-hints`. Runs on the LLVM dialect form of a gpu
// kernel. A pointer is traced back through `llvm.getelementptr` and the memref
// descriptor (`llvm.extractvalue` of a field that an `llvm.insertvalue` chain
// set), and through the arguments of non-entry blocks (all their incoming
// values must agree), to a parameter of the kernel. A parameter is read-only when every
// store, atomic and memory intrinsic of the kernel traces to another
// parameter or to local or shared memory; if one does not trace at all, or
// the kernel calls a function, scatters, has side-effecting inline asm or
// another op declaring a write (NVVM ops aside: they write registers or shared
// memory; the kernel's own grid dependency wait writes nothing), the kernel is
// left alone. Aligned 4-, 8- and 16-byte integer or float loads from read-only
// parameters become `ld.global.nc.L2::cache_hint` inline asm (without side
// effects: the memory is not written during the kernel, so the loads may move
// like plain loads) with one `createpolicy` at the entry, and the read-only
// parameters are marked `llvm.noalias` and `llvm.readonly`. Writes to shared or
// private memory count as local whatever their address computation. A kernel
// marked `tile.reduction` (by convert-tile-to-loops: its programs store an
// eighth of the bytes they load or less) takes another policy (evict_first by
// default), and only on the loads whose address depends on every CTA id that
// some load's address depends on: the streams each program reads for itself.
// Its loads of data that several programs read (a weight vector, a matrix
// product's operand tiles) stay plain.
//
// Assumes what the launcher guarantees: an input never aliases an output, so
// no other parameter's stores reach a read-only parameter's memory. Generic
// pointers are passed to ld.global: global memory's generic and global
// addresses are the same.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/LLVMIR/Transforms/Passes.h"
#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/LLVMIR/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <array>

#define DEBUG_TYPE "llvm-load-cache-hints"

namespace mlir::tessera {
#define GEN_PASS_DEF_LLVMLOADCACHEHINTS
#include "tessera/Dialect/LLVMIR/Transforms/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
namespace tt = mlir::tessera::tile;

namespace {

/// Where a pointer points: a parameter, private or shared memory, or unknown;
/// `none` only while a block argument's incoming values are followed (a value
/// that reaches itself around a loop adds nothing).
struct Origin {
  enum Kind { unknown, parameter, local, none } kind = unknown;
  unsigned index = 0; // the parameter's position

  /// What a value that is either `a` or `b` points to.
  static Origin merge(Origin a, Origin b) {
    if (a.kind == none)
      return b;
    if (b.kind == none)
      return a;
    if (a.kind == b.kind && (a.kind != parameter || a.index == b.index))
      return a;
    return {};
  }
};

/// Traces pointers and descriptor fields back to where they come from,
/// through getelementptr, addrspacecast, the insertvalue chains of memref
/// descriptors, and the arguments of non-entry blocks (every predecessor's
/// value for it: memref descriptors are passed between the blocks of a loop
/// or of the two versions of a loop that tile-version-interior makes).
class OriginTracer {
public:
  explicit OriginTracer(LLVM::LLVMFuncOp fn) : fn(fn) {}

  /// Where pointer `p` points (each query has its own step budget).
  Origin trace(Value p) {
    steps = 0;
    return of(p, 0);
  }

private:
  Origin of(Value p, int depth) {
    if (++steps > kMaxSteps)
      return {};
    // Shared (3) and private (5) memory are never a parameter's, however their
    // address was computed (a shared scratch array's aligned pointer goes
    // through ptrtoint and inttoptr).
    if (auto type = dyn_cast<LLVM::LLVMPointerType>(p.getType());
        type && (type.getAddressSpace() == 3 || type.getAddressSpace() == 5))
      return {Origin::local};
    for (; depth < kMaxDepth; ++depth) {
      if (auto arg = dyn_cast<BlockArgument>(p)) {
        if (arg.getOwner() == &fn.getBody().front())
          return {Origin::parameter, arg.getArgNumber()};
        return merged(arg, depth, [&](Value in, int d) { return of(in, d); });
      }
      Operation *def = p.getDefiningOp();
      if (auto gep = dyn_cast<LLVM::GEPOp>(def)) {
        p = gep.getBase();
      } else if (isa<LLVM::AllocaOp, LLVM::AddressOfOp>(def)) {
        return {Origin::local};
      } else if (auto extract = dyn_cast<LLVM::ExtractValueOp>(def)) {
        return field(extract.getContainer(), extract.getPosition(), depth + 1);
      } else if (auto cast = dyn_cast<LLVM::AddrSpaceCastOp>(def)) {
        p = cast.getArg();
      } else {
        return {};
      }
    }
    return {};
  }

  // Bounds on one query's walk (a chain of branches could otherwise be
  // followed along every path): past them a pointer counts as untraced, which
  // only leaves the kernel without hints.
  static constexpr int kMaxDepth = 256;
  static constexpr int kMaxSteps = 1 << 16;

  /// Where field `position` of the struct `container` points.
  Origin field(Value container, ArrayRef<int64_t> position, int depth) {
    if (++steps > kMaxSteps)
      return {};
    for (; depth < kMaxDepth; ++depth) {
      if (auto arg = dyn_cast<BlockArgument>(container)) {
        if (arg.getOwner() == &fn.getBody().front())
          return {};
        return merged(arg, depth, [&](Value in, int d) { return field(in, position, d); });
      }
      auto insert = container.getDefiningOp<LLVM::InsertValueOp>();
      if (!insert)
        return {};
      if (insert.getPosition() == position)
        return of(insert.getValue(), depth + 1);
      container = insert.getContainer();
    }
    return {};
  }

  /// `trace` of every value the predecessors pass to `arg`, merged; `none`
  /// for an argument already being followed.
  template <class Trace>
  Origin merged(BlockArgument arg, int depth, Trace trace) {
    if (!following.insert(arg).second)
      return {Origin::none};
    Origin o{Origin::none};
    Block *block = arg.getOwner();
    for (auto it = block->pred_begin(); it != block->pred_end() && o.kind != Origin::unknown; ++it) {
      auto branch = dyn_cast<BranchOpInterface>((*it)->getTerminator());
      if (!branch) {
        o = {};
        break;
      }
      for (unsigned s = 0; s < branch->getNumSuccessors(); ++s) {
        if (branch->getSuccessor(s) != block)
          continue;
        Value in = branch.getSuccessorOperands(s)[arg.getArgNumber()];
        o = Origin::merge(o, in ? trace(in, depth + 1) : Origin{});
      }
    }
    following.erase(arg);
    return o.kind == Origin::none ? Origin{} : o;
  }

  LLVM::LLVMFuncOp fn;
  llvm::DenseSet<Value> following;
  int steps = 0;
};

using ParameterSet = llvm::SmallDenseSet<unsigned, 8>;

/// The parameters some op writes through; nullopt when a write cannot be
/// traced.
std::optional<ParameterSet> writtenParameters(LLVM::LLVMFuncOp fn) {
  ParameterSet written;
  bool traced = true;
  OriginTracer tracer(fn);
  auto note = [&](Value pointer) {
    Origin o = tracer.trace(pointer);
    if (o.kind == Origin::unknown)
      traced = false;
    else if (o.kind == Origin::parameter)
      written.insert(o.index);
  };
  fn.walk([&](Operation *op) {
    // Calls and side-effecting inline asm may write anything (a call without a
    // memory attribute declares no effect), except the kernel's own wait for
    // the grids it depends on (tile.grid_dependency_wait's lowering), which
    // writes nothing: it only orders what follows after those grids' writes,
    // as the wait the LLVM pass puts at the entry of every other kernel does.
    if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op);
        asmOp && asmOp.getAsmString() == tessera::llvmir::kGridDependencyWaitAsm)
      return;
    if (isa<LLVM::CallOp>(op) ||
        (isa<LLVM::InlineAsmOp>(op) && cast<LLVM::InlineAsmOp>(op).getHasSideEffects())) {
      traced = false;
      return;
    }
    // Ops declaring their effects (stores, atomics): each write through a
    // known pointer, or untraceable without one. NVVM ops write registers or
    // shared memory only.
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
      if (isa<NVVM::NVVMDialect>(op->getDialect()))
        return;
      SmallVector<MemoryEffects::EffectInstance> list;
      effects.getEffects(list);
      for (const MemoryEffects::EffectInstance &e : list)
        if (isa<MemoryEffects::Write>(e.getEffect())) {
          if (Value v = e.getValue())
            note(v);
          else
            traced = false;
        }
      return;
    }
    // LLVM intrinsics that write memory without declaring it.
    if (auto copy = dyn_cast<LLVM::MemcpyOp>(op))
      note(copy.getDst());
    else if (auto move = dyn_cast<LLVM::MemmoveOp>(op))
      note(move.getDst());
    else if (auto set = dyn_cast<LLVM::MemsetOp>(op))
      note(set.getDst());
    else if (auto masked = dyn_cast<LLVM::MaskedStoreOp>(op))
      note(masked.getData());
    else if (isa<LLVM::masked_scatter>(op))
      traced = false;
  });
  if (!traced)
    return std::nullopt;
  return written;
}

/// 32-bit words of a load of `type` (1, 2 or 4), or 0 if it is not hinted.
int wordsOf(Type type) {
  Type elt = type;
  int64_t count = 1;
  if (auto vec = dyn_cast<VectorType>(type)) {
    if (vec.isScalable() || vec.getRank() != 1)
      return 0;
    elt = vec.getElementType();
    count = vec.getNumElements();
  }
  if (!elt.isIntOrFloat())
    return 0;
  int64_t bits = count * elt.getIntOrFloatBitWidth();
  return bits == 128 ? 4 : bits == 64 ? 2 : bits == 32 ? 1 : 0;
}

/// For each CTA id (`nvvm.read.ptx.sreg.ctaid.x`, `.y`, `.z`), the values of
/// `fn` computed from it, through the results of any op and the arguments of
/// the blocks they are passed to. Memory is not followed: a value stored and
/// loaded again counts as independent.
std::array<llvm::DenseSet<Value>, 3> ctaDependentValues(LLVM::LLVMFuncOp fn) {
  std::array<llvm::DenseSet<Value>, 3> dependent;
  std::array<SmallVector<Value>, 3> work;
  auto add = [&](int d, Value v) {
    if (dependent[d].insert(v).second)
      work[d].push_back(v);
  };
  fn.walk([&](Operation *op) {
    if (isa<NVVM::BlockIdXOp>(op))
      add(0, op->getResult(0));
    else if (isa<NVVM::BlockIdYOp>(op))
      add(1, op->getResult(0));
    else if (isa<NVVM::BlockIdZOp>(op))
      add(2, op->getResult(0));
  });
  for (int d = 0; d < 3; ++d) {
    while (!work[d].empty()) {
      Value v = work[d].pop_back_val();
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        for (Value r : user->getResults())
          add(d, r);
        auto branch = dyn_cast<BranchOpInterface>(user);
        if (!branch)
          continue;
        for (unsigned s = 0; s < user->getNumSuccessors(); ++s) {
          SuccessorOperands passed = branch.getSuccessorOperands(s);
          for (unsigned i = 0; i < passed.size(); ++i)
            if (passed[i] == v)
              add(d, user->getSuccessor(s)->getArgument(i));
        }
      }
    }
  }
  return dependent;
}

/// Keeps the loads that read a stream: those whose address depends on every
/// CTA id that some load's address depends on. A row sum's row (ctaid.x) is
/// one; a matrix product's operand tiles (the left one on ctaid.x, the right
/// one on ctaid.y) are not: a row or column of programs reads each of them. A
/// load on no CTA id reads what every program reads.
void keepStreams(LLVM::LLVMFuncOp fn, SmallVectorImpl<std::pair<LLVM::LoadOp, int>> &loads) {
  std::array<llvm::DenseSet<Value>, 3> dependent = ctaDependentValues(fn);
  auto dims = [&](LLVM::LoadOp load) {
    unsigned mask = 0;
    for (int d = 0; d < 3; ++d)
      if (dependent[d].contains(load.getAddr()))
        mask |= 1u << d;
    return mask;
  };
  unsigned all = 0;
  for (auto &[load, words] : loads)
    all |= dims(load);
  llvm::erase_if(loads, [&](std::pair<LLVM::LoadOp, int> &load) { return all == 0 || dims(load.first) != all; });
}

void hintLoads(LLVM::LLVMFuncOp fn, StringRef policy, StringRef reductionPolicy) {
  if (fn.isExternal())
    return;
  std::optional<ParameterSet> writes = writtenParameters(fn);
  if (!writes)
    return;
  const ParameterSet &written = *writes;
  SmallVector<std::pair<LLVM::LoadOp, int>> loads;
  OriginTracer tracer(fn);
  fn.walk([&](LLVM::LoadOp load) {
    int words = wordsOf(load.getType());
    if (!words || load.getVolatile_() || load.getOrdering() != LLVM::AtomicOrdering::not_atomic ||
        load.getAlignment().value_or(0) < static_cast<uint64_t>(4 * words))
      return;
    auto ptrType = dyn_cast<LLVM::LLVMPointerType>(load.getAddr().getType());
    if (!ptrType || (ptrType.getAddressSpace() != 0 && ptrType.getAddressSpace() != 1))
      return;
    Origin o = tracer.trace(load.getAddr());
    if (o.kind == Origin::parameter && !written.contains(o.index))
      loads.push_back({load, words});
  });
  if (loads.empty())
    return;
  // The asm takes the pointers as operands, which stops LLVM from inferring
  // that the parameters are only read: say so, so that the loads left plain
  // (the ragged path's elements) still use the read-only data path.
  for (BlockArgument arg : fn.getArguments())
    if (isa<LLVM::LLVMPointerType>(arg.getType()) && !written.contains(arg.getArgNumber())) {
      fn.setArgAttr(arg.getArgNumber(), LLVM::LLVMDialect::getNoAliasAttrName(), UnitAttr::get(fn.getContext()));
      fn.setArgAttr(arg.getArgNumber(), LLVM::LLVMDialect::getReadonlyAttrName(), UnitAttr::get(fn.getContext()));
    }
  // evict_last keeps the lines read in L2 ahead of the lines written. A
  // reduction writes next to nothing and lost with it (the row sum over
  // 8192-wide bf16 rows ran 0.45% slower on the H200);
  // it reads each byte once, so evict_first (Inductor's choice for such loads)
  // lets its stream pass through L2 without displacing other data, and gained
  // 0.1-0.6%. Whether a kernel is a reduction
  // is decided per program on its tiles (tile.reduction), not here on one
  // thread's load and store ops: those count a loop's loads once and depend on
  // the block size. Data that several programs read (keepStreams) keeps plain
  // loads.
  if (fn->hasAttr(tt::TileDialect::getReductionAttrName())) {
    policy = reductionPolicy;
    if (policy == "none")
      return;
    keepStreams(fn, loads);
    if (loads.empty())
      return;
  }

  MLIRContext *ctx = fn.getContext();
  OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
  Location loc = fn.getLoc();
  Type i32 = b.getI32Type();
  Type i64 = b.getI64Type();
  auto inlineAsm = [&](Type result, ValueRange operands, StringRef text, StringRef constraints) {
    return LLVM::InlineAsmOp::create(b, loc, result, operands, text, constraints,
                                     /*has_side_effects=*/false, /*is_align_stack=*/false,
                                     LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
                                     ArrayAttr())
        .getResult(0);
  };
  Value pol = inlineAsm(i64, {}, ("createpolicy.fractional.L2::" + policy + ".b64 $0, 1.0;").str(), "=l");
  // The asm of a load of 1, 2 or 4 words: "ld...v4.b32 {$0, $1, $2, $3}, [$4], $5;".
  auto ldAsm = [](int words) {
    std::string regs, constraints;
    for (int w = 0; w < words; ++w) {
      regs += (w ? ", $" : "$") + std::to_string(w);
      constraints += "=r,";
    }
    std::string text = std::string("ld.global.nc.L2::cache_hint") + (words == 4 ? ".v4" : words == 2 ? ".v2" : "") +
                       ".b32 " + (words == 1 ? regs : "{" + regs + "}") + ", [$" + std::to_string(words) +
                       "], $" + std::to_string(words + 1) + ";";
    return std::make_pair(text, constraints + "l,l");
  };
  for (auto [load, words] : loads) {
    b.setInsertionPoint(load);
    loc = load.getLoc();
    auto [text, constraints] = ldAsm(words);
    Type result = i32;
    if (words > 1)
      result = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(words, i32));
    Value out = inlineAsm(result, ValueRange{load.getAddr(), pol}, text, constraints);
    Value bits = out;
    if (words > 1) {
      auto vecType = VectorType::get({words}, i32);
      bits = LLVM::PoisonOp::create(b, loc, vecType);
      for (int w = 0; w < words; ++w) {
        Value word = LLVM::ExtractValueOp::create(b, loc, out, ArrayRef<int64_t>{w});
        Value at = LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(w));
        bits = LLVM::InsertElementOp::create(b, loc, bits, word, at);
      }
    }
    Value value = LLVM::BitcastOp::create(b, loc, load.getType(), bits);
    load.getResult().replaceAllUsesWith(value);
    load.erase();
  }
}

struct LLVMLoadCacheHints : public mlir::tessera::impl::LLVMLoadCacheHintsBase<LLVMLoadCacheHints> {
  using Base::Base;
  void runOnOperation() override {
    auto known = [](StringRef p) { return p == "evict_last" || p == "evict_first" || p == "evict_normal"; };
    if (!known(policy)) {
      getOperation().emitError() << "llvm-load-cache-hints: unknown policy '" << policy
                                 << "' (expected evict_last, evict_first or evict_normal)";
      return signalPassFailure();
    }
    if (!known(reductionPolicy) && reductionPolicy != "none") {
      getOperation().emitError() << "llvm-load-cache-hints: unknown reduction-policy '" << reductionPolicy
                                 << "' (expected evict_first, evict_last, evict_normal or none)";
      return signalPassFailure();
    }
    getOperation()->walk([&](LLVM::LLVMFuncOp fn) {
      if (fn->hasAttr(tt::TileDialect::getKernelAttrName()))
        hintLoads(fn, policy, reductionPolicy);
    });
  }
};

} // namespace
