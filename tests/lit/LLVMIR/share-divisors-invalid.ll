; RUN: not tessera-llvm-opt %s -passes='tessera-share-divisors<kernel=missing>' 2>&1 | FileCheck %s
; RUN: not tessera-llvm-opt %s -passes='tessera-share-divisors' 2>&1 | FileCheck %s --check-prefix=NOKERNEL
; RUN: not tessera-llvm-opt %s -passes='tessera-share-divisors<kernel=k;chunk=8>' 2>&1 | FileCheck %s --check-prefix=UNKNOWN

; CHECK: error: tessera-share-divisors: no function 'missing' with a body in the module
; NOKERNEL: error: tessera-share-divisors: expects kernel=<symbol>
; UNKNOWN: error: tessera-share-divisors: unknown parameter 'chunk'
declare void @k(ptr)
