"""The real-kernel twin: a scenario run in Linux under QEMU, beside its simulation.

``python -m rcusim kernel SCENARIO`` maps each variant of a scenario onto a kernel image
(:mod:`rcusim.twin.image`) and a plan of what the guest runs (:mod:`rcusim.twin.plan`,
where whatever cannot be mapped is refused), boots the image under QEMU
(:mod:`rcusim.twin.qemu`) with an initramfs of busybox, the image's modules and rcusim's
load helper (:mod:`rcusim.twin.initramfs`), and turns what the guest wrote (the helper's
calls, the trace buffer, the kernel's log) into the records and metrics a simulated run
has (:mod:`rcusim.twin.collect`), so ``compare`` and the plots read both alike.
"""
