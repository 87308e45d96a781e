/*
 * skiff/1 frames (docs/PROTOCOL.md §1.2–§3): the preface, the 12-byte frame header, each
 * frame type's payload, metadata blocks and SETTINGS, read and written without I/O.
 *
 * Reading never copies: parsed payloads are views (skiff_bytes) into the caller's bytes, valid
 * as long as those bytes are. Writing appends to a skiff_buffer the caller owns and may reuse.
 *
 * Thread safety: every function works only on the arguments it is given; distinct objects may be
 * used from distinct threads at once, one object from one thread at a time.
 */
#ifndef SKIFF_FRAME_H
#define SKIFF_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The 8 bytes each side writes first: 0x89 'S' 'K' 'F' 0x01 0 0 0. */
#define SKIFF_PREFACE_SIZE 8
extern const uint8_t skiff_preface[SKIFF_PREFACE_SIZE];

/** Every frame starts with this many header bytes. */
#define SKIFF_FRAME_HEADER_SIZE 12

/** The largest stream id (ids are below 2^31). */
#define SKIFF_MAX_STREAM_ID 0x7fffffffu

typedef enum skiff_frame_type {
    SKIFF_FRAME_SETTINGS = 0x01,
    SKIFF_FRAME_HEADERS = 0x02,
    SKIFF_FRAME_MESSAGE = 0x03,
    SKIFF_FRAME_TRAILERS = 0x04,
    SKIFF_FRAME_RST_STREAM = 0x05,
    SKIFF_FRAME_WINDOW_UPDATE = 0x06,
    SKIFF_FRAME_PING = 0x07,
    SKIFF_FRAME_GOAWAY = 0x08,
    SKIFF_FRAME_HALF_CLOSE = 0x09,
} skiff_frame_type;

/* Flags: the same bit means different things per type (§3.0). */
#define SKIFF_FLAG_ACK 0x01        /* SETTINGS, PING */
#define SKIFF_FLAG_END_STREAM 0x01 /* HEADERS, MESSAGE (client only) */
#define SKIFF_FLAG_COMPRESSED 0x02 /* MESSAGE */
#define SKIFF_FLAG_MORE 0x04       /* MESSAGE: another fragment follows */
#define SKIFF_FLAG_REFUSED 0x01    /* RST_STREAM (server only) */

/** Status codes (§4.6), gRPC's. */
typedef enum skiff_status_code {
    SKIFF_STATUS_OK = 0,
    SKIFF_STATUS_CANCELLED = 1,
    SKIFF_STATUS_UNKNOWN = 2,
    SKIFF_STATUS_INVALID_ARGUMENT = 3,
    SKIFF_STATUS_DEADLINE_EXCEEDED = 4,
    SKIFF_STATUS_NOT_FOUND = 5,
    SKIFF_STATUS_ALREADY_EXISTS = 6,
    SKIFF_STATUS_PERMISSION_DENIED = 7,
    SKIFF_STATUS_RESOURCE_EXHAUSTED = 8,
    SKIFF_STATUS_FAILED_PRECONDITION = 9,
    SKIFF_STATUS_ABORTED = 10,
    SKIFF_STATUS_OUT_OF_RANGE = 11,
    SKIFF_STATUS_UNIMPLEMENTED = 12,
    SKIFF_STATUS_INTERNAL = 13,
    SKIFF_STATUS_UNAVAILABLE = 14,
    SKIFF_STATUS_DATA_LOSS = 15,
    SKIFF_STATUS_UNAUTHENTICATED = 16,
} skiff_status_code;

/** The status code's name, e.g. "NOT_FOUND"; "UNKNOWN_CODE" for values outside 0…16. */
const char *skiff_status_name(uint32_t code);

/** What reading a frame found. */
typedef enum skiff_read_result {
    /** A whole, well-formed frame or payload. */
    SKIFF_READ_OK = 0,
    /** Not enough bytes yet (the streaming decoder only). */
    SKIFF_READ_NEED_MORE = 1,
    /** A payload longer than the receiver's MAX_FRAME_SIZE: a connection error (GOAWAY with
     *  RESOURCE_EXHAUSTED), decided from the header alone. */
    SKIFF_READ_TOO_LARGE = 2,
    /** A protocol violation (§5.3): a connection error. */
    SKIFF_READ_VIOLATION = 3,
} skiff_read_result;

/** Bytes owned by someone else. */
typedef struct skiff_bytes {
    const uint8_t *data;
    size_t length;
} skiff_bytes;

/** The bytes of a NUL-terminated string, without the NUL: for metadata keys and values. */
static inline skiff_bytes skiff_bytes_of_string(const char *string) {
    skiff_bytes bytes = {(const uint8_t *)string, strlen(string)};
    return bytes;
}

/** A frame header (§2). The reserved u16 is written as 0 and ignored on receipt. */
typedef struct skiff_frame_header {
    uint32_t payload_length;
    uint8_t type;
    uint8_t flags;
    uint32_t stream_id;
} skiff_frame_header;

/** Reads the 12 header bytes at `bytes` (no checks: see skiff_frame_header_check). */
void skiff_frame_header_read(const uint8_t bytes[SKIFF_FRAME_HEADER_SIZE], skiff_frame_header *header);

/**
 * Checks a header against §2: the size limit (TOO_LARGE), stream ids below 2^31 and not even
 * (but 0), connection-level types on stream 0 only, stream-level types on odd streams only,
 * unknown types on stream 0 only (they are skipped). `why`, if not NULL, gets a static text.
 */
skiff_read_result skiff_frame_header_check(
    const skiff_frame_header *header, uint32_t max_frame_size, const char **why);

/** Whether `type` is one of the types of §3 (unknown types on stream 0 are skipped). */
bool skiff_frame_type_is_known(uint8_t type);

/* ---- Metadata blocks (§3.10) ---- */

/** One key and value, as sent. Values of keys ending in "-bin" are raw bytes. */
typedef struct skiff_metadata_entry {
    skiff_bytes key;
    skiff_bytes value;
} skiff_metadata_entry;

/** A metadata block, checked for its layout: `encoded` is the whole block, from `count` on. */
typedef struct skiff_metadata_block {
    uint16_t count;
    skiff_bytes encoded;
} skiff_metadata_block;

/** Walks a block's entries in order. */
typedef struct skiff_metadata_iterator {
    const uint8_t *next;
    const uint8_t *end;
    uint16_t remaining;
} skiff_metadata_iterator;

void skiff_metadata_iterate(const skiff_metadata_block *block, skiff_metadata_iterator *iterator);
/** The next entry, or false at the end. */
bool skiff_metadata_next(skiff_metadata_iterator *iterator, skiff_metadata_entry *entry);

/**
 * The stream-level checks of a block (§3.10): RESOURCE_EXHAUSTED above `max_header_list_size`,
 * INTERNAL for an empty key, a key outside [0-9a-z_.-] or a text value outside 0x20–0x7E; else
 * OK. `why` gets a static text.
 */
skiff_status_code skiff_metadata_check(
    const skiff_metadata_block *block, uint32_t max_header_list_size, const char **why);

/** The first value of `key` (NUL-terminated), or false. */
bool skiff_metadata_find(const skiff_metadata_block *block, const char *key, skiff_bytes *value);

/* ---- Payloads (§3.1–§3.9): each parser checks the layout; a bad one is a VIOLATION ---- */

typedef struct skiff_headers {
    skiff_bytes path;
    skiff_metadata_block metadata;
} skiff_headers;

typedef struct skiff_trailers {
    uint32_t status;
    skiff_bytes message;
    skiff_metadata_block metadata;
} skiff_trailers;

typedef struct skiff_rst_stream {
    uint32_t status;
    skiff_bytes reason;
} skiff_rst_stream;

typedef struct skiff_goaway {
    uint32_t last_stream_id;
    uint32_t status;
    skiff_bytes debug;
} skiff_goaway;

skiff_read_result skiff_headers_read(skiff_bytes payload, skiff_headers *out, const char **why);
skiff_read_result skiff_trailers_read(skiff_bytes payload, skiff_trailers *out, const char **why);
skiff_read_result skiff_rst_stream_read(skiff_bytes payload, skiff_rst_stream *out, const char **why);
skiff_read_result skiff_goaway_read(skiff_bytes payload, skiff_goaway *out, const char **why);
/** Exactly 4 bytes. The increment's range (1 … 2^31−1 against the window) is the caller's. */
skiff_read_result skiff_window_update_read(skiff_bytes payload, uint32_t *increment, const char **why);
/** Exactly 8 bytes. */
skiff_read_result skiff_ping_read(skiff_bytes payload, uint8_t opaque[8], const char **why);
/** HALF_CLOSE: empty. SETTINGS with ACK: empty. */
skiff_read_result skiff_empty_read(skiff_bytes payload, const char **why);

/* ---- SETTINGS (§3.11) ---- */

#define SKIFF_SETTING_MAX_FRAME_SIZE 0x1
#define SKIFF_SETTING_INITIAL_STREAM_WINDOW 0x2
#define SKIFF_SETTING_INITIAL_CONNECTION_WINDOW 0x3
#define SKIFF_SETTING_MAX_CONCURRENT_STREAMS 0x4
#define SKIFF_SETTING_MAX_HEADER_LIST_SIZE 0x5
#define SKIFF_SETTING_MAX_MESSAGE_SIZE 0x6
#define SKIFF_SETTING_KEEPALIVE_MIN_INTERVAL_MS 0x7

/** What one side accepts. */
typedef struct skiff_settings {
    uint32_t max_frame_size;
    uint32_t initial_stream_window;
    uint32_t initial_connection_window;
    /** Meaningful only when has_max_concurrent_streams (the default is unlimited). */
    uint32_t max_concurrent_streams;
    bool has_max_concurrent_streams;
    uint32_t max_header_list_size;
    uint32_t max_message_size;
    uint32_t keepalive_min_interval_ms;
} skiff_settings;

/** The defaults of §3.11. */
void skiff_settings_defaults(skiff_settings *settings);

/**
 * Reads a SETTINGS payload (without ACK) into `settings` (the defaults for ids it omits; the
 * later of two values of one id wins; unknown ids skipped) and checks every range, cross-id ones
 * included. A bad payload or a value out of range is a VIOLATION; `settings` is then unchanged.
 */
skiff_read_result skiff_settings_read(skiff_bytes payload, skiff_settings *settings, const char **why);

/* ---- Writing ---- */

/** A growable byte buffer. Zero-initialize it; skiff_buffer_free releases it. */
typedef struct skiff_buffer {
    uint8_t *data;
    size_t length;
    size_t capacity;
} skiff_buffer;

/** Results of writing: 0, or one of these. */
#define SKIFF_WRITE_NO_MEMORY (-1)
/** A field does not fit its length (a key over 65,535 bytes, more than 65,535 entries, a
 *  payload over 2^32−1, a stream id of 2^31 or more). Nothing is appended. */
#define SKIFF_WRITE_INVALID (-2)

void skiff_buffer_free(skiff_buffer *buffer);
/** Makes room for `more` bytes. */
int skiff_buffer_reserve(skiff_buffer *buffer, size_t more);

/** A SETTINGS id and value to send. */
typedef struct skiff_setting {
    uint16_t id;
    uint32_t value;
} skiff_setting;

int skiff_write_preface(skiff_buffer *out);
int skiff_write_frame_header(skiff_buffer *out, const skiff_frame_header *header);
int skiff_write_settings(skiff_buffer *out, const skiff_setting *settings, size_t count);
int skiff_write_settings_ack(skiff_buffer *out);
/** `path` may be empty (a server's HEADERS). */
int skiff_write_headers(skiff_buffer *out, uint32_t stream_id, uint8_t flags, skiff_bytes path,
    const skiff_metadata_entry *metadata, size_t count);
int skiff_write_message(skiff_buffer *out, uint32_t stream_id, uint8_t flags, skiff_bytes message);
/** `message` longer than 65,535 bytes is cut at a UTF-8 character boundary (§3.4). */
int skiff_write_trailers(skiff_buffer *out, uint32_t stream_id, uint32_t status, skiff_bytes message,
    const skiff_metadata_entry *metadata, size_t count);
int skiff_write_rst_stream(skiff_buffer *out, uint32_t stream_id, uint8_t flags, uint32_t status, skiff_bytes reason);
int skiff_write_window_update(skiff_buffer *out, uint32_t stream_id, uint32_t increment);
int skiff_write_ping(skiff_buffer *out, bool ack, const uint8_t opaque[8]);
int skiff_write_goaway(skiff_buffer *out, uint32_t last_stream_id, uint32_t status, skiff_bytes debug);
int skiff_write_half_close(skiff_buffer *out, uint32_t stream_id);

/* ---- Reading a byte stream ---- */

/**
 * Splits the bytes read from a connection into frames. The bytes fed are copied; what it holds
 * is bounded by one frame (at most max_frame_size + 12 bytes) plus the last chunk fed: a header
 * announcing a payload over max_frame_size is refused (TOO_LARGE) as soon as its 12 bytes are
 * in, before any of the payload is buffered.
 */
typedef struct skiff_frame_decoder {
    skiff_buffer pending;
    size_t start;
    uint32_t max_frame_size;
    bool preface_expected;
    /** SKIFF_READ_OK, or how the stream failed (it stays failed). */
    skiff_read_result failure;
} skiff_frame_decoder;

/** `expect_preface`: the stream starts with the peer's 8-byte preface, checked and skipped. */
void skiff_frame_decoder_init(skiff_frame_decoder *decoder, uint32_t max_frame_size, bool expect_preface);
void skiff_frame_decoder_free(skiff_frame_decoder *decoder);
/** Appends bytes read from the connection. */
int skiff_frame_decoder_feed(skiff_frame_decoder *decoder, const uint8_t *bytes, size_t length);
/**
 * The next whole frame: its header (checked, skiff_frame_header_check) and its payload, a view
 * valid until the next call to feed or next. NEED_MORE until one is whole. After TOO_LARGE or
 * VIOLATION (a wrong preface included) the decoder returns the same from then on.
 */
skiff_read_result skiff_frame_decoder_next(
    skiff_frame_decoder *decoder, skiff_frame_header *header, skiff_bytes *payload, const char **why);

#ifdef __cplusplus
}
#endif

#endif /* SKIFF_FRAME_H */
