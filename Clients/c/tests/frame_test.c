/*
 * Tests of skiff/1 frames against the contract: the test vectors of docs/PROTOCOL.md §9 (parsed
 * from the document, as the Swift tests do), the violations of §2–§3.11, the streaming decoder's
 * bounds, and a seeded random round trip. Usage: frame_test path/to/PROTOCOL.md
 */
#include "skiff/frame.h"

#include "check.h"
#include "parse_every_way.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool bytes_equal(skiff_bytes a, const char *s) {
    return a.length == strlen(s) && (a.length == 0 || memcmp(a.data, s, a.length) == 0);
}

static bool buffer_equal(const skiff_buffer *b, const uint8_t *bytes, size_t length) {
    return b->length == length && memcmp(b->data, bytes, length) == 0;
}

/* ---- The vectors of PROTOCOL.md §9 ---- */

#define MAX_VECTORS 64

typedef struct vector {
    char label[128];
    uint8_t bytes[512];
    size_t length;
} vector;

static vector vectors[MAX_VECTORS];
static int vector_count = 0;

/* Reads the one `skiff-vectors` block strictly (the format rules of §9); false on any deviation. */
static bool load_vectors(const char *path) {
    FILE *file = fopen(path, "r");
    if (!file) {
        fprintf(stderr, "cannot open %s\n", path);
        return false;
    }
    char line[1024];
    bool inside = false, done = false, expect_title = true, ok = true;
    int blocks = 0;
    while (fgets(line, sizeof line, file)) {
        line[strcspn(line, "\n")] = 0;
        if (!inside) {
            if (strcmp(line, "```skiff-vectors") == 0) {
                inside = true;
                blocks++;
            }
            continue;
        }
        if (done) continue;
        if (strcmp(line, "```") == 0) {
            done = true;
            continue;
        }
        if (line[0] == 0) {
            if (expect_title || vectors[vector_count - 1].length == 0) ok = false;
            expect_title = true;
            continue;
        }
        if (expect_title) {
            int number = 0, consumed = 0;
            if (line[0] != 'V' || sscanf(line + 1, "%d%n", &number, &consumed) != 1 || line[1] == '0' ||
                line[1 + consumed] != ' ' || line[2 + consumed] == 0 || number != vector_count + 1 ||
                vector_count == MAX_VECTORS) {
                fprintf(stderr, "bad vector title: %s\n", line);
                ok = false;
                break;
            }
            snprintf(vectors[vector_count].label, sizeof vectors[vector_count].label, "%s", line + 2 + consumed);
            vectors[vector_count].length = 0;
            vector_count++;
            expect_title = false;
            continue;
        }
        vector *v = &vectors[vector_count - 1];
        size_t n = strlen(line);
        if (n % 3 != 2) ok = false;
        for (size_t at = 0; at + 1 < n && ok; at += 3) {
            unsigned value;
            char hex[3] = {line[at], line[at + 1], 0};
            bool lower = (hex[0] >= '0' && hex[0] <= '9') || (hex[0] >= 'a' && hex[0] <= 'f');
            lower = lower && ((hex[1] >= '0' && hex[1] <= '9') || (hex[1] >= 'a' && hex[1] <= 'f'));
            if (!lower || sscanf(hex, "%2x", &value) != 1 || (at + 2 < n && line[at + 2] != ' ') ||
                v->length == sizeof v->bytes) {
                ok = false;
                break;
            }
            v->bytes[v->length++] = (uint8_t)value;
        }
        if (!ok) {
            fprintf(stderr, "bad byte line: %s\n", line);
            break;
        }
    }
    fclose(file);
    return ok && blocks == 1 && done && vector_count > 0;
}

/* The frame of vector n (1-based), its header read and checked. */
static skiff_bytes vector_payload(int n, skiff_frame_header *header) {
    const vector *v = &vectors[n - 1];
    skiff_frame_header_read(v->bytes, header);
    CHECK(header->payload_length == v->length - SKIFF_FRAME_HEADER_SIZE);
    CHECK(skiff_frame_header_check(header, 65536, NULL) == SKIFF_READ_OK);
    skiff_bytes payload = {v->bytes + SKIFF_FRAME_HEADER_SIZE, v->length - SKIFF_FRAME_HEADER_SIZE};
    return payload;
}

static void expect_written(int n, const skiff_buffer *written) {
    if (!buffer_equal(written, vectors[n - 1].bytes, vectors[n - 1].length))
        fprintf(stderr, "V%d %s: the encoder's bytes differ from the document's\n", n, vectors[n - 1].label);
    CHECK(buffer_equal(written, vectors[n - 1].bytes, vectors[n - 1].length));
}

static void test_vectors(void) {
    CHECK(vector_count == 22);
    skiff_buffer out = {0};
    skiff_frame_header h;
    skiff_bytes p;
    const char *why = NULL;

    /* V1 the preface */
    CHECK(skiff_write_preface(&out) == 0);
    expect_written(1, &out);

    /* V2 SETTINGS, empty: all defaults */
    out.length = 0;
    CHECK(skiff_write_settings(&out, NULL, 0) == 0);
    expect_written(2, &out);
    p = vector_payload(2, &h);
    skiff_settings s;
    CHECK(h.type == SKIFF_FRAME_SETTINGS && h.flags == 0 && h.stream_id == 0);
    CHECK(skiff_settings_read(p, &s, &why) == SKIFF_READ_OK);
    CHECK(s.max_frame_size == 65536 && s.initial_stream_window == 8388608 && s.initial_connection_window == 16777216);
    CHECK(!s.has_max_concurrent_streams && s.max_header_list_size == 8192 && s.max_message_size == 4194304);
    CHECK(s.keepalive_min_interval_ms == 300000);

    /* V3 SETTINGS ACK */
    out.length = 0;
    CHECK(skiff_write_settings_ack(&out) == 0);
    expect_written(3, &out);
    p = vector_payload(3, &h);
    CHECK(h.flags == SKIFF_FLAG_ACK && skiff_empty_read(p, NULL) == SKIFF_READ_OK);

    /* V4 HEADERS, client, EmptyCall, grpc-timeout: 1S */
    out.length = 0;
    skiff_metadata_entry timeout = {text("grpc-timeout"), text("1S")};
    CHECK(skiff_write_headers(&out, 1, 0, text("/skiff.testing.v1.TestService/EmptyCall"), &timeout, 1) == 0);
    expect_written(4, &out);
    p = vector_payload(4, &h);
    skiff_headers headers;
    CHECK(h.type == SKIFF_FRAME_HEADERS && h.stream_id == 1 && h.flags == 0);
    CHECK(skiff_headers_read(p, &headers, &why) == SKIFF_READ_OK);
    CHECK(bytes_equal(headers.path, "/skiff.testing.v1.TestService/EmptyCall") && headers.path.length == 39);
    skiff_bytes value = {NULL, 0};
    CHECK(headers.metadata.count == 1 && skiff_metadata_find(&headers.metadata, "grpc-timeout", &value));
    CHECK(bytes_equal(value, "1S"));
    CHECK(skiff_metadata_check(&headers.metadata, 8192, &why) == SKIFF_STATUS_OK);

    /* V5 MESSAGE, END_STREAM, empty */
    out.length = 0;
    CHECK(skiff_write_message(&out, 1, SKIFF_FLAG_END_STREAM, text("")) == 0);
    expect_written(5, &out);
    p = vector_payload(5, &h);
    CHECK(h.type == SKIFF_FRAME_MESSAGE && h.flags == SKIFF_FLAG_END_STREAM && p.length == 0);

    /* V6 HEADERS, server, no path, no metadata */
    out.length = 0;
    CHECK(skiff_write_headers(&out, 1, 0, text(""), NULL, 0) == 0);
    expect_written(6, &out);
    p = vector_payload(6, &h);
    CHECK(skiff_headers_read(p, &headers, NULL) == SKIFF_READ_OK && headers.path.length == 0);
    CHECK(headers.metadata.count == 0 && headers.metadata.encoded.length == 2);

    /* V7 MESSAGE, no flags, empty */
    out.length = 0;
    CHECK(skiff_write_message(&out, 1, 0, text("")) == 0);
    expect_written(7, &out);

    /* V8 TRAILERS OK */
    out.length = 0;
    CHECK(skiff_write_trailers(&out, 1, SKIFF_STATUS_OK, text(""), NULL, 0) == 0);
    expect_written(8, &out);
    p = vector_payload(8, &h);
    skiff_trailers trailers;
    CHECK(skiff_trailers_read(p, &trailers, NULL) == SKIFF_READ_OK && trailers.status == 0);
    CHECK(trailers.message.length == 0 && trailers.metadata.count == 0);

    /* V9 SETTINGS MAX_FRAME_SIZE 16384, MAX_CONCURRENT_STREAMS 1000 */
    out.length = 0;
    skiff_setting pairs[] = {{SKIFF_SETTING_MAX_FRAME_SIZE, 16384}, {SKIFF_SETTING_MAX_CONCURRENT_STREAMS, 1000}};
    CHECK(skiff_write_settings(&out, pairs, 2) == 0);
    expect_written(9, &out);
    p = vector_payload(9, &h);
    CHECK(skiff_settings_read(p, &s, &why) == SKIFF_READ_OK);
    CHECK(s.max_frame_size == 16384 && s.has_max_concurrent_streams && s.max_concurrent_streams == 1000);

    /* V10 TRAILERS NOT_FOUND with a message and metadata */
    out.length = 0;
    skiff_metadata_entry request_id = {text("x-request-id"), text("abc")};
    CHECK(skiff_write_trailers(&out, 3, SKIFF_STATUS_NOT_FOUND, text("no such listing"), &request_id, 1) == 0);
    expect_written(10, &out);
    p = vector_payload(10, &h);
    CHECK(skiff_trailers_read(p, &trailers, NULL) == SKIFF_READ_OK);
    CHECK(trailers.status == SKIFF_STATUS_NOT_FOUND && bytes_equal(trailers.message, "no such listing"));
    CHECK(skiff_metadata_find(&trailers.metadata, "x-request-id", &value) && bytes_equal(value, "abc"));
    CHECK(trailers.metadata.encoded.length == 23); /* the example size of §3.10 */
    CHECK(strcmp(skiff_status_name(trailers.status), "NOT_FOUND") == 0);

    /* V11, V12, V22 RST_STREAM */
    skiff_rst_stream rst;
    out.length = 0;
    CHECK(skiff_write_rst_stream(&out, 3, 0, SKIFF_STATUS_CANCELLED, text("")) == 0);
    expect_written(11, &out);
    out.length = 0;
    CHECK(skiff_write_rst_stream(&out, 5, SKIFF_FLAG_REFUSED, SKIFF_STATUS_UNAVAILABLE, text("")) == 0);
    expect_written(12, &out);
    p = vector_payload(12, &h);
    CHECK(h.flags == SKIFF_FLAG_REFUSED && skiff_rst_stream_read(p, &rst, NULL) == SKIFF_READ_OK);
    CHECK(rst.status == SKIFF_STATUS_UNAVAILABLE && rst.reason.length == 0);
    out.length = 0;
    CHECK(skiff_write_rst_stream(&out, 9, 0, SKIFF_STATUS_RESOURCE_EXHAUSTED, text("too big")) == 0);
    expect_written(22, &out);
    p = vector_payload(22, &h);
    CHECK(skiff_rst_stream_read(p, &rst, NULL) == SKIFF_READ_OK && bytes_equal(rst.reason, "too big"));

    /* V13 WINDOW_UPDATE */
    out.length = 0;
    CHECK(skiff_write_window_update(&out, 0, 65536) == 0);
    expect_written(13, &out);
    uint32_t increment = 0;
    p = vector_payload(13, &h);
    CHECK(skiff_window_update_read(p, &increment, NULL) == SKIFF_READ_OK && increment == 65536);

    /* V14, V15 PING and its ACK */
    const uint8_t opaque[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    uint8_t echoed[8] = {0};
    out.length = 0;
    CHECK(skiff_write_ping(&out, false, opaque) == 0);
    expect_written(14, &out);
    p = vector_payload(15, &h);
    CHECK(h.flags == SKIFF_FLAG_ACK && skiff_ping_read(p, echoed, NULL) == SKIFF_READ_OK);
    CHECK(memcmp(echoed, opaque, 8) == 0);
    out.length = 0;
    CHECK(skiff_write_ping(&out, true, echoed) == 0);
    expect_written(15, &out);

    /* V16, V21 GOAWAY */
    skiff_goaway goaway;
    out.length = 0;
    CHECK(skiff_write_goaway(&out, 7, SKIFF_STATUS_INTERNAL, text("bad frame")) == 0);
    expect_written(16, &out);
    p = vector_payload(16, &h);
    CHECK(skiff_goaway_read(p, &goaway, NULL) == SKIFF_READ_OK && goaway.last_stream_id == 7);
    CHECK(goaway.status == SKIFF_STATUS_INTERNAL && bytes_equal(goaway.debug, "bad frame"));
    out.length = 0;
    CHECK(skiff_write_goaway(&out, SKIFF_MAX_STREAM_ID, SKIFF_STATUS_OK, text("")) == 0);
    expect_written(21, &out);

    /* V17 HALF_CLOSE */
    out.length = 0;
    CHECK(skiff_write_half_close(&out, 5) == 0);
    expect_written(17, &out);

    /* V18, V19 one message in two fragments */
    const uint8_t hello[] = {0x0a, 0x05, 0x68, 0x65, 0x6c, 0x6c, 0x6f};
    out.length = 0;
    skiff_bytes first = {hello, 4}, second = {hello + 4, 3};
    CHECK(skiff_write_message(&out, 7, SKIFF_FLAG_MORE, first) == 0);
    expect_written(18, &out);
    out.length = 0;
    CHECK(skiff_write_message(&out, 7, SKIFF_FLAG_END_STREAM, second) == 0);
    expect_written(19, &out);

    /* V20 text and -bin metadata, in order */
    out.length = 0;
    const uint8_t trace[] = {0x00, 0x01, 0xfe, 0xff};
    skiff_metadata_entry two[] = {{text("x-skiff-echo-initial"), text("hi")}, {text("trace-bin"), {trace, 4}}};
    CHECK(skiff_write_headers(&out, 1, 0, text(""), two, 2) == 0);
    expect_written(20, &out);
    p = vector_payload(20, &h);
    CHECK(skiff_headers_read(p, &headers, NULL) == SKIFF_READ_OK && headers.metadata.count == 2);
    skiff_metadata_iterator iterator;
    skiff_metadata_entry entry;
    skiff_metadata_iterate(&headers.metadata, &iterator);
    CHECK(skiff_metadata_next(&iterator, &entry) && bytes_equal(entry.key, "x-skiff-echo-initial"));
    CHECK(skiff_metadata_next(&iterator, &entry) && bytes_equal(entry.key, "trace-bin"));
    CHECK(entry.value.length == 4 && memcmp(entry.value.data, trace, 4) == 0);
    CHECK(!skiff_metadata_next(&iterator, &entry));
    CHECK(skiff_metadata_check(&headers.metadata, 8192, NULL) == SKIFF_STATUS_OK);

    skiff_buffer_free(&out);
}

/* ---- Violations (§2, §3) ---- */

static skiff_read_result check_header(uint32_t length, uint8_t type, uint32_t stream) {
    skiff_frame_header h = {length, type, 0, stream};
    return skiff_frame_header_check(&h, 65536, NULL);
}

static skiff_bytes raw(const uint8_t *bytes, size_t length) {
    skiff_bytes b = {bytes, length};
    return b;
}

static void test_violations(void) {
    CHECK(check_header(65536, SKIFF_FRAME_MESSAGE, 1) == SKIFF_READ_OK);
    CHECK(check_header(65537, SKIFF_FRAME_MESSAGE, 1) == SKIFF_READ_TOO_LARGE);
    CHECK(check_header(0, SKIFF_FRAME_MESSAGE, 2) == SKIFF_READ_VIOLATION);
    CHECK(check_header(0, SKIFF_FRAME_MESSAGE, 0x80000001u) == SKIFF_READ_VIOLATION);
    CHECK(check_header(0, SKIFF_FRAME_SETTINGS, 1) == SKIFF_READ_VIOLATION);
    CHECK(check_header(8, SKIFF_FRAME_PING, 3) == SKIFF_READ_VIOLATION);
    CHECK(check_header(8, SKIFF_FRAME_GOAWAY, 5) == SKIFF_READ_VIOLATION);
    for (uint8_t type = SKIFF_FRAME_HEADERS; type <= SKIFF_FRAME_HALF_CLOSE; type++) {
        if (type == SKIFF_FRAME_WINDOW_UPDATE || type == SKIFF_FRAME_PING || type == SKIFF_FRAME_GOAWAY) continue;
        CHECK(check_header(0, type, 0) == SKIFF_READ_VIOLATION);
    }
    CHECK(check_header(4, SKIFF_FRAME_WINDOW_UPDATE, 0) == SKIFF_READ_OK);
    CHECK(check_header(4, SKIFF_FRAME_WINDOW_UPDATE, 7) == SKIFF_READ_OK);
    CHECK(check_header(3, 0x42, 0) == SKIFF_READ_OK); /* unknown on stream 0: skipped */
    CHECK(check_header(3, 0x42, 1) == SKIFF_READ_VIOLATION);
    CHECK(!skiff_frame_type_is_known(0x42) && skiff_frame_type_is_known(SKIFF_FRAME_HALF_CLOSE));

    skiff_headers headers;
    skiff_trailers trailers;
    skiff_rst_stream rst;
    skiff_goaway goaway;
    uint32_t increment;
    uint8_t opaque[8];
    const char *why = NULL;
    const uint8_t path_past_end[] = {0, 5, '/', 'a'};
    CHECK(skiff_headers_read(raw(path_past_end, 4), &headers, &why) == SKIFF_READ_VIOLATION && why != NULL);
    const uint8_t no_block[] = {0, 1, '/'};
    CHECK(skiff_headers_read(raw(no_block, 3), &headers, NULL) == SKIFF_READ_VIOLATION);
    const uint8_t count_promises_more[] = {0, 0, 0, 2, 0, 1, 'k', 0, 0, 0, 1, 'v'};
    CHECK(skiff_headers_read(raw(count_promises_more, sizeof count_promises_more), &headers, NULL) ==
          SKIFF_READ_VIOLATION);
    const uint8_t value_past_end[] = {0, 0, 0, 1, 0, 1, 'k', 0, 0, 0, 9, 'v'};
    CHECK(skiff_headers_read(raw(value_past_end, sizeof value_past_end), &headers, NULL) == SKIFF_READ_VIOLATION);
    const uint8_t left_over[] = {0, 0, 0, 0, 0xff};
    CHECK(skiff_headers_read(raw(left_over, sizeof left_over), &headers, NULL) == SKIFF_READ_VIOLATION);
    const uint8_t short_trailers[] = {0, 0, 0};
    CHECK(skiff_trailers_read(raw(short_trailers, 3), &trailers, NULL) == SKIFF_READ_VIOLATION);
    const uint8_t trailers_left_over[] = {0, 0, 0, 0, 0, 0, 0, 0, 1};
    CHECK(skiff_trailers_read(raw(trailers_left_over, 9), &trailers, NULL) == SKIFF_READ_VIOLATION);
    const uint8_t three[] = {0, 0, 1};
    CHECK(skiff_rst_stream_read(raw(three, 3), &rst, NULL) == SKIFF_READ_VIOLATION);
    CHECK(skiff_window_update_read(raw(three, 3), &increment, NULL) == SKIFF_READ_VIOLATION);
    const uint8_t five[] = {0, 0, 0, 1, 0};
    CHECK(skiff_window_update_read(raw(five, 5), &increment, NULL) == SKIFF_READ_VIOLATION);
    const uint8_t seven[] = {0, 0, 0, 1, 0, 0, 0};
    CHECK(skiff_ping_read(raw(seven, 7), opaque, NULL) == SKIFF_READ_VIOLATION);
    CHECK(skiff_goaway_read(raw(seven, 7), &goaway, NULL) == SKIFF_READ_VIOLATION);
    CHECK(skiff_empty_read(raw(three, 1), NULL) == SKIFF_READ_VIOLATION);

    /* SETTINGS ranges, cross-id ones against the values the frame ends up with (§3.11) */
    skiff_settings s;
    skiff_settings_defaults(&s);
    uint8_t buffer[64];
    skiff_buffer out = {0};
#define SETTINGS(...)                                                   \
    do {                                                                \
        skiff_setting pairs[] = {__VA_ARGS__};                          \
        out.length = 0;                                                 \
        skiff_write_settings(&out, pairs, sizeof pairs / sizeof pairs[0]); \
    } while (0)
    SETTINGS({SKIFF_SETTING_MAX_FRAME_SIZE, 16383});
    CHECK(skiff_settings_read(raw(out.data + 12, out.length - 12), &s, NULL) == SKIFF_READ_VIOLATION);
    CHECK(s.max_frame_size == 65536); /* unchanged by a refused frame */
    SETTINGS({SKIFF_SETTING_MAX_FRAME_SIZE, 16384});
    CHECK(skiff_settings_read(raw(out.data + 12, out.length - 12), &s, NULL) == SKIFF_READ_OK);
    SETTINGS({SKIFF_SETTING_MAX_FRAME_SIZE, 16777217});
    CHECK(skiff_settings_read(raw(out.data + 12, out.length - 12), &s, NULL) == SKIFF_READ_VIOLATION);
    SETTINGS({SKIFF_SETTING_MAX_MESSAGE_SIZE, 16777216});
    CHECK(skiff_settings_read(raw(out.data + 12, out.length - 12), &s, NULL) == SKIFF_READ_VIOLATION);
    SETTINGS({SKIFF_SETTING_MAX_MESSAGE_SIZE, 16777216}, {SKIFF_SETTING_INITIAL_STREAM_WINDOW, 16777216});
    CHECK(skiff_settings_read(raw(out.data + 12, out.length - 12), &s, NULL) == SKIFF_READ_OK);
    SETTINGS({SKIFF_SETTING_MAX_MESSAGE_SIZE, 1023});
    CHECK(skiff_settings_read(raw(out.data + 12, out.length - 12), &s, NULL) == SKIFF_READ_VIOLATION);
    SETTINGS({SKIFF_SETTING_INITIAL_CONNECTION_WINDOW, 0});
    CHECK(skiff_settings_read(raw(out.data + 12, out.length - 12), &s, NULL) == SKIFF_READ_VIOLATION);
    SETTINGS({SKIFF_SETTING_INITIAL_STREAM_WINDOW, 0x80000000u});
    CHECK(skiff_settings_read(raw(out.data + 12, out.length - 12), &s, NULL) == SKIFF_READ_VIOLATION);
    SETTINGS({SKIFF_SETTING_MAX_HEADER_LIST_SIZE, 1023});
    CHECK(skiff_settings_read(raw(out.data + 12, out.length - 12), &s, NULL) == SKIFF_READ_VIOLATION);
    SETTINGS({SKIFF_SETTING_MAX_FRAME_SIZE, 16384}, {SKIFF_SETTING_MAX_HEADER_LIST_SIZE, 16379});
    CHECK(skiff_settings_read(raw(out.data + 12, out.length - 12), &s, NULL) == SKIFF_READ_VIOLATION);
    SETTINGS({SKIFF_SETTING_MAX_FRAME_SIZE, 16384}, {SKIFF_SETTING_MAX_HEADER_LIST_SIZE, 16378});
    CHECK(skiff_settings_read(raw(out.data + 12, out.length - 12), &s, NULL) == SKIFF_READ_OK);
    SETTINGS({SKIFF_SETTING_MAX_FRAME_SIZE, 16384}, {0x99, 7}, {SKIFF_SETTING_MAX_FRAME_SIZE, 20000});
    CHECK(skiff_settings_read(raw(out.data + 12, out.length - 12), &s, NULL) == SKIFF_READ_OK);
    CHECK(s.max_frame_size == 20000); /* the later value wins; unknown ids skipped */
    SETTINGS({SKIFF_SETTING_MAX_CONCURRENT_STREAMS, 0});
    CHECK(skiff_settings_read(raw(out.data + 12, out.length - 12), &s, NULL) == SKIFF_READ_OK);
    CHECK(s.has_max_concurrent_streams && s.max_concurrent_streams == 0);
    memset(buffer, 0, sizeof buffer);
    CHECK(skiff_settings_read(raw(buffer, 7), &s, NULL) == SKIFF_READ_VIOLATION);
#undef SETTINGS
    skiff_buffer_free(&out);
}

/* ---- Metadata content (§3.10) ---- */

static skiff_status_code check_one(const char *key, skiff_bytes value, uint32_t limit) {
    skiff_buffer out = {0};
    skiff_metadata_entry entry = {text(key), value};
    skiff_headers headers;
    skiff_status_code code = SKIFF_STATUS_UNKNOWN;
    if (skiff_write_headers(&out, 1, 0, text("/a.B/C"), &entry, 1) == 0) {
        skiff_bytes payload = {out.data + 12, out.length - 12};
        if (skiff_headers_read(payload, &headers, NULL) == SKIFF_READ_OK)
            code = skiff_metadata_check(&headers.metadata, limit, NULL);
    }
    skiff_buffer_free(&out);
    return code;
}

static void test_metadata(void) {
    CHECK(check_one("x-request-id", text("abc"), 8192) == SKIFF_STATUS_OK);
    CHECK(check_one("a0_.-z", text(" ~"), 8192) == SKIFF_STATUS_OK);
    CHECK(check_one("X-Upper", text("a"), 8192) == SKIFF_STATUS_INTERNAL);
    CHECK(check_one("", text("a"), 8192) == SKIFF_STATUS_INTERNAL);
    CHECK(check_one("x y", text("a"), 8192) == SKIFF_STATUS_INTERNAL);
    CHECK(check_one("x-text", text("tab\there"), 8192) == SKIFF_STATUS_INTERNAL);
    CHECK(check_one("x-text", text("del\x7f"), 8192) == SKIFF_STATUS_INTERNAL);
    const uint8_t binary[] = {0, 0x7f, 0xff, '\n'};
    CHECK(check_one("x-data-bin", raw(binary, 4), 8192) == SKIFF_STATUS_OK);
    /* 2 + (2 + 12 + 4 + 3) = 23 bytes: at the limit fine, one below it too big */
    CHECK(check_one("x-request-id", text("abc"), 23) == SKIFF_STATUS_OK);
    CHECK(check_one("x-request-id", text("abc"), 22) == SKIFF_STATUS_RESOURCE_EXHAUSTED);
    /* A status message over 65,535 bytes is cut at a character boundary (§3.4). */
    size_t length = 70000;
    uint8_t *message = malloc(length);
    CHECK(message != NULL);
    if (!message) return;
    for (size_t i = 0; i + 1 < length; i += 2) {
        message[i] = 0xc3; /* "é" is 2 bytes; 65,535 is odd, so the cut must step back one */
        message[i + 1] = 0xa9;
    }
    skiff_buffer out = {0};
    CHECK(skiff_write_trailers(&out, 1, SKIFF_STATUS_INTERNAL, raw(message, length), NULL, 0) == 0);
    skiff_trailers trailers;
    CHECK(skiff_trailers_read(raw(out.data + 12, out.length - 12), &trailers, NULL) == SKIFF_READ_OK);
    CHECK(trailers.message.length == 65534);
    free(message);
    skiff_buffer_free(&out);
    /* Fields that do not fit their lengths are refused, nothing appended. */
    out.length = 0;
    CHECK(skiff_write_message(&out, 0x80000000u, 0, text("")) == SKIFF_WRITE_INVALID);
    CHECK(out.length == 0);
    skiff_buffer_free(&out);
}

/* ---- The streaming decoder ---- */

static void test_decoder(void) {
    skiff_buffer stream = {0};
    for (int n = 1; n <= vector_count; n++) {
        if (skiff_buffer_reserve(&stream, vectors[n - 1].length) == 0) {
            memcpy(stream.data + stream.length, vectors[n - 1].bytes, vectors[n - 1].length);
            stream.length += vectors[n - 1].length;
        }
    }
    /* Fed a byte at a time, every vector frame comes out whole, in order. */
    skiff_frame_decoder decoder;
    skiff_frame_decoder_init(&decoder, 65536, true);
    int next = 2;
    skiff_frame_header h;
    skiff_bytes payload;
    for (size_t i = 0; i < stream.length; i++) {
        CHECK(skiff_frame_decoder_feed(&decoder, stream.data + i, 1) == 0);
        skiff_read_result result;
        while ((result = skiff_frame_decoder_next(&decoder, &h, &payload, NULL)) == SKIFF_READ_OK) {
            const vector *v = next <= vector_count ? &vectors[next - 1] : NULL;
            CHECK(v != NULL && payload.length + 12 == v->length);
            if (v && payload.length + 12 == v->length) CHECK(memcmp(payload.data, v->bytes + 12, payload.length) == 0);
            next++;
        }
        CHECK(result == SKIFF_READ_NEED_MORE);
    }
    CHECK(next == vector_count + 1);
    CHECK(decoder.pending.capacity <= 1024); /* it held one frame at a time */
    skiff_frame_decoder_free(&decoder);

    /* An oversize frame is refused from its header alone, and the decoder stays failed. */
    skiff_frame_decoder_init(&decoder, 16384, false);
    const uint8_t big[12] = {0, 0, 0x40, 0x01, SKIFF_FRAME_MESSAGE, 0, 0, 0, 0, 0, 0, 1};
    CHECK(skiff_frame_decoder_feed(&decoder, big, 12) == 0);
    CHECK(skiff_frame_decoder_next(&decoder, &h, &payload, NULL) == SKIFF_READ_TOO_LARGE);
    CHECK(skiff_frame_decoder_next(&decoder, &h, &payload, NULL) == SKIFF_READ_TOO_LARGE);
    skiff_frame_decoder_free(&decoder);

    /* A wrong preface fails at its first differing byte (here an HTTP request). */
    skiff_frame_decoder_init(&decoder, 65536, true);
    CHECK(skiff_frame_decoder_feed(&decoder, (const uint8_t *)"G", 1) == 0);
    CHECK(skiff_frame_decoder_next(&decoder, &h, &payload, NULL) == SKIFF_READ_VIOLATION);
    skiff_frame_decoder_free(&decoder);
    skiff_frame_decoder_init(&decoder, 65536, true);
    CHECK(skiff_frame_decoder_feed(&decoder, skiff_preface, 4) == 0);
    CHECK(skiff_frame_decoder_next(&decoder, &h, &payload, NULL) == SKIFF_READ_NEED_MORE);
    const uint8_t version2[] = {0x02};
    CHECK(skiff_frame_decoder_feed(&decoder, version2, 1) == 0);
    CHECK(skiff_frame_decoder_next(&decoder, &h, &payload, NULL) == SKIFF_READ_VIOLATION);
    skiff_frame_decoder_free(&decoder);
    skiff_buffer_free(&stream);
}

/* ---- Seeded random input: no crash, no read out of bounds (run under the sanitizers) ---- */

static uint64_t rng_state = 0x5eed5eed5eedULL;

static uint64_t random_next(void) { /* SplitMix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void test_random(void) {
    uint8_t bytes[600];
    int frames = 0;
    for (int round = 0; round < 20000; round++) {
        size_t length = (size_t)(random_next() % sizeof bytes);
        for (size_t i = 0; i < length; i++) bytes[i] = (uint8_t)random_next();
        /* Mostly small lengths and valid types, so parsing goes deep, not just the first check. */
        if (length >= 12 && round % 2 == 0) {
            uint32_t payload = (uint32_t)(length - 12);
            bytes[0] = 0, bytes[1] = 0, bytes[2] = (uint8_t)(payload >> 8), bytes[3] = (uint8_t)payload;
            bytes[4] = (uint8_t)(1 + random_next() % 9);
            bytes[8] = 0, bytes[9] = 0, bytes[10] = 0, bytes[11] = (uint8_t)(random_next() % 4);
        }
        parse_every_way(raw(bytes, length));
        skiff_frame_decoder decoder;
        skiff_frame_decoder_init(&decoder, 512, round % 3 == 0);
        size_t at = 0;
        while (at < length) {
            size_t chunk = 1 + (size_t)(random_next() % 64);
            if (chunk > length - at) chunk = length - at;
            CHECK(skiff_frame_decoder_feed(&decoder, bytes + at, chunk) == 0);
            at += chunk;
            skiff_frame_header h;
            skiff_bytes payload;
            skiff_read_result result;
            while ((result = skiff_frame_decoder_next(&decoder, &h, &payload, NULL)) == SKIFF_READ_OK) {
                CHECK(payload.length == h.payload_length && h.payload_length <= 512);
                parse_every_way(payload);
                frames++;
            }
            if (result != SKIFF_READ_NEED_MORE) break;
        }
        CHECK(decoder.pending.length <= 512 + 12 + 64 + 8);
        skiff_frame_decoder_free(&decoder);
    }
    CHECK(frames > 1000); /* the generator does reach whole frames */

    /* Random well-formed frames round-trip through the writer and the readers. */
    skiff_buffer out = {0};
    for (int round = 0; round < 5000; round++) {
        char keys[4][16];
        uint8_t values[4][32];
        skiff_metadata_entry entries[4];
        size_t count = (size_t)(random_next() % 5);
        for (size_t i = 0; i < count; i++) {
            size_t key_length = 1 + (size_t)(random_next() % 15);
            for (size_t k = 0; k < key_length; k++) keys[i][k] = "abcdefghijklmnopqrstuvwxyz0123456789-_."[random_next() % 39];
            size_t value_length = (size_t)(random_next() % 32);
            for (size_t k = 0; k < value_length; k++) values[i][k] = (uint8_t)(0x20 + random_next() % 95);
            entries[i].key = raw((const uint8_t *)keys[i], key_length);
            entries[i].value = raw(values[i], value_length);
        }
        uint32_t stream = (uint32_t)(random_next() % 1000) * 2 + 1;
        uint32_t status = (uint32_t)(random_next() % 17);
        out.length = 0;
        CHECK(skiff_write_trailers(&out, stream, status, raw(values[0], count ? entries[0].value.length : 0),
                  entries, count) == 0);
        skiff_frame_decoder decoder;
        skiff_frame_decoder_init(&decoder, 65536, false);
        CHECK(skiff_frame_decoder_feed(&decoder, out.data, out.length) == 0);
        skiff_frame_header h;
        skiff_bytes payload;
        skiff_trailers trailers;
        CHECK(skiff_frame_decoder_next(&decoder, &h, &payload, NULL) == SKIFF_READ_OK);
        CHECK(h.type == SKIFF_FRAME_TRAILERS && h.stream_id == stream);
        CHECK(skiff_trailers_read(payload, &trailers, NULL) == SKIFF_READ_OK);
        CHECK(trailers.status == status && trailers.metadata.count == count);
        CHECK(skiff_metadata_check(&trailers.metadata, 8192, NULL) == SKIFF_STATUS_OK);
        skiff_metadata_iterator iterator;
        skiff_metadata_entry entry;
        skiff_metadata_iterate(&trailers.metadata, &iterator);
        for (size_t i = 0; i < count; i++) {
            CHECK(skiff_metadata_next(&iterator, &entry));
            CHECK(entry.key.length == entries[i].key.length && memcmp(entry.key.data, keys[i], entry.key.length) == 0);
            CHECK(entry.value.length == entries[i].value.length &&
                  (entry.value.length == 0 || memcmp(entry.value.data, values[i], entry.value.length) == 0));
        }
        CHECK(!skiff_metadata_next(&iterator, &entry));
        skiff_frame_decoder_free(&decoder);
    }
    skiff_buffer_free(&out);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s path/to/PROTOCOL.md\n", argv[0]);
        return 2;
    }
    if (!load_vectors(argv[1])) {
        fprintf(stderr, "could not read the skiff-vectors block of %s\n", argv[1]);
        return 1;
    }
    test_vectors();
    test_violations();
    test_metadata();
    test_decoder();
    test_random();
    printf("frame_test: %d checks, %d failed (%d vectors)\n", atomic_load(&checks), atomic_load(&failures),
        vector_count);
    return atomic_load(&failures) == 0 ? 0 : 1;
}
