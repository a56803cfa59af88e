/*
 * test_cache.c — the compile cache both backends share (eval/cache.h): the
 * one folder rule, entries checked by their checksum on every read (a
 * tampered, truncated or sum-less entry is deleted and reported, never
 * returned), and trimming by least recent use, per suffix, to
 * AVO_CACHE_MAX_MB.
 */
#include "eval/cache.h"

#include "core/avo.h"
#include "check.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/avo-test-cache-XXXXXX";

static int exists(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static void entry_path(const char *name, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", dir, name);
}

/* Insert `name` with `bytes` bytes and last use at `when` (seconds). */
static void insert_at(const char *name, size_t bytes, time_t when)
{
    char path[256];
    entry_path(name, path, sizeof path);
    char *data = malloc(bytes);
    memset(data, 'x', bytes);
    CHECK_INT(avo_cache_insert(path, data, bytes), 0);
    free(data);
    struct timespec t[2] = {{when, 0}, {when, 0}};
    CHECK_INT(utimensat(AT_FDCWD, path, t, 0), 0);
}

static void test_folder_rule(void)
{
    char *d;
    /* A job's cache_dir wins; the engine's .../cpu gives other backends a sibling. */
    CHECK_STR(d = avo_cache_dir("/c/avo/cpu", "cpu"), "/c/avo/cpu");
    free(d);
    CHECK_STR(d = avo_cache_dir("/c/avo/cpu", "cuda"), "/c/avo/cuda");
    free(d);
    CHECK_STR(d = avo_cache_dir("/c/mine", "cuda"), "/c/mine");
    free(d);
    /* Else $AVO_CACHE, $XDG_CACHE_HOME/avo, $HOME/.cache/avo, /tmp/avo-cache-<uid>. */
    setenv("AVO_CACHE", "/r", 1);
    setenv("XDG_CACHE_HOME", "/x", 1);
    setenv("HOME", "/h", 1);
    CHECK_STR(d = avo_cache_dir(NULL, "cpu"), "/r/cpu");
    free(d);
    CHECK_STR(d = avo_cache_dir("", "cuda"), "/r/cuda");
    free(d);
    unsetenv("AVO_CACHE");
    CHECK_STR(d = avo_cache_dir(NULL, "cuda"), "/x/avo/cuda");
    free(d);
    unsetenv("XDG_CACHE_HOME");
    CHECK_STR(d = avo_cache_dir(NULL, "cpu"), "/h/.cache/avo/cpu");
    free(d);
    unsetenv("HOME");
    char want[64];
    snprintf(want, sizeof want, "/tmp/avo-cache-%ld/cpu", (long)getuid());
    CHECK_STR(d = avo_cache_dir(NULL, "cpu"), want);
    free(d);
}

static void test_checked_reads(void)
{
    char path[256];
    entry_path("k1.json", path, sizeof path);
    const char text[] = "{\"cubin\": \"AAAA\"}";
    CHECK_INT(avo_cache_insert(path, text, strlen(text)), 0);
    CHECK(exists("k1.json.sum"));

    int repaired = 0;
    char *data = NULL;
    size_t len = 0;
    int fd = avo_cache_open(path, 1 << 20, &data, &len, &repaired);
    CHECK(fd >= 0);
    CHECK_INT(len, strlen(text));
    CHECK_STR(data, text);
    CHECK_INT(repaired, 0);
    free(data);
    if (fd >= 0)
        close(fd);

    /* One byte changed, same length: deleted with its sum, reported. */
    FILE *f = fopen(path, "r+");
    fseek(f, 12, SEEK_SET);
    fputc('B', f);
    fclose(f);
    data = NULL;
    CHECK_INT(avo_cache_open(path, 1 << 20, &data, &len, &repaired), -1);
    CHECK(data == NULL);
    CHECK_INT(repaired, 1);
    CHECK(!exists("k1.json") && !exists("k1.json.sum"));

    /* An entry without its sum (written before checksums), a truncated one
     * and one over the caller's bound are rebuilt too. */
    int wfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK_INT(avo_write_all(wfd, text, strlen(text)), 0);
    close(wfd);
    repaired = 0;
    CHECK_INT(avo_cache_open(path, 1 << 20, NULL, NULL, &repaired), -1);
    CHECK_INT(repaired, 1);
    CHECK(!exists("k1.json"));
    CHECK_INT(avo_cache_insert(path, text, strlen(text)), 0);
    CHECK_INT(truncate(path, 5), 0);
    repaired = 0;
    CHECK_INT(avo_cache_open(path, 1 << 20, NULL, NULL, &repaired), -1);
    CHECK_INT(repaired, 1);
    CHECK_INT(avo_cache_insert(path, text, strlen(text)), 0);
    repaired = 0;
    CHECK_INT(avo_cache_open(path, 4, NULL, NULL, &repaired), -1);
    CHECK_INT(repaired, 1);

    /* A miss is no repair. */
    repaired = 0;
    CHECK_INT(avo_cache_open(path, 1 << 20, NULL, NULL, &repaired), -1);
    CHECK_INT(repaired, 0);

    /* A hit marks the entry recently used. */
    insert_at("k2.so", 10, 1000);
    entry_path("k2.so", path, sizeof path);
    fd = avo_cache_open(path, 1 << 20, NULL, NULL, &repaired);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_mtime > 1000);
    unlink(path);
    strcat(path, ".sum");
    unlink(path);
}

static void test_trim(void)
{
    /* Four entries of 400 KiB used at t = 1..4, one of another suffix. */
    insert_at("a.json", 400 << 10, 1);
    insert_at("b.json", 400 << 10, 4);
    insert_at("c.json", 400 << 10, 2);
    insert_at("d.json", 400 << 10, 3);
    insert_at("e.so", 400 << 10, 0);

    /* Unset: the default bound (2048 MiB) keeps all. */
    unsetenv("AVO_CACHE_MAX_MB");
    avo_cache_trim(dir, ".json");
    CHECK(exists("a.json") && exists("b.json") && exists("c.json") && exists("d.json"));

    /* 1.5 MiB: trimmed below 90% (1.35 MiB, three entries) by least recent use. */
    setenv("AVO_CACHE_MAX_MB", "1.5", 1);
    avo_cache_trim(dir, ".json");
    CHECK(!exists("a.json") && !exists("a.json.sum"));
    CHECK(exists("b.json") && exists("c.json") && exists("d.json"));
    CHECK(exists("d.json.sum"));
    CHECK(exists("e.so") && exists("e.so.sum")); /* another backend's entries are its own */

    /* 1 MiB: two entries stay, the most recently used. */
    setenv("AVO_CACHE_MAX_MB", "1", 1);
    avo_cache_trim(dir, ".json");
    CHECK(!exists("c.json") && !exists("c.json.sum"));
    CHECK(exists("b.json") && exists("d.json"));
    avo_cache_trim(dir, ".so");
    CHECK(exists("e.so"));

    /* 0 or nonsense: no bound. */
    setenv("AVO_CACHE_MAX_MB", "0", 1);
    avo_cache_trim(dir, ".json");
    CHECK(exists("b.json") && exists("d.json"));
    unsetenv("AVO_CACHE_MAX_MB");
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_folder_rule();
    test_checked_reads();
    test_trim();
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return check_finish();
}
