; RUN: tessera-llvm-opt %s -passes='tessera-mark-read-only-noalias<kernel=k>' | FileCheck %s

; The pointer parameters the kernel only reads (readonly or readnone, as the
; optimizer infers) become noalias; the one it writes, and non-pointers, stay.
; CHECK-LABEL: define void @k(ptr noalias readonly %a, ptr noalias readnone %b, ptr %out, i32 %n)
define void @k(ptr readonly %a, ptr readnone %b, ptr %out, i32 %n) {
  %x = load float, ptr %a
  store float %x, ptr %out
  ret void
}

; CHECK-LABEL: define void @helper(ptr readonly %a)
define void @helper(ptr readonly %a) {
  ret void
}
