; RUN: tessera-llvm-opt %s -passes='tessera-mark-grid-waits-convergent<kernel=k>' | FileCheck %s
; RUN: tessera-llvm-opt %s -passes='tessera-mark-grid-waits-convergent<kernel=k>,default<O3>' | FileCheck %s --check-prefix=O3

; The kernel's own wait (tile.grid_dependency_wait's inline asm) becomes a
; convergent call; other inline asm, and other functions, are left alone.
; CHECK-LABEL: define void @k(
; CHECK: call void asm sideeffect "griddepcontrol.wait;", "~{memory}"() #[[CONV:[0-9]+]]
; CHECK: call void asm sideeffect "membar.gl;", "~{memory}"(){{$}}
; CHECK-LABEL: define void @other(
; CHECK: call void asm sideeffect "griddepcontrol.wait;", "~{memory}"(){{$}}
; CHECK: attributes #[[CONV]] = { convergent }
; The optimizer then keeps one wait, in the join after the early load's block
; (without the mark, jump threading copies it into both arms of the length
; test, the load's included).
; O3-LABEL: define void @k(
; O3: early:
; O3-NEXT: load float, ptr %w
; O3-NEXT: br label %join
; O3: join:
; O3: call void asm sideeffect "griddepcontrol.wait;"
; O3-NOT: griddepcontrol.wait
; O3-LABEL: define void @other(
define void @k(ptr %w, ptr %a, ptr %out, i64 %n) {
entry:
  %ok = icmp sgt i64 %n, 1
  br i1 %ok, label %early, label %join
early:
  %w0 = load float, ptr %w
  br label %join
join:
  %wv = phi float [ %w0, %early ], [ 0.0, %entry ]
  call void asm sideeffect "griddepcontrol.wait;", "~{memory}"()
  br i1 %ok, label %peeled, label %done
peeled:
  %x = load float, ptr %a
  %y = fmul float %wv, %x
  store float %y, ptr %out
  br label %done
done:
  call void asm sideeffect "membar.gl;", "~{memory}"()
  ret void
}
define void @other() {
  call void asm sideeffect "griddepcontrol.wait;", "~{memory}"()
  ret void
}
