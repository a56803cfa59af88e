/*
 * test_libraries — what eval/libraries.h sees in a process's mappings: a
 * process's own mappings against the baseline taken of it are nothing new;
 * a library dlopened afterwards (OpenBLAS, or libz as a stand-in where it
 * is missing) is listed by path, once; a maps descriptor opened earlier is
 * read as the live mappings; and the evaluator's rules ("allow", "forbid",
 * prefixes) pass or refuse with the refused paths named.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/avo.h"
#include "check.h"
#include "eval/libraries.h"

static int lists(const json_t *found, const char *needle)
{
    size_t i;
    const json_t *item;
    json_array_foreach(found, i, item)
    {
        if (strstr(json_string_value(item), needle))
            return 1;
    }
    return 0;
}

int main(void)
{
    char err[AVO_ERRLEN], why[512];
    static avo_libraries_baseline base;
    CHECK_INT(avo_libraries_baseline_take(&base), 0);
    CHECK(base.n > 0); /* libc at least */
    /* Opened now, read later: what the judge gets from its candidate. */
    int maps_fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    CHECK(maps_fd >= 0);
    json_t *found = avo_libraries_observe(getpid(), -1, &base, -1, err, sizeof err);
    CHECK(found && json_array_size(found) == 0);
    json_decref(found);

    const char *needle = "openblas";
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (lib) {
        found = avo_libraries_observe(getpid(), maps_fd, &base, -1, err, sizeof err);
        CHECK(found && lists(found, needle));
        size_t n = json_array_size(found);
        size_t i;
        const json_t *item;
        json_array_foreach(found, i, item) /* each file once */
        {
            for (size_t k = i + 1; k < n; k++)
                CHECK(strcmp(json_string_value(item), json_string_value(json_array_get(found, k))));
        }
        /* forbid: refused, every library named */
        json_t *forbid = json_string("forbid");
        CHECK_INT(avo_libraries_allowed(found, forbid, why, sizeof why), 0);
        CHECK(strstr(why, needle) != NULL);
        json_decref(forbid);
        /* allow, or no rule: passes */
        json_t *allow = json_string("allow");
        CHECK_INT(avo_libraries_allowed(found, allow, why, sizeof why), 1);
        CHECK_INT(avo_libraries_allowed(found, NULL, why, sizeof why), 1);
        json_decref(allow);
        /* prefixes: what they name passes, the rest is named */
        json_t *all = json_array();
        json_array_foreach(found, i, item)
        {
            const char *base_name = strrchr(json_string_value(item), '/');
            char prefix[64];
            snprintf(prefix, sizeof prefix, "%.6s", base_name ? base_name + 1 : "x");
            json_array_append_new(all, json_string(prefix));
        }
        CHECK_INT(avo_libraries_allowed(found, all, why, sizeof why), 1);
        json_t *other = json_pack("[s]", "libfoo");
        CHECK_INT(avo_libraries_allowed(found, other, why, sizeof why), 0);
        CHECK(strstr(why, needle) != NULL);
        json_decref(all), json_decref(other), json_decref(found);
    } else {
        fprintf(stderr, "note: libopenblas.so.0 missing; the dlopen case is not run\n");
    }
    /* nothing found passes any rule */
    json_t *none = json_array(), *forbid = json_string("forbid");
    CHECK_INT(avo_libraries_allowed(none, forbid, why, sizeof why), 1);
    json_decref(none), json_decref(forbid);
    /* rules an evaluator may give, and ones it may not */
    json_t *good[] = {NULL, json_string("allow"), json_string("forbid"),
                      json_pack("[s, s]", "libopenblas", "libgfortran")};
    for (size_t i = 0; i < 4; i++) {
        CHECK_INT(avo_libraries_policy_valid(good[i], why, sizeof why), 1);
        json_decref(good[i]);
    }
    json_t *bad[] = {json_string("maybe"), json_integer(3), json_pack("[s]", ""),
                     json_pack("[i]", 1)};
    for (size_t i = 0; i < 4; i++) {
        CHECK_INT(avo_libraries_policy_valid(bad[i], why, sizeof why), 0);
        CHECK(why[0] != '\0');
        json_decref(bad[i]);
    }
    if (lib)
        dlclose(lib);
    close(maps_fd);
    return check_finish();
}
