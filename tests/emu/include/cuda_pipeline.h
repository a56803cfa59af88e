/*
 * cuda_pipeline.h for the CPU emulator (see avo_emu.h): the pipeline
 * primitives (cuda_pipeline_primitives.h beside this file); the
 * nvcuda::experimental::pipeline class is not emulated.
 */
#ifndef AVO_EMU_CUDA_PIPELINE_H
#define AVO_EMU_CUDA_PIPELINE_H

#include "cuda_pipeline_primitives.h"

#endif
