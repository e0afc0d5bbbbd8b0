// RUN: %emulate --work %t %s | FileCheck %s
// Causal grouped-query attention with an online softmax
// (convert-tile-attention-to-mma-sync for sm_90, 3 stages): out =
// softmax(scale q k^T, masked to keys at or before the query) v, 32 queries
// against 32-key tiles, head dimension 64; 2 query heads share one KV head
// (head / 2). Both products on mma.sync, the scores and the softmax in
// registers, K and V in three cp.async stages (the last program walks 4 key
// tiles: two in flight before its loop, the others issued in it). Ragged:
// 100 queries (the last program's last 28 rows past the end: zeros, computed
// on and not stored) against a cache of 100 positions (the last key tile's
// last 28 rows zero-filled and masked). The output is [heads, queries, 64]:
// the stored tile [1, 32, 64].
// EMU: ATTN=sm_90 STAGES=3 grid=4,2 args=bf16[2x100x64];bf16[2x100x64];bf16[1x100x64];bf16[1x100x64]
// CHECK: arg0: 12800 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 12800 elements, 0 written, 0 differ
// CHECK: attention_mma_sync: T=64 ATTN=sm_90 dynamic shared 28672 OK
!m2 = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!m3 = memref<?x?x?xbf16, strided<[?, ?, 1], offset: ?>>
func.func @attention_mma_sync(%out: !m3 {tile.align = 16 : i64}, %q: !m3 {tile.align = 16 : i64},
                              %k: !m3 {tile.align = 16 : i64}, %v: !m3 {tile.align = 16 : i64})
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0i = arith.constant 0 : i32
  %c2i = arith.constant 2 : i32
  %c31i = arith.constant 31 : i32
  %c32i = arith.constant 32 : i32
  %p0 = tile.program_id 0
  %p1 = tile.program_id 1
  %kvh = arith.divsi %p1, %c2i : i32
  %first = arith.muli %p0, %c32i : i32
  %t = memref.dim %q, %c1 : !m3
  %ti = arith.index_cast %t : index to i32
  %end = arith.addi %first, %c32i : i32
  %limit = arith.minsi %end, %ti : i32
  %up = arith.addi %limit, %c31i : i32
  %tiles = arith.divsi %up, %c32i : i32
  %n = arith.index_cast %tiles : i32 to index
  %qi = tile.iota : tensor<32xi32>
  %firsts = tile.splat %first : i32 -> tensor<32xi32>
  %qp = arith.addi %qi, %firsts : tensor<32xi32>
  %qpos = tile.reshape %qp : tensor<32xi32> -> tensor<32x1xi32>
  %q3 = tile.load %q[%p1, %p0, %c0i] : !m3 -> tensor<1x32x64xbf16>
  %qt = tile.reshape %q3 : tensor<1x32x64xbf16> -> tensor<32x64xbf16>
  %ninf = arith.constant dense<0xFF800000> : tensor<32x1xf32>
  %zero1 = arith.constant dense<0.0> : tensor<32x1xf32>
  %zero = arith.constant dense<0.0> : tensor<32x64xf32>
  %zs = arith.constant dense<0.0> : tensor<32x32xf32>
  %scale = arith.constant dense<0.125> : tensor<32x32xf32>
  %masked = arith.constant dense<0xFF800000> : tensor<32x32xf32>
  %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %ninf, %l = %zero1, %o = %zero)
      -> (tensor<32x1xf32>, tensor<32x1xf32>, tensor<32x64xf32>) {
    %ii = arith.index_cast %i : index to i32
    %k3 = tile.load %k[%kvh, %ii, %c0i] : !m3 -> tensor<1x32x64xbf16>
    %kt = tile.reshape %k3 : tensor<1x32x64xbf16> -> tensor<32x64xbf16>
    %v3 = tile.load %v[%kvh, %ii, %c0i] : !m3 -> tensor<1x32x64xbf16>
    %vt = tile.reshape %v3 : tensor<1x32x64xbf16> -> tensor<32x64xbf16>
    %ki = tile.iota : tensor<32xi32>
    %base = arith.muli %ii, %c32i : i32
    %bases = tile.splat %base : i32 -> tensor<32xi32>
    %kp = arith.addi %ki, %bases : tensor<32xi32>
    %kpos = tile.reshape %kp : tensor<32xi32> -> tensor<1x32xi32>
    %kb = tile.broadcast %kpos : tensor<1x32xi32> -> tensor<32x32xi32>
    %qb = tile.broadcast %qpos : tensor<32x1xi32> -> tensor<32x32xi32>
    %ok = arith.cmpi sle, %kb, %qb : tensor<32x32xi32>
    %ktt = tile.transpose %kt : tensor<32x64xbf16> -> tensor<64x32xbf16>
    %s0 = tile.mma %qt, %ktt, %zs : tensor<32x64xbf16>, tensor<64x32xbf16>, tensor<32x32xf32> -> tensor<32x32xf32>
    %s1 = arith.mulf %s0, %scale : tensor<32x32xf32>
    %s = arith.select %ok, %s1, %masked : tensor<32x32xi1>, tensor<32x32xf32>
    %mx = tile.reduce %s {kind = max, axis = 1} : tensor<32x32xf32> -> tensor<32x1xf32>
    %mn = arith.maximumf %m, %mx : tensor<32x1xf32>
    %dm = arith.subf %m, %mn : tensor<32x1xf32>
    %alpha = math.exp %dm : tensor<32x1xf32>
    %mnb = tile.broadcast %mn : tensor<32x1xf32> -> tensor<32x32xf32>
    %sd = arith.subf %s, %mnb : tensor<32x32xf32>
    %p = math.exp %sd : tensor<32x32xf32>
    %ps = tile.reduce %p {kind = sum, axis = 1} : tensor<32x32xf32> -> tensor<32x1xf32>
    %la = arith.mulf %l, %alpha : tensor<32x1xf32>
    %ln = arith.addf %la, %ps : tensor<32x1xf32>
    %ab = tile.broadcast %alpha : tensor<32x1xf32> -> tensor<32x64xf32>
    %oa = arith.mulf %o, %ab : tensor<32x64xf32>
    %p16 = arith.truncf %p : tensor<32x32xf32> to tensor<32x32xbf16>
    %on = tile.mma %p16, %vt, %oa : tensor<32x32xbf16>, tensor<32x64xbf16>, tensor<32x64xf32> -> tensor<32x64xf32>
    scf.yield %mn, %ln, %on : tensor<32x1xf32>, tensor<32x1xf32>, tensor<32x64xf32>
  }
  %lb = tile.broadcast %r#1 : tensor<32x1xf32> -> tensor<32x64xf32>
  %y = arith.divf %r#2, %lb : tensor<32x64xf32>
  %yb = arith.truncf %y : tensor<32x64xf32> to tensor<32x64xbf16>
  %y3 = tile.reshape %yb : tensor<32x64xbf16> -> tensor<1x32x64xbf16>
  tile.store %y3, %out[%p1, %p0, %c0i] : tensor<1x32x64xbf16>, !m3
  return
}
