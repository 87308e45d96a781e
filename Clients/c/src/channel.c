/* A skiff/1 channel: see include/skiff/channel.h and docs/PROTOCOL.md §1, §4, §5.
 *
 * A channel holds at most one connection that takes new calls (`current`), plus connections that
 * no longer do but still carry calls (after a GOAWAY) or whose I/O thread has not been joined yet
 * (`retired`). One mutex guards all of it. Each connection has its own I/O thread. A call whose
 * stream the server did not process (refused, or above a GOAWAY's last stream id) is opened again
 * by the thread that owns it, on the current connection, connecting if need be: a transparent
 * retry, possible while the request messages sent so far are still kept for it. */
#include "skiff/channel.h"

#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct connection connection;

struct skiff_call {
    skiff_channel *channel;
    connection *connection; /* its stream's connection (a reference); NULL before one opens or for a retry */
    uint32_t stream_id;     /* 0 while no stream is open */
    int64_t deadline;       /* CLOCK_MONOTONIC nanoseconds; 0 for none */
    int64_t send_window;
    int64_t receive_window; /* MESSAGE bytes the server may still send on this stream */
    bool headers_received;
    bool local_ended;      /* the client's side is over */
    bool ended_by_message; /* ...by the `last` flag of a message (else by HALF_CLOSE) */
    bool done;             /* the status is known; the stream is no longer in the table */
    bool response_ended;   /* TRAILERS (or RST_STREAM) ended the response */
    uint32_t code;
    char *message;
    size_t queue_read;      /* in `queue`, below */
    size_t queued_messages;
    bool assembling;
    size_t assembly_start;
    /* What opening the stream again takes: the path and the metadata (in `head`) and, while
     * `replayable`, every request message sent (in `replay`). Kept until the server answers
     * (`committed`). */
    const char *path;
    const skiff_metadata_entry *metadata;
    size_t metadata_count;
    bool replayable;
    bool committed;
    bool retry_pending; /* not processed: the owner opens a new stream at its next step */
    uint32_t retries;
    uint64_t events; /* counts what happened to the call (notify): a thread reading for it stops */
    skiff_call *waiting_prev, *waiting_next; /* in its connection's list of waiting calls */
    skiff_call *next_spare;                  /* in the channel's calls kept for reuse */
    /* From here on, kept when the struct is reused for another call (the rest is zeroed): */
    pthread_cond_t changed;
    skiff_buffer initial;  /* the response's initial metadata block, as received */
    skiff_buffer trailing; /* its trailing metadata block */
    /* Complete response messages waiting for the application: records of a u32 length and the
     * bytes, from `queue_read` on; a message being reassembled is the last, unfinished record. */
    skiff_buffer queue;
    /* The request messages kept for a retry: records of a u32 length, a byte `last`, the bytes. */
    skiff_buffer replay;
    /* The metadata entries, the path (NUL-terminated) and the metadata's bytes. */
    skiff_buffer head;
    /* The last response message taken by skiff_call_receive_kept: the owner's alone. */
    skiff_buffer reply;
};

struct connection {
    skiff_channel *channel;
    int fd;
    int wake[2]; /* a pipe: callers wake the I/O thread when bytes wait for the socket */
    pthread_t thread;
    bool thread_done; /* the I/O thread has let go of the socket and buffers */
    bool joined;
    skiff_tls *tls; /* NULL for plain TCP */
    skiff_settings peer;
    int64_t send_window;    /* the connection's */
    int64_t receive_window; /* MESSAGE bytes the server may still send */
    uint64_t unacknowledged; /* MESSAGE bytes read whose credit is not returned yet */
    bool peer_settings_received;
    bool settings_acknowledged; /* our SETTINGS' limits apply from then on (§1.3) */
    uint32_t next_stream_id;
    skiff_buffer out;
    size_t out_start;
    skiff_frame_decoder decoder;
    /* Open streams by id: open addressing, linear probing, deletion by backward shift. */
    skiff_call **table;
    size_t table_capacity;
    size_t open_streams;
    bool broken;
    bool draining; /* a GOAWAY came: no new streams */
    bool retired;  /* no longer the channel's current connection: it ends once its streams have */
    uint32_t goaway_last_stream_id;
    /* Keepalive (CLOCK_MONOTONIC ns): the last bytes read, the last PING sent, the one unanswered. */
    int64_t last_read_ns;
    int64_t last_ping_ns;
    bool ping_outstanding;
    uint8_t ping_opaque[8];
    size_t references; /* calls whose stream is or was on it */
    connection *next;  /* in the channel's list of retired connections */
    /* Who reads the socket: the I/O thread, or, while it is parked, an application thread waiting
     * for its own call (the leader), which then needs no hand-off from another thread. */
    uint8_t *chunk;
    bool tls_pending; /* bytes wait inside the TLS session: read them without polling */
    pthread_cond_t io_park;
    bool io_parked;
    bool leader;
    int64_t last_lead_ns;
    skiff_call *lead_call; /* the call the leader reads for */
    skiff_call *waiting;   /* calls whose thread waits for a frame, not reading itself */
    size_t space_waiters;  /* threads waiting for credit, queue room or a free stream on it */
};

struct skiff_channel {
    pthread_mutex_t lock;
    pthread_cond_t space; /* flow-control credit, room in a queue, a free stream, a connection */
    skiff_channel_options options;
    uint32_t stream_receive_window; /* the INITIAL_STREAM_WINDOW announced */
    /* The channel and each call not yet finished hold a reference: the memory goes with the last. */
    size_t references;
    bool closing;
    connection *current;
    connection *retired;
    /* Reconnecting (channels made by skiff_channel_connect): where to, and the backoff. */
    bool can_reconnect;
    char *host;
    uint16_t port;
    char *tls_ca_file;
    char *tls_server_name;
    bool connecting;     /* a thread is connecting, the lock released */
    int64_t retry_at_ns; /* no attempt before this after a failed one */
    uint32_t backoff_ms;
    char failure[256]; /* why the last attempt failed, or why the connection was lost */
    /* Finished calls kept for reuse (their condition and buffers), and a scratch buffer for
     * checking request heads: no allocation per call once these have grown. */
    skiff_call *spare;
    size_t spare_count;
    skiff_buffer probe;
};

/* The connection window the client gives the server (INITIAL_CONNECTION_WINDOW's default, not
 * announced), and the credit returned at once (§4.8). */
#define CONNECTION_WINDOW 16777216
#define CONNECTION_CREDIT_BATCH (CONNECTION_WINDOW / 4)

/* ---- Helpers ---- */

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static char *copy_text(const char *text, size_t length) {
    char *copy = malloc(length + 1);
    if (!copy) return NULL;
    if (length) memcpy(copy, text, length);
    copy[length] = 0;
    return copy;
}

void skiff_status_clear(skiff_status *status) {
    free(status->message);
    status->message = NULL;
    status->code = SKIFF_STATUS_OK;
}

void skiff_channel_options_defaults(skiff_channel_options *options) {
    options->max_message_size = 4194304;
    options->max_frame_size = 65536;
    options->connect_timeout_ms = 10000;
    options->max_queued_bytes = 1048576;
    options->batch_writes = false;
    options->tls = false;
    options->tls_ca_file = NULL;
    options->tls_server_name = NULL;
    options->keepalive_interval_ms = 0;
    options->keepalive_timeout_ms = 20000;
    options->keepalive_without_calls = false;
    options->backoff_initial_ms = 100;
    options->backoff_max_ms = 30000;
    options->max_transparent_retries = 3;
    options->retry_buffer_bytes = 65536;
}

static void set_status(skiff_status *status, uint32_t code, const char *message) {
    if (!status) return;
    status->code = code;
    status->message = message ? copy_text(message, strlen(message)) : NULL;
}

/* Waits on `cond` until woken or `deadline` (0: none); returns false when the deadline passed. */
static bool wait_until(pthread_cond_t *cond, pthread_mutex_t *lock, int64_t deadline) {
    if (deadline == 0) {
        pthread_cond_wait(cond, lock);
        return true;
    }
    struct timespec at = {(time_t)(deadline / 1000000000), (long)(deadline % 1000000000)};
    return pthread_cond_timedwait(cond, lock, &at) != ETIMEDOUT;
}

static int make_condition(pthread_cond_t *cond) {
    pthread_condattr_t attributes;
    if (pthread_condattr_init(&attributes) != 0) return -1;
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    int result = pthread_cond_init(cond, &attributes);
    pthread_condattr_destroy(&attributes);
    return result;
}

/* Gets whoever reads the socket (the I/O thread or a leader) out of poll: a byte on the wake pipe. */
static void poke(connection *c) {
    if (c->wake[1] < 0) return;
    uint8_t byte = 1;
    ssize_t ignored = write(c->wake[1], &byte, 1);
    (void)ignored;
}

/* Gets the I/O thread going: out of poll (the wake pipe), or out of its park when no
 * application thread reads in its place. */
static void wake(connection *c) {
    if (c->io_parked && !c->leader) {
        c->io_parked = false;
        pthread_cond_signal(&c->io_park);
    }
    poke(c);
}

/* Something happened to the call: its thread, waiting or reading, looks again. */
static void notify(skiff_call *call) {
    call->events++;
    pthread_cond_broadcast(&call->changed);
}

/* ---- The stream table ---- */

static size_t slot_of(const connection *c, uint32_t id) {
    return ((size_t)id * 2654435761u) & (c->table_capacity - 1);
}

static skiff_call *find_call(const connection *c, uint32_t id) {
    if (c->table_capacity == 0) return NULL;
    for (size_t i = slot_of(c, id);; i = (i + 1) & (c->table_capacity - 1)) {
        skiff_call *call = c->table[i];
        if (!call) return NULL;
        if (call->stream_id == id) return call;
    }
}

static int insert_call(connection *c, skiff_call *call);

static int grow_table(connection *c) {
    size_t old_capacity = c->table_capacity;
    skiff_call **old = c->table;
    size_t capacity = old_capacity ? old_capacity * 2 : 64;
    skiff_call **table = calloc(capacity, sizeof *table);
    if (!table) return -1;
    c->table = table;
    c->table_capacity = capacity;
    c->open_streams = 0;
    for (size_t i = 0; i < old_capacity; i++)
        if (old[i]) insert_call(c, old[i]);
    free(old);
    return 0;
}

static int insert_call(connection *c, skiff_call *call) {
    if ((c->open_streams + 1) * 2 > c->table_capacity && grow_table(c) != 0) return -1;
    size_t i = slot_of(c, call->stream_id);
    while (c->table[i]) i = (i + 1) & (c->table_capacity - 1);
    c->table[i] = call;
    c->open_streams++;
    return 0;
}

static void remove_call(connection *c, skiff_call *call) {
    size_t mask = c->table_capacity - 1;
    size_t i = slot_of(c, call->stream_id);
    while (c->table[i] != call) {
        if (!c->table[i]) return;
        i = (i + 1) & mask;
    }
    c->table[i] = NULL;
    c->open_streams--;
    /* Shift back the entries of the probe run that follows, so lookups still find them. */
    for (size_t j = (i + 1) & mask; c->table[j]; j = (j + 1) & mask) {
        size_t home = slot_of(c, c->table[j]->stream_id);
        bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (between) continue;
        c->table[i] = c->table[j];
        c->table[j] = NULL;
        i = j;
    }
    /* A connection that takes no new streams ends with its last one. */
    if (c->open_streams == 0 && (c->retired || c->draining)) wake(c);
}

/* ---- Writing to the socket ---- */

static void fail_connection(connection *c, const char *reason);

/* Sends what is queued without blocking. */
static void flush_locked(connection *c) {
    if (c->fd < 0 || c->broken) {
        c->out.length = c->out_start = 0;
        return;
    }
    while (c->out_start < c->out.length) {
        const uint8_t *data = c->out.data + c->out_start;
        size_t length = c->out.length - c->out_start;
        ssize_t sent = c->tls ? skiff_tls_write(c->tls, data, length)
                              : send(c->fd, data, length, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent < 0 && !c->tls && errno == EINTR) continue;
        if (sent == 0 || (sent < 0 && !c->tls && (errno == EAGAIN || errno == EWOULDBLOCK))) break;
        if (sent < 0) {
            fail_connection(c, "the connection failed while sending");
            return;
        }
        c->out_start += (size_t)sent;
    }
    if (c->out_start == c->out.length) {
        c->out.length = 0;
        c->out_start = 0;
    }
    pthread_cond_broadcast(&c->channel->space);
}

/* Sends what is queued; the I/O thread finishes if the socket is full. */
static void send_queued_locked(connection *c) {
    flush_locked(c);
    if (c->out.length > c->out_start) wake(c);
}

static size_t queued_bytes(const connection *c) { return c->out.length - c->out_start; }

/* After frames were queued: send now, or, with batch_writes, once the calling thread waits or 64 KiB
 * are waiting. */
static void push_locked(connection *c) {
    if (c->channel->options.batch_writes && queued_bytes(c) < 65536) return;
    send_queued_locked(c);
}

/* Before a thread waits for the channel: nothing it queued may be left unsent. */
static void flush_before_wait(skiff_channel *channel) {
    if (channel->current && queued_bytes(channel->current) > 0) send_queued_locked(channel->current);
    for (connection *c = channel->retired; c; c = c->next)
        if (queued_bytes(c) > 0) send_queued_locked(c);
}

void skiff_channel_flush(skiff_channel *channel) {
    pthread_mutex_lock(&channel->lock);
    flush_before_wait(channel);
    pthread_mutex_unlock(&channel->lock);
}

/* ---- Connections' lives ---- */

/* Frees a connection's struct once its I/O thread is joined and no call refers to it. */
static void free_connection_if_unused(skiff_channel *channel, connection *c) {
    if (!c->joined || c->references > 0 || channel->current == c) return;
    for (connection **at = &channel->retired; *at; at = &(*at)->next) {
        if (*at == c) {
            *at = c->next;
            break;
        }
    }
    pthread_cond_destroy(&c->io_park);
    free(c);
}

/* Drops a call's reference to its connection. */
static void let_go_of_connection(skiff_call *call) {
    connection *c = call->connection;
    if (!c) return;
    call->connection = NULL;
    c->references--;
    free_connection_if_unused(call->channel, c);
}

/* The current connection takes no new streams from now on; it ends once its streams have. */
static void retire_current(skiff_channel *channel) {
    connection *c = channel->current;
    if (!c) return;
    channel->current = NULL;
    c->retired = true;
    c->next = channel->retired;
    channel->retired = c;
    wake(c);
}

/* Joins the I/O threads that have ended and frees what nothing uses. A thread that has set
 * thread_done has let go of the lock for good, so joining it here cannot deadlock. */
static void collect_locked(skiff_channel *channel) {
    for (connection *c = channel->retired, *next; c; c = next) {
        next = c->next;
        if (c->thread_done && !c->joined) {
            pthread_join(c->thread, NULL);
            c->joined = true;
        }
        free_connection_if_unused(channel, c);
    }
}

/* ---- Ending calls ---- */

/* Takes a call's stream out of its connection's table, optionally resetting it. */
static void close_stream(skiff_call *call, bool reset, uint32_t reset_code) {
    connection *c = call->connection;
    if (!c || call->stream_id == 0 || find_call(c, call->stream_id) != call) return;
    remove_call(c, call);
    if (reset && !c->broken) {
        skiff_bytes none = {NULL, 0};
        if (skiff_write_rst_stream(&c->out, call->stream_id, 0, reset_code, none) == 0) push_locked(c);
    }
    pthread_cond_broadcast(&call->channel->space); /* a stream is free */
}

/* Lets go of the kept request messages (the buffer stays for the call struct's next use): by the
 * call's owner only (a replay may be reading them). */
static void drop_replay(skiff_call *call) {
    call->replayable = false;
    call->replay.length = 0;
}

/* Ends a call with a status: no more frames of its stream are read; optionally resets it. */
static void end_call(skiff_call *call, uint32_t code, const char *message, size_t message_length, bool reset,
    uint32_t reset_code) {
    if (call->done) return;
    call->done = true;
    call->retry_pending = false;
    call->code = code;
    free(call->message);
    call->message = message && message_length ? copy_text(message, message_length) : NULL;
    close_stream(call, reset, reset_code);
    notify(call);
    pthread_cond_broadcast(&call->channel->space);
}

static void end_call_text(skiff_call *call, uint32_t code, const char *message, bool reset, uint32_t reset_code) {
    end_call(call, code, message, strlen(message), reset, reset_code);
}

/* The server did not process the call's stream: its owner opens a new one at its next step (a
 * transparent retry) while the request is still kept and retries are left; else it ends. */
static void retry_or_end(skiff_call *call, uint32_t code, const char *message, size_t message_length) {
    skiff_channel *channel = call->channel;
    if (call->done) return;
    if (call->committed || !call->replayable || call->retries >= channel->options.max_transparent_retries ||
        channel->closing) {
        end_call(call, code, message, message_length, false, 0);
        return;
    }
    call->retries++;
    close_stream(call, false, 0);
    let_go_of_connection(call);
    call->stream_id = 0;
    call->headers_received = false;
    call->retry_pending = true;
    notify(call);
    pthread_cond_broadcast(&channel->space);
}

/* Checks a call's own deadline; true if it has passed (the call is then ended). */
static bool expired(skiff_call *call) {
    if (call->done || call->deadline == 0 || now_ns() < call->deadline) return call->done;
    end_call_text(call, SKIFF_STATUS_DEADLINE_EXCEEDED, "the call's deadline passed", true, SKIFF_STATUS_CANCELLED);
    return true;
}

static void fail_connection(connection *c, const char *reason) {
    if (c->broken) return;
    c->broken = true;
    skiff_channel *channel = c->channel;
    /* Why calls fail from now on: the current connection's end (an old one ending says nothing). */
    if (c == channel->current) snprintf(channel->failure, sizeof channel->failure, "%s", reason);
    if (c->fd >= 0) shutdown(c->fd, SHUT_RDWR); /* the server sees the end at once (§5.3) */
    for (size_t i = 0; i < c->table_capacity;) {
        skiff_call *call = c->table[i];
        if (call) {
            end_call_text(call, SKIFF_STATUS_UNAVAILABLE, reason, false, 0); /* shifts the table */
        } else {
            i++;
        }
    }
    wake(c);
    pthread_cond_broadcast(&channel->space);
}

/* ---- Reading frames ---- */

/* The largest response message accepted now: ours once the server has ACKed our SETTINGS; before,
 * a stricter limit than the default is not yet in force. */
static uint32_t message_limit(const connection *c) {
    uint32_t ours = c->channel->options.max_message_size;
    return c->settings_acknowledged || ours > 4194304 ? ours : 4194304;
}

static void connection_error(connection *c, const char *why) {
    char reason[160];
    snprintf(reason, sizeof reason, "the connection broke: %s", why ? why : "protocol violation");
    fail_connection(c, reason);
}

static int copy_block(skiff_buffer *into, skiff_metadata_block block) {
    into->length = 0;
    if (skiff_buffer_reserve(into, block.encoded.length) != 0) return -1;
    memcpy(into->data, block.encoded.data, block.encoded.length);
    into->length = block.encoded.length;
    return 0;
}

static void apply_settings(connection *c, const skiff_settings *settings) {
    int64_t stream_delta = (int64_t)settings->initial_stream_window - c->peer.initial_stream_window;
    c->send_window +=
        (int64_t)settings->initial_connection_window - c->peer.initial_connection_window;
    for (size_t i = 0; i < c->table_capacity; i++)
        if (c->table[i]) c->table[i]->send_window += stream_delta;
    c->peer = *settings;
    pthread_cond_broadcast(&c->channel->space);
}

/* The queue of complete responses holds records of a big-endian u32 length, then the bytes. */
static uint32_t record_length(const uint8_t *at) {
    return (uint32_t)at[0] << 24 | (uint32_t)at[1] << 16 | (uint32_t)at[2] << 8 | at[3];
}

static void receive_message(connection *c, skiff_call *call, const skiff_frame_header *h, skiff_bytes payload) {
    if ((int64_t)payload.length > call->receive_window) {
        connection_error(c, "the server overran a stream's window");
        return;
    }
    call->receive_window -= (int64_t)payload.length;
    if (!call->assembling && (h->flags & SKIFF_FLAG_COMPRESSED)) {
        end_call_text(call, SKIFF_STATUS_INTERNAL, "a compressed response message, but no encoding was agreed", true,
            SKIFF_STATUS_CANCELLED);
        return;
    }
    skiff_buffer *queue = &call->queue;
    if (!call->assembling) {
        if (skiff_buffer_reserve(queue, 4) != 0) goto no_memory;
        call->assembly_start = queue->length;
        memset(queue->data + queue->length, 0, 4);
        queue->length += 4;
        call->assembling = true;
    }
    size_t so_far = queue->length - call->assembly_start - 4;
    if (payload.length > message_limit(c) - so_far) {
        end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "a response message over the client's MAX_MESSAGE_SIZE",
            true, SKIFF_STATUS_RESOURCE_EXHAUSTED);
        return;
    }
    if (skiff_buffer_reserve(queue, payload.length) != 0) goto no_memory;
    if (payload.length) memcpy(queue->data + queue->length, payload.data, payload.length);
    queue->length += payload.length;
    if (h->flags & SKIFF_FLAG_MORE) return;
    uint32_t length = (uint32_t)(queue->length - call->assembly_start - 4);
    uint8_t *at = queue->data + call->assembly_start;
    at[0] = (uint8_t)(length >> 24), at[1] = (uint8_t)(length >> 16), at[2] = (uint8_t)(length >> 8);
    at[3] = (uint8_t)length;
    call->assembling = false;
    call->queued_messages++;
    notify(call);
    return;
no_memory:
    end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory for a response", true,
        SKIFF_STATUS_RESOURCE_EXHAUSTED);
}

static void handle_frame(connection *c, const skiff_frame_header *h, skiff_bytes payload) {
    const char *why = NULL;
    bool first_settings = h->type == SKIFF_FRAME_SETTINGS && !(h->flags & SKIFF_FLAG_ACK);
    if (first_settings == c->peer_settings_received) {
        connection_error(c, first_settings ? "a second SETTINGS" : "the server's first frame is not SETTINGS");
        return;
    }
    if (h->stream_id >= c->next_stream_id) {
        connection_error(c, "a frame for a stream never opened");
        return;
    }
    skiff_call *call = h->stream_id ? find_call(c, h->stream_id) : NULL;
    switch (h->type) {
    case SKIFF_FRAME_SETTINGS: {
        if (h->flags & SKIFF_FLAG_ACK) {
            if (skiff_empty_read(payload, &why) != SKIFF_READ_OK) {
                connection_error(c, why);
                return;
            }
            /* Our limits are in force now, the stricter ones included. */
            c->settings_acknowledged = true;
            c->decoder.max_frame_size = c->channel->options.max_frame_size;
            return;
        }
        c->peer_settings_received = true;
        skiff_settings settings = c->peer;
        if (skiff_settings_read(payload, &settings, &why) != SKIFF_READ_OK) { connection_error(c, why); return; }
        apply_settings(c, &settings);
        if (skiff_write_settings_ack(&c->out) != 0) { fail_connection(c, "out of memory"); return; }
        return;
    }
    case SKIFF_FRAME_PING: {
        uint8_t opaque[8];
        if (skiff_ping_read(payload, opaque, &why) != SKIFF_READ_OK) { connection_error(c, why); return; }
        if (!(h->flags & SKIFF_FLAG_ACK) && skiff_write_ping(&c->out, true, opaque) != 0)
            fail_connection(c, "out of memory");
        if ((h->flags & SKIFF_FLAG_ACK) && c->ping_outstanding && memcmp(opaque, c->ping_opaque, 8) == 0)
            c->ping_outstanding = false;
        return;
    }
    case SKIFF_FRAME_GOAWAY: {
        skiff_goaway goaway;
        if (skiff_goaway_read(payload, &goaway, &why) != SKIFF_READ_OK) { connection_error(c, why); return; }
        c->draining = true;
        c->goaway_last_stream_id = goaway.last_stream_id;
        /* New calls go to a new connection; this one ends with its last stream. */
        if (c->channel->current == c) retire_current(c->channel);
        pthread_cond_broadcast(&c->channel->space);
        /* Streams above the last id were not processed, whatever the status: retried elsewhere. */
        static const char not_processed[] = "the server is draining; the call was not processed";
        for (size_t i = 0; i < c->table_capacity;) {
            skiff_call *open = c->table[i];
            if (open && open->stream_id > goaway.last_stream_id)
                retry_or_end(open, SKIFF_STATUS_UNAVAILABLE, not_processed, sizeof not_processed - 1); /* shifts */
            else
                i++;
        }
        if (goaway.status != SKIFF_STATUS_OK) {
            char reason[200];
            int shown = goaway.debug.length > 120 ? 120 : (int)goaway.debug.length;
            snprintf(reason, sizeof reason, "the server closed the connection (%s: %.*s)",
                skiff_status_name(goaway.status), shown, (const char *)goaway.debug.data);
            snprintf(c->channel->failure, sizeof c->channel->failure, "%s", reason);
            fail_connection(c, reason);
        }
        return;
    }
    case SKIFF_FRAME_WINDOW_UPDATE: {
        uint32_t increment;
        if (skiff_window_update_read(payload, &increment, &why) != SKIFF_READ_OK) { connection_error(c, why); return; }
        int64_t *window = h->stream_id == 0 ? &c->send_window : call ? &call->send_window : NULL;
        if (!window) return; /* an ended stream */
        if (increment == 0 || *window + increment > (int64_t)SKIFF_MAX_STREAM_ID)
            { connection_error(c, "a WINDOW_UPDATE of 0 or beyond 2^31-1"); return; }
        *window += increment;
        pthread_cond_broadcast(&c->channel->space);
        return;
    }
    case SKIFF_FRAME_HEADERS: {
        skiff_headers headers;
        if (skiff_headers_read(payload, &headers, &why) != SKIFF_READ_OK) { connection_error(c, why); return; }
        if (!call || call->done) return;
        call->committed = true; /* the server took the call: no transparent retry from here on */
        if (call->headers_received || call->queued_messages > 0 || call->assembling) {
            end_call_text(call, SKIFF_STATUS_INTERNAL, "the server sent a second HEADERS, or one after a message",
                true, SKIFF_STATUS_CANCELLED);
            return;
        }
        call->headers_received = true;
        skiff_status_code checked = skiff_metadata_check(&headers.metadata, 8192, &why);
        if (checked == SKIFF_STATUS_OK && copy_block(&call->initial, headers.metadata) != 0) {
            checked = SKIFF_STATUS_RESOURCE_EXHAUSTED;
            why = "out of memory for the response metadata";
        }
        if (checked != SKIFF_STATUS_OK)
            end_call_text(call, checked, why, true,
                checked == SKIFF_STATUS_RESOURCE_EXHAUSTED ? SKIFF_STATUS_RESOURCE_EXHAUSTED : SKIFF_STATUS_CANCELLED);
        notify(call);
        return;
    }
    case SKIFF_FRAME_MESSAGE:
        if ((int64_t)payload.length > c->receive_window) {
            connection_error(c, "the server overran the connection's window");
            return;
        }
        c->receive_window -= (int64_t)payload.length;
        c->unacknowledged += payload.length;
        if (call && !call->done) {
            call->committed = true;
            receive_message(c, call, h, payload);
        }
        return;
    case SKIFF_FRAME_TRAILERS: {
        skiff_trailers trailers;
        if (skiff_trailers_read(payload, &trailers, &why) != SKIFF_READ_OK) { connection_error(c, why); return; }
        if (!call || call->done) return;
        call->committed = true;
        skiff_status_code checked = skiff_metadata_check(&trailers.metadata, 8192, &why);
        if (checked == SKIFF_STATUS_OK && copy_block(&call->trailing, trailers.metadata) != 0) {
            checked = SKIFF_STATUS_RESOURCE_EXHAUSTED;
            why = "out of memory for the trailers";
        }
        if (checked != SKIFF_STATUS_OK) {
            end_call_text(call, checked, why, false, 0); /* the stream has ended: no reset */
            return;
        }
        call->response_ended = true;
        if (call->assembling) {
            end_call_text(call, SKIFF_STATUS_INTERNAL, "the response ended in the middle of a message", false, 0);
            return;
        }
        end_call(call, trailers.status, (const char *)trailers.message.data, trailers.message.length, false, 0);
        return;
    }
    case SKIFF_FRAME_RST_STREAM: {
        skiff_rst_stream reset;
        if (skiff_rst_stream_read(payload, &reset, &why) != SKIFF_READ_OK) { connection_error(c, why); return; }
        if (!call || call->done) return;
        bool refused = h->flags & SKIFF_FLAG_REFUSED;
        const char *text = reset.reason.length ? (const char *)reset.reason.data
                           : refused            ? "the server refused the stream (not processed)"
                                                : "the server reset the stream";
        size_t length = reset.reason.length ? reset.reason.length : strlen(text);
        if (refused) retry_or_end(call, reset.status, text, length); /* not processed: a transparent retry */
        if (call->done || !refused) {
            call->response_ended = true;
            end_call(call, reset.status, text, length, false, 0);
        }
        return;
    }
    case SKIFF_FRAME_HALF_CLOSE:
        { connection_error(c, "HALF_CLOSE from the server"); return; }
    default:
        return; /* unknown types on stream 0 are skipped */
    }
}

/* Keepalive (§5.1): sends a PING when one is due, fails the connection when one went unanswered
 * too long; returns the ms until the next thing to do (at most 1,000). */
static int keepalive_locked(connection *c) {
    const skiff_channel_options *o = &c->channel->options;
    if (o->keepalive_interval_ms == 0) return 1000;
    int64_t now = now_ns();
    int64_t next;
    if (c->ping_outstanding) {
        next = c->last_ping_ns + (int64_t)o->keepalive_timeout_ms * 1000000;
        if (now >= next) {
            char reason[120];
            snprintf(reason, sizeof reason, "the server did not answer a keepalive PING within %u ms",
                (unsigned)o->keepalive_timeout_ms);
            fail_connection(c, reason);
            return 0;
        }
    } else {
        bool idle = c->open_streams == 0;
        if (idle && !o->keepalive_without_calls) return 1000;
        /* While no call is open the server counts PINGs closer than its minimum interval. */
        int64_t interval = (int64_t)o->keepalive_interval_ms;
        if (idle && interval < (int64_t)c->peer.keepalive_min_interval_ms)
            interval = c->peer.keepalive_min_interval_ms;
        int64_t quiet_since = c->last_read_ns > c->last_ping_ns ? c->last_read_ns : c->last_ping_ns;
        next = quiet_since + interval * 1000000;
        if (now >= next) {
            uint64_t count = (uint64_t)now;
            for (int i = 0; i < 8; i++) c->ping_opaque[i] = (uint8_t)(count >> (56 - 8 * i));
            if (skiff_write_ping(&c->out, false, c->ping_opaque) != 0) {
                fail_connection(c, "out of memory");
                return 0;
            }
            c->ping_outstanding = true;
            c->last_ping_ns = now;
            flush_locked(c);
            return (int)(o->keepalive_timeout_ms < 1000 ? o->keepalive_timeout_ms : 1000);
        }
    }
    int64_t wait_ms = (next - now + 999999) / 1000000;
    return wait_ms < 1000 ? (int)wait_ms : 1000;
}


/* ---- The I/O thread ---- */

/* Lets go of what only the I/O thread used: the socket, the session, the buffers. */
static void release_transport(connection *c) {
    skiff_tls_free(c->tls);
    c->tls = NULL;
    if (c->fd >= 0) close(c->fd);
    if (c->wake[0] >= 0) close(c->wake[0]);
    if (c->wake[1] >= 0) close(c->wake[1]);
    c->fd = c->wake[0] = c->wake[1] = -1;
    skiff_buffer_free(&c->out);
    c->out_start = 0;
    skiff_frame_decoder_free(&c->decoder);
    free(c->table);
    c->table = NULL;
    c->table_capacity = 0;
    free(c->chunk);
    c->chunk = NULL;
}

/* Hands the reading to a waiting call's thread when nobody reads: the I/O thread is parked and
 * no thread leads. The woken thread reads for itself, or passes this on when it leaves. */
static void pass_reading(connection *c) {
    if (!c || !c->io_parked || c->leader) return;
    if (c->waiting)
        pthread_cond_signal(&c->waiting->changed);
    else if (c->space_waiters > 0 || queued_bytes(c) > 0)
        wake(c); /* threads wait for credit or a free stream, or bytes for the socket: the I/O thread reads */
}

/* One round of I/O: waits up to `wait_ms` for the socket, sends what is queued, reads what came
 * and handles its frames. By the I/O thread, or by the leader; the lock held, released while
 * waiting (and reading, without TLS). */
static void io_step(connection *c, int wait_ms) {
    skiff_channel *channel = c->channel;
    bool want_out = queued_bytes(c) > 0;
    /* A server that sends but does not read would make the replies (PING ACKs, WINDOW_UPDATEs)
     * pile up: while they wait for the socket, nothing more is read. */
    bool want_in = queued_bytes(c) < channel->options.max_queued_bytes;
    bool pending = c->tls_pending && want_in;
    pthread_mutex_unlock(&channel->lock);
    struct pollfd fds[2] = {
        {c->fd, (short)((want_in ? POLLIN : 0) | (want_out ? POLLOUT : 0)), 0},
        {c->wake[0], POLLIN, 0},
    };
    int ready = poll(fds, 2, pending ? 0 : wait_ms);
    pthread_mutex_lock(&channel->lock);
    if (ready < 0 && errno != EINTR) fail_connection(c, "poll failed");
    if (ready < 0 || (ready == 0 && !pending) || c->broken) return;
    if (fds[1].revents & POLLIN) {
        uint8_t drained[64];
        while (read(c->wake[0], drained, sizeof drained) > 0) {
        }
    }
    if (fds[0].revents & POLLOUT) flush_locked(c);
    bool readable = (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) || pending;
    if (!want_in || !readable || channel->closing || c->broken) return;
    ssize_t received;
    if (c->tls) {
        /* A TLS session is one object for both directions: read under the lock, as writes are. */
        received = skiff_tls_read(c->tls, c->chunk, 65536);
        c->tls_pending = received > 0 && skiff_tls_has_pending(c->tls);
        if (received == -1) return;
    } else {
        pthread_mutex_unlock(&channel->lock);
        received = recv(c->fd, c->chunk, 65536, 0);
        int error = errno;
        pthread_mutex_lock(&channel->lock);
        if (received < 0 && (error == EINTR || error == EAGAIN || error == EWOULDBLOCK)) return;
    }
    if (c->broken) return;
    if (received <= 0) {
        fail_connection(c, "the server closed the connection");
        return;
    }
    c->last_read_ns = now_ns();
    if (skiff_frame_decoder_feed(&c->decoder, c->chunk, (size_t)received) != 0) {
        fail_connection(c, "out of memory");
        return;
    }
    skiff_frame_header header;
    skiff_bytes payload;
    const char *why = NULL;
    skiff_read_result result = SKIFF_READ_NEED_MORE;
    while (!c->broken && (result = skiff_frame_decoder_next(&c->decoder, &header, &payload, &why)) == SKIFF_READ_OK)
        handle_frame(c, &header, payload);
    if (!c->broken && result != SKIFF_READ_NEED_MORE) connection_error(c, why);
    /* Connection credit goes back as the bytes are read (§4.8), never waiting for the application,
     * in batches of a quarter of the window (as the Swift client does): three quarters always stay
     * open to the server, and small responses cost no WINDOW_UPDATE (a system call) each. */
    if (!c->broken && c->unacknowledged >= CONNECTION_CREDIT_BATCH) {
        if (skiff_write_window_update(&c->out, 0, (uint32_t)c->unacknowledged) != 0) fail_connection(c, "out of memory");
        c->receive_window += (int64_t)c->unacknowledged;
        c->unacknowledged = 0;
    }
    if (!c->broken) flush_locked(c);
}

/* How long the I/O thread stays parked after the last leader stopped: a thread that makes call
 * after call reads for itself throughout; an idle channel gets its reader back soon. */
#define PARK_NS 50000000

static void *io_main(void *argument) {
    connection *c = argument;
    skiff_channel *channel = c->channel;
    pthread_mutex_lock(&channel->lock);
    c->last_read_ns = now_ns();
    while (!c->broken) {
        if (channel->closing) {
            fail_connection(c, "the channel was closed");
            break;
        }
        /* A connection that takes no new streams ends with its last one. */
        if ((c->retired || c->draining) && c->open_streams == 0 && queued_bytes(c) == 0) {
            fail_connection(c, c->draining ? "the server drained the connection" : "the connection was replaced");
            break;
        }
        if (c->io_parked) {
            int64_t until = c->last_lead_ns + PARK_NS;
            if (c->leader || now_ns() < until) {
                if (c->leader) until = now_ns() + PARK_NS;
                (void)wait_until(&c->io_park, &channel->lock, until);
            } else {
                c->io_parked = false; /* nobody has read for a while: read again */
            }
            continue;
        }
        int wait_ms = keepalive_locked(c);
        if (c->broken) break;
        io_step(c, wait_ms);
        /* Threads wait for frames of their calls: from now on they read for themselves. */
        if (c->waiting && !c->broken && !channel->closing) {
            c->io_parked = true;
            c->last_lead_ns = now_ns();
            pass_reading(c);
        }
    }
    /* A leader may be in poll on the socket (shut down by now): it comes back before it is closed. */
    c->io_parked = false;
    pass_reading(c);
    while (c->leader) pthread_cond_wait(&channel->space, &channel->lock);
    release_transport(c);
    c->thread_done = true;
    pthread_cond_broadcast(&channel->space);
    pthread_mutex_unlock(&channel->lock);
    return NULL;
}

/* Reads the socket in the calling thread until something happens to `call` (the I/O thread is
 * parked meanwhile), then lets another thread read. */
static void lead(skiff_call *call) {
    connection *c = call->connection;
    skiff_channel *channel = call->channel;
    uint64_t events = call->events;
    c->leader = true;
    c->lead_call = call;
    while (!c->broken && !channel->closing && call->events == events && !expired(call)) {
        int wait_ms = keepalive_locked(c);
        if (c->broken) break;
        if (call->deadline) {
            int64_t left_ms = (call->deadline - now_ns() + 999999) / 1000000;
            if (left_ms < wait_ms) wait_ms = left_ms > 0 ? (int)left_ms : 0;
        }
        io_step(c, wait_ms);
    }
    c->leader = false;
    c->lead_call = NULL;
    c->last_lead_ns = now_ns();
    pthread_cond_broadcast(&channel->space); /* an I/O thread ending waits for the leader */
    if (c->broken || channel->closing || c->retired || c->draining) wake(c);
    pass_reading(c);
}

/* Waits on the channel's `space` for something on `c` (credit, room in its queue, a free stream),
 * which comes with frames: the I/O thread reads unless a leader does, and a leader that stops
 * wakes it for the threads counted here. The connection is held meanwhile. */
static bool wait_for_space(skiff_call *call, connection *c) {
    skiff_channel *channel = call->channel;
    flush_before_wait(channel);
    wake(c);
    c->references++;
    c->space_waiters++;
    bool woken = wait_until(&channel->space, &channel->lock, call->deadline);
    c->space_waiters--;
    c->references--;
    free_connection_if_unused(channel, c);
    return woken;
}

/* Waits until something happens to the call (a frame, its end, a retry) or its deadline passes:
 * reads the socket itself when nobody else does, else waits to be told. */
static void wait_for_call(skiff_call *call) {
    skiff_channel *channel = call->channel;
    connection *c = call->connection;
    flush_before_wait(channel);
    if (!c) {
        if (!wait_until(&call->changed, &channel->lock, call->deadline)) expired(call);
        return;
    }
    if (!c->broken && c->io_parked && !c->leader) {
        lead(call); /* lets the next thread read when it stops */
        return;
    }
    /* Held while listed: a retry may let go of the call's own reference meanwhile. */
    c->references++;
    call->waiting_prev = NULL;
    call->waiting_next = c->waiting;
    if (c->waiting) c->waiting->waiting_prev = call;
    c->waiting = call;
    uint64_t events = call->events;
    bool woken = wait_until(&call->changed, &channel->lock, call->deadline);
    if (call->waiting_prev)
        call->waiting_prev->waiting_next = call->waiting_next;
    else
        c->waiting = call->waiting_next;
    if (call->waiting_next) call->waiting_next->waiting_prev = call->waiting_prev;
    call->waiting_prev = call->waiting_next = NULL;
    if (!woken) expired(call);
    /* Woken to read (the I/O thread parked, nobody leads): read now. Going back to the caller
     * first would hand the reading on (to the I/O thread, for threads waiting for space), and
     * the two threads would wake each other in a loop. */
    if (woken && call->events == events && call->connection == c && !c->broken && c->io_parked && !c->leader)
        lead(call);
    else
        pass_reading(c);
    c->references--;
    free_connection_if_unused(channel, c);
}

/* ---- Connecting ---- */

static int make_wake_pipe(int ends[2]) {
    if (pipe(ends) != 0) return -1;
    for (int i = 0; i < 2; i++) {
        fcntl(ends[i], F_SETFL, fcntl(ends[i], F_GETFL) | O_NONBLOCK);
        fcntl(ends[i], F_SETFD, FD_CLOEXEC);
    }
    return 0;
}

/* TCP to `host`:`port`, trying each address until `deadline_ns` (CLOCK_MONOTONIC; name resolution
 * itself is the system's and not bounded by it). */
static int connect_by(const char *host, uint16_t port, int64_t deadline_ns, char *reason, size_t size) {
    char service[8];
    snprintf(service, sizeof service, "%u", (unsigned)port);
    struct addrinfo hints, *addresses = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int resolved = getaddrinfo(host, service, &hints, &addresses);
    if (resolved != 0) {
        snprintf(reason, size, "cannot resolve %.100s: %s", host, gai_strerror(resolved));
        return -1;
    }
    int fd = -1;
    snprintf(reason, size, "cannot connect to %.100s:%u", host, (unsigned)port);
    for (struct addrinfo *a = addresses; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) continue;
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        int connected = connect(fd, a->ai_addr, a->ai_addrlen);
        if (connected != 0 && errno == EINPROGRESS) {
            struct pollfd pending = {fd, POLLOUT, 0};
            int error = 0;
            socklen_t length = sizeof error;
            int64_t left_ms = (deadline_ns - now_ns() + 999999) / 1000000;
            if (left_ms > 0 && poll(&pending, 1, left_ms > INT32_MAX ? INT32_MAX : (int)left_ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 &&
                error == 0)
                connected = 0;
            else
                snprintf(reason, size, "cannot connect to %.100s:%u: %s", host, (unsigned)port,
                    error ? strerror(error) : "timed out");
        } else if (connected != 0) {
            snprintf(reason, size, "cannot connect to %.100s:%u: %s", host, (unsigned)port, strerror(errno));
        }
        if (connected != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(addresses);
    if (fd >= 0) {
        int on = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    }
    return fd;
}

/* TCP, then TLS when the options ask for it, both by `deadline`; -1 with `reason` on failure. */
static int open_transport(const char *host, uint16_t port, const skiff_channel_options *options, int64_t deadline,
    skiff_tls **tls, char *reason, size_t size) {
    *tls = NULL;
    int fd = connect_by(host, port, deadline, reason, size);
    if (fd >= 0 && options->tls && !(*tls = skiff_tls_connect(fd, host, options, deadline, reason, size))) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A connection over a connected socket (and TLS session): the preface and SETTINGS queued, its
 * I/O thread started. NULL when that cannot be done (the socket and session are closed). */
static connection *start_connection(skiff_channel *channel, int fd, skiff_tls *tls) {
    connection *c = calloc(1, sizeof *c);
    if (!c) {
        skiff_tls_free(tls);
        close(fd);
        return NULL;
    }
    c->channel = channel;
    c->fd = fd;
    c->tls = tls;
    c->wake[0] = c->wake[1] = -1;
    skiff_settings_defaults(&c->peer);
    c->send_window = c->peer.initial_connection_window;
    c->receive_window = CONNECTION_WINDOW; /* INITIAL_CONNECTION_WINDOW's default, not announced */
    c->next_stream_id = 1;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    const skiff_channel_options *o = &channel->options;
    skiff_setting settings[] = {
        {SKIFF_SETTING_MAX_FRAME_SIZE, o->max_frame_size},
        {SKIFF_SETTING_MAX_MESSAGE_SIZE, o->max_message_size},
        {SKIFF_SETTING_INITIAL_STREAM_WINDOW, channel->stream_receive_window},
    };
    /* Until the server ACKs our SETTINGS, a frame limit stricter than the default is not in force. */
    skiff_frame_decoder_init(&c->decoder, o->max_frame_size > 65536 ? o->max_frame_size : 65536, true);
    c->chunk = malloc(65536);
    bool parkable = make_condition(&c->io_park) == 0;
    bool ready = parkable && c->chunk && make_wake_pipe(c->wake) == 0 && skiff_write_preface(&c->out) == 0 &&
                 skiff_write_settings(&c->out, settings, 3) == 0;
    if (ready) {
        flush_locked(c);
        ready = !c->broken && pthread_create(&c->thread, NULL, io_main, c) == 0;
    }
    if (!ready) {
        release_transport(c);
        if (parkable) pthread_cond_destroy(&c->io_park);
        free(c);
        return NULL;
    }
    return c;
}

/* Copies what a channel keeps of its options (the strings are the caller's). */
static int keep_options(skiff_channel *channel, const char *host, uint16_t port) {
    skiff_channel_options *o = &channel->options;
    channel->port = port;
    channel->host = host ? copy_text(host, strlen(host)) : NULL;
    channel->tls_ca_file = o->tls_ca_file ? copy_text(o->tls_ca_file, strlen(o->tls_ca_file)) : NULL;
    channel->tls_server_name = o->tls_server_name ? copy_text(o->tls_server_name, strlen(o->tls_server_name)) : NULL;
    bool copied = (!host || channel->host) && (!o->tls_ca_file || channel->tls_ca_file) &&
                  (!o->tls_server_name || channel->tls_server_name);
    o->tls_ca_file = channel->tls_ca_file;
    o->tls_server_name = channel->tls_server_name;
    return copied ? 0 : -1;
}

static void free_call(skiff_call *call);

static void free_channel(skiff_channel *channel) {
    while (channel->retired) {
        connection *c = channel->retired;
        channel->retired = c->next;
        pthread_cond_destroy(&c->io_park);
        free(c);
    }
    while (channel->spare) {
        skiff_call *call = channel->spare;
        channel->spare = call->next_spare;
        free_call(call);
    }
    skiff_buffer_free(&channel->probe);
    free(channel->host);
    free(channel->tls_ca_file);
    free(channel->tls_server_name);
    pthread_cond_destroy(&channel->space);
    pthread_mutex_destroy(&channel->lock);
    free(channel);
}

/* A channel with `options` checked and kept; NULL with `status` set. */
static skiff_channel *new_channel(const char *host, uint16_t port, const skiff_channel_options *options,
    skiff_status *status) {
    skiff_channel *channel = calloc(1, sizeof *channel);
    if (!channel) {
        set_status(status, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return NULL;
    }
    if (options)
        channel->options = *options;
    else
        skiff_channel_options_defaults(&channel->options);
    const skiff_channel_options *o = &channel->options;
    if (o->max_message_size < 1024 || o->max_message_size > SKIFF_MAX_STREAM_ID || o->max_frame_size < 16384 ||
        o->max_frame_size > 16777216 || o->max_queued_bytes < 65536 || o->keepalive_timeout_ms == 0 ||
        o->backoff_initial_ms == 0 || o->backoff_max_ms < o->backoff_initial_ms) {
        set_status(status, SKIFF_STATUS_INVALID_ARGUMENT,
            "channel options out of range: max_message_size 1,024 … 2^31-1, max_frame_size 16,384 … 16,777,216, "
            "max_queued_bytes at least 65,536, keepalive_timeout_ms at least 1, backoff_initial_ms at least 1 "
            "and at most backoff_max_ms");
        free(channel);
        return NULL;
    }
    uint32_t max_message = o->max_message_size;
    channel->stream_receive_window = max_message > 8388608 ? max_message : 8388608;
    channel->references = 1;
    channel->backoff_ms = o->backoff_initial_ms;
    if (pthread_mutex_init(&channel->lock, NULL) != 0) {
        free(channel);
        set_status(status, SKIFF_STATUS_RESOURCE_EXHAUSTED, "cannot set the channel up");
        return NULL;
    }
    if (make_condition(&channel->space) != 0) {
        pthread_mutex_destroy(&channel->lock);
        free(channel);
        set_status(status, SKIFF_STATUS_RESOURCE_EXHAUSTED, "cannot set the channel up");
        return NULL;
    }
    if (keep_options(channel, host, port) != 0) {
        free_channel(channel);
        set_status(status, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return NULL;
    }
    return channel;
}

/* Starts the channel's first connection over `fd` (and `tls`); on failure the channel is freed and
 * NULL returned with `status` set. */
static skiff_channel *with_first_connection(
    skiff_channel *channel, int fd, skiff_tls *tls, bool can_reconnect, skiff_status *status) {
    /* The I/O thread runs from here on (and may retire the connection at once, on a GOAWAY). */
    pthread_mutex_lock(&channel->lock);
    channel->can_reconnect = can_reconnect;
    connection *started = channel->current = start_connection(channel, fd, tls);
    pthread_mutex_unlock(&channel->lock);
    if (!started) {
        free_channel(channel);
        set_status(status, SKIFF_STATUS_RESOURCE_EXHAUSTED, "cannot set the channel up");
        return NULL;
    }
    set_status(status, SKIFF_STATUS_OK, NULL);
    return channel;
}

skiff_channel *skiff_channel_connect(
    const char *host, uint16_t port, const skiff_channel_options *options, skiff_status *status) {
    skiff_channel *channel = new_channel(host, port, options, status);
    if (!channel) return NULL;
    char reason[256];
    skiff_tls *tls = NULL;
    int64_t deadline = now_ns() + (int64_t)channel->options.connect_timeout_ms * 1000000;
    int fd = open_transport(host, port, &channel->options, deadline, &tls, reason, sizeof reason);
    if (fd < 0) {
        free_channel(channel);
        set_status(status, SKIFF_STATUS_UNAVAILABLE, reason);
        return NULL;
    }
    return with_first_connection(channel, fd, tls, true, status);
}

skiff_channel *skiff_channel_adopt(int fd, const skiff_channel_options *options, skiff_status *status) {
    skiff_channel_options plain;
    if (options) {
        plain = *options;
        plain.tls = false;
        plain.tls_ca_file = plain.tls_server_name = NULL;
    } else {
        skiff_channel_options_defaults(&plain);
    }
    skiff_channel *channel = new_channel(NULL, 0, &plain, status);
    if (!channel) {
        close(fd);
        return NULL;
    }
    return with_first_connection(channel, fd, NULL, false, status);
}

/* Drops one reference (the channel's own, or a finished call's); the last frees the channel. */
static void release_channel(skiff_channel *channel) {
    pthread_mutex_lock(&channel->lock);
    bool last = --channel->references == 0;
    pthread_mutex_unlock(&channel->lock);
    if (last) free_channel(channel);
}

void skiff_channel_close(skiff_channel *channel) {
    pthread_mutex_lock(&channel->lock);
    channel->closing = true;
    /* A thread connecting finds the channel closing when it is back, and gives its connection up. */
    while (channel->connecting) pthread_cond_wait(&channel->space, &channel->lock);
    retire_current(channel);
    for (connection *c = channel->retired; c; c = c->next) fail_connection(c, "the channel was closed");
    /* Wait for every I/O thread. None starts from now on (the channel is closing). */
    for (connection *c = channel->retired; c; c = c->next) {
        if (c->joined) continue;
        pthread_mutex_unlock(&channel->lock);
        pthread_join(c->thread, NULL);
        pthread_mutex_lock(&channel->lock);
        c->joined = true;
    }
    collect_locked(channel);
    pthread_mutex_unlock(&channel->lock);
    release_channel(channel); /* calls not yet finished keep the rest until they are */
}

/* The connection a call's stream opens on: the current one when it takes a stream now; else,
 * once streams are free, or a new one (connected by this thread, within the backoff). NULL when
 * the call ended instead (its deadline, the channel closed, no connection to be had). */
static connection *usable_connection(skiff_call *call) {
    skiff_channel *channel = call->channel;
    for (;;) {
        if (expired(call)) return NULL;
        connection *c = channel->current;
        if (c && !c->broken && !c->draining && c->next_stream_id <= SKIFF_MAX_STREAM_ID) {
            if (c->peer.has_max_concurrent_streams && c->peer.max_concurrent_streams == 0) {
                end_call_text(call, SKIFF_STATUS_UNAVAILABLE, "the server accepts no streams (MAX_CONCURRENT_STREAMS 0)",
                    false, 0);
                return NULL;
            }
            if (!c->peer.has_max_concurrent_streams || c->open_streams < c->peer.max_concurrent_streams) return c;
            if (!wait_for_space(call, c)) expired(call); /* streams end with frames */
            continue;
        }
        if (channel->closing) {
            end_call_text(call, SKIFF_STATUS_UNAVAILABLE, "the channel was closed", false, 0);
            return NULL;
        }
        if (!channel->can_reconnect) {
            char reason[300];
            snprintf(reason, sizeof reason, "the connection is closed (%s)",
                channel->failure[0] ? channel->failure : "the server drained it");
            end_call_text(call, SKIFF_STATUS_UNAVAILABLE, reason, false, 0);
            return NULL;
        }
        if (channel->connecting) {
            if (!wait_until(&channel->space, &channel->lock, call->deadline)) expired(call);
            continue;
        }
        int64_t now = now_ns();
        if (now < channel->retry_at_ns) {
            /* Within the backoff after a failed attempt: fail at once, as gRPC does. */
            char reason[360];
            snprintf(reason, sizeof reason, "%s (the next attempt in %lld ms)", channel->failure,
                (long long)((channel->retry_at_ns - now + 999999) / 1000000));
            end_call_text(call, SKIFF_STATUS_UNAVAILABLE, reason, false, 0);
            return NULL;
        }
        /* Connect, the lock released; other calls wait for the result. */
        retire_current(channel);
        collect_locked(channel);
        channel->connecting = true;
        pthread_mutex_unlock(&channel->lock);
        /* Bounded by connect_timeout_ms and by the call's deadline. */
        char reason[256];
        skiff_tls *tls = NULL;
        int64_t deadline = now + (int64_t)channel->options.connect_timeout_ms * 1000000;
        bool cut_short = call->deadline != 0 && call->deadline < deadline;
        if (cut_short) deadline = call->deadline;
        int fd = open_transport(channel->host, channel->port, &channel->options, deadline, &tls, reason, sizeof reason);
        pthread_mutex_lock(&channel->lock);
        channel->connecting = false;
        pthread_cond_broadcast(&channel->space);
        if (fd >= 0 && channel->closing) {
            skiff_tls_free(tls);
            close(fd);
            continue;
        }
        connection *fresh = fd >= 0 ? start_connection(channel, fd, tls) : NULL;
        if (fresh) {
            channel->current = fresh;
            channel->backoff_ms = channel->options.backoff_initial_ms;
            channel->retry_at_ns = 0;
            channel->failure[0] = 0;
            continue; /* the call's deadline, if it passed meanwhile, ends it at the top */
        }
        if (cut_short && now_ns() >= call->deadline) {
            /* The call's deadline ended the attempt, not the server: no backoff from it. */
            expired(call);
            return NULL;
        }
        if (fd >= 0) snprintf(reason, sizeof reason, "cannot set the connection up");
        /* The next attempt after the backoff, with ±20 % jitter; the backoff grows 1.6× to its maximum. */
        snprintf(channel->failure, sizeof channel->failure, "%s", reason);
        int64_t jitter = (int64_t)((uint64_t)now_ns() % 401) - 200; /* per mille */
        channel->retry_at_ns = now_ns() + (int64_t)channel->backoff_ms * (1000 + jitter) * 1000;
        uint64_t grown = (uint64_t)channel->backoff_ms * 16 / 10;
        channel->backoff_ms =
            grown > channel->options.backoff_max_ms ? channel->options.backoff_max_ms : (uint32_t)grown;
        end_call_text(call, SKIFF_STATUS_UNAVAILABLE, reason, false, 0);
        return NULL;
    }
}

/* ---- Calls ---- */

/* grpc-timeout (§4.9): at most 8 digits and a unit, rounded up. */
static void format_timeout(int64_t milliseconds, char out[32]) {
    if (milliseconds <= 99999999)
        snprintf(out, 32, "%lldm", (long long)milliseconds);
    else if ((milliseconds + 999) / 1000 <= 99999999)
        snprintf(out, 32, "%lldS", (long long)((milliseconds + 999) / 1000));
    else
        snprintf(out, 32, "%lldH", (long long)((milliseconds + 3599999) / 3600000));
}

/* Writes the call's HEADERS for `stream_id` into `out`: grpc-timeout from what is left of the
 * deadline goes first (of a reserved key only the first occurrence counts), then the metadata. */
static int write_headers(skiff_buffer *out, const skiff_call *call, uint32_t stream_id) {
    skiff_metadata_entry stack[9] = {{{NULL, 0}, {NULL, 0}}};
    size_t count = call->metadata_count + 1;
    skiff_metadata_entry *entries = count <= 9 ? stack : malloc(count * sizeof *entries);
    if (!entries) return -1;
    size_t first = 0;
    char timeout[32];
    if (call->deadline != 0) {
        int64_t left_ms = (call->deadline - now_ns() + 999999) / 1000000;
        format_timeout(left_ms > 1 ? left_ms : 1, timeout);
        entries[0].key = skiff_bytes_of_string("grpc-timeout");
        entries[0].value = skiff_bytes_of_string(timeout);
        first = 1;
    }
    if (call->metadata_count) memcpy(entries + first, call->metadata, call->metadata_count * sizeof *entries);
    int written = skiff_write_headers(out, stream_id, 0, skiff_bytes_of_string(call->path), entries,
        first + call->metadata_count);
    if (entries != stack) free(entries);
    return written;
}

/* Keeps the path and a copy of the metadata, for the HEADERS of every stream the call opens: in
 * the call's `head` buffer (reused with the call). */
static int keep_request_head(skiff_call *call, const char *path, const skiff_call_options *options) {
    size_t count = options->metadata_count, path_length = strlen(path);
    size_t entries = count * sizeof(skiff_metadata_entry), bytes = 0;
    for (size_t i = 0; i < count; i++) bytes += options->metadata[i].key.length + options->metadata[i].value.length;
    call->head.length = 0;
    if (skiff_buffer_reserve(&call->head, entries + path_length + 1 + bytes) != 0) return -1;
    skiff_metadata_entry *kept = (skiff_metadata_entry *)(void *)call->head.data;
    char *kept_path = (char *)call->head.data + entries;
    memcpy(kept_path, path, path_length + 1);
    uint8_t *at = (uint8_t *)kept_path + path_length + 1;
    for (size_t i = 0; i < count; i++) {
        const skiff_metadata_entry *entry = &options->metadata[i];
        skiff_bytes *parts[2] = {&kept[i].key, &kept[i].value};
        const skiff_bytes *from[2] = {&entry->key, &entry->value};
        for (int p = 0; p < 2; p++) {
            if (from[p]->length) memcpy(at, from[p]->data, from[p]->length);
            parts[p]->data = at;
            parts[p]->length = from[p]->length;
            at += from[p]->length;
        }
    }
    call->head.length = entries + path_length + 1 + bytes;
    call->path = kept_path;
    call->metadata = kept;
    call->metadata_count = count;
    return 0;
}

/* Checks the path and metadata as the server will (limits from the connection the call would
 * use, else the protocol's defaults); ends the call when they cannot be sent. */
static void check_request_head(skiff_call *call) {
    skiff_channel *channel = call->channel;
    skiff_settings defaults;
    skiff_settings_defaults(&defaults);
    const skiff_settings *peer = channel->current ? &channel->current->peer : &defaults;
    skiff_buffer *probe = &channel->probe;
    probe->length = 0;
    if (write_headers(probe, call, 1) != 0) {
        end_call_text(call, SKIFF_STATUS_INTERNAL, "the path or the metadata does not fit a HEADERS frame", false, 0);
        return;
    }
    skiff_headers parsed;
    memset(&parsed, 0, sizeof parsed);
    skiff_bytes payload = {probe->data + SKIFF_FRAME_HEADER_SIZE, probe->length - SKIFF_FRAME_HEADER_SIZE};
    const char *why = "request metadata the server does not take";
    if (skiff_headers_read(payload, &parsed, NULL) != SKIFF_READ_OK ||
        skiff_metadata_check(&parsed.metadata, peer->max_header_list_size, &why) != SKIFF_STATUS_OK) {
        end_call_text(call,
            parsed.metadata.encoded.length > peer->max_header_list_size ? SKIFF_STATUS_RESOURCE_EXHAUSTED
                                                                         : SKIFF_STATUS_INTERNAL,
            why, false, 0);
    } else if (payload.length > peer->max_frame_size) {
        end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED,
            "the path and metadata do not fit the server's MAX_FRAME_SIZE", false, 0);
    }
    if (probe->capacity > 65536) skiff_buffer_free(probe); /* an outsized head does not stay */
}

static int send_locked(skiff_call *call, skiff_bytes message, bool last);

/* Opens the call's stream (again, for a transparent retry) and sends what the call had sent: its
 * HEADERS, the request messages kept, its half-close. Returns with a stream open, or the call
 * ended. */
static void open_stream(skiff_call *call) {
    while (!call->done && (call->retry_pending || !call->connection)) {
        connection *c = usable_connection(call);
        if (!c) return;
        call->retry_pending = false;
        call->connection = c;
        c->references++;
        call->stream_id = c->next_stream_id;
        c->next_stream_id += 2;
        call->send_window = c->peer.initial_stream_window;
        call->receive_window = call->channel->stream_receive_window;
        if (insert_call(c, call) != 0) {
            call->stream_id = 0;
            end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory", false, 0);
            return;
        }
        /* Keepalive PINGs are due from the first open stream on: the I/O thread times them anew. */
        if (c->open_streams == 1 && call->channel->options.keepalive_interval_ms > 0) wake(c);
        if (write_headers(&c->out, call, call->stream_id) != 0) {
            end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory", true, SKIFF_STATUS_CANCELLED);
            return;
        }
        push_locked(c);
        for (size_t at = 0; at < call->replay.length && !call->done && !call->retry_pending;) {
            uint32_t length = record_length(call->replay.data + at);
            bool last = call->replay.data[at + 4] != 0;
            skiff_bytes message = {call->replay.data + at + 5, length};
            at += 5 + (size_t)length;
            send_locked(call, message, last);
        }
        if (!call->done && !call->retry_pending && call->local_ended && !call->ended_by_message) {
            if (skiff_write_half_close(&c->out, call->stream_id) == 0)
                push_locked(c);
            else
                end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory", true, SKIFF_STATUS_CANCELLED);
        }
    }
    /* Answered (or over): nothing will be sent again. Every kept message was sent, even when the
     * answer came in the middle: they were accepted by skiff_call_send. */
    if (call->committed || call->done) drop_replay(call);
}

/* The owner's step starts here: a call whose stream was not processed opens a new one. */
static void resume(skiff_call *call) {
    if (call->retry_pending && !call->done) open_stream(call);
}

/* ---- Call structs, kept for reuse ---- */

/* Calls kept per channel, and the largest buffer a kept call keeps: at most 64 × 6 × 16 KiB
 * (6 MiB) a channel holds for reuse, a few hundred bytes per kept call in the usual case. */
#define SPARE_CALLS 64
#define SPARE_BUFFER_BYTES 16384

static void free_call(skiff_call *call) {
    free(call->message);
    skiff_buffer_free(&call->initial);
    skiff_buffer_free(&call->trailing);
    skiff_buffer_free(&call->queue);
    skiff_buffer_free(&call->replay);
    skiff_buffer_free(&call->head);
    skiff_buffer_free(&call->reply);
    pthread_cond_destroy(&call->changed);
    free(call);
}

/* A call struct: a kept one, zeroed but for its condition and buffers, or a new one. Lock held. */
static skiff_call *take_call(skiff_channel *channel) {
    skiff_call *call = channel->spare;
    if (call) {
        channel->spare = call->next_spare;
        channel->spare_count--;
        return call;
    }
    call = calloc(1, sizeof *call);
    if (call && make_condition(&call->changed) != 0) {
        free(call);
        call = NULL;
    }
    return call;
}

static void empty(skiff_buffer *buffer) {
    buffer->length = 0;
    if (buffer->capacity > SPARE_BUFFER_BYTES) skiff_buffer_free(buffer);
}

/* Keeps a finished call's struct for the next call (lock held), or frees it. */
static void give_back_call(skiff_channel *channel, skiff_call *call) {
    if (channel->spare_count >= SPARE_CALLS || channel->closing) {
        free_call(call);
        return;
    }
    free(call->message);
    memset(call, 0, offsetof(skiff_call, changed));
    empty(&call->initial);
    empty(&call->trailing);
    empty(&call->queue);
    empty(&call->replay);
    empty(&call->head);
    empty(&call->reply);
    call->next_spare = channel->spare;
    channel->spare = call;
    channel->spare_count++;
}

skiff_call *skiff_call_start(skiff_channel *channel, const char *path, const skiff_call_options *options) {
    pthread_mutex_lock(&channel->lock);
    skiff_call *call = take_call(channel);
    if (!call) {
        pthread_mutex_unlock(&channel->lock);
        return NULL;
    }
    call->channel = channel;
    call->replayable = true;
    static const skiff_call_options none = {0, NULL, 0};
    if (!options) options = &none;
    /* Longer than 99,999,999 s (about three years) is as good as none, and fits grpc-timeout. */
    int64_t timeout_ms = options->timeout_ms > 99999999000 ? 99999999000 : options->timeout_ms;
    if (timeout_ms > 0) call->deadline = now_ns() + timeout_ms * 1000000;
    bool kept = keep_request_head(call, path, options) == 0;
    channel->references++;
    if (!kept)
        end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory", false, 0);
    else
        check_request_head(call);
    open_stream(call);
    pthread_mutex_unlock(&channel->lock);
    return call;
}

/* Sends one message on the call's stream, waiting for room and credit; stops early when the call
 * ends or its stream was not processed (retry_pending). */
static int send_locked(skiff_call *call, skiff_bytes message, bool last) {
    skiff_channel *channel = call->channel;
    size_t sent = 0;
    do {
        connection *c = call->connection;
        if (expired(call) || call->retry_pending || !c) return -1;
        /* Room in the queue, then credit in both windows (a zero-length message needs none). */
        size_t remaining = message.length - sent;
        int64_t credit = c->send_window < call->send_window ? c->send_window : call->send_window;
        if (queued_bytes(c) >= channel->options.max_queued_bytes || (remaining > 0 && credit <= 0)) {
            if (!wait_for_space(call, c)) expired(call); /* credit comes with frames */
            continue;
        }
        if (message.length > c->peer.max_message_size) {
            end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED,
                "a request message over the server's MAX_MESSAGE_SIZE", true, SKIFF_STATUS_CANCELLED);
            return -1;
        }
        size_t fragment = remaining;
        if (fragment > c->peer.max_frame_size) fragment = c->peer.max_frame_size;
        if (remaining > 0 && (int64_t)fragment > credit) fragment = (size_t)credit;
        bool final = sent + fragment == message.length;
        uint8_t flags = final ? (last ? SKIFF_FLAG_END_STREAM : 0) : SKIFF_FLAG_MORE;
        skiff_bytes piece = {message.data + sent, fragment};
        if (skiff_write_message(&c->out, call->stream_id, flags, piece) != 0) {
            end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory", true, SKIFF_STATUS_CANCELLED);
            return -1;
        }
        c->send_window -= (int64_t)fragment;
        call->send_window -= (int64_t)fragment;
        sent += fragment;
        push_locked(c);
    } while (sent < message.length);
    return 0;
}

/* Keeps a request message for a retry, while the call may still be retried and the kept bytes
 * stay within retry_buffer_bytes; beyond, the call can no longer be retried. */
static void keep_for_retry(skiff_call *call, skiff_bytes message, bool last) {
    if (!call->replayable) return;
    if (call->committed || call->done) {
        drop_replay(call);
        return;
    }
    size_t limit = call->channel->options.retry_buffer_bytes;
    if (call->channel->options.max_transparent_retries == 0 || call->replay.length + 5 + message.length > limit ||
        skiff_buffer_reserve(&call->replay, 5 + message.length) != 0) {
        drop_replay(call);
        return;
    }
    uint8_t *at = call->replay.data + call->replay.length;
    uint32_t length = (uint32_t)message.length;
    at[0] = (uint8_t)(length >> 24), at[1] = (uint8_t)(length >> 16), at[2] = (uint8_t)(length >> 8);
    at[3] = (uint8_t)length;
    at[4] = last ? 1 : 0;
    if (message.length) memcpy(at + 5, message.data, message.length);
    call->replay.length += 5 + message.length;
}

uint32_t skiff_call_send(skiff_call *call, skiff_bytes message, bool last) {
    skiff_channel *channel = call->channel;
    pthread_mutex_lock(&channel->lock);
    resume(call);
    if (expired(call)) goto out;
    if (call->local_ended) {
        pthread_mutex_unlock(&channel->lock);
        return SKIFF_STATUS_FAILED_PRECONDITION; /* the client's side is already over */
    }
    keep_for_retry(call, message, last);
    if (last) {
        call->local_ended = true;
        call->ended_by_message = true;
    }
    /* Sent on this stream, or, when it was not processed meanwhile, with the kept ones on the next. */
    if (send_locked(call, message, last) != 0) resume(call);
out:;
    uint32_t code = call->done ? call->code : SKIFF_STATUS_OK;
    pthread_mutex_unlock(&channel->lock);
    return code;
}

uint32_t skiff_call_half_close(skiff_call *call) {
    skiff_channel *channel = call->channel;
    pthread_mutex_lock(&channel->lock);
    resume(call);
    if (!expired(call) && !call->local_ended) {
        call->local_ended = true;
        if (skiff_write_half_close(&call->connection->out, call->stream_id) == 0)
            push_locked(call->connection);
        else
            end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory", true, SKIFF_STATUS_CANCELLED);
    }
    uint32_t code = call->done && call->code != SKIFF_STATUS_OK ? call->code : SKIFF_STATUS_OK;
    pthread_mutex_unlock(&channel->lock);
    return code;
}

int skiff_call_receive(skiff_call *call, skiff_buffer *message) {
    skiff_channel *channel = call->channel;
    message->length = 0;
    pthread_mutex_lock(&channel->lock);
    int result;
    if (call->committed && call->replay.length) drop_replay(call); /* answered: never sent again */
    for (;;) {
        resume(call);
        /* Ended here (cancelled, deadline, connection lost): what was queued is dropped. Ended by
         * the server: the messages it sent first are still delivered. */
        if (call->done && !call->response_ended) {
            result = -1;
            break;
        }
        if (call->queued_messages > 0) {
            const uint8_t *at = call->queue.data + call->queue_read;
            uint32_t length = record_length(at);
            if (skiff_buffer_reserve(message, length) != 0) {
                result = -1;
                break;
            }
            if (length) memcpy(message->data, at + 4, length);
            message->length = length;
            call->queue_read += 4 + (size_t)length;
            call->queued_messages--;
            if (call->queue_read == call->queue.length) {
                call->queue.length = 0;
                call->queue_read = 0;
            } else if (!call->assembling && call->queue_read > call->queue.length / 2) {
                memmove(call->queue.data, call->queue.data + call->queue_read, call->queue.length - call->queue_read);
                call->queue.length -= call->queue_read;
                call->queue_read = 0;
            }
            /* The stream's credit comes back once the application has the message (§4.8). */
            connection *c = call->connection;
            if (!call->done && length > 0 && skiff_write_window_update(&c->out, call->stream_id, length) == 0) {
                call->receive_window += length;
                push_locked(c);
            }
            result = 1;
            break;
        }
        if (call->done || expired(call)) {
            result = call->response_ended ? 0 : -1;
            break;
        }
        if (!call->retry_pending) wait_for_call(call);
    }
    pthread_mutex_unlock(&channel->lock);
    return result;
}

int skiff_call_receive_kept(skiff_call *call, skiff_bytes *message) {
    int received = skiff_call_receive(call, &call->reply);
    message->data = call->reply.data;
    message->length = call->reply.length;
    return received;
}

static skiff_metadata_block block_of(const skiff_buffer *buffer) {
    skiff_metadata_block block = {0, {buffer->data, buffer->length}};
    if (buffer->length >= 2) block.count = (uint16_t)(buffer->data[0] << 8 | buffer->data[1]);
    return block;
}

skiff_metadata_block skiff_call_initial_metadata(skiff_call *call) {
    pthread_mutex_lock(&call->channel->lock);
    skiff_metadata_block block = block_of(&call->initial);
    pthread_mutex_unlock(&call->channel->lock);
    return block;
}

skiff_metadata_block skiff_call_trailing_metadata(skiff_call *call) {
    pthread_mutex_lock(&call->channel->lock);
    skiff_metadata_block block = block_of(&call->trailing);
    pthread_mutex_unlock(&call->channel->lock);
    return block;
}

/* A call ended from outside while its owner reads the socket for it: out of poll at once. */
static void tell_leader(skiff_call *call) {
    connection *c = call->connection;
    if (c && c->lead_call == call) poke(c);
}

void skiff_call_fail(skiff_call *call, uint32_t code, const char *message) {
    pthread_mutex_lock(&call->channel->lock);
    if (call->done && call->code == SKIFF_STATUS_OK) {
        /* The server ended well, but what it sent cannot be used: the call fails all the same. */
        call->code = code;
        free(call->message);
        call->message = copy_text(message, strlen(message));
    } else {
        end_call_text(call, code, message, true, SKIFF_STATUS_CANCELLED);
    }
    tell_leader(call);
    pthread_mutex_unlock(&call->channel->lock);
}

void skiff_call_cancel(skiff_call *call) {
    pthread_mutex_lock(&call->channel->lock);
    end_call_text(call, SKIFF_STATUS_CANCELLED, "the call was cancelled", true, SKIFF_STATUS_CANCELLED);
    tell_leader(call);
    pthread_mutex_unlock(&call->channel->lock);
}

/* Drops the complete responses the application did not take, returning their stream credit so
 * the server can go on to its TRAILERS. */
static void discard_responses(skiff_call *call) {
    uint64_t credit = 0;
    while (call->queued_messages > 0) {
        const uint8_t *at = call->queue.data + call->queue_read;
        uint32_t length = record_length(at);
        call->queue_read += 4 + (size_t)length;
        call->queued_messages--;
        credit += length;
    }
    size_t partial = call->queue.length - call->queue_read;
    if (partial) memmove(call->queue.data, call->queue.data + call->queue_read, partial);
    call->queue.length = partial;
    call->queue_read = 0;
    if (call->assembling) call->assembly_start = 0;
    connection *c = call->connection;
    if (credit > 0 && !call->done && skiff_write_window_update(&c->out, call->stream_id, (uint32_t)credit) == 0) {
        call->receive_window += (int64_t)credit;
        push_locked(c);
    }
}

uint32_t skiff_call_finish(skiff_call *call, skiff_status *status) {
    skiff_channel *channel = call->channel;
    pthread_mutex_lock(&channel->lock);
    resume(call);
    /* The client's side ends here if it has not; responses not taken are dropped as they come. */
    if (!call->done && !call->local_ended) {
        call->local_ended = true;
        if (skiff_write_half_close(&call->connection->out, call->stream_id) == 0) push_locked(call->connection);
    }
    while (!call->done && !expired(call)) {
        if (call->retry_pending) {
            resume(call);
            continue;
        }
        discard_responses(call);
        wait_for_call(call);
    }
    uint32_t code = call->code;
    let_go_of_connection(call);
    if (status) {
        status->code = code;
        status->message = call->message;
        call->message = NULL;
    }
    give_back_call(channel, call);
    pthread_mutex_unlock(&channel->lock);
    release_channel(channel);
    return code;
}

uint32_t skiff_unary(skiff_channel *channel, const char *path, skiff_bytes request, skiff_buffer *response,
    const skiff_call_options *options, skiff_status *status) {
    response->length = 0;
    skiff_call *call = skiff_call_start(channel, path, options);
    if (!call) {
        set_status(status, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return SKIFF_STATUS_RESOURCE_EXHAUSTED;
    }
    if (skiff_call_send(call, request, true) == SKIFF_STATUS_OK) {
        int received = skiff_call_receive(call, response);
        skiff_buffer extra = {0};
        /* Exactly one message: a second one is the server's mistake. */
        if (received == 1 && skiff_call_receive(call, &extra) == 1)
            skiff_call_cancel(call);
        skiff_buffer_free(&extra);
    }
    uint32_t code = skiff_call_finish(call, status);
    if (code != SKIFF_STATUS_OK) response->length = 0;
    return code;
}
