/*
 * The channel against a scripted server on a socketpair: what a real Skiff server never does
 * (leave a PING unanswered, overrun a window, send metadata it may not) and the timing of
 * keepalive PINGs. Needs no server: `make check` and `make check-sanitize` run it.
 */
#include "skiff/channel.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- The scripted server ---- */

typedef struct fake {
    int fd;
    skiff_frame_decoder decoder;
    skiff_buffer out;
    /* What the script does; what it saw. */
    int scenario;
    int pings;            /* PINGs (not ACKs) received */
    int64_t ping_at[64];  /* when, ms */
    int pings_after_end;  /* PINGs received after the call's TRAILERS went out (+100 ms) */
    bool reset_seen;      /* an RST_STREAM from the client */
    atomic_bool closed;   /* the client ended the connection */
    int listener;         /* TCP scripts: the listening socket (-1 for a socketpair) */
    int fillers[8];       /* connections that fill the listener's queue */
    uint16_t port;
    int connections;      /* accepted */
    int streams;          /* HEADERS received */
    int same_requests;    /* request messages equal to "hello" */
    bool deadline_sent;   /* every HEADERS carried grpc-timeout */
    int replayed_bytes;   /* request bytes on the retried stream */
    uint32_t max_streams; /* MAX_CONCURRENT_STREAMS to announce; 0 for none */
    uint32_t open[8];     /* streams whose HEADERS came and whose request has not ended yet */
    int open_count;
    bool replay_ended;    /* ...ended by END_STREAM */
    atomic_bool stop;     /* the test tells a looping script to end */
} fake;

static void fake_flush(fake *f) {
    for (size_t at = 0; at < f->out.length;) {
        ssize_t written = send(f->fd, f->out.data + at, f->out.length - at, MSG_NOSIGNAL);
        if (written <= 0) break;
        at += (size_t)written;
    }
    f->out.length = 0;
}

/* The next frame from the client within `timeout_ms`: 1 with it, 0 on timeout, -1 at the end. */
static int fake_next(fake *f, skiff_frame_header *h, skiff_bytes *payload, int timeout_ms) {
    int64_t until = now_ms() + timeout_ms;
    for (;;) {
        const char *why = NULL;
        skiff_read_result result = skiff_frame_decoder_next(&f->decoder, h, payload, &why);
        if (result == SKIFF_READ_OK) {
            if (h->type == SKIFF_FRAME_PING && !(h->flags & SKIFF_FLAG_ACK) && f->pings < 64)
                f->ping_at[f->pings++] = now_ms();
            if (h->type == SKIFF_FRAME_RST_STREAM) f->reset_seen = true;
            return 1;
        }
        if (result != SKIFF_READ_NEED_MORE) return -1;
        int left = (int)(until - now_ms());
        if (left <= 0) return 0;
        struct pollfd wait = {f->fd, POLLIN, 0};
        if (poll(&wait, 1, left) <= 0) return 0;
        uint8_t chunk[65536];
        ssize_t n = recv(f->fd, chunk, sizeof chunk, 0);
        if (n <= 0) {
            f->closed = true;
            return -1;
        }
        skiff_frame_decoder_feed(&f->decoder, chunk, (size_t)n);
    }
}

/* Reads for `ms`, answering PINGs when `answer`; -1 once the client has gone. */
static int fake_listen(fake *f, int ms, bool answer) {
    int64_t until = now_ms() + ms;
    for (int left; (left = (int)(until - now_ms())) > 0;) {
        skiff_frame_header h;
        skiff_bytes payload;
        int got = fake_next(f, &h, &payload, left);
        if (got < 0) return -1;
        if (got && answer && h.type == SKIFF_FRAME_PING && !(h.flags & SKIFF_FLAG_ACK)) {
            skiff_write_ping(&f->out, true, payload.data);
            fake_flush(f);
        }
    }
    return 0;
}

/* Until the client's HEADERS: the preface and SETTINGS go out, the client's SETTINGS are ACKed. */
static void fake_open(fake *f, uint32_t keepalive_min_interval_ms) {
    skiff_write_preface(&f->out);
    skiff_setting settings[] = {{SKIFF_SETTING_KEEPALIVE_MIN_INTERVAL_MS, keepalive_min_interval_ms}};
    skiff_write_settings(&f->out, settings, keepalive_min_interval_ms ? 1 : 0);
    fake_flush(f);
    skiff_frame_header h;
    skiff_bytes payload;
    while (fake_next(f, &h, &payload, 2000) == 1) {
        if (h.type == SKIFF_FRAME_SETTINGS && !(h.flags & SKIFF_FLAG_ACK)) {
            skiff_write_settings_ack(&f->out);
            fake_flush(f);
        }
        if (h.type == SKIFF_FRAME_HEADERS || (h.type == SKIFF_FRAME_SETTINGS && keepalive_min_interval_ms)) return;
    }
}

/* Reads up to the end of one request (a MESSAGE with END_STREAM on a stream whose HEADERS came),
 * answering PINGs; its stream id, or 0. Requests of calls made at once from several threads
 * interleave: their HEADERS are remembered across calls. */
static uint32_t fake_request(fake *f, int timeout_ms) {
    skiff_frame_header h;
    skiff_bytes payload;
    while (fake_next(f, &h, &payload, timeout_ms) == 1) {
        if (h.type == SKIFF_FRAME_SETTINGS && !(h.flags & SKIFF_FLAG_ACK)) {
            skiff_write_settings_ack(&f->out);
            fake_flush(f);
        } else if (h.type == SKIFF_FRAME_PING && !(h.flags & SKIFF_FLAG_ACK)) {
            skiff_write_ping(&f->out, true, payload.data);
            fake_flush(f);
        } else if (h.type == SKIFF_FRAME_HEADERS) {
            if (f->open_count == 8) abort(); /* more than the scripts ever open */
            f->open[f->open_count++] = h.stream_id;
            f->streams++;
            skiff_headers headers;
            bool timed = false;
            if (skiff_headers_read(payload, &headers, NULL) == SKIFF_READ_OK) {
                skiff_metadata_iterator it;
                skiff_metadata_iterate(&headers.metadata, &it);
                skiff_metadata_entry entry;
                while (skiff_metadata_next(&it, &entry))
                    if (entry.key.length == 12 && memcmp(entry.key.data, "grpc-timeout", 12) == 0) timed = true;
            }
            if (f->streams == 1) f->deadline_sent = timed;
            f->deadline_sent = f->deadline_sent && timed;
        } else if (h.type == SKIFF_FRAME_MESSAGE) {
            int at = 0;
            while (at < f->open_count && f->open[at] != h.stream_id) at++;
            if (at == f->open_count) continue; /* a stream the script has forgotten (a new connection) */
            if (payload.length == 5 && memcmp(payload.data, "hello", 5) == 0) f->same_requests++;
            if (h.flags & SKIFF_FLAG_END_STREAM) {
                f->open[at] = f->open[--f->open_count];
                return h.stream_id;
            }
        }
    }
    return 0;
}

static void fake_answer(fake *f, uint32_t stream) {
    skiff_bytes none = {NULL, 0};
    skiff_write_headers(&f->out, stream, 0, none, NULL, 0);
    skiff_write_message(&f->out, stream, 0, text("ok"));
    skiff_write_trailers(&f->out, stream, SKIFF_STATUS_OK, none, NULL, 0);
    fake_flush(f);
}

static void fake_refuse(fake *f, uint32_t stream) {
    skiff_write_rst_stream(&f->out, stream, SKIFF_FLAG_REFUSED, SKIFF_STATUS_UNAVAILABLE, text("busy: refused"));
    fake_flush(f);
}

/* The server's preface and (empty) SETTINGS. */
static void fake_greet(fake *f) {
    skiff_write_preface(&f->out);
    skiff_setting limit[] = {{SKIFF_SETTING_MAX_CONCURRENT_STREAMS, f->max_streams}};
    skiff_write_settings(&f->out, limit, f->max_streams ? 1 : 0);
    fake_flush(f);
}

/* TCP scripts: the next connection, within `timeout_ms`; its preface and SETTINGS go out. */
static bool fake_accept(fake *f, int timeout_ms) {
    struct pollfd wait = {f->listener, POLLIN, 0};
    if (poll(&wait, 1, timeout_ms) != 1) return false;
    int fd = accept(f->listener, NULL, NULL);
    if (fd < 0) return false;
    if (f->fd >= 0) close(f->fd);
    f->fd = fd;
    f->closed = false;
    f->connections++;
    skiff_frame_decoder_free(&f->decoder);
    skiff_frame_decoder_init(&f->decoder, 16777216, true);
    f->out.length = 0;
    f->open_count = 0; /* streams are per connection */
    fake_greet(f);
    return true;
}

static int listen_on(uint16_t port, int backlog) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0 || listen(fd, backlog) != 0) abort();
    return fd;
}

enum {
    UNANSWERED_PING,
    ANSWERED_PINGS,
    IDLE_PINGS,
    WINDOW_OVERRUN,
    BAD_METADATA,
    REFUSED_ONCE,
    REFUSED_ALWAYS,
    DRAINED,
    RECONNECT,
    REPLAY_ANSWERED,
    SILENT_AFTER_LOSS,
    GOAWAY_AT_ONCE,
    DRAINED_BUSY,
    SILENT_TLS,
};

static void *run_fake(void *argument) {
    fake *f = argument;
    skiff_bytes none = {NULL, 0};
    switch (f->scenario) {
    case UNANSWERED_PING:
        fake_open(f, 0);
        fake_listen(f, 3000, false);
        break;
    case ANSWERED_PINGS: {
        fake_open(f, 0);
        fake_listen(f, 400, true);
        skiff_write_headers(&f->out, 1, 0, none, NULL, 0);
        skiff_write_message(&f->out, 1, 0, text("done"));
        skiff_write_trailers(&f->out, 1, SKIFF_STATUS_OK, none, NULL, 0);
        fake_flush(f);
        fake_listen(f, 100, true);
        int before = f->pings;
        fake_listen(f, 400, true);
        f->pings_after_end = f->pings - before;
        break;
    }
    case IDLE_PINGS:
        fake_open(f, 200);
        fake_listen(f, 900, true);
        break;
    case WINDOW_OVERRUN: {
        /* The stream window the client announced (8 MiB) and one frame more, none of it taken. */
        fake_open(f, 0);
        skiff_write_headers(&f->out, 1, 0, none, NULL, 0);
        fake_flush(f);
        uint8_t *block = calloc(1, 65536);
        skiff_bytes frame = {block, 65536};
        for (int i = 0; i < 129 && !f->closed; i++) {
            skiff_write_message(&f->out, 1, 0, frame);
            fake_flush(f);
        }
        free(block);
        fake_listen(f, 2000, true);
        break;
    }
    case REFUSED_ONCE: {
        fake_greet(f);
        fake_refuse(f, fake_request(f, 2000));
        uint32_t again = fake_request(f, 2000);
        if (again) fake_answer(f, again);
        fake_listen(f, 300, true);
        break;
    }
    case REFUSED_ALWAYS:
        fake_greet(f);
        for (uint32_t stream; (stream = fake_request(f, 500)) != 0;) fake_refuse(f, stream);
        break;
    case DRAINED: {
        /* The first connection is drained before the call's stream is processed. */
        if (!fake_accept(f, 2000)) break;
        fake_request(f, 2000);
        skiff_write_goaway(&f->out, 0, SKIFF_STATUS_OK, text("restarting"));
        fake_flush(f);
        fake_listen(f, 2000, true); /* until the client closes it: it carries no stream */
        if (!f->closed || !fake_accept(f, 2000)) break;
        uint32_t stream = fake_request(f, 2000);
        if (stream) fake_answer(f, stream);
        fake_listen(f, 300, true);
        break;
    }
    case DRAINED_BUSY: {
        /* One stream at a time: one call waits for its answer, another for a free stream, when
         * the GOAWAY comes. Both go to the next connection. */
        f->max_streams = 1;
        if (!fake_accept(f, 2000)) break;
        fake_request(f, 2000);
        fake_listen(f, 200, true);
        skiff_write_goaway(&f->out, 0, SKIFF_STATUS_OK, text("restarting"));
        fake_flush(f);
        fake_listen(f, 2000, true);
        f->max_streams = 0;
        if (!f->closed || !fake_accept(f, 2000)) break;
        for (int answered = 0; answered < 2;) {
            uint32_t stream = fake_request(f, 2000);
            if (!stream) break;
            fake_answer(f, stream);
            answered++;
        }
        fake_listen(f, 200, true);
        break;
    }
    case REPLAY_ANSWERED: {
        /* A stream window of 1,024: the replay of a refused stream must wait for credit, and the
         * server answers (HEADERS) in the middle of it. All of the request must still arrive. */
        skiff_write_preface(&f->out);
        skiff_setting small[] = {{SKIFF_SETTING_MAX_MESSAGE_SIZE, 1024}, {SKIFF_SETTING_INITIAL_STREAM_WINDOW, 1024}};
        skiff_write_settings(&f->out, small, 2);
        fake_flush(f);
        skiff_frame_header h;
        skiff_bytes payload;
        bool refused = false, answered = false;
        while (fake_next(f, &h, &payload, 2000) == 1) {
            if (h.type == SKIFF_FRAME_SETTINGS && !(h.flags & SKIFF_FLAG_ACK)) {
                skiff_write_settings_ack(&f->out);
            } else if (h.type == SKIFF_FRAME_MESSAGE && h.stream_id == 1 && !refused) {
                fake_refuse(f, 1);
                refused = true;
            } else if (h.type == SKIFF_FRAME_MESSAGE && h.stream_id == 3) {
                if (!answered) skiff_write_headers(&f->out, 3, 0, text(""), NULL, 0);
                answered = true;
                f->replayed_bytes += (int)payload.length;
                if (payload.length) {
                    skiff_write_window_update(&f->out, 3, (uint32_t)payload.length);
                    skiff_write_window_update(&f->out, 0, (uint32_t)payload.length);
                }
                if (h.flags & SKIFF_FLAG_END_STREAM) {
                    f->replay_ended = true;
                    skiff_write_message(&f->out, 3, 0, text("ok"));
                    skiff_write_trailers(&f->out, 3, SKIFF_STATUS_OK, text(""), NULL, 0);
                }
            }
            fake_flush(f);
            if (f->replay_ended) break;
        }
        fake_listen(f, 200, true);
        break;
    }
    case SILENT_AFTER_LOSS: {
        /* After the first connection the port answers no more: connection attempts hang (the
         * listener's queue is full and never accepted from). */
        if (!fake_accept(f, 2000)) break;
        fake_listen(f, 100, true);
        for (int i = 0; i < 8; i++) {
            int filler = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
            struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(f->port)};
            address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            (void)connect(filler, (struct sockaddr *)&address, sizeof address);
            f->fillers[i] = filler;
        }
        close(f->fd);
        f->fd = -1;
        while (!atomic_load(&f->stop)) nanosleep(&(struct timespec){0, 10000000}, NULL);
        for (int i = 0; i < 8; i++) close(f->fillers[i]);
        break;
    }
    case SILENT_TLS: {
        /* Accepts the TCP connection and never answers the TLS ClientHello (nor sends anything). */
        struct pollfd wait = {f->listener, POLLIN, 0};
        if (poll(&wait, 1, 3000) == 1 && (f->fd = accept(f->listener, NULL, NULL)) >= 0) {
            char hello[4096];
            struct pollfd closed = {f->fd, POLLIN, 0};
            while (poll(&closed, 1, 3000) == 1 && recv(f->fd, hello, sizeof hello, 0) > 0) {
            }
        }
        break;
    }
    case GOAWAY_AT_ONCE:
        /* A server at its connection limit (§5.4): preface, SETTINGS, GOAWAY(UNAVAILABLE) at once. */
        /* Until the test says stop: a slow machine may leave more than one accept's wait between
         * connections. */
        while (!atomic_load(&f->stop)) {
            if (!fake_accept(f, 200)) continue;
            skiff_write_goaway(&f->out, 0, SKIFF_STATUS_UNAVAILABLE, text("too many connections"));
            fake_flush(f);
        }
        break;
    case RECONNECT: {
        /* The first connection ends under an idle channel; the next call connects again. */
        if (!fake_accept(f, 2000)) break;
        fake_listen(f, 100, true);
        close(f->fd);
        f->fd = -1;
        if (!fake_accept(f, 2000)) break;
        uint32_t stream = fake_request(f, 2000);
        if (stream) fake_answer(f, stream);
        fake_listen(f, 100, true);
        /* Then the server goes away altogether, and comes back on the same port later. */
        close(f->listener);
        close(f->fd);
        f->fd = -1;
        nanosleep(&(struct timespec){0, 600000000}, NULL);
        f->listener = listen_on(f->port, 8);
        if (!fake_accept(f, 3000)) break;
        stream = fake_request(f, 2000);
        if (stream) fake_answer(f, stream);
        fake_listen(f, 100, true);
        break;
    }
    case BAD_METADATA: {
        fake_open(f, 0);
        skiff_metadata_entry upper = {text("Bad-Key"), text("value")};
        skiff_write_headers(&f->out, 1, 0, none, &upper, 1);
        fake_flush(f);
        fake_listen(f, 500, true);
        break;
    }
    }
    return NULL;
}

/* A channel over a socketpair whose other end the script plays. */
static skiff_channel *start(fake *f, int scenario, const skiff_channel_options *options, pthread_t *thread) {
    int ends[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, ends) != 0) abort();
    memset(f, 0, sizeof *f);
    f->fd = ends[1];
    f->listener = -1;
    f->scenario = scenario;
    skiff_frame_decoder_init(&f->decoder, 16777216, true);
    skiff_channel *channel = skiff_channel_adopt(ends[0], options, NULL);
    if (!channel || pthread_create(thread, NULL, run_fake, f) != 0) abort();
    return channel;
}

/* Ends the channel and the script: the script first when it runs to its own end (`script_ends`). */
/* A channel connected (skiff_channel_connect, so it can reconnect) to a script on a TCP port. */
static skiff_channel *start_tcp(fake *f, int scenario, const skiff_channel_options *options, pthread_t *thread) {
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->scenario = scenario;
    f->listener = listen_on(0, scenario == SILENT_AFTER_LOSS ? 0 : 8);
    struct sockaddr_in address;
    socklen_t length = sizeof address;
    getsockname(f->listener, (struct sockaddr *)&address, &length);
    f->port = ntohs(address.sin_port);
    skiff_frame_decoder_init(&f->decoder, 16777216, true);
    if (pthread_create(thread, NULL, run_fake, f) != 0) abort();
    skiff_status status = {0};
    skiff_channel *channel = skiff_channel_connect("127.0.0.1", f->port, options, &status);
    if (!channel) abort();
    return channel;
}

static void stop(fake *f, skiff_channel *channel, pthread_t thread, bool script_ends) {
    if (script_ends) pthread_join(thread, NULL);
    skiff_channel_close(channel);
    if (!script_ends) pthread_join(thread, NULL);
    if (f->fd >= 0) close(f->fd);
    if (f->listener > 0) close(f->listener);
    skiff_frame_decoder_free(&f->decoder);
    skiff_buffer_free(&f->out);
}

/* A call to the script: sends one request ("hello" unless `request` is given); returns the status
 * of finish. */
static uint32_t call_with(skiff_channel *channel, skiff_bytes request, skiff_status *status, int *messages) {
    skiff_call_options options = {.timeout_ms = 2500}; /* a script that stalls fails the test, not hangs it */
    skiff_call *call = skiff_call_start(channel, "/skiff.testing.v1.TestService/UnaryCall", &options);
    skiff_call_send(call, request, true);
    skiff_buffer message = {0};
    *messages = 0;
    while (skiff_call_receive(call, &message) == 1) ++*messages;
    skiff_buffer_free(&message);
    return skiff_call_finish(call, status);
}

static uint32_t one_call(skiff_channel *channel, skiff_status *status, int *messages) {
    return call_with(channel, text("hello"), status, messages);
}

/* What a call to a script came to. */
typedef struct outcome {
    uint32_t code;
    int messages;      /* responses received */
    char message[200]; /* the status message, or "" */
} outcome;

/* One call ("hello" unless `request` has bytes) on a new channel to a script that runs to its own
 * end (a socketpair, or TCP with reconnecting); `f` then tells what the script saw. */
static outcome scripted_call(
    fake *f, int scenario, const skiff_channel_options *options, bool tcp, skiff_bytes request) {
    pthread_t thread;
    skiff_channel *channel = tcp ? start_tcp(f, scenario, options, &thread) : start(f, scenario, options, &thread);
    skiff_status status = {0};
    outcome o = {0, 0, ""};
    o.code = call_with(channel, request.length ? request : text("hello"), &status, &o.messages);
    snprintf(o.message, sizeof o.message, "%s", status.message ? status.message : "");
    skiff_status_clear(&status);
    stop(f, channel, thread, true);
    return o;
}

/* ---- The tests ---- */

static void test_unanswered_ping(void) {
    skiff_channel_options options;
    skiff_channel_options_defaults(&options);
    options.keepalive_interval_ms = 50;
    options.keepalive_timeout_ms = 150;
    fake f;
    pthread_t thread;
    skiff_channel *channel = start(&f, UNANSWERED_PING, &options, &thread);
    skiff_status status = {0};
    int messages;
    int64_t began = now_ms();
    CHECK(one_call(channel, &status, &messages) == SKIFF_STATUS_UNAVAILABLE);
    int64_t took = now_ms() - began;
    CHECK(status.message && strstr(status.message, "keepalive PING within 150 ms") != NULL);
    CHECK(took >= 190 && took < 1500); /* 50 ms of quiet, then 150 ms without an answer */
    skiff_status_clear(&status);
    stop(&f, channel, thread, false);
    CHECK(f.pings == 1); /* one PING at a time */
    CHECK(f.closed);
}

static void test_answered_pings(void) {
    skiff_channel_options options;
    skiff_channel_options_defaults(&options);
    options.keepalive_interval_ms = 50;
    options.keepalive_timeout_ms = 150;
    fake f;
    outcome o = scripted_call(&f, ANSWERED_PINGS, &options, false, (skiff_bytes){NULL, 0});
    CHECK(o.code == SKIFF_STATUS_OK);
    CHECK(o.messages == 1);
    /* 400 ms of a quiet call: a PING after each 50 ms of quiet (answered at once). */
    CHECK(f.pings >= 3 && f.pings <= 9);
    CHECK(f.pings_after_end == 0); /* no call open: no PINGs */
}

static void test_idle_pings(void) {
    skiff_channel_options options;
    skiff_channel_options_defaults(&options);
    options.keepalive_interval_ms = 50;
    options.keepalive_without_calls = true;
    fake f;
    pthread_t thread;
    skiff_channel *channel = start(&f, IDLE_PINGS, &options, &thread);
    stop(&f, channel, thread, true);
    /* No call open: never closer than the server's KEEPALIVE_MIN_INTERVAL_MS (200 ms). */
    CHECK(f.pings >= 2 && f.pings <= 5);
    for (int i = 1; i < f.pings; i++) CHECK(f.ping_at[i] - f.ping_at[i - 1] >= 195);
}

static void test_window_overrun(void) {
    fake f;
    pthread_t thread;
    skiff_channel *channel = start(&f, WINDOW_OVERRUN, NULL, &thread);
    skiff_call *call = skiff_call_start(channel, "/skiff.testing.v1.TestService/StreamingOutputCall", NULL);
    skiff_bytes empty = {NULL, 0};
    skiff_call_send(call, empty, true);
    /* The application takes nothing while the server sends; the channel must end the connection. */
    skiff_status status = {0};
    int64_t until = now_ms() + 3000;
    while (!f.closed && now_ms() < until) nanosleep(&(struct timespec){0, 10000000}, NULL);
    CHECK(f.closed);
    CHECK(skiff_call_finish(call, &status) == SKIFF_STATUS_UNAVAILABLE);
    CHECK(status.message && strstr(status.message, "overran a stream's window") != NULL);
    skiff_status_clear(&status);
    stop(&f, channel, thread, false);
}

static void test_bad_metadata(void) {
    fake f;
    outcome o = scripted_call(&f, BAD_METADATA, NULL, false, (skiff_bytes){NULL, 0});
    CHECK(o.code == SKIFF_STATUS_INTERNAL);
    CHECK(o.messages == 0);
    CHECK(o.message[0] != 0);
    CHECK(f.reset_seen); /* the stream was reset; the connection went on */
    CHECK(!f.closed);
}

/* A refused stream is opened again at once, with the same request and what is left of the
 * deadline; the application sees only the answer. */
static void test_refused_once(void) {
    fake f;
    outcome o = scripted_call(&f, REFUSED_ONCE, NULL, false, (skiff_bytes){NULL, 0});
    CHECK(o.code == SKIFF_STATUS_OK);
    CHECK(o.messages == 1);
    CHECK(f.streams == 2);
    CHECK(f.same_requests == 2);
    CHECK(f.deadline_sent);
}

/* At most max_transparent_retries (3) times; then the refusal is the status. A request larger than
 * retry_buffer_bytes is not kept, so not retried. */
static void test_refused_always(void) {
    fake f;
    outcome o = scripted_call(&f, REFUSED_ALWAYS, NULL, false, (skiff_bytes){NULL, 0});
    CHECK(o.code == SKIFF_STATUS_UNAVAILABLE);
    CHECK(strcmp(o.message, "busy: refused") == 0);
    CHECK(f.streams == 4);

    skiff_channel_options options;
    skiff_channel_options_defaults(&options);
    options.retry_buffer_bytes = 1024;
    static uint8_t big[2000];
    o = scripted_call(&f, REFUSED_ALWAYS, &options, false, (skiff_bytes){big, sizeof big});
    CHECK(o.code == SKIFF_STATUS_UNAVAILABLE);
    CHECK(f.streams == 1);
}

/* A GOAWAY above the call's stream: the call goes to a new connection; the drained one, carrying
 * nothing, is closed by the client. */
static void test_drained(void) {
    fake f;
    outcome o = scripted_call(&f, DRAINED, NULL, true, (skiff_bytes){NULL, 0});
    CHECK(o.code == SKIFF_STATUS_OK);
    CHECK(o.messages == 1);
    CHECK(f.connections == 2);
    CHECK(f.streams == 2);
    CHECK(f.same_requests == 2);
}

/* A lost connection is made again by the next call; while the server is away calls fail at once
 * within the backoff, with the reason; once it is back, calls work again. */
static void test_reconnect(void) {
    fake f;
    pthread_t thread;
    skiff_channel_options options;
    skiff_channel_options_defaults(&options);
    options.backoff_initial_ms = 200;
    options.backoff_max_ms = 400;
    skiff_channel *channel = start_tcp(&f, RECONNECT, &options, &thread);
    skiff_status status = {0};
    int messages;
    nanosleep(&(struct timespec){0, 250000000}, NULL); /* the first connection is gone by now */
    CHECK(one_call(channel, &status, &messages) == SKIFF_STATUS_OK);
    skiff_status_clear(&status);
    nanosleep(&(struct timespec){0, 200000000}, NULL); /* the server has gone away */
    CHECK(one_call(channel, &status, &messages) == SKIFF_STATUS_UNAVAILABLE);
    CHECK(status.message && strstr(status.message, "cannot connect") != NULL);
    skiff_status_clear(&status);
    int64_t began = now_ms();
    CHECK(one_call(channel, &status, &messages) == SKIFF_STATUS_UNAVAILABLE);
    CHECK(now_ms() - began < 100); /* within the backoff: at once */
    CHECK(status.message && strstr(status.message, "the next attempt in") != NULL);
    skiff_status_clear(&status);
    /* Back after 600 ms: calls keep trying as their backoff allows, and one gets through. */
    uint32_t code = SKIFF_STATUS_UNAVAILABLE;
    for (int attempt = 0; attempt < 40 && code != SKIFF_STATUS_OK; attempt++) {
        code = one_call(channel, &status, &messages);
        skiff_status_clear(&status);
        if (code != SKIFF_STATUS_OK) nanosleep(&(struct timespec){0, 50000000}, NULL);
    }
    CHECK(code == SKIFF_STATUS_OK);
    stop(&f, channel, thread, true);
    CHECK(f.connections == 3);
}

/* The replay of a refused stream goes on to the end when the server answers in its middle: every
 * message the application sent arrives, then END_STREAM. */
static void test_replay_answered(void) {
    fake f;
    pthread_t thread;
    skiff_channel *channel = start(&f, REPLAY_ANSWERED, NULL, &thread);
    skiff_call_options options = {.timeout_ms = 3000};
    skiff_call *call = skiff_call_start(channel, "/skiff.testing.v1.TestService/StreamingInputCall", &options);
    static uint8_t piece[1000];
    skiff_bytes message = {piece, sizeof piece};
    CHECK(skiff_call_send(call, message, false) == SKIFF_STATUS_OK);
    CHECK(skiff_call_send(call, message, false) == SKIFF_STATUS_OK);
    CHECK(skiff_call_send(call, message, true) == SKIFF_STATUS_OK);
    skiff_status status = {0};
    CHECK(skiff_call_finish(call, &status) == SKIFF_STATUS_OK);
    skiff_status_clear(&status);
    stop(&f, channel, thread, true);
    CHECK(f.replayed_bytes == 3000);
    CHECK(f.replay_ended);
}

/* A call's deadline bounds the connection attempt it makes; such an attempt starts no backoff. */
static void test_deadline_while_connecting(void) {
    fake f;
    pthread_t thread;
    skiff_channel_options options;
    skiff_channel_options_defaults(&options);
    options.connect_timeout_ms = 4000;
    skiff_channel *channel = start_tcp(&f, SILENT_AFTER_LOSS, &options, &thread);
    nanosleep(&(struct timespec){0, 300000000}, NULL); /* the connection is gone, the port is silent */
    skiff_call_options short_deadline = {.timeout_ms = 300};
    skiff_status status = {0};
    for (int i = 0; i < 2; i++) {
        int64_t began = now_ms();
        skiff_call *call = skiff_call_start(channel, "/skiff.testing.v1.TestService/EmptyCall", &short_deadline);
        CHECK(skiff_call_finish(call, &status) == SKIFF_STATUS_DEADLINE_EXCEEDED);
        int64_t took = now_ms() - began;
        CHECK(took >= 250 && took < 1500);
        skiff_status_clear(&status);
    }
    atomic_store(&f.stop, true);
    stop(&f, channel, thread, true);
}

/* A server that sends GOAWAY right after its SETTINGS still gives a channel (its calls go to the
 * next connection). */
static void test_goaway_at_once(void) {
    fake f;
    pthread_t thread;
    skiff_channel_options options;
    skiff_channel_options_defaults(&options);
    options.connect_timeout_ms = 5000; /* a connection the script does not take fails the check, not hangs */
    skiff_channel *channel = start_tcp(&f, GOAWAY_AT_ONCE, &options, &thread);
    skiff_channel_close(channel);
    int made = 0;
    for (int i = 0; i < 200; i++) {
        skiff_status status = {0};
        skiff_channel *another = skiff_channel_connect("127.0.0.1", f.port, &options, &status);
        if (another) {
            made++;
            skiff_channel_close(another);
        }
        skiff_status_clear(&status);
    }
    CHECK(made == 200);
    atomic_store(&f.stop, true);
    pthread_join(thread, NULL);
    if (f.fd >= 0) close(f.fd);
    close(f.listener);
    skiff_frame_decoder_free(&f.decoder);
    skiff_buffer_free(&f.out);
}

/* Runs one_call on the channel given; its code goes to `code`. */
typedef struct caller {
    skiff_channel *channel;
    uint32_t code;
} caller;

static void *call_in_thread(void *argument) {
    caller *c = argument;
    skiff_status status = {0};
    int messages;
    c->code = one_call(c->channel, &status, &messages);
    skiff_status_clear(&status);
    return NULL;
}

/* A drain while one thread waits for its answer and another for a free stream: both calls are
 * retried on the next connection (the waiting threads hold the old one until they leave it). */
static void test_drained_busy(void) {
    fake f;
    pthread_t thread, first, second;
    skiff_channel *channel = start_tcp(&f, DRAINED_BUSY, NULL, &thread);
    caller a = {channel, 99}, b = {channel, 99};
    pthread_create(&first, NULL, call_in_thread, &a);
    nanosleep(&(struct timespec){0, 50000000}, NULL);
    pthread_create(&second, NULL, call_in_thread, &b);
    pthread_join(first, NULL);
    pthread_join(second, NULL);
    CHECK(a.code == SKIFF_STATUS_OK);
    CHECK(b.code == SKIFF_STATUS_OK);
    stop(&f, channel, thread, true);
    CHECK(f.connections == 2);
}

/* The TLS handshake is bounded by connect_timeout_ms: a server that accepts and never answers the
 * ClientHello is given up on with the reason. */
static void test_tls_handshake_timeout(void) {
    fake f;
    memset(&f, 0, sizeof f);
    f.fd = -1;
    f.scenario = SILENT_TLS;
    f.listener = listen_on(0, 8);
    struct sockaddr_in address;
    socklen_t length = sizeof address;
    getsockname(f.listener, (struct sockaddr *)&address, &length);
    f.port = ntohs(address.sin_port);
    skiff_frame_decoder_init(&f.decoder, 16777216, true);
    pthread_t thread;
    if (pthread_create(&thread, NULL, run_fake, &f) != 0) abort();
    skiff_channel_options options;
    skiff_channel_options_defaults(&options);
    options.tls = true;
    options.connect_timeout_ms = 300;
    skiff_status status = {0};
    int64_t began = now_ms();
    CHECK(skiff_channel_connect("127.0.0.1", f.port, &options, &status) == NULL);
    int64_t took = now_ms() - began;
    CHECK(took >= 250 && took < 1500);
    CHECK(status.code == SKIFF_STATUS_UNAVAILABLE);
    CHECK(status.message && strstr(status.message, "handshake timed out") != NULL);
    skiff_status_clear(&status);
    pthread_join(thread, NULL);
    if (f.fd >= 0) close(f.fd);
    close(f.listener);
    skiff_frame_decoder_free(&f.decoder);
    skiff_buffer_free(&f.out);
}

int main(void) {
    test_unanswered_ping();
    test_answered_pings();
    test_idle_pings();
    test_window_overrun();
    test_bad_metadata();
    test_refused_once();
    test_refused_always();
    test_drained();
    test_reconnect();
    test_replay_answered();
    test_deadline_while_connecting();
    test_goaway_at_once();
    test_drained_busy();
    test_tls_handshake_timeout();
    printf("fake_server_test: %d checks, %d failed\n", atomic_load(&checks), atomic_load(&failures));
    return atomic_load(&failures) == 0 ? 0 : 1;
}
