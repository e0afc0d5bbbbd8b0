; RUN: not tessera-llvm-opt %s -passes='tessera-packed-wrapper<kernel=k>' 2>&1 | FileCheck %s
; RUN: not tessera-llvm-opt %s -passes='tessera-packed-wrapper<kernel=absent>' 2>&1 | FileCheck %s --check-prefix=ABSENT

; A module that has k_packed already is left alone.
; CHECK: error: tessera-packed-wrapper: the module already has 'k_packed'
; ABSENT: error: tessera-packed-wrapper: no function 'absent' with a body in the module
define void @k(ptr %a) {
  ret void
}

define void @k_packed(ptr %argv) {
  ret void
}
