#include "serve/s.h"
#include <mpi.h>
#include "app/a.h"
#include "common/c.h"
int s() { return a() + c(); }
