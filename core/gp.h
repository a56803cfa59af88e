/*
 * gp.h — a Gaussian process over knob positions: the arithmetic of
 * strategies/surrogate.lua (its training set, Cholesky factor, predictions
 * and expected improvement), in C because in Lua it was nearly all of a
 * choice's time (40 ms per candidate at 1,000 candidates).
 *
 * A configuration is an encoding: one value position per knob, 1-based
 * (x[d] in 1..spans[d]).  The covariance of two encodings under hyper
 * { scale, w, shape, noise } is
 *
 *   exp(-(w * cat + (1 - w) * ord) / scale)
 *
 * where cat counts the knobs that differ and ord sums |x_d - y_d| / (spans[d]
 * - 1) (shape 1) or its squares (shape 2); noise is added on the diagonal.
 * Scores are standardized by the caller.  Every operation is written in the
 * order of the Lua it replaces, so a run picks the same configurations it
 * picked before (bit for bit on a target without fused multiply-add).
 *
 * The training set grows and shrinks at its end (add, pop) or is emptied
 * (clear).  The model is the factor of the training set's covariance under
 * one hyper: fit makes it, extend grows it a row per new training position
 * (O(n^2) each instead of O(n^3)), pop keeps its leading rows.
 */
#ifndef AVO_GP_H
#define AVO_GP_H

typedef struct avo_gp avo_gp;

typedef struct avo_gp_hyper {
    double scale; /* lengthscale (already times the number of knobs), > 0 */
    double w;     /* weight of the category distance, in [0, 1] */
    int shape;    /* 1: position differences (rough), 2: their squares (smooth) */
    double noise; /* variance added on the diagonal, >= 0 */
} avo_gp_hyper;

/* A model over `knobs` knobs with spans[d] >= 2 values each, or NULL when
 * out of memory.  The caller owns it (avo_gp_free). */
avo_gp *avo_gp_new(int knobs, const int *spans);
void avo_gp_free(avo_gp *gp);

int avo_gp_knobs(const avo_gp *gp);

/* Training positions held. */
int avo_gp_size(const avo_gp *gp);

/* Append the training position with encoding x (knobs ints, checked by the
 * caller).  0 or AVO_ENOMEM (nothing added). */
int avo_gp_add(avo_gp *gp, const int *x);

/* Drop the last training position (none: nothing); the model keeps its
 * leading rows. */
void avo_gp_pop(avo_gp *gp);

/* Drop every training position and the model. */
void avo_gp_clear(avo_gp *gp);

/* The log marginal likelihood of y (one per training position) under
 * `hyper`, by a factorisation that is not kept.  0, or AVO_EINVAL when the
 * covariance is not positive definite, AVO_ENOMEM. */
int avo_gp_loglik(avo_gp *gp, const double *y, const avo_gp_hyper *hyper, double *ret_loglik);

/* Make the model of y under `hyper`; ret_loglik (may be NULL) gets its log
 * marginal likelihood.  0, or AVO_EINVAL when not positive definite (no
 * model then), AVO_ENOMEM. */
int avo_gp_fit(avo_gp *gp, const double *y, const avo_gp_hyper *hyper, double *ret_loglik);

/* True when there is a model and it was made under `hyper`. */
int avo_gp_has_model(const avo_gp *gp, const avo_gp_hyper *hyper);

/* Grow the model to every training position and compute its weights for y.
 * 0, or AVO_EINVAL when there is no model or a new row is not positive
 * definite (no model then). */
int avo_gp_extend(avo_gp *gp, const double *y);

/*
 * The candidate of highest expected improvement over best + xi among
 * `count` encodings xs (count x knobs ints, row after row), when above
 * `floor` (-INFINITY: any).  Candidates are visited in order of an upper
 * bound of their improvement (the mean with the deviation bounded by the
 * most correlated observation alone), the exact deviation (an O(n^2)
 * solve) only while a bound can beat the best so far.  Sets *ret_index
 * (0-based; -1 when none is above floor), *ret_mean and *ret_ei; returns 0,
 * AVO_EINVAL without a model, AVO_ENOMEM.
 */
int avo_gp_best(avo_gp *gp, const int *xs, int count, double best, double xi, double floor,
                int *ret_index, double *ret_mean, double *ret_ei);

#endif
