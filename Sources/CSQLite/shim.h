#ifndef QUOTED_CSQLITE_SHIM_H
#define QUOTED_CSQLITE_SHIM_H

#include <sqlite3.h>

/// Turns off SQLite's memory statistics for the process: with them on (the default), every
/// allocation and free SQLite makes takes a process-wide mutex to count it. Only valid before
/// SQLite initializes; returns SQLITE_MISUSE after, changing nothing.
static inline int csqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#endif
