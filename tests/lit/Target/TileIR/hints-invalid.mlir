// RUN: not tessera-tileir-translate %s --arch=sm_90 --occupancy=40 -o %t 2>&1 | FileCheck %s --check-prefix=OCC
// RUN: not tessera-tileir-translate %s --arch=sm_90 --num-cta-in-cga=3 -o %t 2>&1 | FileCheck %s --check-prefix=CGA
// RUN: not tessera-tileir-translate %s --arch=sm_86 --num-cta-in-cga=2 -o %t 2>&1 | FileCheck %s --check-prefix=AMPERE
// RUN: not tessera-tileir-translate %s --arch=sm_70 --occupancy=2 -o %t 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not tessera-tileir-translate %s --occupancy=2 -o %t 2>&1 | FileCheck %s --check-prefix=NOARCH
// RUN: not tessera-tileir-translate %s --arch=sm_90 --allow-tma=maybe -o %t 2>&1 | FileCheck %s --check-prefix=TMA
// RUN: not tessera-tileir-translate %s --arch=sm_90 --num-worker-warps=6 -o %t 2>&1 | FileCheck %s --check-prefix=WARPS

// Hints out of their ranges, clusters where the architecture has none, and an architecture Tile IR
// does not know are errors on the kernel; nothing is written.

// OCC: error: tileir: kernel 'copy': occupancy 40: expected 1 to 32
// CGA: error: tileir: kernel 'copy': num_cta_in_cga 3: expected a power of two up to 16
// AMPERE: error: tileir: kernel 'copy': num_cta_in_cga 2 on sm_86, which has no clusters: expected 1
// ARCH: error: tileir: kernel 'copy': optimization hints for architecture 'sm_70', which CUDA Tile IR does not know
// NOARCH: error: tileir: kernel 'copy': optimization hints for architecture '', which CUDA Tile IR does not know
// TMA: --allow-tma takes true or false, not 'maybe'
// WARPS: error: tileir: kernel 'copy': num_worker_warps_per_cta 6: expected 4 or 8
module {
  func.func @copy(%out: memref<?xf32, strided<[1], offset: ?>>, %a: memref<?xf32, strided<[1], offset: ?>>) attributes {tile.kernel} {
    %x = tile.program_id 0
    %t = tile.load %a[%x] : memref<?xf32, strided<[1], offset: ?>> -> tensor<128xf32>
    tile.store %t, %out[%x] : tensor<128xf32>, memref<?xf32, strided<[1], offset: ?>>
    return
  }
}
