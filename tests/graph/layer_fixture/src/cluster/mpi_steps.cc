// MPI beside the folder of its seam, not in it (wrong on purpose).
#include <mpi.h>
int steps() { return 0; }
