// RUN: tessera-opt %s -split-input-file -tile-cpu-workspace -verify-diagnostics
// RUN: not tessera-opt %s -split-input-file -tile-cpu-workspace=stack-bytes=-1 2>&1 | FileCheck %s --check-prefix=OPTIONS

// OPTIONS: tile-cpu-workspace: stack-bytes and buffer-bytes must be >= 0

func.func @dynamic(%n: index) attributes {tile.kernel} {
  // expected-error @+1 {{is a private array of no static size: tile-cpu-workspace cannot bound the kernel's stack}}
  %a = memref.alloca(%n) : memref<?xf32>
  return
}

// -----

func.func @layout() attributes {tile.kernel} {
  // expected-error @+1 {{cannot move to the workspace: it has a layout or memory space}}
  %a = memref.alloca() : memref<65536xf32, strided<[1], offset: 4>>
  return
}

// -----

// An array yielded out of its iteration would share its region with the
// next iteration's.
func.func @escapes(%n: index, %init: memref<2xf32>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%prev = %init) -> (memref<2xf32>) {
    // expected-error @+1 {{cannot move to the workspace: it may outlive its block (passed to a terminator or a call)}}
    %a = memref.alloca() : memref<2xf32>
    scf.yield %a : memref<2xf32>
  }
  return
}
