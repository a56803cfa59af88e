/*
 * test_includes.c — the #include gate's lexer (eval/includes.h) that both
 * backends use: each directive of the #include family is found as the
 * preprocessor sees it (splices, comments, the %: digraph), with its name,
 * delimiter and line; with AVO_INCLUDES_RAW_LINES also as written, so a C
 * source read differently by the lexer and a C compiler (digit separators,
 * raw strings) cannot hide an absolute include from the CPU rule.
 */
#include "eval/includes.h"

#include "core/avo.h"
#include "check.h"

#include <stdio.h>
#include <string.h>

/* The CPU rule: refuse names that are absolute or climb; the name into ctx. */
static int stays_inside(const avo_include *inc, void *ctx, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    if (!inc->delim || !avo_include_name_escapes(inc->name, inc->name_len))
        return 0;
    snprintf(ctx, 128, "%.*s", (int)inc->name_len, inc->name);
    return AVO_EINVAL;
}

/* The escaping name the CPU gate refuses in `src`, or "" when it allows it. */
static const char *cpu_refuses(const char *src)
{
    static char bad[128];
    char err[AVO_ERRLEN];
    bad[0] = '\0';
    int rc = avo_includes_scan(src, "kernel", AVO_INCLUDES_RAW_LINES, stays_inside, bad, err,
                               sizeof err);
    CHECK(rc == 0 || rc == AVO_EINVAL);
    return bad;
}

/* Record every directive: "line:word:delim:name;" */
static int record(const avo_include *inc, void *ctx, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    char *out = ctx;
    size_t at = strlen(out);
    snprintf(out + at, 512 - at, "%d:%.*s:%c:%.*s%s;", inc->line, (int)inc->directive_len,
             inc->directive, inc->delim ? inc->delim : '-', (int)inc->name_len,
             inc->name ? inc->name : "", inc->closed || !inc->delim ? "" : "(open)");
    return 0;
}

static void test_directives(void)
{
    char out[512] = "", err[AVO_ERRLEN];
    CHECK_INT(avo_includes_scan("#include <a.h>\n  #  include \"b.h\"\n%:include <c.h>\n"
                                "#include_next <d.h>\n#import <e.h>\n#embed \"f\"\n#include M\n"
                                "#include <open\n#define include x\n",
                                "k", 0, record, out, err, sizeof err),
              0);
    CHECK_STR(out, "1:include:<:a.h;2:include:\":b.h;3:include:<:c.h;4:include_next:<:d.h;"
                   "5:import:<:e.h;6:embed:\":f;7:include:-:;8:include:<:open(open);");
    /* Comments, strings and splices as the preprocessor reads them. */
    out[0] = '\0';
    CHECK_INT(avo_includes_scan("// #include <x.h>\n/* #include <y.h> */\n\"#include <z.h>\"\n"
                                "#\\\ninclude <s.h>\n/* a */ #include <t.h>\n",
                                "k", 0, record, out, err, sizeof err),
              0);
    CHECK_STR(out, "4:include:<:s.h;5:include:<:t.h;");
    /* __has_include is refused only when asked. */
    out[0] = '\0';
    CHECK_INT(avo_includes_scan("#if __has_include(<x>)\n#endif\n", "kernel",
                                AVO_INCLUDES_REFUSE_HAS_INCLUDE, record, out, err, sizeof err),
              AVO_EINVAL);
    CHECK_CONTAINS(err, "kernel uses __has_include");
    CHECK_INT(avo_includes_scan("#if __has_include(<x>)\n#endif\n", "kernel", 0, record, out, err,
                                sizeof err),
              0);
}

static void test_escaping_names(void)
{
    CHECK(avo_include_name_escapes("/etc/passwd", 11));
    CHECK(avo_include_name_escapes("../x.h", 6));
    CHECK(avo_include_name_escapes("a/../../x.h", 11));
    CHECK(avo_include_name_escapes("..", 2));
    CHECK(!avo_include_name_escapes("a..b/x.h", 8));
    CHECK(!avo_include_name_escapes("sys/x..h", 8));
    CHECK(!avo_include_name_escapes("stdio.h", 7));
}

static void test_cpu_rule(void)
{
    CHECK_STR(cpu_refuses("#include <stdio.h>\n#include \"util.h\"\nint x;\n"), "");
    CHECK_STR(cpu_refuses("#include \"/etc/passwd\"\n"), "/etc/passwd");
    CHECK_STR(cpu_refuses("  %:  include </dev/zero>\n"), "/dev/zero");
    CHECK_STR(cpu_refuses("#include \"../../x.h\"\n"), "../../x.h");
    CHECK_STR(cpu_refuses("#include_next </etc/passwd>\n"), "/etc/passwd");
    /* What a line-by-line reading missed: splices, a comment before '#'. */
    CHECK_STR(cpu_refuses("#\\\ninclude \"/etc/passwd\"\n"), "/etc/passwd");
    CHECK_STR(cpu_refuses("/* x */ #include \"/etc/shadow\"\n"), "/etc/shadow");
    /* A C compiler without digit separators reads the quote after 1 as a
     * character constant around the comment opener the lexer sees, so
     * that comment must not hide the line. */
    CHECK_STR(cpu_refuses("int n = 1'2 /*';\n#include \"/etc/passwd\"\n// */\n"), "/etc/passwd");
    /* Nor does a raw string, which strict C (-std=c11) does not have. */
    CHECK_STR(cpu_refuses("#define R\nconst char *s = R\"x(\";\n#include \"/etc/passwd\"\n"
                          "// )x\";\n"),
              "/etc/passwd");
}

int main(void)
{
    test_directives();
    test_escaping_names();
    test_cpu_rule();
    return check_finish();
}
