// RUN: tessera-tileir-translate %s -o %t.tileirbc
// RUN: %tileirdisasm %t.tileirbc | FileCheck %s
// REQUIRES: tileirdisasm

// A kernel that reads and writes its output inside a loop and a branch: the token of the output is
// carried through the loop (a loop value) and the branch (a result), each load waits for the last
// write, each store for every access before it. The input is never written: read without tokens.

// CHECK-LABEL: entry @accumulate(%arg0: tile<ptr<f32>>, %arg1: tile<ptr<f32>>, %arg2: tile<i64>, %arg3: tile<i64>, %arg4: tile<i64>, %arg5: tile<i64>, %arg6: tile<i64>, %arg7: tile<ptr<f32>>, %arg8: tile<ptr<f32>>, %arg9: tile<i64>, %arg10: tile<i64>, %arg11: tile<i64>, %arg12: tile<i64>, %arg13: tile<i64>, %arg14: tile<i32>)
// CHECK: %[[FRESH:[^ ,]+]] = make_token
// CHECK: %[[LOOP:[^ ,]+]] = for %{{.*}} in ({{.*}}) : tile<i64> iter_values(%[[CARRIED:[^ ,]+]] = %[[FRESH]]) -> (token)
// CHECK:   load_view_tko weak %{{.*}}[%{{.*}}, %{{.*}}] : partition_view
// CHECK:   %{{.*}}, %[[READ:[^ ,]+]] = load_view_tko weak %{{.*}}[%{{.*}}, %{{.*}}] token = %[[CARRIED]]
// CHECK:   %[[BOTH:[^ ,]+]] = join_tokens %[[CARRIED]], %[[READ]]
// CHECK:   %[[WRITE:[^ ,]+]] = store_view_tko weak %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] token = %[[BOTH]]
// CHECK:   continue %[[WRITE]] : token
// CHECK: cmpi greater_than %arg14
// CHECK: %[[IF:[^ ,]+]] = if %{{.*}} -> (token)
// CHECK:   iota : tile<32xi32>
// CHECK:   itof %{{.*}} signed
// CHECK:   %[[LAST:[^ ,]+]] = store_view_tko weak %{{.*}} token = %[[LOOP]]
// CHECK:   yield %[[LAST]] : token
// CHECK: } else {
// CHECK:   yield %[[LOOP]] : token
// CHECK: return
module {
  func.func @accumulate(%out: memref<?x?xf32, strided<[?, 1], offset: ?>>,
                        %a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %n: i32) attributes {tile.kernel} {
    %pid = tile.program_id 0
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %nn = arith.index_cast %n : i32 to index
    scf.for %k = %c0 to %nn step %c1 {
      %ki = arith.index_cast %k : index to i32
      %x = tile.load %a[%pid, %ki] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<16x32xf32>
      %y = tile.load %out[%pid, %ki] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<16x32xf32>
      %s = arith.addf %x, %y : tensor<16x32xf32>
      tile.store %s, %out[%pid, %ki] : tensor<16x32xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
    }
    %zero = arith.constant 0 : i32
    %pos = arith.cmpi sgt, %n, %zero : i32
    scf.if %pos {
      %i = tile.iota : tensor<32xi32>
      %f = arith.sitofp %i : tensor<32xi32> to tensor<32xf32>
      %r = tile.reshape %f : tensor<32xf32> -> tensor<1x32xf32>
      %b = tile.broadcast %r : tensor<1x32xf32> -> tensor<16x32xf32>
      tile.store %b, %out[%pid, %zero] : tensor<16x32xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
    }
    return
  }
}
