; RUN: not tessera-llvm-opt %s -passes='tessera-launch-comments<ctas-per-program=two>' 2>&1 | FileCheck %s
; RUN: not tessera-llvm-opt %s -passes='tessera-launch-comments<kernel=k>' 2>&1 | FileCheck %s --check-prefix=KERNEL

; CHECK: error: tessera-launch-comments: 'ctas-per-program' must be an integer from 0 to 2^31 - 1, got 'two'
; KERNEL: error: tessera-launch-comments: unknown parameter 'kernel'
define void @k() {
  ret void
}
