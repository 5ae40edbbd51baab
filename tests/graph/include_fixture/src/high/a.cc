// Fixture: a wrong include (mooncake_high does not link mooncake_low).
#include "low/b.h"

int High() { return Low() + 1; }
