/* The knobs of bench/landscape.lua's synthetic search space (nothing here is
 * compiled: the test backend scores the knobs alone). */
// avo:param K1 0 1 2 3
// avo:param K2 0 1 2 3
// avo:param K3 0 1 2 3
// avo:param K4 0 1 2 3
// avo:param K5 0 1 2 3
// avo:param K6 0 1 2 3
// avo:param K7 0 1 2 3
// avo:param K8 0 1 2 3
// avo:param K9 0 1 2 3
// avo:param K10 0 1 2 3
