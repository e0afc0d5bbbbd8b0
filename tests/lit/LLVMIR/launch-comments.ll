; RUN: tessera-llvm-opt %s -passes='tessera-launch-comments<ctas-per-program=2;programs-per-cta=1;dynamic-shared-bytes=65536>' | FileCheck %s
; RUN: tessera-llvm-opt %s -passes='tessera-launch-comments' | FileCheck %s --check-prefix=NONE

; One comment line per value other than one program per CTA and no dynamic
; shared memory, appended to the module's inline asm (NVPTX copies it into the
; PTX).
; CHECK: module asm "// tessera.ctas_per_program 2"
; CHECK-NEXT: module asm "// tessera.dynamic_shared_bytes 65536"
; CHECK-NOT: programs_per_cta
; NONE-NOT: module asm
define void @k() {
  ret void
}
