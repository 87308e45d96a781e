/* Every payload parser of skiff/frame.h on the same bytes, for the random tests and the fuzz target:
 * none may crash or read out of bounds, whatever the bytes. */
#ifndef SKIFF_TESTS_PARSE_EVERY_WAY_H
#define SKIFF_TESTS_PARSE_EVERY_WAY_H

#include "skiff/frame.h"

static inline void parse_every_way(skiff_bytes payload) {
    skiff_headers headers;
    skiff_trailers trailers;
    skiff_rst_stream rst;
    skiff_goaway goaway;
    skiff_settings settings;
    uint32_t increment;
    uint8_t opaque[8];
    skiff_bytes value;
    skiff_metadata_entry entry;
    skiff_metadata_iterator iterator;
    skiff_settings_defaults(&settings);
    if (skiff_headers_read(payload, &headers, NULL) == SKIFF_READ_OK) {
        (void)skiff_metadata_check(&headers.metadata, 8192, NULL);
        (void)skiff_metadata_find(&headers.metadata, "grpc-timeout", &value);
        skiff_metadata_iterate(&headers.metadata, &iterator);
        while (skiff_metadata_next(&iterator, &entry)) {
        }
    }
    if (skiff_trailers_read(payload, &trailers, NULL) == SKIFF_READ_OK)
        (void)skiff_metadata_check(&trailers.metadata, 8192, NULL);
    (void)skiff_rst_stream_read(payload, &rst, NULL);
    (void)skiff_goaway_read(payload, &goaway, NULL);
    (void)skiff_settings_read(payload, &settings, NULL);
    (void)skiff_window_update_read(payload, &increment, NULL);
    (void)skiff_ping_read(payload, opaque, NULL);
    (void)skiff_empty_read(payload, NULL);
}

#endif
