// RUN: not tessera-opt %s -llvm-load-cache-hints=policy=evict_sometimes 2>&1 | FileCheck %s
// RUN: not tessera-opt %s -llvm-load-cache-hints=reduction-policy=sometimes 2>&1 | FileCheck %s --check-prefix=REDUCTION

// CHECK: llvm-load-cache-hints: unknown policy 'evict_sometimes' (expected evict_last, evict_first or evict_normal)
// REDUCTION: llvm-load-cache-hints: unknown reduction-policy 'sometimes' (expected evict_first, evict_last, evict_normal or none)
llvm.func @kernel(%a: !llvm.ptr) attributes {tile.kernel} {
  llvm.return
}
