; RUN: not tessera-llvm-opt %s -passes='tessera-mark-grid-waits-convergent<kernel=k>' 2>&1 | FileCheck %s
; RUN: not tessera-llvm-opt %s -passes='tessera-mark-grid-waits-convergent<kernel=k;threads=2>' 2>&1 | FileCheck %s --check-prefix=PARAM

; CHECK: error: tessera-mark-grid-waits-convergent: no function 'k' with a body in the module
; PARAM: error: tessera-mark-grid-waits-convergent: unknown parameter 'threads'
declare void @k(ptr)
