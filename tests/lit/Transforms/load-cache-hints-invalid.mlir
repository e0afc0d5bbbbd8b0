// RUN: not tessera-opt %s -tile-load-cache-hints=policy=evict_sometimes 2>&1 | FileCheck %s

// CHECK: tile-load-cache-hints: unknown policy 'evict_sometimes' (expected evict_last, evict_first or evict_normal)
llvm.func @kernel(%a: !llvm.ptr) attributes {tile.kernel} {
  llvm.return
}
