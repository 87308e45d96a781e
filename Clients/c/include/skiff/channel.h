/*
 * A skiff/1 channel: one TCP connection to a Skiff server that carries many concurrent calls
 * (docs/PROTOCOL.md §1, §4, §5). The channel runs one I/O thread; calls are made from any number
 * of application threads, each blocking until its step is done.
 *
 * Statuses are returned as values (skiff_status), never printed. Messages are bytes: serialize
 * them with protobuf-c (protobuf_c_message_pack) or anything else.
 *
 * Thread safety: a channel may be used from many threads at once. A call (skiff_call) belongs to
 * one thread at a time, except skiff_call_cancel, which any thread may call while another is
 * blocked in the call. skiff_channel_close must not race with calls still being started.
 */
#ifndef SKIFF_CHANNEL_H
#define SKIFF_CHANNEL_H

#include "skiff/frame.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct skiff_channel skiff_channel;
typedef struct skiff_call skiff_call;

/** How a call ended, or why a step failed. */
typedef struct skiff_status {
    /** A skiff_status_code; unknown codes from the server are kept as sent. */
    uint32_t code;
    /** The status message, NUL-terminated (malloc'd; may be NULL for none). skiff_status_clear
     *  frees it. Messages from the server are passed on exactly; local ones say what happened. */
    char *message;
} skiff_status;

/** Frees the status's message and sets it to OK. Safe on a zeroed status. */
void skiff_status_clear(skiff_status *status);

/** What a channel accepts and how it connects. */
typedef struct skiff_channel_options {
    /** Largest response message accepted (MAX_MESSAGE_SIZE announced to the server). 4 MiB;
     *  1,024 … 2^31−1. The stream window announced is the larger of it and 8 MiB. */
    uint32_t max_message_size;
    /** Largest frame payload accepted (MAX_FRAME_SIZE). 65,536; 16,384 … 16,777,216. */
    uint32_t max_frame_size;
    /** How long to wait for the TCP connection. 10,000 ms. */
    uint32_t connect_timeout_ms;
    /** Bytes a channel queues for its socket (requests, and replies to the server) before senders
     *  wait and the channel stops reading. 1 MiB; at least 64 KiB. */
    uint32_t max_queued_bytes;
    /** false (the default): each request goes to the socket as soon as it is made. true: requests
     *  are held and sent together when the calling thread waits for the channel (receive, finish,
     *  a full window), when 64 KiB are waiting, or on skiff_channel_flush: fewer system calls
     *  for a thread that keeps many calls in flight, but a request made by a thread that then
     *  does something else stays queued until one of those happens. */
    bool batch_writes;
    /** false (the default): plain TCP. true: TLS 1.2 or later (OpenSSL) for skiff_channel_connect,
     *  offering ALPN `skiff/1` and requiring the server to choose it; the server's certificate
     *  must chain to a trusted root and name the server. */
    bool tls;
    /** With tls: a PEM file of the roots to trust; NULL for the system's (OpenSSL's default
     *  locations). Read while connecting. */
    const char *tls_ca_file;
    /** With tls: the name the certificate must carry and, unless it is an IP address, the SNI
     *  sent; NULL for the host given to skiff_channel_connect. */
    const char *tls_server_name;
    /** Keepalive: after this many ms without a byte from the server, while calls are open, the
     *  channel sends a PING; 0 (the default) sends none. */
    uint32_t keepalive_interval_ms;
    /** How long a keepalive PING may go unanswered before the connection counts as dead: its
     *  calls fail with UNAVAILABLE. 20,000 ms; at least 1. */
    uint32_t keepalive_timeout_ms;
    /** Ping while no call is open, too. The server allows that only as often as its
     *  KEEPALIVE_MIN_INTERVAL_MS (§5.1), so the channel then never pings more often than that. */
    bool keepalive_without_calls;
    /** Reconnecting (channels from skiff_channel_connect): when the connection is lost or the
     *  server drains it, the next call connects again. After a failed attempt, calls fail at once
     *  with UNAVAILABLE (the reason and when the next attempt comes) until the backoff has passed:
     *  first backoff_initial_ms (100), then 1.6 times longer each time, with ±20 % jitter, up to
     *  backoff_max_ms (30,000). A successful attempt resets it. */
    uint32_t backoff_initial_ms;
    uint32_t backoff_max_ms;
    /** How often a call the server did not process (a refused stream, or one above a GOAWAY's
     *  last stream id) is opened again on its own, on this connection or the next: 3; 0 for never.
     *  Calls the server has begun to answer are never repeated. */
    uint32_t max_transparent_retries;
    /** Request bytes a call keeps to repeat them in such a retry: 65,536. A call that has sent
     *  more is not retried (it fails with UNAVAILABLE, "not processed"). */
    uint32_t retry_buffer_bytes;
} skiff_channel_options;

void skiff_channel_options_defaults(skiff_channel_options *options);

/**
 * Connects to `host` (a name or address) and `port`, sends the preface and SETTINGS and starts
 * the I/O thread; with `options->tls`, the TLS handshake comes first, bounded by the same
 * connect_timeout_ms. On failure returns NULL and sets `status` (UNAVAILABLE, with the reason:
 * the address, the refusal, the certificate check that failed; INVALID_ARGUMENT for options out
 * of range). `options` may be NULL for the defaults.
 */
skiff_channel *skiff_channel_connect(
    const char *host, uint16_t port, const skiff_channel_options *options, skiff_status *status);

/**
 * Makes a channel of a stream socket the caller has connected (TCP, a Unix domain socket, a
 * socketpair), in plain skiff/1 (`options->tls` is ignored): the channel owns `fd` from then on
 * and closes it. It cannot connect again: once that connection ends, calls fail with UNAVAILABLE.
 * On failure returns NULL, sets `status` and closes `fd`.
 */
skiff_channel *skiff_channel_adopt(int fd, const skiff_channel_options *options, skiff_status *status);

/**
 * Closes the connection: calls still open fail with UNAVAILABLE; waits for the I/O thread. Calls
 * not yet finished must still be finished (skiff_call_finish) afterwards; the channel's memory
 * goes with the last of them.
 */
void skiff_channel_close(skiff_channel *channel);

/** Sends what is queued now (with batch_writes). Any thread. */
void skiff_channel_flush(skiff_channel *channel);

/** Per call. Zero-initialize for no deadline and no metadata. */
typedef struct skiff_call_options {
    /** The deadline, relative to the start of the call; 0 for none (beyond about three years is
     *  the same). Sent as grpc-timeout, ahead of the metadata, and watched locally: when it
     *  passes the call fails with DEADLINE_EXCEEDED. */
    int64_t timeout_ms;
    /** Request metadata, sent in order. Keys lower case ([0-9a-z_.-]); values of keys ending in
     *  "-bin" are bytes, others printable ASCII. */
    const skiff_metadata_entry *metadata;
    size_t metadata_count;
} skiff_call_options;

/**
 * A unary call: sends `request` to `path` ("/package.Service/Method") and puts the response
 * message in `response` (its length reset first; the buffer is reused). Returns the status code
 * and fills `status` (may be NULL).
 */
uint32_t skiff_unary(skiff_channel *channel, const char *path, skiff_bytes request, skiff_buffer *response,
    const skiff_call_options *options, skiff_status *status);

/** Starts a call of any kind; NULL only when memory runs out. Failures show in its steps. */
skiff_call *skiff_call_start(skiff_channel *channel, const char *path, const skiff_call_options *options);

/**
 * Sends one request message, waiting for flow-control credit. Returns SKIFF_STATUS_OK, or the
 * call's failure (then skiff_call_finish tells the rest). `last` ends the client's side with it.
 */
uint32_t skiff_call_send(skiff_call *call, skiff_bytes message, bool last);

/** Ends the client's side without a message (HALF_CLOSE, or END_STREAM on the HEADERS). */
uint32_t skiff_call_half_close(skiff_call *call);

/**
 * Waits for the next response message and puts it in `message` (length reset first). Returns 1
 * with a message, 0 when the response has ended (skiff_call_finish gives its status), -1 when
 * the call failed.
 */
int skiff_call_receive(skiff_call *call, skiff_buffer *message);

/** The response's initial metadata (empty until it arrives); valid until skiff_call_finish. */
skiff_metadata_block skiff_call_initial_metadata(skiff_call *call);
/** The response's trailing metadata (empty until the status is known); valid until finish. */
skiff_metadata_block skiff_call_trailing_metadata(skiff_call *call);

/**
 * Cancels the call (RST_STREAM CANCELLED); its steps then fail with CANCELLED. Any thread may call
 * it while the call is alive, i.e. before skiff_call_finish has been entered for it.
 */
void skiff_call_cancel(skiff_call *call);

/**
 * Ends the client's side if it is still open (HALF_CLOSE), drops response messages not received
 * (returning their flow-control credit, so the server can finish), waits for the call's status
 * (bounded by its deadline), fills `status` (may be NULL), frees the call and returns the code. To
 * end a call at once, cancel it first. The call must not be used afterwards.
 */
uint32_t skiff_call_finish(skiff_call *call, skiff_status *status);

#ifdef __cplusplus
}
#endif

#endif /* SKIFF_CHANNEL_H */
