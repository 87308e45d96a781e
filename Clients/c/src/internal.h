/* Within libskiff only. */
#ifndef SKIFF_INTERNAL_H
#define SKIFF_INTERNAL_H

#include "skiff/channel.h"

#include <pthread.h>
#include <sys/types.h>

/** Ends a call with a local failure (RST_STREAM CANCELLED if its stream is open); a call the
 *  server ended with OK takes this status instead. */
void skiff_call_fail(skiff_call *call, uint32_t code, const char *message);

/** skiff_call_receive into a buffer the call keeps (and reuses): `message` views it until the
 *  call's next receive or finish. */
int skiff_call_receive_kept(skiff_call *call, skiff_bytes *message);

/** A TLS session over a connected, non-blocking socket (src/tls.c). */
typedef struct skiff_tls skiff_tls;

/** The TLS handshake on `fd` for `host` by `options` (roots, name), by `deadline_ns`
 *  (CLOCK_MONOTONIC); NULL with `reason` filled on failure (the caller closes `fd`). */
skiff_tls *skiff_tls_connect(
    int fd, const char *host, const skiff_channel_options *options, int64_t deadline_ns, char *reason, size_t size);
/** Bytes written, 0 when the socket is full, -1 when the connection failed. */
ssize_t skiff_tls_write(skiff_tls *tls, const uint8_t *data, size_t length);
/** Bytes read, 0 at the end, -1 when nothing is there yet, -2 when the connection failed. */
ssize_t skiff_tls_read(skiff_tls *tls, uint8_t *data, size_t capacity);
/** Whether bytes read from the socket wait inside the session (poll would not tell). */
bool skiff_tls_has_pending(skiff_tls *tls);
void skiff_tls_free(skiff_tls *tls);

#endif
