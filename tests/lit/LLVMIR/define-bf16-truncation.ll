; RUN: tessera-llvm-opt %s -passes=tessera-define-bf16-truncation | FileCheck %s
; RUN: tessera-llvm-opt %s -passes=tessera-define-bf16-truncation,tessera-define-bf16-truncation | FileCheck %s

; __truncsfbf2 rounds to nearest even by adding 0x7fff plus the lowest kept
; bit, and makes a NaN quiet (0x40 in the upper half); a second run leaves the
; definition alone.
; CHECK-LABEL: define bfloat @__truncsfbf2(float %0)
; CHECK-NEXT: entry:
; CHECK-NEXT: %[[X:.*]] = bitcast float %0 to i32
; CHECK-NEXT: %[[HIGH:.*]] = lshr i32 %[[X]], 16
; CHECK-NEXT: %[[LOW:.*]] = and i32 %[[HIGH]], 1
; CHECK-NEXT: %[[BIAS:.*]] = add i32 %[[LOW]], 32767
; CHECK-NEXT: %[[SUM:.*]] = add i32 %[[X]], %[[BIAS]]
; CHECK-NEXT: %[[ROUNDED:.*]] = lshr i32 %[[SUM]], 16
; CHECK-NEXT: %[[ABS:.*]] = and i32 %[[X]], 2147483647
; CHECK-NEXT: %[[NAN:.*]] = icmp ugt i32 %[[ABS]], 2139095040
; CHECK-NEXT: %[[QUIET:.*]] = or i32 %[[HIGH]], 64
; CHECK-NEXT: %[[BITS:.*]] = select i1 %[[NAN]], i32 %[[QUIET]], i32 %[[ROUNDED]]
; CHECK-NEXT: %[[H:.*]] = trunc i32 %[[BITS]] to i16
; CHECK-NEXT: %[[R:.*]] = bitcast i16 %[[H]] to bfloat
; CHECK-NEXT: ret bfloat %[[R]]
; CHECK-NOT: define
define void @k() {
  ret void
}
