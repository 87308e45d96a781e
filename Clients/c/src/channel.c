/* A skiff/1 channel: see include/skiff/channel.h and docs/PROTOCOL.md §1, §4, §5. */
#include "skiff/channel.h"

#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct skiff_call {
    skiff_channel *channel;
    uint32_t stream_id; /* 0 until the HEADERS went out */
    pthread_cond_t changed;
    int64_t deadline; /* CLOCK_MONOTONIC nanoseconds; 0 for none */
    int64_t send_window;
    int64_t receive_window; /* MESSAGE bytes the server may still send on this stream */
    bool headers_received;
    bool local_ended;   /* the client's side is over */
    bool done;          /* the status is known; the stream is no longer in the table */
    bool response_ended; /* TRAILERS (or RST_STREAM) ended the response */
    uint32_t code;
    char *message;
    skiff_buffer initial;  /* the response's initial metadata block, as received */
    skiff_buffer trailing; /* its trailing metadata block */
    /* Complete response messages waiting for the application: records of a u32 length and the
     * bytes, from `queue_read` on; a message being reassembled is the last, unfinished record. */
    skiff_buffer queue;
    size_t queue_read;
    size_t queued_messages;
    bool assembling;
    size_t assembly_start;
};

struct skiff_channel {
    int fd;
    int wake[2]; /* a pipe: callers wake the I/O thread when bytes wait for the socket */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t space; /* flow-control credit, room in the queue, a free stream */
    skiff_channel_options options;
    skiff_settings peer;
    int64_t connection_send_window;
    int64_t connection_receive_window; /* MESSAGE bytes the server may still send */
    uint64_t connection_unacknowledged; /* MESSAGE bytes read whose credit is not returned yet */
    uint32_t stream_receive_window;     /* the INITIAL_STREAM_WINDOW announced */
    bool peer_settings_received;
    bool settings_acknowledged; /* our SETTINGS' limits apply from then on (§1.3) */
    /* The channel and each call not yet finished hold a reference: the memory goes with the last. */
    size_t references;
    uint32_t next_stream_id;
    skiff_buffer out;
    size_t out_start;
    skiff_frame_decoder decoder;
    /* Open streams by id: open addressing, linear probing, deletion by backward shift. */
    skiff_call **table;
    size_t table_capacity;
    size_t open_streams;
    bool broken;
    bool closing;
    bool draining;
    uint32_t goaway_last_stream_id;
    skiff_tls *tls; /* NULL for plain TCP */
    /* Keepalive (CLOCK_MONOTONIC ns): the last bytes read, the last PING sent, the one unanswered. */
    int64_t last_read_ns;
    int64_t last_ping_ns;
    bool ping_outstanding;
    uint8_t ping_opaque[8];
};

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

/* ---- The stream table ---- */

static size_t slot_of(const skiff_channel *channel, uint32_t id) {
    return ((size_t)id * 2654435761u) & (channel->table_capacity - 1);
}

static skiff_call *find_call(const skiff_channel *channel, uint32_t id) {
    if (channel->table_capacity == 0) return NULL;
    for (size_t i = slot_of(channel, id);; i = (i + 1) & (channel->table_capacity - 1)) {
        skiff_call *call = channel->table[i];
        if (!call) return NULL;
        if (call->stream_id == id) return call;
    }
}

static int insert_call(skiff_channel *channel, skiff_call *call);

static int grow_table(skiff_channel *channel) {
    size_t old_capacity = channel->table_capacity;
    skiff_call **old = channel->table;
    size_t capacity = old_capacity ? old_capacity * 2 : 64;
    skiff_call **table = calloc(capacity, sizeof *table);
    if (!table) return -1;
    channel->table = table;
    channel->table_capacity = capacity;
    channel->open_streams = 0;
    for (size_t i = 0; i < old_capacity; i++)
        if (old[i]) insert_call(channel, old[i]);
    free(old);
    return 0;
}

static int insert_call(skiff_channel *channel, skiff_call *call) {
    if ((channel->open_streams + 1) * 2 > channel->table_capacity && grow_table(channel) != 0) return -1;
    size_t i = slot_of(channel, call->stream_id);
    while (channel->table[i]) i = (i + 1) & (channel->table_capacity - 1);
    channel->table[i] = call;
    channel->open_streams++;
    return 0;
}

static void remove_call(skiff_channel *channel, skiff_call *call) {
    size_t mask = channel->table_capacity - 1;
    size_t i = slot_of(channel, call->stream_id);
    while (channel->table[i] != call) {
        if (!channel->table[i]) return;
        i = (i + 1) & mask;
    }
    channel->table[i] = NULL;
    channel->open_streams--;
    /* Shift back the entries of the probe run that follows, so lookups still find them. */
    for (size_t j = (i + 1) & mask; channel->table[j]; j = (j + 1) & mask) {
        size_t home = slot_of(channel, channel->table[j]->stream_id);
        bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (between) continue;
        channel->table[i] = channel->table[j];
        channel->table[j] = NULL;
        i = j;
    }
}

/* ---- Writing to the socket ---- */

static void fail_connection(skiff_channel *channel, const char *reason);

/* Sends what is queued without blocking. */
static void flush_locked(skiff_channel *channel) {
    if (channel->fd < 0) {
        channel->out.length = channel->out_start = 0;
        return;
    }
    while (channel->out_start < channel->out.length) {
        const uint8_t *data = channel->out.data + channel->out_start;
        size_t length = channel->out.length - channel->out_start;
        ssize_t sent = channel->tls ? skiff_tls_write(channel->tls, data, length)
                                    : send(channel->fd, data, length, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent < 0 && !channel->tls && errno == EINTR) continue;
        if (sent == 0 || (sent < 0 && !channel->tls && (errno == EAGAIN || errno == EWOULDBLOCK))) break;
        if (sent < 0) {
            fail_connection(channel, "the connection failed while sending");
            return;
        }
        channel->out_start += (size_t)sent;
    }
    if (channel->out_start == channel->out.length) {
        channel->out.length = 0;
        channel->out_start = 0;
    }
    pthread_cond_broadcast(&channel->space);
}

/* Sends what is queued; the I/O thread finishes if the socket is full. */
static void send_queued_locked(skiff_channel *channel) {
    flush_locked(channel);
    if (channel->out.length > channel->out_start && channel->wake[1] >= 0) {
        uint8_t byte = 1;
        ssize_t ignored = write(channel->wake[1], &byte, 1);
        (void)ignored;
    }
}

static size_t queued_bytes(const skiff_channel *channel) { return channel->out.length - channel->out_start; }

/* After frames were queued: send now, or, with batch_writes, once the calling thread waits or 64 KiB
 * are waiting. */
static void push_locked(skiff_channel *channel) {
    if (channel->options.batch_writes && queued_bytes(channel) < 65536) return;
    send_queued_locked(channel);
}

/* Before a thread waits for the channel: nothing it queued may be left unsent. */
static void flush_before_wait(skiff_channel *channel) {
    if (queued_bytes(channel) > 0) send_queued_locked(channel);
}

void skiff_channel_flush(skiff_channel *channel) {
    pthread_mutex_lock(&channel->lock);
    flush_before_wait(channel);
    pthread_mutex_unlock(&channel->lock);
}

/* ---- Ending calls ---- */

/* Ends a call with a status: no more frames of its stream are read; optionally resets it. */
static void end_call(skiff_call *call, uint32_t code, const char *message, size_t message_length, bool reset,
    uint32_t reset_code) {
    if (call->done) return;
    skiff_channel *channel = call->channel;
    call->done = true;
    call->code = code;
    free(call->message);
    call->message = message ? copy_text(message, message_length) : NULL;
    if (call->stream_id != 0 && find_call(channel, call->stream_id) == call) {
        remove_call(channel, call);
        if (reset && !channel->broken) {
            skiff_bytes none = {NULL, 0};
            if (skiff_write_rst_stream(&channel->out, call->stream_id, 0, reset_code, none) == 0) push_locked(channel);
        }
        pthread_cond_broadcast(&channel->space); /* a stream is free */
    }
    pthread_cond_broadcast(&call->changed);
}

static void end_call_text(skiff_call *call, uint32_t code, const char *message, bool reset, uint32_t reset_code) {
    end_call(call, code, message, strlen(message), reset, reset_code);
}

/* Checks a call's own deadline; true if it has passed (the call is then ended). */
static bool expired(skiff_call *call) {
    if (call->done || call->deadline == 0 || now_ns() < call->deadline) return call->done;
    end_call_text(call, SKIFF_STATUS_DEADLINE_EXCEEDED, "the call's deadline passed", true, SKIFF_STATUS_CANCELLED);
    return true;
}

static void fail_connection(skiff_channel *channel, const char *reason) {
    if (channel->broken) return;
    channel->broken = true;
    shutdown(channel->fd, SHUT_RDWR); /* the server sees the end at once (§5.3) */
    for (size_t i = 0; i < channel->table_capacity;) {
        skiff_call *call = channel->table[i];
        if (call) {
            end_call_text(call, SKIFF_STATUS_UNAVAILABLE, reason, false, 0); /* shifts the table */
        } else {
            i++;
        }
    }
    pthread_cond_broadcast(&channel->space);
}

/* ---- Reading frames ---- */

/* The largest response message accepted now: ours once the server has ACKed our SETTINGS; before,
 * a stricter limit than the default is not yet in force. */
static uint32_t message_limit(const skiff_channel *channel) {
    uint32_t ours = channel->options.max_message_size;
    return channel->settings_acknowledged || ours > 4194304 ? ours : 4194304;
}

static void connection_error(skiff_channel *channel, const char *why) {
    char reason[160];
    snprintf(reason, sizeof reason, "the connection broke: %s", why ? why : "protocol violation");
    fail_connection(channel, reason);
}

static int copy_block(skiff_buffer *into, skiff_metadata_block block) {
    into->length = 0;
    if (skiff_buffer_reserve(into, block.encoded.length) != 0) return -1;
    memcpy(into->data, block.encoded.data, block.encoded.length);
    into->length = block.encoded.length;
    return 0;
}

static void apply_settings(skiff_channel *channel, const skiff_settings *settings) {
    int64_t stream_delta = (int64_t)settings->initial_stream_window - channel->peer.initial_stream_window;
    channel->connection_send_window +=
        (int64_t)settings->initial_connection_window - channel->peer.initial_connection_window;
    for (size_t i = 0; i < channel->table_capacity; i++)
        if (channel->table[i]) channel->table[i]->send_window += stream_delta;
    channel->peer = *settings;
    pthread_cond_broadcast(&channel->space);
}

/* The queue of complete responses holds records of a big-endian u32 length, then the bytes. */
static uint32_t record_length(const uint8_t *at) {
    return (uint32_t)at[0] << 24 | (uint32_t)at[1] << 16 | (uint32_t)at[2] << 8 | at[3];
}

static void receive_message(skiff_channel *channel, skiff_call *call, const skiff_frame_header *h, skiff_bytes payload) {
    if ((int64_t)payload.length > call->receive_window) {
        connection_error(channel, "the server overran a stream's window");
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
    if (payload.length > message_limit(channel) - so_far) {
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
    pthread_cond_broadcast(&call->changed);
    return;
no_memory:
    end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory for a response", true,
        SKIFF_STATUS_RESOURCE_EXHAUSTED);
}

static void handle_frame(skiff_channel *channel, const skiff_frame_header *h, skiff_bytes payload) {
    const char *why = NULL;
    bool first_settings = h->type == SKIFF_FRAME_SETTINGS && !(h->flags & SKIFF_FLAG_ACK);
    if (first_settings == channel->peer_settings_received) {
        connection_error(channel, first_settings ? "a second SETTINGS" : "the server's first frame is not SETTINGS");
        return;
    }
    if (h->stream_id >= channel->next_stream_id) {
        connection_error(channel, "a frame for a stream never opened");
        return;
    }
    skiff_call *call = h->stream_id ? find_call(channel, h->stream_id) : NULL;
    switch (h->type) {
    case SKIFF_FRAME_SETTINGS: {
        if (h->flags & SKIFF_FLAG_ACK) {
            if (skiff_empty_read(payload, &why) != SKIFF_READ_OK) {
                connection_error(channel, why);
                return;
            }
            /* Our limits are in force now, the stricter ones included. */
            channel->settings_acknowledged = true;
            channel->decoder.max_frame_size = channel->options.max_frame_size;
            return;
        }
        channel->peer_settings_received = true;
        skiff_settings settings = channel->peer;
        if (skiff_settings_read(payload, &settings, &why) != SKIFF_READ_OK) { connection_error(channel, why); return; }
        apply_settings(channel, &settings);
        if (skiff_write_settings_ack(&channel->out) != 0) { fail_connection(channel, "out of memory"); return; }
        return;
    }
    case SKIFF_FRAME_PING: {
        uint8_t opaque[8];
        if (skiff_ping_read(payload, opaque, &why) != SKIFF_READ_OK) { connection_error(channel, why); return; }
        if (!(h->flags & SKIFF_FLAG_ACK) && skiff_write_ping(&channel->out, true, opaque) != 0)
            fail_connection(channel, "out of memory");
        if ((h->flags & SKIFF_FLAG_ACK) && channel->ping_outstanding && memcmp(opaque, channel->ping_opaque, 8) == 0)
            channel->ping_outstanding = false;
        return;
    }
    case SKIFF_FRAME_GOAWAY: {
        skiff_goaway goaway;
        if (skiff_goaway_read(payload, &goaway, &why) != SKIFF_READ_OK) { connection_error(channel, why); return; }
        channel->draining = true;
        channel->goaway_last_stream_id = goaway.last_stream_id;
        pthread_cond_broadcast(&channel->space); /* calls waiting for a stream give up */
        if (goaway.status != SKIFF_STATUS_OK) {
            char reason[200];
            int shown = goaway.debug.length > 120 ? 120 : (int)goaway.debug.length;
            snprintf(reason, sizeof reason, "the server closed the connection (%s: %.*s)",
                skiff_status_name(goaway.status), shown, (const char *)goaway.debug.data);
            { fail_connection(channel, reason); return; }
        }
        /* A drain: streams above the last id were not processed. */
        for (size_t i = 0; i < channel->table_capacity;) {
            skiff_call *open = channel->table[i];
            if (open && open->stream_id > goaway.last_stream_id) {
                end_call_text(open, SKIFF_STATUS_UNAVAILABLE, "the server is draining; the call was not processed",
                    false, 0);
            } else {
                i++;
            }
        }
        return;
    }
    case SKIFF_FRAME_WINDOW_UPDATE: {
        uint32_t increment;
        if (skiff_window_update_read(payload, &increment, &why) != SKIFF_READ_OK) { connection_error(channel, why); return; }
        int64_t *window = h->stream_id == 0 ? &channel->connection_send_window : call ? &call->send_window : NULL;
        if (!window) return; /* an ended stream */
        if (increment == 0 || *window + increment > (int64_t)SKIFF_MAX_STREAM_ID)
            { connection_error(channel, "a WINDOW_UPDATE of 0 or beyond 2^31-1"); return; }
        *window += increment;
        pthread_cond_broadcast(&channel->space);
        return;
    }
    case SKIFF_FRAME_HEADERS: {
        skiff_headers headers;
        if (skiff_headers_read(payload, &headers, &why) != SKIFF_READ_OK) { connection_error(channel, why); return; }
        if (!call || call->done) return;
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
        pthread_cond_broadcast(&call->changed);
        return;
    }
    case SKIFF_FRAME_MESSAGE:
        if ((int64_t)payload.length > channel->connection_receive_window) {
            connection_error(channel, "the server overran the connection's window");
            return;
        }
        channel->connection_receive_window -= (int64_t)payload.length;
        channel->connection_unacknowledged += payload.length;
        if (call && !call->done) receive_message(channel, call, h, payload);
        return;
    case SKIFF_FRAME_TRAILERS: {
        skiff_trailers trailers;
        if (skiff_trailers_read(payload, &trailers, &why) != SKIFF_READ_OK) { connection_error(channel, why); return; }
        if (!call || call->done) return;
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
        if (skiff_rst_stream_read(payload, &reset, &why) != SKIFF_READ_OK) { connection_error(channel, why); return; }
        if (!call || call->done) return;
        call->response_ended = true;
        if (reset.reason.length)
            end_call(call, reset.status, (const char *)reset.reason.data, reset.reason.length, false, 0);
        else
            end_call_text(call, reset.status,
                (h->flags & SKIFF_FLAG_REFUSED) ? "the server refused the stream (not processed)"
                                                : "the server reset the stream",
                false, 0);
        return;
    }
    case SKIFF_FRAME_HALF_CLOSE:
        { connection_error(channel, "HALF_CLOSE from the server"); return; }
    default:
        return; /* unknown types on stream 0 are skipped */
    }
}

/* Keepalive (§5.1): sends a PING when one is due, fails the connection when one went unanswered
 * too long; returns the ms until the next thing to do (at most 1,000). */
static int keepalive_locked(skiff_channel *channel) {
    const skiff_channel_options *o = &channel->options;
    if (o->keepalive_interval_ms == 0) return 1000;
    int64_t now = now_ns();
    int64_t next;
    if (channel->ping_outstanding) {
        next = channel->last_ping_ns + (int64_t)o->keepalive_timeout_ms * 1000000;
        if (now >= next) {
            char reason[120];
            snprintf(reason, sizeof reason, "the server did not answer a keepalive PING within %u ms",
                (unsigned)o->keepalive_timeout_ms);
            fail_connection(channel, reason);
            return 0;
        }
    } else {
        bool idle = channel->open_streams == 0;
        if (idle && !o->keepalive_without_calls) return 1000;
        /* While no call is open the server counts PINGs closer than its minimum interval. */
        int64_t interval = (int64_t)o->keepalive_interval_ms;
        if (idle && interval < (int64_t)channel->peer.keepalive_min_interval_ms)
            interval = channel->peer.keepalive_min_interval_ms;
        int64_t quiet_since = channel->last_read_ns > channel->last_ping_ns ? channel->last_read_ns : channel->last_ping_ns;
        next = quiet_since + interval * 1000000;
        if (now >= next) {
            uint64_t count = (uint64_t)now;
            for (int i = 0; i < 8; i++) channel->ping_opaque[i] = (uint8_t)(count >> (56 - 8 * i));
            if (skiff_write_ping(&channel->out, false, channel->ping_opaque) != 0) {
                fail_connection(channel, "out of memory");
                return 0;
            }
            channel->ping_outstanding = true;
            channel->last_ping_ns = now;
            flush_locked(channel);
            return (int)(o->keepalive_timeout_ms < 1000 ? o->keepalive_timeout_ms : 1000);
        }
    }
    int64_t wait_ms = (next - now + 999999) / 1000000;
    return wait_ms < 1000 ? (int)wait_ms : 1000;
}

static void *io_main(void *argument) {
    skiff_channel *channel = argument;
    uint8_t *chunk = malloc(65536);
    pthread_mutex_lock(&channel->lock);
    if (!chunk) fail_connection(channel, "out of memory");
    bool tls_pending = false; /* bytes wait inside the TLS session: read them without polling */
    channel->last_read_ns = now_ns();
    while (!channel->closing && !channel->broken) {
        int wait_ms = keepalive_locked(channel);
        if (channel->broken) break;
        bool want_out = queued_bytes(channel) > 0;
        /* A server that sends but does not read would make the replies (PING ACKs, WINDOW_UPDATEs)
         * pile up: while they wait for the socket, nothing more is read. */
        bool want_in = queued_bytes(channel) < channel->options.max_queued_bytes;
        pthread_mutex_unlock(&channel->lock);
        struct pollfd fds[2] = {
            {channel->fd, (short)((want_in ? POLLIN : 0) | (want_out ? POLLOUT : 0)), 0},
            {channel->wake[0], POLLIN, 0},
        };
        int ready = poll(fds, 2, tls_pending && want_in ? 0 : wait_ms);
        pthread_mutex_lock(&channel->lock);
        if (ready < 0 && errno != EINTR) fail_connection(channel, "poll failed");
        if (ready < 0 || (ready == 0 && !(tls_pending && want_in))) continue;
        if (fds[1].revents & POLLIN) {
            uint8_t drained[64];
            while (read(channel->wake[0], drained, sizeof drained) > 0) {
            }
        }
        if (fds[0].revents & POLLOUT) flush_locked(channel);
        bool readable = (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) || tls_pending;
        if (!want_in || !readable || channel->closing || channel->broken) continue;
        ssize_t received;
        int error = 0;
        if (channel->tls) {
            /* A TLS session is one object for both directions: read under the lock, as writes are. */
            received = skiff_tls_read(channel->tls, chunk, 65536);
            tls_pending = received > 0 && skiff_tls_has_pending(channel->tls);
            if (received == -1) continue;
        } else {
            pthread_mutex_unlock(&channel->lock);
            received = recv(channel->fd, chunk, 65536, 0);
            error = errno;
            pthread_mutex_lock(&channel->lock);
            if (received < 0 && (error == EINTR || error == EAGAIN || error == EWOULDBLOCK)) continue;
        }
        if (received <= 0) {
            fail_connection(channel, "the server closed the connection");
            break;
        }
        channel->last_read_ns = now_ns();
        if (skiff_frame_decoder_feed(&channel->decoder, chunk, (size_t)received) != 0) {
            fail_connection(channel, "out of memory");
            break;
        }
        skiff_frame_header header;
        skiff_bytes payload;
        const char *why = NULL;
        skiff_read_result result = SKIFF_READ_NEED_MORE;
        while (!channel->broken &&
               (result = skiff_frame_decoder_next(&channel->decoder, &header, &payload, &why)) == SKIFF_READ_OK)
            handle_frame(channel, &header, payload);
        if (!channel->broken && result != SKIFF_READ_NEED_MORE) connection_error(channel, why);
        /* Connection credit goes back as soon as the bytes are read (§4.8), once per read. */
        if (!channel->broken && channel->connection_unacknowledged > 0) {
            if (skiff_write_window_update(&channel->out, 0, (uint32_t)channel->connection_unacknowledged) != 0)
                fail_connection(channel, "out of memory");
            channel->connection_receive_window += (int64_t)channel->connection_unacknowledged;
            channel->connection_unacknowledged = 0;
        }
        if (!channel->broken) flush_locked(channel);
    }
    pthread_mutex_unlock(&channel->lock);
    free(chunk);
    return NULL;
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

static int connect_with_timeout(const char *host, uint16_t port, uint32_t timeout_ms, char *reason, size_t size) {
    char service[8];
    snprintf(service, sizeof service, "%u", (unsigned)port);
    struct addrinfo hints, *addresses = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int resolved = getaddrinfo(host, service, &hints, &addresses);
    if (resolved != 0) {
        snprintf(reason, size, "cannot resolve %s: %s", host, gai_strerror(resolved));
        return -1;
    }
    int fd = -1;
    snprintf(reason, size, "cannot connect to %s:%u", host, (unsigned)port);
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
            if (poll(&pending, 1, (int)timeout_ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 &&
                error == 0)
                connected = 0;
            else
                snprintf(reason, size, "cannot connect to %s:%u: %s", host, (unsigned)port,
                    error ? strerror(error) : "timed out");
        } else if (connected != 0) {
            snprintf(reason, size, "cannot connect to %s:%u: %s", host, (unsigned)port, strerror(errno));
        }
        if (connected != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(addresses);
    return fd;
}

static skiff_channel *adopt(int fd, skiff_tls *tls, const skiff_channel_options *options, skiff_status *status);

skiff_channel *skiff_channel_connect(
    const char *host, uint16_t port, const skiff_channel_options *options, skiff_status *status) {
    skiff_channel_options defaults;
    skiff_channel_options_defaults(&defaults);
    char reason[256];
    int fd = connect_with_timeout(
        host, port, (options ? options : &defaults)->connect_timeout_ms, reason, sizeof reason);
    if (fd < 0) {
        set_status(status, SKIFF_STATUS_UNAVAILABLE, reason);
        return NULL;
    }
    int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    skiff_tls *tls = NULL;
    if (options && options->tls) {
        int64_t deadline = now_ns() + (int64_t)options->connect_timeout_ms * 1000000;
        if (!(tls = skiff_tls_connect(fd, host, options, deadline, reason, sizeof reason))) {
            close(fd);
            set_status(status, SKIFF_STATUS_UNAVAILABLE, reason);
            return NULL;
        }
    }
    return adopt(fd, tls, options, status);
}

skiff_channel *skiff_channel_adopt(int fd, const skiff_channel_options *options, skiff_status *status) {
    return adopt(fd, NULL, options, status);
}

/* A channel over a connected socket and, when not NULL, its TLS session; both are the channel's. */
static skiff_channel *adopt(int fd, skiff_tls *tls, const skiff_channel_options *options, skiff_status *status) {
    skiff_channel *channel = calloc(1, sizeof *channel);
    if (!channel) {
        set_status(status, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        skiff_tls_free(tls);
        close(fd);
        return NULL;
    }
    channel->tls = tls;
    if (options)
        channel->options = *options;
    else
        skiff_channel_options_defaults(&channel->options);
    const skiff_channel_options *o = &channel->options;
    if (o->max_message_size < 1024 || o->max_message_size > SKIFF_MAX_STREAM_ID || o->max_frame_size < 16384 ||
        o->max_frame_size > 16777216 || o->max_queued_bytes < 65536 || o->keepalive_timeout_ms == 0) {
        set_status(status, SKIFF_STATUS_INVALID_ARGUMENT,
            "channel options out of range: max_message_size 1,024 … 2^31-1, max_frame_size 16,384 … 16,777,216, "
            "max_queued_bytes at least 65,536, keepalive_timeout_ms at least 1");
        skiff_tls_free(tls);
        close(fd);
        free(channel);
        return NULL;
    }
    skiff_settings_defaults(&channel->peer);
    channel->connection_send_window = channel->peer.initial_connection_window;
    channel->connection_receive_window = 16777216; /* INITIAL_CONNECTION_WINDOW's default, not announced */
    channel->next_stream_id = 1;
    channel->references = 1;
    channel->fd = fd;
    channel->wake[0] = channel->wake[1] = -1;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    uint32_t max_message = channel->options.max_message_size;
    channel->stream_receive_window = max_message > 8388608 ? max_message : 8388608;
    skiff_setting settings[] = {
        {SKIFF_SETTING_MAX_FRAME_SIZE, channel->options.max_frame_size},
        {SKIFF_SETTING_MAX_MESSAGE_SIZE, max_message},
        {SKIFF_SETTING_INITIAL_STREAM_WINDOW, channel->stream_receive_window},
    };
    /* Until the server ACKs our SETTINGS, a frame limit stricter than the default is not in force. */
    uint32_t frame_limit = channel->options.max_frame_size > 65536 ? channel->options.max_frame_size : 65536;
    skiff_frame_decoder_init(&channel->decoder, frame_limit, true);
    bool ready = make_wake_pipe(channel->wake) == 0 && pthread_mutex_init(&channel->lock, NULL) == 0 &&
                 make_condition(&channel->space) == 0 && skiff_write_preface(&channel->out) == 0 &&
                 skiff_write_settings(&channel->out, settings, 3) == 0;
    if (ready) {
        pthread_mutex_lock(&channel->lock);
        push_locked(channel);
        pthread_mutex_unlock(&channel->lock);
        ready = pthread_create(&channel->thread, NULL, io_main, channel) == 0;
    }
    if (!ready) {
        set_status(status, SKIFF_STATUS_RESOURCE_EXHAUSTED, "cannot set the channel up");
        skiff_tls_free(tls);
        close(fd);
        if (channel->wake[0] >= 0) close(channel->wake[0]);
        if (channel->wake[1] >= 0) close(channel->wake[1]);
        skiff_buffer_free(&channel->out);
        skiff_frame_decoder_free(&channel->decoder);
        free(channel);
        return NULL;
    }
    set_status(status, SKIFF_STATUS_OK, NULL);
    return channel;
}

/* Drops one reference (the channel's own, or a finished call's); the last frees the channel. */
static void release_channel(skiff_channel *channel) {
    pthread_mutex_lock(&channel->lock);
    bool last = --channel->references == 0;
    pthread_mutex_unlock(&channel->lock);
    if (!last) return;
    free(channel->table);
    pthread_cond_destroy(&channel->space);
    pthread_mutex_destroy(&channel->lock);
    free(channel);
}

void skiff_channel_close(skiff_channel *channel) {
    pthread_mutex_lock(&channel->lock);
    channel->closing = true;
    fail_connection(channel, "the channel was closed");
    uint8_t byte = 1;
    ssize_t ignored = write(channel->wake[1], &byte, 1);
    (void)ignored;
    pthread_mutex_unlock(&channel->lock);
    pthread_join(channel->thread, NULL);
    pthread_mutex_lock(&channel->lock);
    skiff_tls_free(channel->tls);
    channel->tls = NULL;
    close(channel->fd);
    close(channel->wake[0]);
    close(channel->wake[1]);
    channel->fd = channel->wake[0] = channel->wake[1] = -1;
    skiff_buffer_free(&channel->out);
    channel->out_start = 0;
    skiff_frame_decoder_free(&channel->decoder);
    pthread_mutex_unlock(&channel->lock);
    release_channel(channel); /* calls not yet finished keep the rest until they are */
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

skiff_call *skiff_call_start(skiff_channel *channel, const char *path, const skiff_call_options *options) {
    skiff_call *call = calloc(1, sizeof *call);
    if (!call) return NULL;
    if (make_condition(&call->changed) != 0) {
        free(call);
        return NULL;
    }
    call->channel = channel;
    pthread_mutex_lock(&channel->lock);
    channel->references++;
    pthread_mutex_unlock(&channel->lock);
    static const skiff_call_options none = {0, NULL, 0};
    if (!options) options = &none;
    /* Longer than 99,999,999 s (about three years) is as good as none, and fits grpc-timeout. */
    int64_t timeout_ms = options->timeout_ms > 99999999000 ? 99999999000 : options->timeout_ms;
    if (timeout_ms > 0) call->deadline = now_ns() + timeout_ms * 1000000;

    /* The request metadata, checked as the server will check it, plus grpc-timeout. */
    size_t count = options->metadata_count + (timeout_ms > 0 ? 1 : 0);
    skiff_metadata_entry *entries = calloc(count ? count : 1, sizeof *entries);
    char timeout[32];
    pthread_mutex_lock(&channel->lock);
    if (!entries) {
        end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory", false, 0);
        goto out;
    }
    /* grpc-timeout from timeout_ms goes first: of a reserved key only the first occurrence counts. */
    size_t first = 0;
    if (timeout_ms > 0) {
        format_timeout(timeout_ms, timeout);
        entries[0].key = (skiff_bytes){(const uint8_t *)"grpc-timeout", 12};
        entries[0].value = (skiff_bytes){(const uint8_t *)timeout, strlen(timeout)};
        first = 1;
    }
    if (options->metadata_count)
        memcpy(entries + first, options->metadata, options->metadata_count * sizeof *entries);
    skiff_bytes path_bytes = {(const uint8_t *)path, strlen(path)};
    skiff_buffer probe = {0};
    int written = skiff_write_headers(&probe, 1, 0, path_bytes, entries, count);
    if (written == 0) {
        skiff_headers parsed;
        memset(&parsed, 0, sizeof parsed);
        skiff_bytes payload = {probe.data + SKIFF_FRAME_HEADER_SIZE, probe.length - SKIFF_FRAME_HEADER_SIZE};
        const char *why = "request metadata the server does not take";
        if (skiff_headers_read(payload, &parsed, NULL) != SKIFF_READ_OK ||
            skiff_metadata_check(&parsed.metadata, channel->peer.max_header_list_size, &why) != SKIFF_STATUS_OK) {
            end_call_text(call,
                parsed.metadata.encoded.length > channel->peer.max_header_list_size ? SKIFF_STATUS_RESOURCE_EXHAUSTED
                                                                                    : SKIFF_STATUS_INTERNAL,
                why, false, 0);
        } else if (probe.length - SKIFF_FRAME_HEADER_SIZE > channel->peer.max_frame_size) {
            end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED,
                "the path and metadata do not fit the server's MAX_FRAME_SIZE", false, 0);
        }
    } else {
        end_call_text(call, SKIFF_STATUS_INTERNAL, "the path or the metadata does not fit a HEADERS frame", false, 0);
    }
    /* A free stream: the server's MAX_CONCURRENT_STREAMS, when it has one. */
    if (!call->done && channel->peer.has_max_concurrent_streams && channel->peer.max_concurrent_streams == 0)
        end_call_text(call, SKIFF_STATUS_UNAVAILABLE, "the server accepts no streams (MAX_CONCURRENT_STREAMS 0)",
            false, 0);
    while (!call->done && !channel->broken && !channel->draining && channel->peer.has_max_concurrent_streams &&
           channel->open_streams >= channel->peer.max_concurrent_streams) {
        flush_before_wait(channel);
        if (!wait_until(&channel->space, &channel->lock, call->deadline)) expired(call);
    }
    if (!call->done && (channel->broken || channel->draining || channel->next_stream_id > SKIFF_MAX_STREAM_ID)) {
        end_call_text(call, SKIFF_STATUS_UNAVAILABLE,
            channel->draining ? "the server is draining the connection" : "the connection is closed", false, 0);
    }
    if (!call->done) {
        call->stream_id = channel->next_stream_id;
        call->send_window = channel->peer.initial_stream_window;
        call->receive_window = channel->stream_receive_window;
        channel->next_stream_id += 2;
        /* The HEADERS frame, written for stream 1 above, gets its real stream id. */
        probe.data[8] = (uint8_t)(call->stream_id >> 24), probe.data[9] = (uint8_t)(call->stream_id >> 16);
        probe.data[10] = (uint8_t)(call->stream_id >> 8), probe.data[11] = (uint8_t)call->stream_id;
        if (insert_call(channel, call) != 0) {
            call->stream_id = 0;
            end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory", false, 0);
        } else if (skiff_buffer_reserve(&channel->out, probe.length) != 0) {
            end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory", false, 0); /* leaves the table */
        } else {
            memcpy(channel->out.data + channel->out.length, probe.data, probe.length);
            channel->out.length += probe.length;
            push_locked(channel);
        }
    }
    skiff_buffer_free(&probe);
out:
    pthread_mutex_unlock(&channel->lock);
    free(entries);
    return call;
}

uint32_t skiff_call_send(skiff_call *call, skiff_bytes message, bool last) {
    skiff_channel *channel = call->channel;
    pthread_mutex_lock(&channel->lock);
    if (expired(call)) goto out;
    if (call->local_ended) {
        pthread_mutex_unlock(&channel->lock);
        return SKIFF_STATUS_FAILED_PRECONDITION; /* the client's side is already over */
    }
    if (message.length > channel->peer.max_message_size) {
        end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "a request message over the server's MAX_MESSAGE_SIZE",
            true, SKIFF_STATUS_CANCELLED);
        goto out;
    }
    size_t sent = 0;
    do {
        /* Room in the queue, then credit in both windows (a zero-length message needs none). */
        size_t remaining = message.length - sent;
        int64_t credit = channel->connection_send_window < call->send_window ? channel->connection_send_window
                                                                             : call->send_window;
        if (queued_bytes(channel) >= channel->options.max_queued_bytes || (remaining > 0 && credit <= 0)) {
            flush_before_wait(channel);
            if (!wait_until(&channel->space, &channel->lock, call->deadline)) expired(call);
            if (call->done) goto out;
            continue;
        }
        size_t fragment = remaining;
        if (fragment > channel->peer.max_frame_size) fragment = channel->peer.max_frame_size;
        if (remaining > 0 && (int64_t)fragment > credit) fragment = (size_t)credit;
        bool final = sent + fragment == message.length;
        uint8_t flags = final ? (last ? SKIFF_FLAG_END_STREAM : 0) : SKIFF_FLAG_MORE;
        skiff_bytes piece = {message.data + sent, fragment};
        if (skiff_write_message(&channel->out, call->stream_id, flags, piece) != 0) {
            end_call_text(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory", true, SKIFF_STATUS_CANCELLED);
            goto out;
        }
        channel->connection_send_window -= (int64_t)fragment;
        call->send_window -= (int64_t)fragment;
        sent += fragment;
        push_locked(channel);
    } while (sent < message.length && !call->done);
    if (last) call->local_ended = true;
out:;
    uint32_t code = call->done ? call->code : SKIFF_STATUS_OK;
    pthread_mutex_unlock(&channel->lock);
    return code;
}

uint32_t skiff_call_half_close(skiff_call *call) {
    skiff_channel *channel = call->channel;
    pthread_mutex_lock(&channel->lock);
    if (!expired(call) && !call->local_ended) {
        call->local_ended = true;
        if (skiff_write_half_close(&channel->out, call->stream_id) == 0)
            push_locked(channel);
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
    for (;;) {
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
            if (!call->done && length > 0 && skiff_write_window_update(&channel->out, call->stream_id, length) == 0) {
                call->receive_window += length;
                push_locked(channel);
            }
            result = 1;
            break;
        }
        if (call->done || expired(call)) {
            result = call->response_ended ? 0 : -1;
            break;
        }
        flush_before_wait(channel);
        if (!wait_until(&call->changed, &channel->lock, call->deadline)) expired(call);
    }
    pthread_mutex_unlock(&channel->lock);
    return result;
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
    pthread_mutex_unlock(&call->channel->lock);
}

void skiff_call_cancel(skiff_call *call) {
    pthread_mutex_lock(&call->channel->lock);
    end_call_text(call, SKIFF_STATUS_CANCELLED, "the call was cancelled", true, SKIFF_STATUS_CANCELLED);
    pthread_mutex_unlock(&call->channel->lock);
}

/* Drops the complete responses the application did not take, returning their stream credit so
 * the server can go on to its TRAILERS. */
static void discard_responses(skiff_call *call) {
    skiff_channel *channel = call->channel;
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
    if (credit > 0 && !call->done &&
        skiff_write_window_update(&channel->out, call->stream_id, (uint32_t)credit) == 0) {
        call->receive_window += (int64_t)credit;
        push_locked(channel);
    }
}

uint32_t skiff_call_finish(skiff_call *call, skiff_status *status) {
    skiff_channel *channel = call->channel;
    pthread_mutex_lock(&channel->lock);
    /* The client's side ends here if it has not; responses not taken are dropped as they come. */
    if (!call->done && !call->local_ended) {
        call->local_ended = true;
        if (skiff_write_half_close(&channel->out, call->stream_id) == 0) push_locked(channel);
    }
    while (!call->done && !expired(call)) {
        discard_responses(call);
        flush_before_wait(channel);
        if (!wait_until(&call->changed, &channel->lock, call->deadline)) expired(call);
    }
    uint32_t code = call->code;
    pthread_mutex_unlock(&channel->lock);
    if (status) {
        status->code = code;
        status->message = call->message;
        call->message = NULL;
    }
    free(call->message);
    skiff_buffer_free(&call->initial);
    skiff_buffer_free(&call->trailing);
    skiff_buffer_free(&call->queue);
    pthread_cond_destroy(&call->changed);
    free(call);
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
