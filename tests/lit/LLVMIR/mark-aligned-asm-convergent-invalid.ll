; RUN: not tessera-llvm-opt %s -passes='tessera-mark-aligned-asm-convergent<kernel=k>' 2>&1 | FileCheck %s
; RUN: not tessera-llvm-opt %s -passes='tessera-mark-aligned-asm-convergent<kernel=k;threads=2>' 2>&1 | FileCheck %s --check-prefix=PARAM

; CHECK: error: tessera-mark-aligned-asm-convergent: no function 'k' with a body in the module
; PARAM: error: tessera-mark-aligned-asm-convergent: unknown parameter 'threads'
declare void @k(ptr)
