// Fixture: the header of mooncake_low.
#pragma once

inline int Low() { return 1; }
