/*
 * section_experiment_methods.c — the top of an experiment's report
 * (experiment.h): its name, the definition's description and the methods
 * paragraph the statistics were computed by.
 */
#include <stdlib.h>

#include "cli/view/experiment.h"
#include "cli/view/view.h"

void avo_view_experiment_section_methods(avo_strbuf *out, const json_t *document,
                                         const json_t *description)
{
    const json_t *exp = json_object_get(document, "experiment");
    avo_strbuf_puts(out, "<h1>Experiment ");
    avo_strbuf_html(out, avo_view_str(exp, "name"));
    avo_strbuf_printf(out, " (#%lld)</h1>", avo_view_int(exp, "id"));
    if (description && !json_is_null(description)) {
        /* a description that is not a string is shown as its JSON */
        char *text = json_is_string(description) ? NULL : json_dumps(description, JSON_ENCODE_ANY);
        avo_strbuf_puts(out, "<p>");
        avo_strbuf_html(out, text ? text : json_string_value(description));
        avo_strbuf_puts(out, "</p>");
        free(text);
    }
    avo_strbuf_puts(out, "<h2>Methods</h2><p>");
    avo_strbuf_html(out, avo_view_str(document, "methods"));
    avo_strbuf_puts(out, "</p>");
}
