; RUN: tessera-llvm-opt %s -passes='tessera-widen-bf16-pairs<kernel=k>' | FileCheck %s

; A bf16 element of a vector of 32-bit words, widened to f32, is taken from its
; word: the lower element shifted up by 16, the upper one masked. The bitcast
; and the extracted bf16 values go once unused; other extensions stay.
; CHECK-LABEL: define void @k(
; CHECK: %w = load <4 x i32>
; CHECK-NEXT: %[[W0:.*]] = extractelement <4 x i32> %w, i64 0
; CHECK-NEXT: %[[LO:.*]] = shl i32 %[[W0]], 16
; CHECK-NEXT: %[[F0:.*]] = bitcast i32 %[[LO]] to float
; CHECK-NEXT: %[[W1:.*]] = extractelement <4 x i32> %w, i64 1
; CHECK-NEXT: %[[HI:.*]] = and i32 %[[W1]], -65536
; CHECK-NEXT: %[[F3:.*]] = bitcast i32 %[[HI]] to float
; CHECK-NEXT: fadd float %[[F0]], %[[F3]]
; CHECK-NOT: bitcast <4 x i32>
; CHECK: %[[X:.*]] = fpext bfloat %x to float
; CHECK: ret void
define void @k(ptr %in, ptr %out, bfloat %x) {
  %w = load <4 x i32>, ptr %in, align 16
  %pairs = bitcast <4 x i32> %w to <8 x bfloat>
  %e0 = extractelement <8 x bfloat> %pairs, i64 0
  %e3 = extractelement <8 x bfloat> %pairs, i64 3
  %f0 = fpext bfloat %e0 to float
  %f3 = fpext bfloat %e3 to float
  %s = fadd float %f0, %f3
  store float %s, ptr %out
  %fx = fpext bfloat %x to float
  %p = getelementptr float, ptr %out, i64 1
  store float %fx, ptr %p
  ret void
}
