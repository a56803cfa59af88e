// A stand-in kernel for the agent tests: tests/agent/evaluators/synth.lua
// scores it from the SPEED and NOISE lines; no compiler runs.
#define SPEED 1.0
#define NOISE 0.0
void kernel(float *x, int n)
{
    for (int i = 0; i < n; i++)
        x[i] = 2 * x[i];
}
