//===- WarpMma.cpp - sm_80 warp-level tensor-core instructions ------------===//
//
// See WarpMma.h. Fragments follow the PTX ISA's layouts for m16n8k16 with
// 16-bit inputs: lane l (group g = l / 4, t = l mod 4) holds A's elements
// (g, 2t..2t+1), (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..) in its four i32, B's
// (k 2t..2t+1, n g) and (k 2t+8.., n g) in its two, and the accumulator's
// (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1). For m16n8k8 of tf32: A's
// (g, t), (g+8, t), (g, t+4), (g+8, t+4), B's (k t, n g) and (k t+4, n g), the
// accumulator's as above.
//
//===----------------------------------------------------------------------===//

#include "WarpMma.h"
#include "../Utils/HopperPtx.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/MathExtras.h"

#include <string>

using namespace mlir;
using namespace mlir::tessera::tile;

Value WarpMma::offset(Value base, Value bytes) {
  return LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(), base,
                             ValueRange{bytes});
}

void WarpMma::copy16(Value dst, Value src, Value srcBytes) {
  NVVM::CpAsyncOp::create(b, loc, dst, src, uint32_t{16},
                          NVVM::LoadCacheModifierKind::CG, srcBytes);
}

void WarpMma::copyChunk(Value dst, Value base, Value at, Value left,
                        Value inside, int64_t chunkElements,
                        int64_t elementBytes) {
  auto i32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); };
  auto i64 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 64); };
  Value elements = arith::SelectOp::create(
      b, loc, inside, chunkElementsLeft(left, chunkElements), i32(0));
  copy16(dst, offset(base, arith::MulIOp::create(b, loc, at, i64(elementBytes))),
         arith::MulIOp::create(b, loc, elements, i32(elementBytes)));
}

Value WarpMma::chunkElementsLeft(Value left, int64_t chunkElements) {
  auto i32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); };
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, left, i32(0)), i32(chunkElements));
}

std::pair<Value, memref::ExtractStridedMetadataOp>
WarpMma::viewBase(Value memref, int64_t elementBytes) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value aligned = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, meta.getBaseBuffer());
  Type i64 = b.getI64Type();
  // The generic address of element 0, as a global pointer.
  Value address = arith::AddIOp::create(
      b, loc, arith::IndexCastOp::create(b, loc, i64, aligned),
      arith::MulIOp::create(b, loc, arith::IndexCastOp::create(b, loc, i64, meta.getOffset()),
                            arith::ConstantIntOp::create(b, loc, elementBytes, 64)));
  Value generic = LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()), address);
  Value global = LLVM::AddrSpaceCastOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1), generic);
  return {global, meta};
}

Value WarpMma::dynamicSharedBase(func::FuncOp kernel, StringRef prefix) {
  auto module = kernel->getParentOfType<ModuleOp>();
  OpBuilder mb(module.getContext());
  auto global = LLVM::GlobalOp::create(
      mb, loc, LLVM::LLVMArrayType::get(mb.getI8Type(), 0), /*isConstant=*/false,
      LLVM::Linkage::External, (prefix + kernel.getSymName()).str(), Attribute(),
      /*alignment=*/128, /*addrSpace=*/3);
  SymbolTable(module).insert(global, Block::iterator(kernel));
  return LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), global.getSymName());
}

int64_t WarpMma::computeCapability(StringRef arch) {
  if (!arch.consume_front("sm_"))
    return 0;
  arch = arch.take_while([](char c) { return c >= '0' && c <= '9'; });
  int64_t cc = 0;
  return arch.getAsInteger(10, cc) ? 0 : cc;
}

void WarpMma::commitGroup() { NVVM::CpAsyncCommitGroupOp::create(b, loc); }

void WarpMma::waitGroup(int64_t pending) {
  NVVM::CpAsyncWaitGroupOp::create(b, loc, static_cast<int32_t>(pending));
}

std::array<Value, 4> WarpMma::loadMatrices(Value rowAddress, bool transpose) {
  Type i32 = b.getI32Type();
  auto type = LLVM::LLVMStructType::getLiteral(b.getContext(), {i32, i32, i32, i32});
  Value m = NVVM::LdMatrixOp::create(
      b, loc, type, rowAddress, /*num=*/4,
      transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
      NVVM::LdStMatrixEltType::B16);
  std::array<Value, 4> r;
  for (int64_t i = 0; i < 4; ++i)
    r[i] = LLVM::ExtractValueOp::create(b, loc, m, i);
  return r;
}

std::array<Value, 4> WarpMma::mma(ArrayRef<Value> a, ArrayRef<Value> bb,
                                  ArrayRef<Value> c, Type inputType,
                                  Type inputTypeB) {
  if (inputType.getIntOrFloatBitWidth() == 8) {
    return mmaFloat8(a, bb, c, ptxFloat8Name(inputType),
                     ptxFloat8Name(inputTypeB ? inputTypeB : inputType));
  }
  // bf16 and tf32 fragments are i32 in NVVM; f16 ones two-element vectors.
  SmallVector<Value> aOps(a), bOps(bb);
  NVVM::MMATypes ptx = NVVM::MMATypes::bf16;
  if (inputType.isF32())
    ptx = NVVM::MMATypes::tf32;
  if (inputType.isF16()) {
    ptx = NVVM::MMATypes::f16;
    auto pair = VectorType::get({2}, b.getF16Type());
    for (Value &v : aOps)
      v = LLVM::BitcastOp::create(b, loc, pair, v);
    for (Value &v : bOps)
      v = LLVM::BitcastOp::create(b, loc, pair, v);
  }
  Type f32 = b.getF32Type();
  auto type = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  Value d = NVVM::MmaOp::create(
      b, loc, type, aOps, bOps, c, ArrayRef<int64_t>{16, 8, kStep(inputType)},
      /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
      std::array<NVVM::MMATypes, 2>{ptx, ptx},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
  std::array<Value, 4> r;
  for (int64_t i = 0; i < 4; ++i)
    r[i] = LLVM::ExtractValueOp::create(b, loc, d, i);
  return r;
}

std::array<Value, 4> WarpMma::mmaFloat8(ArrayRef<Value> a, ArrayRef<Value> bb,
                                        ArrayRef<Value> c, StringRef formatA,
                                        StringRef formatB) {
  // d0..d3 = {a0..a3} x {b0, b1} + {c0..c3}.
  const std::string text = "mma.sync.aligned.m16n8k32.row.col.f32." + formatA.str() + "." + formatB.str() +
                           ".f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, "
                           "{$10, $11, $12, $13};";
  SmallVector<Value> operands(a);
  operands.append(bb.begin(), bb.end());
  operands.append(c.begin(), c.end());
  Type f32 = b.getF32Type();
  auto type = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  auto op = LLVM::InlineAsmOp::create(
      b, loc, TypeRange(type), operands, text,
      "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f", /*has_side_effects=*/false,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr(), ArrayAttr());
  std::array<Value, 4> r;
  for (int64_t i = 0; i < 4; ++i)
    r[i] = LLVM::ExtractValueOp::create(b, loc, op.getResult(0), i);
  return r;
}

Value WarpMma::toTf32(Value v) {
  if (!v.getType().isF32())
    v = LLVM::BitcastOp::create(b, loc, b.getF32Type(), v);
  auto cvt = NVVM::ConvertFloatToTF32Op::create(b, loc, b.getI32Type(), v);
  cvt.setRnd(NVVM::FPRoundingMode::RNA);
  return cvt;
}

Value WarpMma::swizzledChunk(Value row, Value chunk, int64_t chunksPerRow) {
  auto i32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); };
  Value linear = arith::OrIOp::create(
      b, loc,
      arith::ShLIOp::create(b, loc, row, i32(llvm::Log2_64(chunksPerRow))),
      chunk);
  // (L / max(chunksPerRow, 8)) mod 8: the row mod 8 for rows of 8 chunks or
  // more; for narrower rows, the index of the 128-byte line mod 8.
  Value line = chunksPerRow >= 8
                   ? row
                   : arith::ShRUIOp::create(
                         b, loc, row, i32(llvm::Log2_64(8 / chunksPerRow)));
  Value key = arith::AndIOp::create(b, loc, line, i32(7));
  Value swizzled = arith::XOrIOp::create(b, loc, linear, key);
  return arith::ShLIOp::create(b, loc, swizzled, i32(4));
}
