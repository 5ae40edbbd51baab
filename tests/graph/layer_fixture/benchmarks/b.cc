// A benchmark that calls MPI itself instead of through cluster/mpi (wrong on purpose).
#include <mpi.h>
int main() { return 0; }
