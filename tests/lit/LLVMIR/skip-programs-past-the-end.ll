; RUN: tessera-llvm-opt %s -passes='tessera-grid-dependency-wait<kernel=k>,tessera-skip-programs-past-the-end<kernel=k;threads-per-program=32>' | FileCheck %s

; Programs of 32 threads share a CTA: program ctaid.x * (ntid.x / 32) +
; tid.x / 32, computed before the wait, at or past the program count (the last
; parameter) returns right after the wait.
; CHECK-LABEL: define void @k(ptr %a, i32 %programs)
; CHECK-NEXT: wait_for_prerequisite_grids:
; CHECK-DAG: %[[CTA:.*]] = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
; CHECK-DAG: %[[NTID:.*]] = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
; CHECK-DAG: %[[TID:.*]] = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
; CHECK-DAG: %[[T:.*]] = lshr i32 %[[TID]], 5
; CHECK-DAG: %[[PER:.*]] = lshr i32 %[[NTID]], 5
; CHECK: %[[BASE:.*]] = mul i32 %[[CTA]], %[[PER]]
; CHECK-NEXT: %[[P:.*]] = add i32 %[[BASE]], %[[T]]
; CHECK-NEXT: %[[IN:.*]] = icmp ult i32 %[[P]], %programs
; CHECK-NEXT: call void asm sideeffect "griddepcontrol.launch_dependents
; CHECK-NEXT: br i1 %[[IN]], label %[[WORK:.*]], label %program_past_the_end
; CHECK: [[WORK]]:
; CHECK-NEXT: store float 0.000000e+00, ptr %a
; CHECK: program_past_the_end:
; CHECK-NEXT: ret void
define void @k(ptr %a, i32 %programs) {
  store float 0.0, ptr %a
  ret void
}
