/* The knobs of bench/gemm_space.lua's synthetic search space: the tunable
 * parameters of CLBlast's xgemm kernel, as in Kernel Tuner's GEMM example
 * (nothing here is compiled: the test backend scores the knobs alone). */
// avo:param MWG 16 32 64 128
// avo:param NWG 16 32 64 128
// avo:param KWG 16 32
// avo:param MDIMC 8 16 32
// avo:param NDIMC 8 16 32
// avo:param MDIMA 8 16 32
// avo:param NDIMB 8 16 32
// avo:param KWI 2 8
// avo:param VWM 1 2 4 8
// avo:param VWN 1 2 4 8
// avo:param STRM 0 1
// avo:param STRN 0 1
// avo:param SA 0 1
// avo:param SB 0 1
