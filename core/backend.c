/*
 * backend.c — the table of built-in backends and the result skeleton every
 * backend starts from (docs/protocol.md).
 */
#include "backend.h"

#include <string.h>

static const avo_backend *const backends[] = {&avo_backend_cpu, &avo_backend_cuda};

const avo_backend *avo_backend_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}

/*
 * New result object {id, status, reason, configs: []} for `job`: the id is
 * copied from the job (null when it has none), reason is null when NULL.
 * The caller owns the result; the job is not touched.  Returns NULL only when
 * out of memory or when reason is not valid UTF-8.
 */
json_t *avo_result_new(const json_t *job, const char *status, const char *reason)
{
    const json_t *id = job ? json_object_get(job, "id") : NULL;
    return json_pack("{s:o, s:s, s:o, s:[]}", "id", id ? json_deep_copy(id) : json_null(), "status",
                     status ? status : "error", "reason",
                     reason ? json_string(reason) : json_null(), "configs");
}
