; RUN: tessera-llvm-opt %s -passes='tessera-packed-wrapper<kernel=k>' | FileCheck %s

; k_packed(argv) loads parameter i of k from the pointer in argv[i] and calls k.
; CHECK-LABEL: define void @k_packed(ptr %0)
; CHECK-NEXT: entry:
; CHECK-NEXT: %[[S0:.*]] = getelementptr ptr, ptr %0, i64 0
; CHECK-NEXT: %[[P0:.*]] = load ptr, ptr %[[S0]]
; CHECK-NEXT: %[[A0:.*]] = load ptr, ptr %[[P0]]
; CHECK-NEXT: %[[S1:.*]] = getelementptr ptr, ptr %0, i64 1
; CHECK-NEXT: %[[P1:.*]] = load ptr, ptr %[[S1]]
; CHECK-NEXT: %[[A1:.*]] = load i32, ptr %[[P1]]
; CHECK-NEXT: call void @k(ptr %[[A0]], i32 %[[A1]])
; CHECK-NEXT: ret void
define void @k(ptr %a, i32 %n) {
  ret void
}
