// RUN: tessera-opt %s -convert-tile-attention-to-mma-sync="arch=sm_80" | FileCheck %s
// RUN: tessera-opt %s -convert-tile-attention-to-mma-sync="arch=sm_90 stages=3" | FileCheck %s --check-prefix=THREE

// Causal attention with an online softmax in 32 x 32 tiles of head dimension
// 64, the programs of the last query tiles first: 2 warps of 16 query rows, shared memory for Q (4 KiB) and 2 stages of
// K and V (8 KiB each). Before the loop: Q's and tile 0's copies (one group),
// Q's 4 A fragments (ldmatrix.x4, one per k-step of 16). Per iteration: wait
// for the tile, one barrier, the next tile's copies, then the scores (per
// k-step one ldmatrix.x4 of K for two 8-column fragments, two mma.sync),
// the row max over the thread's 8 scores of each of its 2 rows and the quad
// (two xor shuffles per row), P packed into A fragments, P V (per k-step of
// 16 keys 4 ldmatrix.x4.trans of V, 8 mma.sync), the row sums. After it, the
// output o / l as pairs of bf16 with a bounds test.

// CHECK: llvm.mlir.global external @__tile_attention_shared_attention() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: func.func @attention(
// CHECK-SAME: tile.block_size = 64 : i32
// CHECK-SAME: tile.dynamic_shared_bytes = 20480 : i32
// CHECK-SAME: tile.kernel, tile.mma_sync
// CHECK-NOT: tile.
// CHECK: nvvm.read.ptx.sreg.tid.x range <i32, 0, 64>
// The programs longest first: CTA (x, y) runs program
// (X - 1 - L / Y, L mod Y), L = x + X y.
// CHECK: %[[X:.*]] = nvvm.read.ptx.sreg.nctaid.x
// CHECK: %[[Y:.*]] = nvvm.read.ptx.sreg.nctaid.y
// CHECK: %[[CY:.*]] = nvvm.read.ptx.sreg.ctaid.y
// CHECK: %[[XCY:.*]] = arith.muli %[[X]], %[[CY]]
// CHECK: %[[CX:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK: %[[L:.*]] = arith.addi %[[CX]], %[[XCY]]
// CHECK: %[[Q:.*]] = arith.divui %[[L]], %[[Y]]
// CHECK: %[[LAST:.*]] = arith.addi %[[X]], %c-1_i32
// CHECK: arith.subi %[[LAST]], %[[Q]]
// CHECK: arith.remui %[[L]], %[[Y]]
// CHECK: nvvm.cp.async.shared.global
// CHECK: scf.if
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// CHECK-COUNT-4: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>
// CHECK: scf.for {{.*}} -> (i32, f32, f32, f32, f32, f32
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// CHECK: scf.if
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK-COUNT-8: nvvm.mma.sync
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c1_i32{{.*}} : f32 -> f32
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %c2_i32{{.*}} : f32 -> f32
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: arith.divf
// CHECK: vector.store {{.*}} vector<2xbf16>
// CHECK-NOT: tile.

// Three stages: tiles 0 and 1 in flight before the loop, each iteration
// waits until at most one later group is pending.
// THREE-LABEL: func.func @attention(
// THREE-SAME: tile.dynamic_shared_bytes = 28672 : i32
// THREE-COUNT-2: nvvm.cp.async.commit.group
// THREE: nvvm.cp.async.wait.group 1
// THREE: scf.for
// THREE: nvvm.cp.async.wait.group 1
// THREE-NEXT: nvvm.barrier0

!m2 = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!m3 = memref<?x?x?xbf16, strided<[?, ?, 1], offset: ?>>
func.func @attention(%out: !m2 {tile.align = 16 : i64}, %q: !m3 {tile.align = 16 : i64},
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
  tile.store %yb, %out[%p0, %p1] : tensor<32x64xbf16>, !m2
  return
}
