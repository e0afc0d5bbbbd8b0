; RUN: not tessera-llvm-opt %s -passes='tessera-skip-programs-past-the-end<kernel=k;threads-per-program=32>' 2>&1 | FileCheck %s
; RUN: not tessera-llvm-opt %s -passes='tessera-grid-dependency-wait<kernel=k2>,tessera-skip-programs-past-the-end<kernel=k2;threads-per-program=32>' 2>&1 | FileCheck %s --check-prefix=COUNT
; RUN: not tessera-llvm-opt %s -passes='tessera-grid-dependency-wait<kernel=k>,tessera-skip-programs-past-the-end<kernel=k;threads-per-program=48>' 2>&1 | FileCheck %s --check-prefix=POW2
; RUN: not tessera-llvm-opt %s -passes='tessera-skip-programs-past-the-end<kernel=k>' 2>&1 | FileCheck %s --check-prefix=MISSING
; RUN: not tessera-llvm-opt %s -passes='tessera-skip-programs-past-the-end<kernel=k;threads-per-program=-4>' 2>&1 | FileCheck %s --check-prefix=NEGATIVE

; Without tessera-grid-dependency-wait's entry block first, or without the
; program count as the last parameter, the kernel is rejected and unchanged.
; CHECK: error: tessera-skip-programs-past-the-end: kernel 'k' needs an entry block that ends in an unconditional branch (run tessera-grid-dependency-wait first) and the program count as its last parameter (i32)
; COUNT: error: tessera-skip-programs-past-the-end: kernel 'k2' needs an entry block
; POW2: error: tessera-skip-programs-past-the-end: threads-per-program must be a power of two, got 48
; MISSING: error: tessera-skip-programs-past-the-end: expects threads-per-program=<T>
; NEGATIVE: error: tessera-skip-programs-past-the-end: 'threads-per-program' must be an integer from 0 to 2^31 - 1, got '-4'
define void @k(ptr %a, i32 %programs) {
  store float 0.0, ptr %a
  ret void
}

define void @k2(ptr %a, i64 %programs) {
  store float 0.0, ptr %a
  ret void
}
