/* Within libskiff only. */
#ifndef SKIFF_INTERNAL_H
#define SKIFF_INTERNAL_H

#include "skiff/channel.h"

/** Ends a call with a local failure (RST_STREAM CANCELLED if its stream is open); a call the
 *  server ended with OK takes this status instead. */
void skiff_call_fail(skiff_call *call, uint32_t code, const char *message);

#endif
