; RUN: tessera-llvm-opt %s -passes='tessera-mark-aligned-asm-convergent<kernel=k>' | FileCheck %s
; RUN: tessera-llvm-opt %s -passes='tessera-mark-aligned-asm-convergent<kernel=k>,default<O3>' | FileCheck %s --check-prefix=O3
; RUN: tessera-llvm-opt %s -passes='default<O3>' | FileCheck %s --check-prefix=UNMARKED

; Aligned PTX in inline asm (a named barrier, wgmma's commit, setmaxnreg)
; becomes a convergent call; other inline asm, and other functions, are left
; alone.
; CHECK-LABEL: define void @k(
; CHECK: call void asm sideeffect "bar.sync 1, 128;", "~{memory}"() #[[CONV:[0-9]+]]
; CHECK: call void asm sideeffect "mbarrier.arrive.shared::cta.b64 _, [$0];", "r,~{memory}"(i32 %bar){{$}}
; CHECK: call void asm sideeffect "wgmma.commit_group.sync.aligned;", "~{memory}"() #[[CONV]]
; CHECK: call void asm sideeffect "setmaxnreg.inc.sync.aligned.u32 232;", "~{memory}"() #[[CONV]]
; CHECK-LABEL: define void @other(
; CHECK: call void asm sideeffect "bar.sync 1, 128;", "~{memory}"(){{$}}
; CHECK: attributes #[[CONV]] = { convergent }
; The optimizer then keeps the barrier between the leader's two branches once,
; in the join: unmarked, jump threading copies it into both arms (the lanes of
; the leader's warp would meet it at two instructions, and hang).
; O3-LABEL: define void @k(
; O3-COUNT-1: bar.sync 1, 128;
; O3-NOT: bar.sync 1, 128;
; O3-LABEL: define void @other(
; UNMARKED-LABEL: define void @k(
; UNMARKED-COUNT-2: bar.sync 1, 128;
; UNMARKED-LABEL: define void @other(
define void @k(i32 %lane, ptr %out, i32 %bar) {
entry:
  %leader = icmp eq i32 %lane, 0
  br i1 %leader, label %store, label %join
store:
  store float 1.0, ptr %out
  br label %join
join:
  call void asm sideeffect "bar.sync 1, 128;", "~{memory}"()
  br i1 %leader, label %release, label %done
release:
  call void asm sideeffect "mbarrier.arrive.shared::cta.b64 _, [$0];", "r,~{memory}"(i32 %bar)
  br label %done
done:
  call void asm sideeffect "wgmma.commit_group.sync.aligned;", "~{memory}"()
  call void asm sideeffect "setmaxnreg.inc.sync.aligned.u32 232;", "~{memory}"()
  ret void
}
define void @other() {
  call void asm sideeffect "bar.sync 1, 128;", "~{memory}"()
  ret void
}
