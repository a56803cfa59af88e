/*
 * Trusted row softmax: one thread per row, max then sum then write, fp32.
 * Launch: grid = ceil(rows / 128), block = 128.
 */
extern "C" __global__ void softmax_ref(int rows, int cols, const float *X, float *Y)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    const float *x = X + (size_t)r * cols;
    float *y = Y + (size_t)r * cols;
    float m = __int_as_float(0xff800000);
    for (int c = 0; c < cols; c++)
        m = fmaxf(m, x[c]);
    float s = 0.0f;
    for (int c = 0; c < cols; c++)
        s += expf(x[c] - m);
    for (int c = 0; c < cols; c++)
        y[c] = expf(x[c] - m) / s;
}
