#ifndef QUOTED_CZEROMQ_SHIM_H
#define QUOTED_CZEROMQ_SHIM_H

#include <zmq.h>
#include <errno.h>

/// errno as libzmq left it, read through a function so Swift sees one value.
static inline int czmq_errno(void) { return zmq_errno(); }

#endif
