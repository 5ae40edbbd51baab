// cuBLAS outside src/gpu and src/engine/cuda (wrong on purpose).
#include <cublas_v2.h>
