/*
 * libFuzzer target: bytes from a peer into the streaming frame decoder (split into chunks the
 * input chooses) and every payload through every parser. No crash, no out-of-bounds read, no leak,
 * and the decoder never holds more than one frame and one chunk.
 */
#include "skiff/frame.h"

#include "../tests/parse_every_way.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    size_t chunk = 1 + data[0] % 64;
    bool preface = data[1] & 1;
    uint32_t max_frame_size = 16384 + (uint32_t)(data[1] >> 1) * 512;
    data += 2;
    size -= 2;
    skiff_frame_decoder decoder;
    skiff_frame_decoder_init(&decoder, max_frame_size, preface);
    for (size_t at = 0; at < size; at += chunk) {
        size_t length = size - at < chunk ? size - at : chunk;
        if (skiff_frame_decoder_feed(&decoder, data + at, length) != 0) abort();
        skiff_frame_header header;
        skiff_bytes payload;
        skiff_read_result result;
        while ((result = skiff_frame_decoder_next(&decoder, &header, &payload, NULL)) == SKIFF_READ_OK) {
            if (payload.length != header.payload_length || payload.length > max_frame_size) abort();
            parse_every_way(payload);
        }
        if (decoder.pending.length > max_frame_size + SKIFF_FRAME_HEADER_SIZE + SKIFF_PREFACE_SIZE + chunk) abort();
        if (result != SKIFF_READ_NEED_MORE) break;
    }
    skiff_frame_decoder_free(&decoder);
    return 0;
}
