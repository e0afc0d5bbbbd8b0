; RUN: tessera-llvm-opt %s -passes='tessera-grid-dependency-wait<kernel=k>' | FileCheck %s
; RUN: tessera-llvm-opt %s -passes='tessera-grid-dependency-wait<kernel=k;no-griddepcontrol>' | FileCheck %s --check-prefix=NOGDC

; A kernel that waits itself (tile.grid_dependency_wait after the copies of
; frozen tensors): the new entry block only lets the next grid launch, and
; the kernel's own wait ends its block, so that the load after it (through a
; parameter the next pass may mark noalias) stays after it.
; CHECK-LABEL: define void @k(
; CHECK-NEXT: wait_for_prerequisite_grids:
; CHECK-NEXT: call void asm sideeffect "griddepcontrol.launch_dependents;", "~{memory}"()
; CHECK-NEXT: br label %[[OLD:.*]]
; CHECK: [[OLD]]:
; CHECK-NEXT: %w = load float, ptr %weights
; CHECK-NEXT: call void asm sideeffect "griddepcontrol.wait;", "~{memory}"()
; CHECK-NEXT: br label %after_grid_dependency_wait
; CHECK: after_grid_dependency_wait:
; CHECK-NEXT: %x = load float, ptr %a
; Before sm_90 the kernel's own wait goes too.
; NOGDC-LABEL: define void @k(
; NOGDC-NOT: griddepcontrol
; NOGDC: %x = load float, ptr %a
define void @k(ptr %weights, ptr %a, ptr %out) {
  %w = load float, ptr %weights
  call void asm sideeffect "griddepcontrol.wait;", "~{memory}"()
  %x = load float, ptr %a
  %y = fadd float %w, %x
  store float %y, ptr %out
  ret void
}
