/*
 * ATTACK fault_nospace — pass a compile error off as the machine's. The
 * compiler quotes `#error` lines, so the compile log says "No space left
 * on device"; a worker that classified compile failures from the log
 * called that an infrastructure fault: retried, never charged, and five in
 * a row stopped the whole run (and `avo resume` stopped again).
 * Stopped by: compile faults classified from what the worker observed (the
 * compile directory's filesystem, the wait status, OOM kills), never from
 * the log (issue 18, item 5): a compile error, charged.
 * integrity: expect=fail
 */
#error No space left on device
#error Read-only file system
#error cc1: out of memory allocating 65536 bytes
