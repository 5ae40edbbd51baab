#include "common/c.h"
int e() { return c(); }
