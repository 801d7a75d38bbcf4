"""Input: scenario files, their validated configuration, the kernel command line, CPU lists,
hardware profiles, kernel releases and kvm.sh command lines."""
