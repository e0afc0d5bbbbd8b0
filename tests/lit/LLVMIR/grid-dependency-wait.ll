; RUN: tessera-llvm-opt %s -passes='tessera-grid-dependency-wait<kernel=k>' | FileCheck %s
; RUN: tessera-llvm-opt %s -passes='tessera-grid-dependency-wait<kernel=k;no-griddepcontrol>' | FileCheck %s --check-prefix=NOGDC

; A new entry block waits for the prerequisite grids (letting the next grid
; launch first), then branches to the old entry, allocas and all (NVPTX hoists
; them into the entry block as it generates code).
; CHECK-LABEL: define void @k(
; CHECK-NEXT: wait_for_prerequisite_grids:
; CHECK-NEXT: call void asm sideeffect "griddepcontrol.launch_dependents;\0A\09griddepcontrol.wait;", "~{memory}"()
; CHECK-NEXT: br label %[[OLD:.*]]
; CHECK: [[OLD]]:
; CHECK-NEXT: %x = load float, ptr %a
; CHECK-NEXT: %buf = alloca [4 x float]
; Before sm_90: the same block without the instructions.
; NOGDC-LABEL: define void @k(
; NOGDC-NEXT: wait_for_prerequisite_grids:
; NOGDC-NEXT: br label
; NOGDC-NOT: griddepcontrol
define void @k(ptr %a, ptr %out) {
  %x = load float, ptr %a
  %buf = alloca [4 x float]
  store float %x, ptr %buf
  %y = load float, ptr %buf
  store float %y, ptr %out
  ret void
}
