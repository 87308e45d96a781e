/* skiff/1 frames: see include/skiff/frame.h and docs/PROTOCOL.md §1.2–§3. */
#include "skiff/frame.h"

#include <stdlib.h>
#include <string.h>

const uint8_t skiff_preface[SKIFF_PREFACE_SIZE] = {0x89, 0x53, 0x4b, 0x46, 0x01, 0x00, 0x00, 0x00};

static const char *const status_names[] = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
    "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
};

const char *skiff_status_name(uint32_t code) {
    return code < sizeof status_names / sizeof status_names[0] ? status_names[code] : "UNKNOWN_CODE";
}

/* ---- Big-endian integers ---- */

static uint16_t get_u16(const uint8_t *p) { return (uint16_t)((unsigned)p[0] << 8 | p[1]); }

static uint32_t get_u32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void put_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put_u32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static skiff_read_result violation(const char **why, const char *text) {
    if (why) *why = text;
    return SKIFF_READ_VIOLATION;
}

/* A cursor over a payload: reads fail (return false) instead of running past its end. */
typedef struct cursor {
    const uint8_t *p;
    const uint8_t *end;
} cursor;

static cursor cursor_of(skiff_bytes bytes) {
    cursor c = {bytes.data, bytes.data + bytes.length};
    return c;
}

static size_t cursor_left(const cursor *c) { return (size_t)(c->end - c->p); }

static bool read_u16(cursor *c, uint16_t *v) {
    if (cursor_left(c) < 2) return false;
    *v = get_u16(c->p);
    c->p += 2;
    return true;
}

static bool read_u32(cursor *c, uint32_t *v) {
    if (cursor_left(c) < 4) return false;
    *v = get_u32(c->p);
    c->p += 4;
    return true;
}

static bool read_bytes(cursor *c, size_t length, skiff_bytes *out) {
    if (cursor_left(c) < length) return false;
    out->data = c->p;
    out->length = length;
    c->p += length;
    return true;
}

static skiff_bytes rest(cursor *c) {
    skiff_bytes out = {c->p, cursor_left(c)};
    c->p = c->end;
    return out;
}

/* ---- Header ---- */

void skiff_frame_header_read(const uint8_t bytes[SKIFF_FRAME_HEADER_SIZE], skiff_frame_header *header) {
    header->payload_length = get_u32(bytes);
    header->type = bytes[4];
    header->flags = bytes[5];
    header->stream_id = get_u32(bytes + 8);
}

bool skiff_frame_type_is_known(uint8_t type) {
    return type >= SKIFF_FRAME_SETTINGS && type <= SKIFF_FRAME_HALF_CLOSE;
}

skiff_read_result skiff_frame_header_check(
    const skiff_frame_header *header, uint32_t max_frame_size, const char **why) {
    if (header->payload_length > max_frame_size) {
        if (why) *why = "frame payload over MAX_FRAME_SIZE";
        return SKIFF_READ_TOO_LARGE;
    }
    uint32_t id = header->stream_id;
    if (id > SKIFF_MAX_STREAM_ID) return violation(why, "stream id of 2^31 or more");
    if (id != 0 && id % 2 == 0) return violation(why, "frame on an even stream id");
    switch (header->type) {
    case SKIFF_FRAME_SETTINGS:
    case SKIFF_FRAME_PING:
    case SKIFF_FRAME_GOAWAY:
        return id == 0 ? SKIFF_READ_OK : violation(why, "connection-level frame on a stream");
    case SKIFF_FRAME_HEADERS:
    case SKIFF_FRAME_MESSAGE:
    case SKIFF_FRAME_TRAILERS:
    case SKIFF_FRAME_RST_STREAM:
    case SKIFF_FRAME_HALF_CLOSE:
        return id != 0 ? SKIFF_READ_OK : violation(why, "stream-level frame on stream 0");
    case SKIFF_FRAME_WINDOW_UPDATE:
        return SKIFF_READ_OK;
    default:
        return id == 0 ? SKIFF_READ_OK : violation(why, "unknown frame type on a stream");
    }
}

/* ---- Metadata ---- */

/* Reads a block's layout: every length inside the payload. */
static bool read_metadata(cursor *c, skiff_metadata_block *block) {
    const uint8_t *start = c->p;
    uint16_t count;
    if (!read_u16(c, &count)) return false;
    for (uint16_t i = 0; i < count; i++) {
        uint16_t key_length;
        uint32_t value_length;
        skiff_bytes ignored;
        if (!read_u16(c, &key_length) || !read_bytes(c, key_length, &ignored)) return false;
        if (!read_u32(c, &value_length) || !read_bytes(c, value_length, &ignored)) return false;
    }
    block->count = count;
    block->encoded.data = start;
    block->encoded.length = (size_t)(c->p - start);
    return true;
}

void skiff_metadata_iterate(const skiff_metadata_block *block, skiff_metadata_iterator *iterator) {
    iterator->next = block->encoded.length >= 2 ? block->encoded.data + 2 : block->encoded.data;
    iterator->end = block->encoded.data + block->encoded.length;
    iterator->remaining = block->encoded.length >= 2 ? block->count : 0;
}

bool skiff_metadata_next(skiff_metadata_iterator *iterator, skiff_metadata_entry *entry) {
    if (iterator->remaining == 0) return false;
    cursor c = {iterator->next, iterator->end};
    uint16_t key_length;
    uint32_t value_length;
    if (!read_u16(&c, &key_length) || !read_bytes(&c, key_length, &entry->key) || !read_u32(&c, &value_length) ||
        !read_bytes(&c, value_length, &entry->value)) {
        iterator->remaining = 0; /* not a block read by this library */
        return false;
    }
    iterator->next = c.p;
    iterator->remaining--;
    return true;
}

static bool is_binary_key(skiff_bytes key) {
    return key.length >= 4 && memcmp(key.data + key.length - 4, "-bin", 4) == 0;
}

skiff_status_code skiff_metadata_check(
    const skiff_metadata_block *block, uint32_t max_header_list_size, const char **why) {
    if (block->encoded.length > max_header_list_size) {
        if (why) *why = "metadata over MAX_HEADER_LIST_SIZE";
        return SKIFF_STATUS_RESOURCE_EXHAUSTED;
    }
    skiff_metadata_iterator iterator;
    skiff_metadata_entry entry;
    skiff_metadata_iterate(block, &iterator);
    while (skiff_metadata_next(&iterator, &entry)) {
        if (entry.key.length == 0) {
            if (why) *why = "an empty metadata key";
            return SKIFF_STATUS_INTERNAL;
        }
        for (size_t i = 0; i < entry.key.length; i++) {
            uint8_t b = entry.key.data[i];
            bool ok = (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || b == '_' || b == '.' || b == '-';
            if (!ok) {
                if (why) *why = "a metadata key outside [0-9a-z_.-]";
                return SKIFF_STATUS_INTERNAL;
            }
        }
        if (is_binary_key(entry.key)) continue;
        for (size_t i = 0; i < entry.value.length; i++) {
            uint8_t b = entry.value.data[i];
            if (b < 0x20 || b > 0x7e) {
                if (why) *why = "a metadata text value outside printable ASCII";
                return SKIFF_STATUS_INTERNAL;
            }
        }
    }
    return SKIFF_STATUS_OK;
}

bool skiff_metadata_find(const skiff_metadata_block *block, const char *key, skiff_bytes *value) {
    size_t length = strlen(key);
    skiff_metadata_iterator iterator;
    skiff_metadata_entry entry;
    skiff_metadata_iterate(block, &iterator);
    while (skiff_metadata_next(&iterator, &entry)) {
        if (entry.key.length == length && memcmp(entry.key.data, key, length) == 0) {
            *value = entry.value;
            return true;
        }
    }
    return false;
}

/* ---- Payloads ---- */

skiff_read_result skiff_headers_read(skiff_bytes payload, skiff_headers *out, const char **why) {
    cursor c = cursor_of(payload);
    uint16_t path_length;
    if (!read_u16(&c, &path_length) || !read_bytes(&c, path_length, &out->path))
        return violation(why, "HEADERS: the path runs past the payload");
    if (!read_metadata(&c, &out->metadata)) return violation(why, "HEADERS: the metadata block runs past the payload");
    if (cursor_left(&c) != 0) return violation(why, "HEADERS: bytes after the metadata block");
    return SKIFF_READ_OK;
}

skiff_read_result skiff_trailers_read(skiff_bytes payload, skiff_trailers *out, const char **why) {
    cursor c = cursor_of(payload);
    uint16_t message_length;
    if (!read_u32(&c, &out->status)) return violation(why, "TRAILERS: shorter than its status");
    if (!read_u16(&c, &message_length) || !read_bytes(&c, message_length, &out->message))
        return violation(why, "TRAILERS: the message runs past the payload");
    if (!read_metadata(&c, &out->metadata))
        return violation(why, "TRAILERS: the metadata block runs past the payload");
    if (cursor_left(&c) != 0) return violation(why, "TRAILERS: bytes after the metadata block");
    return SKIFF_READ_OK;
}

skiff_read_result skiff_rst_stream_read(skiff_bytes payload, skiff_rst_stream *out, const char **why) {
    cursor c = cursor_of(payload);
    if (!read_u32(&c, &out->status)) return violation(why, "RST_STREAM: shorter than 4 bytes");
    out->reason = rest(&c);
    return SKIFF_READ_OK;
}

skiff_read_result skiff_goaway_read(skiff_bytes payload, skiff_goaway *out, const char **why) {
    cursor c = cursor_of(payload);
    if (!read_u32(&c, &out->last_stream_id) || !read_u32(&c, &out->status))
        return violation(why, "GOAWAY: shorter than 8 bytes");
    out->debug = rest(&c);
    return SKIFF_READ_OK;
}

skiff_read_result skiff_window_update_read(skiff_bytes payload, uint32_t *increment, const char **why) {
    if (payload.length != 4) return violation(why, "WINDOW_UPDATE: not 4 bytes");
    *increment = get_u32(payload.data);
    return SKIFF_READ_OK;
}

skiff_read_result skiff_ping_read(skiff_bytes payload, uint8_t opaque[8], const char **why) {
    if (payload.length != 8) return violation(why, "PING: not 8 bytes");
    memcpy(opaque, payload.data, 8);
    return SKIFF_READ_OK;
}

skiff_read_result skiff_empty_read(skiff_bytes payload, const char **why) {
    return payload.length == 0 ? SKIFF_READ_OK : violation(why, "a payload where none belongs");
}

/* ---- SETTINGS ---- */

void skiff_settings_defaults(skiff_settings *s) {
    s->max_frame_size = 65536;
    s->initial_stream_window = 8388608;
    s->initial_connection_window = 16777216;
    s->max_concurrent_streams = 0;
    s->has_max_concurrent_streams = false;
    s->max_header_list_size = 8192;
    s->max_message_size = 4194304;
    s->keepalive_min_interval_ms = 300000;
}

skiff_read_result skiff_settings_read(skiff_bytes payload, skiff_settings *settings, const char **why) {
    if (payload.length % 6 != 0) return violation(why, "SETTINGS: length not a multiple of 6");
    skiff_settings s;
    skiff_settings_defaults(&s);
    for (size_t at = 0; at < payload.length; at += 6) {
        uint16_t id = get_u16(payload.data + at);
        uint32_t value = get_u32(payload.data + at + 2);
        switch (id) {
        case SKIFF_SETTING_MAX_FRAME_SIZE: s.max_frame_size = value; break;
        case SKIFF_SETTING_INITIAL_STREAM_WINDOW: s.initial_stream_window = value; break;
        case SKIFF_SETTING_INITIAL_CONNECTION_WINDOW: s.initial_connection_window = value; break;
        case SKIFF_SETTING_MAX_CONCURRENT_STREAMS:
            s.max_concurrent_streams = value;
            s.has_max_concurrent_streams = true;
            break;
        case SKIFF_SETTING_MAX_HEADER_LIST_SIZE: s.max_header_list_size = value; break;
        case SKIFF_SETTING_MAX_MESSAGE_SIZE: s.max_message_size = value; break;
        case SKIFF_SETTING_KEEPALIVE_MIN_INTERVAL_MS: s.keepalive_min_interval_ms = value; break;
        default: break; /* unknown ids are skipped */
        }
    }
    const uint32_t max_window = 0x7fffffffu;
    if (s.max_frame_size < 16384 || s.max_frame_size > 16777216)
        return violation(why, "SETTINGS: MAX_FRAME_SIZE outside 16,384 … 16,777,216");
    if (s.max_message_size < 1024 || s.max_message_size > max_window)
        return violation(why, "SETTINGS: MAX_MESSAGE_SIZE outside 1,024 … 2^31−1");
    if (s.initial_stream_window < s.max_message_size || s.initial_stream_window > max_window)
        return violation(why, "SETTINGS: INITIAL_STREAM_WINDOW outside MAX_MESSAGE_SIZE … 2^31−1");
    if (s.initial_connection_window < 1 || s.initial_connection_window > max_window)
        return violation(why, "SETTINGS: INITIAL_CONNECTION_WINDOW outside 1 … 2^31−1");
    if (s.max_header_list_size < 1024 || s.max_header_list_size > s.max_frame_size - 6)
        return violation(why, "SETTINGS: MAX_HEADER_LIST_SIZE outside 1,024 … MAX_FRAME_SIZE − 6");
    *settings = s;
    return SKIFF_READ_OK;
}

/* ---- Writing ---- */

void skiff_buffer_free(skiff_buffer *buffer) {
    free(buffer->data);
    buffer->data = NULL;
    buffer->length = 0;
    buffer->capacity = 0;
}

int skiff_buffer_reserve(skiff_buffer *buffer, size_t more) {
    if (more > SIZE_MAX - buffer->length) return SKIFF_WRITE_NO_MEMORY;
    size_t needed = buffer->length + more;
    if (needed <= buffer->capacity) return 0;
    size_t capacity = buffer->capacity ? buffer->capacity : 256;
    while (capacity < needed) capacity = capacity > SIZE_MAX / 2 ? needed : capacity * 2;
    uint8_t *data = realloc(buffer->data, capacity);
    if (!data) return SKIFF_WRITE_NO_MEMORY;
    buffer->data = data;
    buffer->capacity = capacity;
    return 0;
}

static uint8_t *append(skiff_buffer *out, size_t length) {
    uint8_t *at = out->data + out->length;
    out->length += length;
    return at;
}

static void append_bytes(skiff_buffer *out, skiff_bytes bytes) {
    if (bytes.length) memcpy(append(out, bytes.length), bytes.data, bytes.length);
}

/* Starts a frame of `payload_length` bytes: checks the fields, reserves room, writes the header. */
static int begin_frame(skiff_buffer *out, uint8_t type, uint8_t flags, uint32_t stream_id, size_t payload_length) {
    if (payload_length > UINT32_MAX || stream_id > SKIFF_MAX_STREAM_ID) return SKIFF_WRITE_INVALID;
    if (skiff_buffer_reserve(out, SKIFF_FRAME_HEADER_SIZE + payload_length) != 0) return SKIFF_WRITE_NO_MEMORY;
    skiff_frame_header header = {(uint32_t)payload_length, type, flags, stream_id};
    return skiff_write_frame_header(out, &header);
}

int skiff_write_preface(skiff_buffer *out) {
    if (skiff_buffer_reserve(out, SKIFF_PREFACE_SIZE) != 0) return SKIFF_WRITE_NO_MEMORY;
    memcpy(append(out, SKIFF_PREFACE_SIZE), skiff_preface, SKIFF_PREFACE_SIZE);
    return 0;
}

int skiff_write_frame_header(skiff_buffer *out, const skiff_frame_header *header) {
    if (skiff_buffer_reserve(out, SKIFF_FRAME_HEADER_SIZE) != 0) return SKIFF_WRITE_NO_MEMORY;
    uint8_t *p = append(out, SKIFF_FRAME_HEADER_SIZE);
    put_u32(p, header->payload_length);
    p[4] = header->type;
    p[5] = header->flags;
    put_u16(p + 6, 0);
    put_u32(p + 8, header->stream_id);
    return 0;
}

int skiff_write_settings(skiff_buffer *out, const skiff_setting *settings, size_t count) {
    if (count > UINT32_MAX / 6) return SKIFF_WRITE_INVALID;
    int result = begin_frame(out, SKIFF_FRAME_SETTINGS, 0, 0, count * 6);
    if (result != 0) return result;
    for (size_t i = 0; i < count; i++) {
        uint8_t *p = append(out, 6);
        put_u16(p, settings[i].id);
        put_u32(p + 2, settings[i].value);
    }
    return 0;
}

int skiff_write_settings_ack(skiff_buffer *out) { return begin_frame(out, SKIFF_FRAME_SETTINGS, SKIFF_FLAG_ACK, 0, 0); }

/* The encoded size of a metadata block, or 0 if an entry does not fit its length fields. */
static size_t metadata_size(const skiff_metadata_entry *metadata, size_t count) {
    if (count > UINT16_MAX) return 0;
    size_t size = 2;
    for (size_t i = 0; i < count; i++) {
        if (metadata[i].key.length > UINT16_MAX || metadata[i].value.length > UINT32_MAX) return 0;
        size_t entry = 6 + metadata[i].key.length + metadata[i].value.length;
        if (entry > SIZE_MAX - size) return 0;
        size += entry;
    }
    return size;
}

static void append_metadata(skiff_buffer *out, const skiff_metadata_entry *metadata, size_t count) {
    put_u16(append(out, 2), (uint16_t)count);
    for (size_t i = 0; i < count; i++) {
        put_u16(append(out, 2), (uint16_t)metadata[i].key.length);
        append_bytes(out, metadata[i].key);
        put_u32(append(out, 4), (uint32_t)metadata[i].value.length);
        append_bytes(out, metadata[i].value);
    }
}

int skiff_write_headers(skiff_buffer *out, uint32_t stream_id, uint8_t flags, skiff_bytes path,
    const skiff_metadata_entry *metadata, size_t count) {
    size_t block = metadata_size(metadata, count);
    if (block == 0 || path.length > UINT16_MAX || block > SIZE_MAX - 2 - path.length) return SKIFF_WRITE_INVALID;
    int result = begin_frame(out, SKIFF_FRAME_HEADERS, flags, stream_id, 2 + path.length + block);
    if (result != 0) return result;
    put_u16(append(out, 2), (uint16_t)path.length);
    append_bytes(out, path);
    append_metadata(out, metadata, count);
    return 0;
}

int skiff_write_message(skiff_buffer *out, uint32_t stream_id, uint8_t flags, skiff_bytes message) {
    int result = begin_frame(out, SKIFF_FRAME_MESSAGE, flags, stream_id, message.length);
    if (result != 0) return result;
    append_bytes(out, message);
    return 0;
}

/* The longest prefix of `text` of at most `limit` bytes that ends at a UTF-8 character boundary. */
static size_t utf8_prefix(skiff_bytes text, size_t limit) {
    if (text.length <= limit) return text.length;
    size_t cut = limit;
    while (cut > 0 && (text.data[cut] & 0xc0) == 0x80) cut--;
    return cut;
}

int skiff_write_trailers(skiff_buffer *out, uint32_t stream_id, uint32_t status, skiff_bytes message,
    const skiff_metadata_entry *metadata, size_t count) {
    size_t block = metadata_size(metadata, count);
    message.length = utf8_prefix(message, UINT16_MAX);
    if (block == 0 || block > SIZE_MAX - 6 - message.length) return SKIFF_WRITE_INVALID;
    int result = begin_frame(out, SKIFF_FRAME_TRAILERS, 0, stream_id, 6 + message.length + block);
    if (result != 0) return result;
    put_u32(append(out, 4), status);
    put_u16(append(out, 2), (uint16_t)message.length);
    append_bytes(out, message);
    append_metadata(out, metadata, count);
    return 0;
}

int skiff_write_rst_stream(skiff_buffer *out, uint32_t stream_id, uint8_t flags, uint32_t status, skiff_bytes reason) {
    if (reason.length > SIZE_MAX - 4) return SKIFF_WRITE_INVALID;
    int result = begin_frame(out, SKIFF_FRAME_RST_STREAM, flags, stream_id, 4 + reason.length);
    if (result != 0) return result;
    put_u32(append(out, 4), status);
    append_bytes(out, reason);
    return 0;
}

int skiff_write_window_update(skiff_buffer *out, uint32_t stream_id, uint32_t increment) {
    int result = begin_frame(out, SKIFF_FRAME_WINDOW_UPDATE, 0, stream_id, 4);
    if (result != 0) return result;
    put_u32(append(out, 4), increment);
    return 0;
}

int skiff_write_ping(skiff_buffer *out, bool ack, const uint8_t opaque[8]) {
    int result = begin_frame(out, SKIFF_FRAME_PING, ack ? SKIFF_FLAG_ACK : 0, 0, 8);
    if (result != 0) return result;
    memcpy(append(out, 8), opaque, 8);
    return 0;
}

int skiff_write_goaway(skiff_buffer *out, uint32_t last_stream_id, uint32_t status, skiff_bytes debug) {
    if (debug.length > SIZE_MAX - 8) return SKIFF_WRITE_INVALID;
    int result = begin_frame(out, SKIFF_FRAME_GOAWAY, 0, 0, 8 + debug.length);
    if (result != 0) return result;
    put_u32(append(out, 4), last_stream_id);
    put_u32(append(out, 4), status);
    append_bytes(out, debug);
    return 0;
}

int skiff_write_half_close(skiff_buffer *out, uint32_t stream_id) {
    return begin_frame(out, SKIFF_FRAME_HALF_CLOSE, 0, stream_id, 0);
}

/* ---- The streaming decoder ---- */

void skiff_frame_decoder_init(skiff_frame_decoder *decoder, uint32_t max_frame_size, bool expect_preface) {
    memset(decoder, 0, sizeof *decoder);
    decoder->max_frame_size = max_frame_size;
    decoder->preface_expected = expect_preface;
}

void skiff_frame_decoder_free(skiff_frame_decoder *decoder) { skiff_buffer_free(&decoder->pending); }

int skiff_frame_decoder_feed(skiff_frame_decoder *decoder, const uint8_t *bytes, size_t length) {
    skiff_buffer *pending = &decoder->pending;
    /* Drop what was consumed before growing: the buffer holds one frame and one chunk. */
    if (decoder->start > 0) {
        memmove(pending->data, pending->data + decoder->start, pending->length - decoder->start);
        pending->length -= decoder->start;
        decoder->start = 0;
    }
    if (length == 0) return 0;
    if (skiff_buffer_reserve(pending, length) != 0) return SKIFF_WRITE_NO_MEMORY;
    memcpy(append(pending, length), bytes, length);
    return 0;
}

skiff_read_result skiff_frame_decoder_next(
    skiff_frame_decoder *decoder, skiff_frame_header *header, skiff_bytes *payload, const char **why) {
    if (decoder->failure != SKIFF_READ_OK) {
        if (why) *why = "the stream of frames already failed";
        return decoder->failure;
    }
    const uint8_t *at = decoder->pending.data + decoder->start;
    size_t available = decoder->pending.length - decoder->start;
    if (decoder->preface_expected) {
        size_t compare = available < SKIFF_PREFACE_SIZE ? available : SKIFF_PREFACE_SIZE;
        if (compare && memcmp(at, skiff_preface, compare) != 0) {
            decoder->failure = SKIFF_READ_VIOLATION;
            return violation(why, "not the skiff/1 preface");
        }
        if (available < SKIFF_PREFACE_SIZE) return SKIFF_READ_NEED_MORE;
        decoder->preface_expected = false;
        decoder->start += SKIFF_PREFACE_SIZE;
        at += SKIFF_PREFACE_SIZE;
        available -= SKIFF_PREFACE_SIZE;
    }
    if (available < SKIFF_FRAME_HEADER_SIZE) return SKIFF_READ_NEED_MORE;
    skiff_frame_header h;
    skiff_frame_header_read(at, &h);
    skiff_read_result checked = skiff_frame_header_check(&h, decoder->max_frame_size, why);
    if (checked != SKIFF_READ_OK) {
        decoder->failure = checked;
        return checked;
    }
    if (available - SKIFF_FRAME_HEADER_SIZE < h.payload_length) return SKIFF_READ_NEED_MORE;
    *header = h;
    payload->data = at + SKIFF_FRAME_HEADER_SIZE;
    payload->length = h.payload_length;
    decoder->start += SKIFF_FRAME_HEADER_SIZE + h.payload_length;
    return SKIFF_READ_OK;
}
