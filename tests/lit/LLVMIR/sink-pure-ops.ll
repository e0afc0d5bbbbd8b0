; RUN: tessera-llvm-opt %s -passes='tessera-sink-pure-ops<kernel=k>,tessera-sink-pure-ops<kernel=k2>' | FileCheck %s

; Each product moves down to just before its store (its first use), so that
; one element's work is live at a time; loads and stores keep their order.
; CHECK-LABEL: define void @k(
; CHECK: %a = load float
; CHECK: %b = load float
; CHECK-NEXT: %x = fmul float %a, %scale
; CHECK-NEXT: store float %x, ptr %out
; CHECK-NEXT: %po = getelementptr float, ptr %out, i64 1
; CHECK-NEXT: %y = fmul float %b, %scale
; CHECK-NEXT: store float %y, ptr %po
define void @k(ptr %in, ptr %out, float %scale) {
  %a = load float, ptr %in
  %pb = getelementptr float, ptr %in, i64 1
  %b = load float, ptr %pb
  %x = fmul float %a, %scale
  %y = fmul float %b, %scale
  store float %x, ptr %out
  %po = getelementptr float, ptr %out, i64 1
  store float %y, ptr %po
  ret void
}

; A value used only in another block moves to just before its block's
; terminator; an inline asm call stays where it is.
; CHECK-LABEL: define void @k2(
; CHECK: %asm = call float asm
; CHECK-NEXT: store float %asm
; CHECK-NEXT: %z = fadd float %v, 1.0
; CHECK-NEXT: br label %next
define void @k2(ptr %out, float %v) {
  %z = fadd float %v, 1.0
  %asm = call float asm "mov.f32 $0, 0f00000000;", "=f"()
  store float %asm, ptr %out
  br label %next
next:
  store float %z, ptr %out
  ret void
}
