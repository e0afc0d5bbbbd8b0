; RUN: tessera-llvm-opt %s -passes='tessera-share-divisors<kernel=k>' | FileCheck %s

; Four IEEE divisions by one value in one block: one correctly rounded
; reciprocal and its range test at the first division, one test of the
; numerators' magnitudes, then per quotient a product and two fma (the refined
; quotient) or, when the test fails, the plain division; phis join them.
; CHECK-LABEL: define void @k(
; CHECK: %[[ABSB:.*]] = call float @llvm.fabs.f32(float %b)
; CHECK: %recip = fdiv float 1.000000e+00, %b
; CHECK-DAG: fcmp ole float %[[ABSB]], 0x4170000000000000
; CHECK-DAG: fcmp oge float %[[ABSB]], 0x3E70000000000000
; CHECK: call float @llvm.minnum.f32
; CHECK: call float @llvm.maximum.f32
; CHECK: br i1 %{{.*}}, label %[[FAST:.*]], label %[[SLOW:.*]]
; CHECK: [[FAST]]:
; CHECK-NEXT: %[[Q:.*]] = fmul float %a0, %recip
; CHECK-NEXT: %[[N:.*]] = fneg float %[[Q]]
; CHECK-NEXT: %[[R:.*]] = call float @llvm.fma.f32(float %[[N]], float %b, float %a0)
; CHECK-NEXT: %[[C:.*]] = call float @llvm.fma.f32(float %[[R]], float %recip, float %[[Q]])
; CHECK: [[SLOW]]:
; CHECK-NEXT: %[[D:.*]] = fdiv float %a0, %b
; CHECK: phi float [ %[[C]], %[[FAST]] ], [ %[[D]], %[[SLOW]] ]
; CHECK-COUNT-3: phi float
; CHECK-NOT: fdiv
; CHECK: ret void
define void @k(ptr %out, float %a0, float %a1, float %a2, float %a3, float %b) {
  %q0 = fdiv float %a0, %b
  %q1 = fdiv float %a1, %b
  %q2 = fdiv float %a2, %b
  %q3 = fdiv float %a3, %b
  store float %q0, ptr %out
  %p1 = getelementptr float, ptr %out, i64 1
  store float %q1, ptr %p1
  %p2 = getelementptr float, ptr %out, i64 2
  store float %q2, ptr %p2
  %p3 = getelementptr float, ptr %out, i64 3
  store float %q3, ptr %p3
  ret void
}

; Functions other than the kernel are left alone.
; CHECK-LABEL: define void @other(
; CHECK-COUNT-4: fdiv float
; CHECK-NOT: @llvm.fma
; CHECK: ret void
define void @other(ptr %out, float %a0, float %a1, float %a2, float %a3, float %b) {
  %q0 = fdiv float %a0, %b
  %q1 = fdiv float %a1, %b
  %q2 = fdiv float %a2, %b
  %q3 = fdiv float %a3, %b
  store float %q0, ptr %out
  store float %q1, ptr %out
  store float %q2, ptr %out
  store float %q3, ptr %out
  ret void
}
