; RUN: not tessera-llvm-opt %s -passes='tessera-widen-bf16-pairs<kernel=k>' 2>&1 | FileCheck %s
; RUN: not tessera-llvm-opt %s -passes='tessera-widen-bf16-pairs<kernel=>' 2>&1 | FileCheck %s --check-prefix=EMPTY

; A kernel that is only declared has no instructions to rewrite.
; CHECK: error: tessera-widen-bf16-pairs: no function 'k' with a body in the module
; EMPTY: error: tessera-widen-bf16-pairs: kernel= needs the kernel's symbol
declare void @k(ptr)
