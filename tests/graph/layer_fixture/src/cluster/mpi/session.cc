// MPI inside its seam: allowed.
#include <mpi.h>
int session() { return 0; }
