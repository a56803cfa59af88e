/*
 * emu_common.h — what the CPU emulator's NVRTC shim and driver agree on:
 * where host-compiled kernel modules live and how a cubin names its module.
 *
 * The shim compiles a program twice: with the real NVRTC (whose cubin, log,
 * resource usage and errors avo sees unchanged) and with the host C++
 * compiler into <dir>/<id>.so, where <id> is the git blob id of the cubin's
 * ELF bytes.  The driver, handed that cubin by cuModuleLoadDataEx, computes
 * the same id and loads the module.
 */
#ifndef AVO_EMU_COMMON_H
#define AVO_EMU_COMMON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The directory of the host modules ($AVO_EMU_DIR, else
 * $TMPDIR/avo-emu-<uid>), created if missing.  Returns 0 or -1. */
int avo_emu_dir(char *buf, size_t len);

/* Bytes an ELF image spans (its headers, sections and tables), or 0 when
 * `image` is not a 64-bit ELF. */
size_t avo_emu_elf_size(const void *image);

/* Path of the host module for a cubin of `len` ELF bytes into buf. */
int avo_emu_module_path(const void *cubin, size_t len, char *buf, size_t buflen);

/* Whether the host module at `path` exists and is newer than every header
 * in include_dir (the emulator's own, which every module is built with). */
int avo_emu_module_current(const char *path, const char *include_dir);

#ifdef __cplusplus
}
#endif
#endif
