/*
 * slurm.h — remote workers as a Slurm job step, through Slurm's own tools.
 *
 * The engine runs one `srun` (in its own process group, with the parent-death
 * signal set to SIGTERM, so the step ends with the engine even on kill -9)
 * whose tasks are `avo worker --connect ...`; the workers dial the engine
 * back (scale/transport.h).  Stopping sends srun SIGTERM (srun then ends the
 * step's tasks), waits, then `scancel --name` the job, then SIGKILL.
 * The secret travels in srun's environment (AVO_WORKER_SECRET), which srun
 * exports to the tasks; it never appears on a command line.
 */
#ifndef AVO_SLURM_H
#define AVO_SLURM_H

#include <stddef.h>
#include <sys/types.h>

typedef struct avo_slurm avo_slurm;

/*
 * Start `srun --job-name=NAME --ntasks=N --kill-on-bad-exit=0 --no-kill
 * OPTIONS WORKER_ARGV...` through /bin/sh (a failed node ends its own tasks,
 * not the step) (OPTIONS is shell text the user wrote,
 * so quoting works as in a shell; worker_argv is quoted here), with
 * AVO_WORKER_SECRET=secret added to its environment and stdout/stderr
 * appended to log_path.  Returns 0 or a negative code.
 */
int avo_slurm_start(avo_slurm **ret, const char *options, int ntasks, const char *job_name,
                    char *const *worker_argv, const char *secret, const char *log_path, char *err,
                    size_t errlen);

/* 1 while srun runs; 0 once it has exited, with its wait status described
 * in `what` ("srun exited with status 1"). */
int avo_slurm_running(avo_slurm *s, char *what, size_t len);

/* srun's process id (0 after it was reaped). */
pid_t avo_slurm_pid(const avo_slurm *s);

/* End the step: up to grace_s for srun to end by itself (its workers were
 * told goodbye), then SIGTERM and up to grace_s more, scancel the job by
 * name, SIGKILL.  Idempotent. */
void avo_slurm_stop(avo_slurm *s, double grace_s);

/* Stop (no grace) and free; accepts NULL. */
void avo_slurm_free(avo_slurm *s);

#endif
