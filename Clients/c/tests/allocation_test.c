/*
 * libskiff allocates nothing per call once a channel is warm (docs/C-CLIENT.md, "Allocation"):
 * linked with -Wl,--wrap for malloc, calloc and realloc, so that every allocation libskiff's own
 * code makes is counted (protobuf-c's, a shared library, are not). Against a real server with the
 * conformance service: `build/allocation_test HOST PORT`.
 */
#include "skiff/protobuf.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "skiff/testing/v1/test.skiff.h"

static atomic_long allocations;

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *pointer, size_t size);

void *__wrap_malloc(size_t size) {
    atomic_fetch_add(&allocations, 1);
    return __real_malloc(size);
}

void *__wrap_calloc(size_t count, size_t size) {
    atomic_fetch_add(&allocations, 1);
    return __real_calloc(count, size);
}

void *__wrap_realloc(void *pointer, size_t size) {
    atomic_fetch_add(&allocations, 1);
    return __real_realloc(pointer, size);
}

/* `calls` unary calls, raw and typed, with metadata and a deadline; true if all succeeded. */
static bool calls(skiff_channel *channel, int count, skiff_buffer *response) {
    static const uint8_t request[] = {0x10, 0xfa, 0x01}; /* response_size: 250 */
    skiff_bytes bytes = {request, sizeof request};
    skiff_metadata_entry entry = {text("x-tenant"), text("campus")};
    skiff_call_options options = {5000, &entry, 1};
    bool ok = true;
    for (int i = 0; i < count; i++) {
        ok = ok && skiff_unary(channel, "/skiff.testing.v1.TestService/UnaryCall", bytes, response, &options, NULL) ==
                       SKIFF_STATUS_OK;
        Skiff__Testing__V1__SimpleRequest typed = SKIFF__TESTING__V1__SIMPLE_REQUEST__INIT;
        typed.response_size = 250;
        Skiff__Testing__V1__SimpleResponse *reply = NULL;
        ok = ok && skiff_testing_v1_test_service_unary_call(channel, &typed, &reply, &options, NULL) == SKIFF_STATUS_OK;
        if (reply) skiff__testing__v1__simple_response__free_unpacked(reply, NULL);
    }
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s HOST PORT\n", argv[0]);
        return 2;
    }
    skiff_channel *channel = skiff_channel_connect(argv[1], (uint16_t)atoi(argv[2]), NULL, NULL);
    CHECK(channel != NULL);
    if (!channel) return 1;
    skiff_buffer response = {0};
    CHECK(calls(channel, 100, &response)); /* warm: buffers grown, call structs kept */
    long before = atomic_load(&allocations);
    CHECK(calls(channel, 1000, &response));
    long made = atomic_load(&allocations) - before;
    printf("allocations in libskiff over 2,000 warm calls: %ld\n", made);
    CHECK(made == 0);
    skiff_buffer_free(&response);
    skiff_channel_close(channel);
    printf("allocation_test: %d checks, %d failed\n", atomic_load(&checks), atomic_load(&failures));
    return atomic_load(&failures) == 0 ? 0 : 1;
}
