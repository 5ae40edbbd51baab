#include "low/b.h"

int LowAgain() { return Low(); }
