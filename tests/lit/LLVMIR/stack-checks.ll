; RUN: tessera-llvm-opt %s -passes=tessera-stack-checks | FileCheck %s

; Every defined function reports its frame and probes its stack; declarations
; are left alone.
; CHECK: define void @k() #[[ATTRS:[0-9]+]]
; CHECK: define void @helper() #[[ATTRS]]
; CHECK: declare float @expf(float){{$}}
; CHECK: attributes #[[ATTRS]] = { "probe-stack"="inline-asm" "warn-stack-size"="0" }
define void @k() {
  call void @helper()
  ret void
}

define void @helper() {
  ret void
}

declare float @expf(float)
