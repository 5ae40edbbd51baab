#include "common/c.h"
int c() { return 0; }
