; RUN: not tessera-llvm-opt %s -passes='tessera-mark-read-only-noalias<kernel=kernel>' 2>&1 | FileCheck %s

; CHECK: error: tessera-mark-read-only-noalias: no function 'kernel' with a body in the module
define void @k(ptr readonly %a) {
  ret void
}
