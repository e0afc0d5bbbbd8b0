// Runs cpu-lowered kernels with mlir-runner and checks the numbers: masked
// loads/stores at ragged edges, transpose, reduce + broadcast, mma, and a
// loop swapping two carried tiles.
// The kernel gains six i32 program-id arguments in the lowering, so @main
// calls it through the declaration @k.lowered, which sed swaps for the
// lowered kernel before conversion.
// RUN: tessera-opt %s -convert-tile-to-loops \
// RUN:   | sed -e '/func.func private @k.lowered/d' -e 's/@k.lowered/@k/g' \
// RUN:   | tessera-opt -convert-scf-to-cf -convert-math-to-llvm -convert-arith-to-llvm \
// RUN:       -convert-cf-to-llvm -finalize-memref-to-llvm -convert-func-to-llvm \
// RUN:       -reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils \
// RUN:   | FileCheck %s

!g = memref<?x?xf32, strided<[?, ?], offset: ?>>

func.func @k(%x: !g, %t: !g, %w: !g, %z: !g, %n: index) attributes {tile.kernel} {
  %i0 = arith.constant 0 : i32
  // X is 3x5: the 4x8 tile reads zeros outside it.
  %a = tile.load %x[%i0, %i0] : !g -> tensor<4x8xf32>
  %at = tile.transpose %a : tensor<4x8xf32> -> tensor<8x4xf32>
  tile.store %at, %t[%i0, %i0] : tensor<8x4xf32>, !g
  // W = X - rowsum(X), broadcast along rows.
  %s = tile.reduce %a {kind = sum, axis = 1} : tensor<4x8xf32> -> tensor<4x1xf32>
  %sb = tile.broadcast %s : tensor<4x1xf32> -> tensor<4x8xf32>
  %d = arith.subf %a, %sb : tensor<4x8xf32>
  // Swapping the two carried tiles an odd number of times returns D first.
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%p = %a, %q = %d) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    scf.yield %q, %p : tensor<4x8xf32>, tensor<4x8xf32>
  }
  tile.store %r#0, %w[%i0, %i0] : tensor<4x8xf32>, !g
  // Z = X * X^T.
  %zero = arith.constant dense<0.0> : tensor<4x4xf32>
  %m = tile.mma %a, %at, %zero : tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  tile.store %m, %z[%i0, %i0] : tensor<4x4xf32>, !g
  return
}

func.func private @k.lowered(!g, !g, !g, !g, index, i32, i32, i32, i32, i32, i32)
func.func private @printMemrefF32(memref<*xf32>)

func.func @alloc(%rows: index, %cols: index, %init: f32, %iota: i1) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %m = memref.alloc(%rows, %cols) : memref<?x?xf32>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %r = arith.muli %i, %c10 : index
      %v = arith.addi %r, %j : index
      %vi = arith.index_cast %v : index to i32
      %vf = arith.sitofp %vi : i32 to f32
      %e = arith.select %iota, %vf, %init : f32
      memref.store %e, %m[%i, %j] : memref<?x?xf32>
    }
  }
  return %m : memref<?x?xf32>
}

func.func @main() {
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c1 = arith.constant 1 : index
  %i0 = arith.constant 0 : i32
  %i1 = arith.constant 1 : i32
  %sentinel = arith.constant -1.0 : f32
  %true = arith.constant true
  %false = arith.constant false
  %x = func.call @alloc(%c3, %c5, %sentinel, %true) : (index, index, f32, i1) -> memref<?x?xf32>
  %t = func.call @alloc(%c5, %c3, %sentinel, %false) : (index, index, f32, i1) -> memref<?x?xf32>
  %w = func.call @alloc(%c3, %c5, %sentinel, %false) : (index, index, f32, i1) -> memref<?x?xf32>
  %z = func.call @alloc(%c3, %c3, %sentinel, %false) : (index, index, f32, i1) -> memref<?x?xf32>
  %xg = memref.cast %x : memref<?x?xf32> to !g
  %tg = memref.cast %t : memref<?x?xf32> to !g
  %wg = memref.cast %w : memref<?x?xf32> to !g
  %zg = memref.cast %z : memref<?x?xf32> to !g
  func.call @k.lowered(%xg, %tg, %wg, %zg, %c1, %i0, %i0, %i0, %i1, %i1, %i1)
      : (!g, !g, !g, !g, index, i32, i32, i32, i32, i32, i32) -> ()
  %tu = memref.cast %t : memref<?x?xf32> to memref<*xf32>
  %wu = memref.cast %w : memref<?x?xf32> to memref<*xf32>
  %zu = memref.cast %z : memref<?x?xf32> to memref<*xf32>
  // CHECK: sizes = [5, 3]
  // CHECK-NEXT: [0,   10,   20]
  // CHECK-NEXT: [1,   11,   21]
  // CHECK-NEXT: [2,   12,   22]
  // CHECK-NEXT: [3,   13,   23]
  // CHECK-NEXT: [4,   14,   24]
  func.call @printMemrefF32(%tu) : (memref<*xf32>) -> ()
  // CHECK: sizes = [3, 5]
  // CHECK-NEXT: [-10,   -9,   -8,   -7,   -6]
  // CHECK-NEXT: [-50,   -49,   -48,   -47,   -46]
  // CHECK-NEXT: [-90,   -89,   -88,   -87,   -86]
  func.call @printMemrefF32(%wu) : (memref<*xf32>) -> ()
  // CHECK: sizes = [3, 3]
  // CHECK-NEXT: [30,   130,   230]
  // CHECK-NEXT: [130,   730,   1330]
  // CHECK-NEXT: [230,   1330,   2430]
  func.call @printMemrefF32(%zu) : (memref<*xf32>) -> ()
  return
}
