; RUN: not tessera-llvm-opt %s -passes='tessera-stack-checks<kernel=k>' 2>&1 | FileCheck %s

; The pass takes no parameters.
; CHECK: error: tessera-stack-checks: unknown parameter 'kernel'
define void @k() {
  ret void
}
