#include "app/a.h"
#include "common/c.h"
int a() { return c(); }
