// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=256 carried-sums=true" -canonicalize -cse | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=256" -canonicalize -cse | FileCheck %s --check-prefix=OFF

// A loop that adds tiles to a carried 16 x 512 f32 tile whose result is only
// summed along its rows (a matrix-vector product's accumulator): at 256
// threads each thread owns eight chunks of 4 elements, each in one row. The
// loop keeps each chunk's sum in its first element: the carried element plus
// the chunk's 4 elements of the other operand, one add after the other, and
// the chunk's other 3 elements carried as they are (the initial zeros). The
// row sums after the loop are those of the plain loop, in another order.
// Without the option (OFF) each of the thread's 32 elements is carried and
// added on its own.
// CHECK-LABEL: func.func @rows
// CHECK: scf.for
// CHECK: %[[C:.*]] = memref.load %[[ACC:.*]][%c0]
// CHECK: %[[S0:.*]] = arith.addf %[[C]], %{{.*}} : f32
// CHECK-NEXT: %[[X1:.*]] = memref.load %{{.*}}[%c1]
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[S0]], %[[X1]] : f32
// CHECK-NEXT: %[[X2:.*]] = memref.load %{{.*}}[%c2]
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[S1]], %[[X2]] : f32
// CHECK-NEXT: %[[X3:.*]] = memref.load %{{.*}}[%c3]
// CHECK-NEXT: %[[S3:.*]] = arith.addf %[[S2]], %[[X3]] : f32
// CHECK-NEXT: memref.store %[[S3]], %[[NEW:.*]][%c0]
// CHECK-NEXT: %[[K1:.*]] = memref.load %[[ACC]][%c1]
// CHECK-NEXT: memref.store %[[K1]], %[[NEW]][%c1]
// CHECK-COUNT-7: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-COUNT-21: arith.addf
// CHECK-NOT: arith.addf
// CHECK: {{^    }$}}
// OFF-LABEL: func.func @rows
// OFF: scf.for
// OFF-COUNT-32: arith.addf %{{.*}}, %{{.*}} : f32{{$}}
// OFF-NEXT: memref.store
!w = memref<?x?xf32, strided<[?, 1], offset: ?>>
!y = memref<?xf32, strided<[1], offset: ?>>
func.func @rows(%w: !w {tile.align = 16 : i64}, %y: !y {tile.align = 16 : i64}, %n: index)
    attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x512xf32>
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%a = %zero) -> (tensor<16x512xf32>) {
    %ki = arith.index_cast %k : index to i32
    %x = tile.load %w[%p, %ki] {tile.interior} : !w -> tensor<16x512xf32>
    %s = arith.addf %a, %x : tensor<16x512xf32>
    scf.yield %s : tensor<16x512xf32>
  }
  %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
  %v = tile.reshape %r : tensor<16x1xf32> -> tensor<16xf32>
  tile.store %v, %y[%p] : tensor<16xf32>, !y
  return
}

// -----

// A chain of adds (an unrolled loop's) is planned as a whole: each add of
// the chain sums the chunk into its first element.
// CHECK-LABEL: func.func @chain
// CHECK: scf.for
// CHECK: %[[S0:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: memref.load
// CHECK-NEXT: arith.addf %[[S0]], %{{.*}} : f32
// CHECK-COUNT-62: arith.addf
// CHECK-NOT: arith.addf
// CHECK: {{^    }$}}
!w = memref<?x?xf32, strided<[?, 1], offset: ?>>
!y = memref<?xf32, strided<[1], offset: ?>>
func.func @chain(%w: !w {tile.align = 16 : i64}, %y: !y {tile.align = 16 : i64}, %n: index)
    attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x512xf32>
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%a = %zero) -> (tensor<16x512xf32>) {
    %ki = arith.index_cast %k : index to i32
    %x = tile.load %w[%p, %ki] {tile.interior} : !w -> tensor<16x512xf32>
    %s = arith.addf %a, %x : tensor<16x512xf32>
    %t = arith.addf %x, %s : tensor<16x512xf32>
    scf.yield %t : tensor<16x512xf32>
  }
  %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
  %v = tile.reshape %r : tensor<16x1xf32> -> tensor<16xf32>
  tile.store %v, %y[%p] : tensor<16xf32>, !y
  return
}

// -----

// Not planned: the result is also stored (every element is needed), so each
// of the thread's 32 elements is carried and added on its own.
// CHECK-LABEL: func.func @stored
// CHECK: scf.for
// CHECK-COUNT-32: arith.addf %{{.*}}, %{{.*}} : f32{{$}}
// CHECK-NEXT: memref.store
// CHECK-NOT: arith.addf
// CHECK: {{^    }$}}
!w = memref<?x?xf32, strided<[?, 1], offset: ?>>
!y = memref<?xf32, strided<[1], offset: ?>>
func.func @stored(%w: !w {tile.align = 16 : i64}, %y: !y {tile.align = 16 : i64}, %o: !w {tile.align = 16 : i64}, %n: index)
    attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<16x512xf32>
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%a = %zero) -> (tensor<16x512xf32>) {
    %ki = arith.index_cast %k : index to i32
    %x = tile.load %w[%p, %ki] {tile.interior} : !w -> tensor<16x512xf32>
    %s = arith.addf %a, %x : tensor<16x512xf32>
    scf.yield %s : tensor<16x512xf32>
  }
  tile.store %acc, %o[%p, %p] {tile.interior} : tensor<16x512xf32>, !w
  %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
  %v = tile.reshape %r : tensor<16x1xf32> -> tensor<16xf32>
  tile.store %v, %y[%p] : tensor<16xf32>, !y
  return
}
