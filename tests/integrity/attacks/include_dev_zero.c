/*
 * ATTACK include_dev_zero — exhaust the compiler's memory. `#include
 * "/dev/zero"` makes cc1 read an endless file into memory; without a
 * memory limit on the compiler it grows until the compile deadline or the
 * host runs out (eval/cpu/cpu.c: spawn_capture sets only RLIMIT_CPU).
 * The test runs this one under an outer address-space cap and measures the
 * largest resident size in the process tree.
 * Stopped by: memory and time limits on the compiler, no absolute includes
 * (issue 10, item 4).
 * integrity: expect=fail
 */
#include "/dev/zero"
