//===- HopperPtx.cpp - sm_90a instructions as LLVM inline asm -------------===//
//
// See HopperPtx.h. Every asm has side effects and clobbers memory, so that
// LLVM neither removes nor reorders it across loads and stores.
//
//===----------------------------------------------------------------------===//

#include "HopperPtx.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cassert>
#include <string>

using namespace mlir;
using namespace mlir::tessera::tile;

Value HopperPtx::asmOp(Type result, ValueRange operands, StringRef text,
                       StringRef constraints) {
  std::string withClobber = constraints.str();
  withClobber += withClobber.empty() ? "~{memory}" : ",~{memory}";
  auto op = LLVM::InlineAsmOp::create(
      b, loc, result ? TypeRange(result) : TypeRange(), operands, text,
      withClobber, /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
      ArrayAttr());
  return result ? op.getResult(0) : Value();
}

void HopperPtx::mbarrierInit(Value bar, int64_t count) {
  Value n = arith::ConstantIntOp::create(b, loc, count, 32);
  asmOp({}, {bar, n}, "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r");
}

void HopperPtx::fenceMbarrierInit() {
  asmOp({}, {}, "fence.mbarrier_init.release.cluster;", "");
}

void HopperPtx::mbarrierArriveExpectTx(Value bar, int64_t bytes) {
  Value n = arith::ConstantIntOp::create(b, loc, bytes, 32);
  asmOp({}, {bar, n},
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r");
}

void HopperPtx::mbarrierArrive(Value bar) {
  asmOp({}, {bar}, "mbarrier.arrive.shared::cta.b64 _, [$0];", "r");
}

void HopperPtx::mbarrierWait(Value bar, Value parity) {
  // while (!try_wait(bar, parity)) {}: try_wait suspends the thread for a
  // while before it reports the phase incomplete.
  Type i32 = b.getI32Type();
  auto loop = scf::WhileOp::create(b, loc, TypeRange(), ValueRange());
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before = b.createBlock(&loop.getBefore());
    b.setInsertionPointToStart(before);
    Value done = asmOp(i32, {bar, parity},
                       "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity."
                       "shared::cta.b64 p, [$1], $2;\n\tselp.b32 $0, 1, 0, "
                       "p;\n\t}",
                       "=r,r,r");
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
    Value pending =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, done, zero);
    scf::ConditionOp::create(b, loc, pending, ValueRange());
    Block *after = b.createBlock(&loop.getAfter());
    b.setInsertionPointToStart(after);
    scf::YieldOp::create(b, loc);
  }
}

void HopperPtx::clusterBarrier() {
  asmOp({}, {}, "barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;",
        "");
}

Value HopperPtx::loadClusterSharedF32(Value addr, Value rank) {
  return asmOp(b.getF32Type(), {addr, rank},
               "{\n\t.reg .b32 a;\n\tmapa.shared::cluster.u32 a, $1, $2;\n\t"
               "ld.shared::cluster.f32 $0, [a];\n\t}",
               "=f,r,r");
}

Value HopperPtx::mapShared(Value addr, Value rank) {
  return asmOp(b.getI32Type(), {addr, rank}, "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r");
}

Value HopperPtx::loadClusterSharedF32(Value clusterAddr, int64_t offset) {
  return asmOp(b.getF32Type(), {clusterAddr},
               "ld.shared::cluster.f32 $0, [$1+" + std::to_string(offset) + "];", "=f,r");
}

void HopperPtx::bulkCopy(Value dst, Value src, Value bytes, Value bar) {
  asmOp({}, {dst, src, bytes, bar},
        "{\n\t.reg .u64 g;\n\tcvta.to.global.u64 g, $1;\n\t"
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
        "[$0], [g], $2, [$3];\n\t}",
        "r,l,r,r");
}

void HopperPtx::warpSync() { asmOp({}, {}, "bar.warp.sync -1;", ""); }

void HopperPtx::tmaLoad2d(Value dst, Value map, Value bar, Value c0, Value c1) {
  asmOp({}, {dst, map, c0, c1, bar},
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::"
        "bytes [$0], [$1, {$2, $3}], [$4];",
        "r,l,r,r,r");
}

void HopperPtx::tmaStore2d(Value map, Value src, Value c0, Value c1) {
  asmOp({}, {map, src, c0, c1},
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$2, $3}], "
        "[$1];",
        "l,r,r,r");
}

void HopperPtx::bulkCommitGroup() {
  asmOp({}, {}, "cp.async.bulk.commit_group;", "");
}

void HopperPtx::bulkWaitGroup(int64_t pending, bool readOnly) {
  asmOp({}, {},
        std::string(readOnly ? "cp.async.bulk.wait_group.read "
                             : "cp.async.bulk.wait_group ") +
            std::to_string(pending) + ";",
        "");
}

void HopperPtx::fenceProxyAsyncShared() {
  asmOp({}, {}, "fence.proxy.async.shared::cta;", "");
}

void HopperPtx::namedBarrier(int64_t id, int64_t threads) {
  // The NVVM op, not inline asm: its intrinsic is convergent, so LLVM never
  // copies the barrier into the arms of a branch around it. Jump threading did
  // that to an asm `bar.sync` between two tests of the same condition (a
  // warpgroup's leader storing, then arriving on an mbarrier), and the warp's
  // lanes then reached the aligned barrier at two different instructions: the
  // kernel hung.
  NVVM::BarrierOp::create(b, loc, Type(),
                          arith::ConstantIntOp::create(b, loc, id, 32),
                          arith::ConstantIntOp::create(b, loc, threads, 32),
                          /*reductionOp=*/nullptr, /*reductionPredicate=*/Value());
}

void HopperPtx::namedBarrierArrive(int64_t id, int64_t threads) {
  asmOp({}, {},
        "bar.arrive " + std::to_string(id) + ", " + std::to_string(threads) + ";",
        "");
}

void HopperPtx::setMaxRegisters(int64_t registers, bool increase) {
  std::string text = (increase ? "setmaxnreg.inc.sync.aligned.u32 "
                               : "setmaxnreg.dec.sync.aligned.u32 ") +
                     std::to_string(registers) + ";";
  asmOp({}, {}, text, "");
}

void HopperPtx::wgmmaFence() { asmOp({}, {}, "wgmma.fence.sync.aligned;", ""); }

void HopperPtx::wgmmaCommitGroup() {
  asmOp({}, {}, "wgmma.commit_group.sync.aligned;", "");
}

void HopperPtx::wgmmaWaitGroup(int64_t pending) {
  asmOp({}, {},
        "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";", "");
}

Value HopperPtx::matrixDescriptor(Value addr, int64_t lbo, int64_t sbo) {
  Type i64 = b.getI64Type();
  auto c64 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 64); };
  Value a = arith::ExtUIOp::create(b, loc, i64, addr);
  Value start = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, a, c64(4)), c64(0x3FFF));
  const int64_t fixed = (((lbo >> 4) & 0x3FFF) << 16) |
                        (((sbo >> 4) & 0x3FFF) << 32) | (int64_t{1} << 62);
  return arith::OrIOp::create(b, loc, start, c64(fixed));
}

Value HopperPtx::wgmmaAsm(Value acc, StringRef shapeAndTypes, ValueRange a,
                          Value descB, Value scaleD, int64_t n,
                          StringRef immediates) {
  // Operands: the accumulator's n/2 outputs, the tied inputs regs .. 2 regs -
  // 1, A (a descriptor or four registers), B's descriptor, scale-d.
  const int64_t regs = n / 2;
  auto operand = [](int64_t i) { return "$" + std::to_string(i); };
  const int64_t aFirst = 2 * regs, bDesc = aFirst + static_cast<int64_t>(a.size());
  std::string text = "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, " +
                     operand(bDesc + 1) + ", 0;\n\t" +
                     "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
                     shapeAndTypes.str() + " {";
  std::string constraints;
  for (int64_t r = 0; r < regs; ++r) {
    text += (r ? ", " : "") + operand(r);
    constraints += "=f,";
  }
  std::string aText = operand(aFirst);
  for (int64_t i = 1; i < static_cast<int64_t>(a.size()); ++i)
    aText += ", " + operand(aFirst + i);
  text += "}, " + (a.size() > 1 ? "{" + aText + "}" : aText) + ", " +
          operand(bDesc) + ", p, " + immediates.str() + ";\n\t}";
  SmallVector<Value> operands;
  for (int64_t r = 0; r < regs; ++r) {
    constraints += std::to_string(r) + ",";
    operands.push_back(LLVM::ExtractValueOp::create(b, loc, acc, r));
  }
  for (Value v : a)
    constraints += v.getType().isInteger(64) ? "l," : "r,";
  constraints += "l,r";
  operands.append(a.begin(), a.end());
  operands.append({descB, scaleD});
  return asmOp(acc.getType(), operands, text, constraints);
}

const char *mlir::tessera::tile::ptxFloat8Name(Type type) {
  return isa<Float8E4M3FNType>(type) ? "e4m3" : "e5m2";
}

Value HopperPtx::wgmma(Value acc, Value descA, Value descB, Value scaleD,
                       int64_t n, Type inputType, bool transposeB,
                       Type inputTypeB) {
  // scale-a, scale-b 1; tnsp-a 0 (K-major), tnsp-b 1 for an MN-major B, 0
  // for a K-major one. tf32 and the 8-bit floats have no transpose operands
  // (both tiles are K-major).
  if (!inputTypeB)
    inputTypeB = inputType;
  std::string types;
  if (inputType.isF32())
    types = "k8.f32.tf32.tf32";
  else if (inputType.getIntOrFloatBitWidth() == 8)
    types = std::string("k32.f32.") + ptxFloat8Name(inputType) + "." +
            ptxFloat8Name(inputTypeB);
  else
    types = inputType.isBF16() ? "k16.f32.bf16.bf16" : "k16.f32.f16.f16";
  const bool kMajorOnly = inputType.isF32() || inputType.getIntOrFloatBitWidth() == 8;
  assert((!kMajorOnly || !transposeB) && "tf32 and f8 wgmma read B K-major only");
  return wgmmaAsm(acc, types, descA, descB, scaleD, n,
                  kMajorOnly ? "1, 1" : transposeB ? "1, 1, 0, 1" : "1, 1, 0, 0");
}

Value HopperPtx::wgmmaTf32RegisterA(Value acc, ValueRange a, Value descB,
                                    Value scaleD, int64_t n) {
  return wgmmaAsm(acc, "k8.f32.tf32.tf32", a, descB, scaleD, n, "1, 1");
}
