; RUN: not tessera-llvm-opt %s -passes='tessera-grid-dependency-wait<kernel=k>' 2>&1 | FileCheck %s
; RUN: not tessera-llvm-opt %s -passes='tessera-grid-dependency-wait<kernel=k;griddepcontrol=1>' 2>&1 | FileCheck %s --check-prefix=VALUE

; CHECK: error: tessera-grid-dependency-wait: no function 'k' with a body in the module
; VALUE: error: tessera-grid-dependency-wait: unknown parameter 'griddepcontrol'
declare void @k(ptr)
