//===- ClusterSum.cpp - split-K partial sums meet in rank 0 ---------------===//
//
// See ClusterSum.h.
//
//===----------------------------------------------------------------------===//

#include "ClusterSum.h"
#include "HopperPtx.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

SmallVector<Value> mlir::tessera::tile::sumOverCluster(
    OpBuilder &b, Location loc, Value rank, int64_t ctas, ValueRange own,
    llvm::function_ref<void()> publish,
    llvm::function_ref<void(Value, SmallVectorImpl<Value> &)> gather) {
  Type i32 = b.getI32Type();
  Value zero = arith::ConstantIntOp::create(b, loc, i32, 0);
  // Ranks 1 and up: their partials into their own shared memory.
  auto peer = scf::IfOp::create(
      b, loc, TypeRange{},
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rank, zero),
      /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(peer.thenBlock()->getTerminator());
    publish();
  }
  // The peers' stores are visible to rank 0 (release, acquire).
  HopperPtx(b, loc).clusterBarrier();
  // Rank 0: the peers' partials added, in rank order.
  auto lead = scf::IfOp::create(
      b, loc, own.getTypes(),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rank, zero),
      /*withElseRegion=*/!own.empty());
  {
    OpBuilder::InsertionGuard guard(b);
    Block *then = lead.thenBlock();
    if (then->mightHaveTerminator())
      b.setInsertionPoint(then->getTerminator());
    else
      b.setInsertionPointToEnd(then);
    SmallVector<Value> sum(own.begin(), own.end());
    for (int64_t r = 1; r < ctas; ++r)
      gather(arith::ConstantIntOp::create(b, loc, i32, r), sum);
    if (!own.empty()) {
      scf::YieldOp::create(b, loc, sum);
      b.setInsertionPointToEnd(lead.elseBlock());
      scf::YieldOp::create(b, loc, own);
    }
  }
  // Rank 0 has read the peers' shared memory before they go on (and exit).
  HopperPtx(b, loc).clusterBarrier();
  return SmallVector<Value>(lead.getResults());
}

std::pair<Value, Value> mlir::tessera::tile::splitShare(OpBuilder &b, Location loc, Value n,
                                                       Value rank, int64_t ctas) {
  Type i32 = b.getI32Type();
  Value log2S = arith::ConstantIntOp::create(b, loc, i32, llvm::Log2_64(ctas));
  auto bound = [&](Value r) {
    return arith::ShRUIOp::create(b, loc, arith::MulIOp::create(b, loc, n, r), log2S).getResult();
  };
  Value first = bound(rank);
  Value next = arith::AddIOp::create(b, loc, rank, arith::ConstantIntOp::create(b, loc, i32, 1));
  return {first, arith::SubIOp::create(b, loc, bound(next), first).getResult()};
}
