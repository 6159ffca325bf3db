#ifndef QUOTED_CMIMALLOC_SHIM_H
#define QUOTED_CMIMALLOC_SHIM_H

// Linking this library makes mimalloc the process's malloc: it exports malloc, free and the
// rest, and the executables that depend on it list it before libc, so every caller (Swift's
// runtime, SQLite, libzmq) resolves to it.
#include <mimalloc.h>

#endif
