/*
 * judge.c — verification and timing of one config (see judge.h).
 *
 * Buffers the judge owns, per argument: the reference's copy, the inputs as
 * generated for the current verification trial, and during timing a saved
 * copy of every slot's inputs; per config, the records of the timed calls
 * kept for the reference (inputs and outputs of one slot per kept sample).
 * The candidate's buffers belong to the device; the judge reads them
 * through dev->data.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/evp.h>

#include "core/avo.h"
#include "core/backend.h"
#include "eval/judge.h"
#include "eval/measure.h"

/* Past this many bytes of kept records per config, a measured sample is not
 * kept (and so does not count) once min_checks are. */
#define JUDGE_RECORD_BUDGET ((size_t)512 << 20)

/* One call of a measured sample, kept for the reference: the inputs it was
 * given and the outputs it left, copied at its answer, in one block laid
 * out by judge.rec_in / judge.rec_out; and the sample's time per call. */
typedef struct judge_record {
    unsigned char *bytes;
    double s;
    double ys;   /* the yardstick's time per call in the same sample; 0: none */
    int compare; /* chosen to be compared with the reference */
} judge_record;

typedef struct judge {
    const avo_jobspec *spec;
    const avo_judge_device *dev;
    const avo_config_spec *cfg;
    void **ref;                  /* per argument: the reference's buffer */
    void **saved;                /* per argument: inputs of the current trial */
    unsigned char **ref_wrote;   /* per out argument: 1 where the reference wrote */
    unsigned char **timed_saved; /* per in/inout argument: every slot's inputs */
    size_t *bytes;
    size_t slots, timed_slots; /* laid out; saved copies allocated for */
    avo_measure_view *views;
    char *why;
    size_t why_len;
    int failed; /* the device failed (not a wrong answer) */
    double max_error;
    /* Timing: one call of every measured sample, copied into `scratch` at
     * its answer and kept in `kept` (the samples that count). */
    size_t *rec_in, *rec_out; /* per argument: offset in a record, SIZE_MAX if none */
    size_t rec_bytes;
    unsigned char *scratch;
    judge_record *kept;
    size_t nkept, kept_cap;
} judge;

static int is_buffer(const avo_arg_spec *a)
{
    return a->kind != AVO_ARG_SCALAR;
}

static void judge_free(judge *j)
{
    size_t n = j->spec->nargs;
    for (size_t i = 0; i < n; i++) {
        if (j->ref)
            free(j->ref[i]);
        if (j->saved)
            free(j->saved[i]);
        if (j->ref_wrote)
            free(j->ref_wrote[i]);
        if (j->timed_saved)
            free(j->timed_saved[i]);
    }
    free(j->ref);
    free(j->saved);
    free(j->ref_wrote);
    free(j->timed_saved);
    free(j->bytes);
    free(j->views);
    for (size_t k = 0; k < j->nkept; k++)
        free(j->kept[k].bytes);
    free(j->kept);
    free(j->scratch);
    free(j->rec_in);
    free(j->rec_out);
}

static int judge_alloc(judge *j)
{
    size_t n = j->spec->nargs;
    j->ref = calloc(n, sizeof *j->ref);
    j->saved = calloc(n, sizeof *j->saved);
    j->ref_wrote = calloc(n, sizeof *j->ref_wrote);
    j->timed_saved = calloc(n, sizeof *j->timed_saved);
    j->bytes = calloc(n, sizeof *j->bytes);
    j->views = calloc(n, sizeof *j->views);
    j->rec_in = calloc(n, sizeof *j->rec_in);
    j->rec_out = calloc(n, sizeof *j->rec_out);
    if (!j->ref || !j->saved || !j->ref_wrote || !j->timed_saved || !j->bytes || !j->views ||
        !j->rec_in || !j->rec_out)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const avo_arg_spec *a = &j->spec->args[i];
        j->views[i].arg = a;
        if (!is_buffer(a))
            continue;
        size_t bytes = j->cfg->lengths[i] * avo_dtype_size(a->type);
        j->bytes[i] = bytes;
        j->views[i].length = j->cfg->lengths[i];
        if (!(j->ref[i] = malloc(bytes ? bytes : 1)) || !(j->saved[i] = malloc(bytes ? bytes : 1)))
            return -1;
        if (a->kind == AVO_ARG_OUT && !(j->ref_wrote[i] = calloc(j->cfg->lengths[i] + 1, 1)))
            return -1;
    }
    /* A record: inputs as given (in, inout), then outputs as left (out, inout). */
    for (size_t i = 0; i < n; i++) {
        const avo_arg_spec *a = &j->spec->args[i];
        j->rec_in[i] = j->rec_out[i] = SIZE_MAX;
        if (a->kind == AVO_ARG_IN || a->kind == AVO_ARG_INOUT) {
            j->rec_in[i] = j->rec_bytes;
            j->rec_bytes += j->bytes[i];
        }
        if (a->kind == AVO_ARG_OUT || a->kind == AVO_ARG_INOUT) {
            j->rec_out[i] = j->rec_bytes;
            j->rec_bytes += j->bytes[i];
        }
    }
    return 0;
}

/* A device failure: keep its reason. */
static int device_failed(judge *j, int rc)
{
    j->failed = 1;
    return rc < 0 ? rc : -1;
}

static int wrong(judge *j, const char *fmt, const char *detail)
{
    snprintf(j->why, j->why_len, fmt, detail);
    return -1;
}

/* Guards of slot s, then the checks of avo_measure_check against the
 * reference's buffers, with `saved` as the inputs the slot started from. */
static int check_slot(judge *j, size_t s, void *const *saved)
{
    const char *arg = "";
    if (!j->dev->guards_intact(j->dev->self, s, &arg))
        return wrong(j, "wrote out of bounds of buffer %s", *arg ? arg : "(between buffers)");
    for (size_t i = 0; i < j->spec->nargs; i++) {
        j->views[i].cand = j->dev->data(j->dev->self, s, i);
        j->views[i].ref = j->ref[i];
        j->views[i].saved = saved[i];
    }
    double error = 0;
    int bad = avo_measure_check(j->views, j->spec->nargs, 0, &error, j->why, j->why_len);
    if (error > j->max_error || isnan(error))
        j->max_error = error;
    return bad;
}

/* One verification trial on slot 0 with the job's seeded inputs. */
static int verify_trial(judge *j, int trial)
{
    const avo_jobspec *spec = j->spec;
    avo_pcg32 rng;
    avo_measure_trial_rng(&rng, spec->seed, j->cfg->name, trial);
    for (size_t i = 0; i < spec->nargs; i++) {
        const avo_arg_spec *a = &spec->args[i];
        if (!is_buffer(a))
            continue;
        unsigned char *cand = j->dev->data(j->dev->self, 0, i);
        if (a->kind == AVO_ARG_OUT) {
            avo_measure_poison(cand, a->type, j->cfg->lengths[i]);
            avo_measure_poison(j->ref[i], a->type, j->cfg->lengths[i]);
            continue;
        }
        avo_measure_fill_uniform(j->saved[i], a->type, a->lo, a->hi, j->cfg->lengths[i], &rng,
                                 j->dev->draw);
        memcpy(cand, j->saved[i], j->bytes[i]);
        memcpy(j->ref[i], j->saved[i], j->bytes[i]);
    }
    int rc = j->dev->run_reference(j->dev->self, j->cfg, j->ref, j->why, j->why_len);
    if (rc < 0)
        return device_failed(j, rc);
    double t;
    rc = j->dev->run_candidate(j->dev->self, j->cfg, 1, &t, j->why, j->why_len);
    if (rc < 0)
        return device_failed(j, rc);
    /* Where the reference writes, on any input: what timed runs must write. */
    for (size_t i = 0; i < spec->nargs; i++)
        if (spec->args[i].kind == AVO_ARG_OUT)
            for (size_t e = 0; e < j->cfg->lengths[i]; e++)
                j->ref_wrote[i][e] = !avo_measure_is_poison(j->ref[i], spec->args[i].type, e);
    return check_slot(j, 0, j->saved);
}

/* Room to keep every timed slot's inputs. */
static int reserve_timed(judge *j, size_t slots)
{
    if (slots <= j->timed_slots)
        return 0;
    for (size_t i = 0; i < j->spec->nargs; i++) {
        const avo_arg_spec *a = &j->spec->args[i];
        if (a->kind != AVO_ARG_IN && a->kind != AVO_ARG_INOUT)
            continue;
        unsigned char *p = realloc(j->timed_saved[i], slots * (j->bytes[i] ? j->bytes[i] : 1));
        if (!p)
            return -1;
        j->timed_saved[i] = p;
    }
    j->timed_slots = slots;
    return 0;
}

/* A secret uniform draw in [0, 1) and a secret index in [0, n). */
static int secret_draw(size_t n, double *ret_u, size_t *ret_index)
{
    uint64_t r[2];
    if (getrandom(r, sizeof r, 0) != sizeof r)
        return -1;
    *ret_u = (double)(r[0] >> 11) * 0x1p-53;
    *ret_index = (size_t)(r[1] % n);
    return 0;
}

/*
 * Keep the scratch record for the reference.  Refused (the sample then does
 * not count) only past JUDGE_RECORD_BUDGET with min_checks already kept, so
 * a config whose outputs are huge still gets its minimum.
 */
static int keep_scratch(judge *j, double s, double ys)
{
    if (j->nkept >= (size_t)j->spec->min_checks &&
        (j->nkept + 1) * j->rec_bytes > JUDGE_RECORD_BUDGET)
        return 0;
    if (j->nkept == j->kept_cap) {
        size_t cap = j->kept_cap ? 2 * j->kept_cap : 16;
        judge_record *p = realloc(j->kept, cap * sizeof *p);
        if (!p)
            return -1;
        j->kept = p;
        j->kept_cap = cap;
    }
    unsigned char *next = malloc(j->rec_bytes ? j->rec_bytes : 1);
    if (!next)
        return -1;
    j->kept[j->nkept++] = (judge_record){.bytes = j->scratch, .s = s, .ys = ys};
    j->scratch = next;
    return 1;
}

/*
 * The yardstick on the inputs the candidate's `slots` calls were given
 * (its outputs poisoned as the candidate's were), after the candidate's
 * checks: *ret_s, its time per call.
 */
static int run_yardstick(judge *j, size_t slots, double *ret_s)
{
    const avo_jobspec *spec = j->spec;
    for (size_t s = 0; s < slots; s++)
        for (size_t i = 0; i < spec->nargs; i++) {
            const avo_arg_spec *a = &spec->args[i];
            unsigned char *ys = j->dev->ys_data(j->dev->self, s, i);
            if (a->kind == AVO_ARG_OUT)
                avo_measure_poison(ys, a->type, j->cfg->lengths[i]);
            else if (is_buffer(a))
                memcpy(ys, j->timed_saved[i] + s * j->bytes[i], j->bytes[i]);
        }
    double t = 0;
    int rc = j->dev->run_yardstick(j->dev->self, j->cfg, slots, &t, j->why, j->why_len);
    if (rc < 0)
        return device_failed(j, rc);
    *ret_s = t / (double)slots;
    return 0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n values (sorted in place); 0 for none. */
static double median_of(double *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* With a yardstick: its median time per call and the median over the
 * counted samples of its time over the candidate's (a paired speed-up). */
static int note_yardstick(judge *j, json_t *entry)
{
    size_t n = 0;
    double *ys = malloc((j->nkept ? j->nkept : 1) * sizeof *ys);
    double *ratio = malloc((j->nkept ? j->nkept : 1) * sizeof *ratio);
    if (!ys || !ratio) {
        free(ys);
        free(ratio);
        return -1;
    }
    for (size_t k = 0; k < j->nkept; k++)
        if (j->kept[k].ys > 0 && j->kept[k].s > 0) {
            ys[n] = j->kept[k].ys;
            ratio[n++] = j->kept[k].ys / j->kept[k].s;
        }
    if (n > 0) {
        json_object_set_new(entry, "yardstick_s", json_real(median_of(ys, n)));
        json_object_set_new(entry, "vs_yardstick", json_real(median_of(ratio, n)));
    }
    free(ys);
    free(ratio);
    return 0;
}

/*
 * The timing sampler: `batch` calls, each on a slot of fresh secret inputs,
 * then every slot checked cheaply (guards, inputs untouched, outputs
 * written where the reference writes, floats finite).
 *
 * Of a measured sample, one slot picked in secret after the calls is copied
 * at once (the candidate is stopped: what it might write later is never
 * looked at) and kept; which kept samples are compared with the reference
 * is decided only after the config's last timed call (choose_compared), so
 * nothing the candidate can observe while it is timed (gaps between calls,
 * their number, the reference's speed) depends on it.  A failed check
 * stops timing with the reason in j->why.
 */
static int timed_sample(void *opaque, uint64_t batch, int measured, double *ret_s)
{
    judge *j = opaque;
    const avo_jobspec *spec = j->spec;
    size_t slots = (size_t)batch;
    int rc;
    if (slots > j->slots) {
        if ((rc = j->dev->layout(j->dev->self, j->cfg, slots, NULL, j->why, j->why_len)) < 0)
            return device_failed(j, rc);
        j->slots = slots;
    }
    if (reserve_timed(j, slots) < 0)
        return device_failed(j, wrong(j, "%s", "judge out of memory for timing inputs"));
    for (size_t s = 0; s < slots; s++)
        for (size_t i = 0; i < spec->nargs; i++) {
            const avo_arg_spec *a = &spec->args[i];
            unsigned char *cand = j->dev->data(j->dev->self, s, i);
            if (a->kind == AVO_ARG_OUT) {
                avo_measure_poison(cand, a->type, j->cfg->lengths[i]);
            } else if (is_buffer(a)) {
                unsigned char *keep = j->timed_saved[i] + s * j->bytes[i];
                if (avo_judge_fill_secret(keep, a->type, a->lo, a->hi, j->cfg->lengths[i]) < 0)
                    return device_failed(j, wrong(j, "%s", "no randomness from getrandom"));
                memcpy(cand, keep, j->bytes[i]);
            }
        }
    double t = 0;
    if ((rc = j->dev->run_candidate(j->dev->self, j->cfg, slots, &t, j->why, j->why_len)) < 0)
        return device_failed(j, rc);
    *ret_s = t / (double)slots;

    /* One slot's buffers copied, before anything else reads the slots. */
    double u;
    size_t pick = 0;
    if (measured) {
        if (secret_draw(slots, &u, &pick) < 0)
            return device_failed(j, wrong(j, "%s", "no randomness from getrandom"));
        for (size_t i = 0; i < spec->nargs; i++) {
            if (j->rec_in[i] != SIZE_MAX)
                memcpy(j->scratch + j->rec_in[i], j->timed_saved[i] + pick * j->bytes[i],
                       j->bytes[i]);
            if (j->rec_out[i] != SIZE_MAX)
                memcpy(j->scratch + j->rec_out[i], j->dev->data(j->dev->self, pick, i),
                       j->bytes[i]);
        }
    }

    for (size_t s = 0; s < slots; s++) {
        const char *arg = "";
        if (!j->dev->guards_intact(j->dev->self, s, &arg))
            return wrong(j, "timed runs wrote out of bounds of buffer %s",
                         *arg ? arg : "(between buffers)");
        for (size_t i = 0; i < spec->nargs; i++) {
            const avo_arg_spec *a = &spec->args[i];
            const unsigned char *cand = j->dev->data(j->dev->self, s, i);
            if (a->kind == AVO_ARG_IN &&
                memcmp(cand, j->timed_saved[i] + s * j->bytes[i], j->bytes[i]) != 0)
                return wrong(j, "timed runs modified input buffer %s", a->name);
            if (a->kind == AVO_ARG_OUT)
                for (size_t e = 0; e < j->cfg->lengths[i]; e++)
                    if (j->ref_wrote[i][e] && avo_measure_is_poison(cand, a->type, e))
                        return wrong(j, "timed runs left output %s unwritten (work skipped)",
                                     a->name);
            if ((a->kind == AVO_ARG_OUT || a->kind == AVO_ARG_INOUT) && avo_dtype_is_float(a->type))
                for (size_t e = 0; e < j->cfg->lengths[i]; e++)
                    if (!isfinite(avo_measure_element(cand, a->type, e)) &&
                        !(a->kind == AVO_ARG_OUT && !j->ref_wrote[i][e]))
                        return wrong(j, "timed runs wrote a non-finite value to %s", a->name);
        }
    }
    double ys = 0;
    if (j->dev->run_yardstick && (rc = run_yardstick(j, slots, &ys)) < 0)
        return rc;
    if (!measured)
        return 0;
    rc = keep_scratch(j, *ret_s, ys);
    if (rc < 0)
        return device_failed(j, wrong(j, "%s", "judge out of memory for timed outputs"));
    return rc ? 0 : AVO_MEASURE_UNCOUNTED;
}

static int by_time(const void *a, const void *b)
{
    double x = (*(judge_record *const *)a)->s, y = (*(judge_record *const *)b)->s;
    return (x > y) - (x < y);
}

/*
 * Which kept samples are compared, decided after the config's last timed
 * call: the one or two whose time is the reported median, every other one
 * with probability check_rate (secret draws), and more drawn uniformly
 * among the rest until min_checks are.  *ret_n: how many.
 */
static int choose_compared(judge *j, size_t *ret_n)
{
    size_t n = j->nkept, chosen = 0;
    judge_record **order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return -1;
    for (size_t k = 0; k < n; k++)
        order[k] = &j->kept[k];
    qsort(order, n, sizeof *order, by_time);
    if (n > 0) {
        order[n / 2]->compare = 1;
        order[(n - 1) / 2]->compare = 1;
    }
    free(order);
    for (size_t k = 0; k < n; k++) {
        double u;
        size_t unused;
        if (secret_draw(1, &u, &unused) < 0)
            return -1;
        if (u < j->spec->check_rate)
            j->kept[k].compare = 1;
        chosen += (size_t)j->kept[k].compare;
    }
    size_t least = (size_t)j->spec->min_checks < n ? (size_t)j->spec->min_checks : n;
    while (chosen < least) {
        double u;
        size_t k;
        if (secret_draw(n, &u, &k) < 0)
            return -1;
        if (!j->kept[k].compare) {
            j->kept[k].compare = 1;
            chosen++;
        }
    }
    *ret_n = chosen;
    return 0;
}

/*
 * After the config's last timed call: every chosen kept call against the
 * reference, run on a copy of the inputs that call was given.
 */
static int compare_kept(judge *j, size_t *ret_compared)
{
    const avo_jobspec *spec = j->spec;
    if (choose_compared(j, ret_compared) < 0)
        return device_failed(j, wrong(j, "%s", "judge out of memory or randomness"));
    for (size_t k = 0; k < j->nkept; k++) {
        if (!j->kept[k].compare)
            continue;
        const unsigned char *rec = j->kept[k].bytes;
        for (size_t i = 0; i < spec->nargs; i++) {
            const avo_arg_spec *a = &spec->args[i];
            if (a->kind == AVO_ARG_OUT)
                avo_measure_poison(j->ref[i], a->type, j->cfg->lengths[i]);
            else if (is_buffer(a))
                memcpy(j->ref[i], rec + j->rec_in[i], j->bytes[i]);
        }
        int rc = j->dev->run_reference(j->dev->self, j->cfg, j->ref, j->why, j->why_len);
        if (rc < 0)
            return device_failed(j, rc);
        for (size_t i = 0; i < spec->nargs; i++) {
            j->views[i].ref = j->ref[i];
            j->views[i].cand = NULL;
            j->views[i].saved = NULL;
            if (j->rec_out[i] != SIZE_MAX)
                j->views[i].cand = rec + j->rec_out[i];
            else if (j->rec_in[i] != SIZE_MAX)
                j->views[i].cand = j->views[i].saved = rec + j->rec_in[i];
        }
        double error = 0;
        if (avo_measure_check(j->views, spec->nargs, 0, &error, j->why, j->why_len) < 0) {
            char detail[512];
            snprintf(detail, sizeof detail, "%s", j->why);
            snprintf(j->why, j->why_len, "output of timed runs differs from reference: %s", detail);
            return -1;
        }
        if (error > j->max_error || isnan(error))
            j->max_error = error;
    }
    return 0;
}

int avo_judge_config(const avo_jobspec *spec, const avo_judge_device *dev,
                     const avo_config_spec *cfg, int timed, json_t *entry, char *reason, size_t len)
{
    char why[900] = "";
    judge j = {.spec = spec, .dev = dev, .cfg = cfg, .why = why, .why_len = sizeof why};
    int outcome = AVO_JUDGE_WRONG;
    size_t max_slots = 1;
    if (judge_alloc(&j) < 0) {
        snprintf(why, sizeof why, "judge out of memory");
        j.failed = 1;
        goto done;
    }
    int rc = dev->layout(dev->self, cfg, 1, &max_slots, why, sizeof why);
    if (rc < 0) {
        j.failed = 1;
        goto done;
    }
    j.slots = 1;
    for (int trial = 0; trial < spec->trials; trial++) {
        rc = verify_trial(&j, trial);
        json_object_set_new(entry, "max_error", json_real(j.max_error));
        if (rc < 0)
            goto done;
    }
    if (timed && spec->timing) {
        /* avo_measure_time doubles the batch: a power of two never passes
         * the slots the device has room for. */
        uint64_t max_batch = 1;
        while (max_batch * 2 <= max_slots)
            max_batch *= 2;
        avo_measure_timing t;
        if (!(j.scratch = malloc(j.rec_bytes ? j.rec_bytes : 1))) {
            snprintf(why, sizeof why, "judge out of memory for timed outputs");
            j.failed = 1;
            goto done;
        }
        rc = avo_measure_time(spec, max_batch, timed_sample, &j, &t);
        if (rc < 0 && !why[0]) { /* the sampler always says why; this is AVO_ENOMEM */
            snprintf(why, sizeof why, "judge out of memory for timing samples");
            j.failed = 1;
        }
        size_t compared = 0;
        if (rc == 0)
            rc = compare_kept(&j, &compared);
        json_object_set_new(entry, "max_error", json_real(j.max_error));
        if (rc < 0)
            goto done;
        json_object_set_new(entry, "compared", json_integer((json_int_t)compared));
        json_object_set_new(entry, "median_s", json_real(t.median_s));
        json_object_set_new(entry, "spread", json_real(t.spread));
        json_object_set_new(entry, "samples", json_integer((json_int_t)t.samples));
        json_object_set_new(entry, "batch", json_integer((json_int_t)t.batch));
        if (t.median_s > 0) {
            json_object_set_new(entry, "gflops", json_real(cfg->flops / t.median_s / 1e9));
            json_object_set_new(entry, "gbs", json_real(cfg->bytes / t.median_s / 1e9));
        }
        if (dev->run_yardstick && note_yardstick(&j, entry) < 0) {
            snprintf(why, sizeof why, "judge out of memory for the yardstick's samples");
            j.failed = 1;
            goto done;
        }
    }
    json_object_set_new(entry, "correct", json_true());
    outcome = AVO_JUDGE_OK;
done:
    if (outcome != AVO_JUDGE_OK) {
        if (j.failed) {
            outcome = AVO_JUDGE_FAILED;
            snprintf(reason, len, "%s in config %s", why, cfg->name);
        } else {
            snprintf(reason, len, "config %s: %s", cfg->name, why);
        }
        json_t *text = avo_result_text(reason, strlen(reason));
        json_object_set_new(entry, "reason", text ? text : json_null());
    }
    judge_free(&j);
    return outcome;
}

/* ------------------------------------------------------------ randomness */

/* A fresh key and nonce from the kernel (getrandom) for every fill. */
static int random_bytes(void *buf, size_t bytes)
{
    unsigned char *p = buf;
    while (bytes > 0) {
        ssize_t n = getrandom(p, bytes, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -errno;
        p += n;
        bytes -= (size_t)n;
    }
    return 0;
}

/*
 * `bytes` of ChaCha20 keystream (OpenSSL) under a key and nonce drawn from
 * getrandom: as unpredictable as getrandom itself, several times faster in
 * bulk, which matters when every timed call of a memory-bound kernel needs
 * megabytes of fresh inputs.
 */
static int fill_random(void *buf, size_t bytes)
{
    unsigned char key[32], iv[16];
    int rc = random_bytes(key, sizeof key);
    if (rc == 0)
        rc = random_bytes(iv, sizeof iv);
    EVP_CIPHER_CTX *ctx = rc == 0 ? EVP_CIPHER_CTX_new() : NULL;
    if (rc == 0 && (!ctx || EVP_EncryptInit_ex(ctx, EVP_chacha20(), NULL, key, iv) != 1))
        rc = -EIO;
    unsigned char *p = buf;
    memset(buf, 0, bytes);
    while (rc == 0 && bytes > 0) {
        int chunk = bytes > (1u << 30) ? 1 << 30 : (int)bytes, out = 0;
        if (EVP_EncryptUpdate(ctx, p, &out, p, chunk) != 1 || out != chunk)
            rc = -EIO;
        p += chunk;
        bytes -= (size_t)chunk;
    }
    EVP_CIPHER_CTX_free(ctx);
    explicit_bzero(key, sizeof key);
    return rc;
}

int avo_judge_fill_secret(void *buf, avo_dtype type, double lo, double hi, size_t n)
{
    size_t size = avo_dtype_size(type);
    int rc = fill_random(buf, n * size);
    if (rc < 0)
        return rc;
    double span = hi - lo;
    switch (type) {
    case AVO_DT_F64:
        for (size_t i = 0; i < n; i++) {
            uint64_t u;
            memcpy(&u, (unsigned char *)buf + i * 8, 8);
            ((double *)buf)[i] = lo + span * (double)(u >> 11) * 0x1p-53;
        }
        return 0;
    case AVO_DT_F32:
        for (size_t i = 0; i < n; i++) {
            uint32_t u = ((uint32_t *)buf)[i];
            ((float *)buf)[i] = (float)(lo + span * (double)(u >> 8) * 0x1p-24);
        }
        return 0;
    case AVO_DT_F16:
    case AVO_DT_BF16:
        for (size_t i = 0; i < n; i++) {
            uint16_t u = ((uint16_t *)buf)[i];
            float f = (float)(lo + span * (double)u * 0x1p-16);
            ((uint16_t *)buf)[i] = type == AVO_DT_F16 ? avo_f32_to_f16(f) : avo_f32_to_bf16(f);
        }
        return 0;
    default:
        break;
    }
    int64_t ilo;
    uint64_t range;
    avo_measure_int_range(type, lo, hi, &ilo, &range);
    for (size_t i = 0; i < n; i++) {
        if (type == AVO_DT_I32) {
            uint32_t u = ((uint32_t *)buf)[i];
            ((int32_t *)buf)[i] = (int32_t)(ilo + (int64_t)(range ? u % range : u));
        } else {
            uint64_t u = ((uint64_t *)buf)[i];
            ((int64_t *)buf)[i] = (int64_t)((uint64_t)ilo + (range ? u % range : u));
        }
    }
    return 0;
}
