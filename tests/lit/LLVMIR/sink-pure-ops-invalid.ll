; RUN: not tessera-llvm-opt %s -passes='tessera-sink-pure-ops<kernel=nothere>' 2>&1 | FileCheck %s
; RUN: not tessera-llvm-opt %s -passes='tessera-sink-pure-ops<griddepcontrol>' 2>&1 | FileCheck %s --check-prefix=FLAG

; CHECK: error: tessera-sink-pure-ops: no function 'nothere' with a body in the module
; FLAG: error: tessera-sink-pure-ops: unknown parameter 'griddepcontrol'
define void @k() {
  ret void
}
