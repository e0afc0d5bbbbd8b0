// The cpu lowering of an elementwise-add kernel followed by the upstream
// conversions leaves only the LLVM dialect.
// RUN: tessera-opt %s -convert-tile-to-loops -convert-scf-to-cf -convert-math-to-llvm \
// RUN:   -convert-arith-to-llvm -convert-cf-to-llvm -finalize-memref-to-llvm \
// RUN:   -convert-func-to-llvm -reconcile-unrealized-casts \
// RUN:   | FileCheck %s --implicit-check-not=memref. --implicit-check-not=arith. \
// RUN:       --implicit-check-not=scf. --implicit-check-not=cf. --implicit-check-not=math. \
// RUN:       --implicit-check-not=func.func --implicit-check-not=func.return \
// RUN:       --implicit-check-not=unrealized_conversion_cast --implicit-check-not=tile.load \
// RUN:       --implicit-check-not=tile.store --implicit-check-not=tile.program_id \
// RUN:       --implicit-check-not='tensor<'

// CHECK: llvm.func @add(
// CHECK-SAME: %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32)
// CHECK-SAME: attributes {tile.kernel}
// CHECK: llvm.alloca
// CHECK: llvm.fadd %{{.*}}, %{{.*}} : f32
// CHECK: llvm.store
// CHECK: llvm.return
func.func @add(%a: memref<?xf32, strided<[?], offset: ?>>,
               %b: memref<?xf32, strided<[?], offset: ?>>,
               %c: memref<?xf32, strided<[?], offset: ?>>) attributes {tile.kernel} {
  %pid = tile.program_id 0
  %x = tile.load %a[%pid] : memref<?xf32, strided<[?], offset: ?>> -> tensor<256xf32>
  %y = tile.load %b[%pid] : memref<?xf32, strided<[?], offset: ?>> -> tensor<256xf32>
  %z = arith.addf %x, %y : tensor<256xf32>
  tile.store %z, %c[%pid] : tensor<256xf32>, memref<?xf32, strided<[?], offset: ?>>
  return
}
