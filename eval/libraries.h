/*
 * libraries.h — which libraries a candidate process loaded, seen from
 * outside (docs/threat-model.md, "Libraries a candidate loads").
 *
 * The judge is trusted and the candidate is not, so the candidate's word is
 * never asked: the judge reads /proc/PID/maps of the candidate process
 * after its timed calls and lists every file mapped executable there that
 * is neither
 *   - one the harness itself maps (the judge's own executable mappings just
 *     before it forks the candidate, by device and inode: libc, libm, the
 *     loader and every library the avo binary links), nor
 *   - the candidate's own object (a mapped file with exactly its bytes,
 *     read through /proc/PID/map_files; where that cannot be opened, a
 *     file named kernel.so), nor
 *   - the compiler's runtime under the system's library directories
 *     (libgcc_s, libgomp, libatomic, libstdc++, libquadmath, libmvec).
 * What remains is code the candidate brought in: a vendor library it
 * dlopened (OpenBLAS), a copy of one, a memfd.  The vdso and anonymous
 * memory have no file and are never listed.
 *
 * Invariant: nothing here runs in the candidate or trusts its bytes; the
 * baseline is taken in the judge before the candidate exists.
 */
#ifndef AVO_LIBRARIES_H
#define AVO_LIBRARIES_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

/* The files a process maps executable, by identity. */
typedef struct avo_libraries_baseline {
    size_t n;
    struct avo_mapped_id {
        dev_t dev;
        ino_t ino;
    } files[256];
} avo_libraries_baseline;

/* Fill *b from this process's own /proc/self/maps.  0 or a negative code. */
int avo_libraries_baseline_take(avo_libraries_baseline *b);

/*
 * The libraries process pid maps beyond baseline b and its own object
 * (the file behind own_fd, compared by content): a new JSON array of their
 * paths (caller owns), sorted, each once; NULL with err filled when the
 * mappings cannot be read (no /proc, no permission).  maps_fd, when >= 0,
 * is pid's /proc/PID/maps opened earlier (by the process itself, while it
 * could: the check is at open), read instead of opening it now.
 */
json_t *avo_libraries_observe(pid_t pid, int maps_fd, const avo_libraries_baseline *b, int own_fd,
                              char *err, size_t errlen);

/*
 * Whether the libraries `found` (an array of paths) pass `policy`: NULL or
 * "allow" (any), "forbid" (none), or an array of file-name prefixes
 * ("libopenblas" allows libopenblas.so.0 wherever it is).  Returns 1, or 0
 * with the refused paths in why, comma-separated (cut at len).
 */
int avo_libraries_allowed(const json_t *found, const json_t *policy, char *why, size_t len);

/* Whether policy is one avo_libraries_allowed understands; 0 with why. */
int avo_libraries_policy_valid(const json_t *policy, char *why, size_t len);

#endif
