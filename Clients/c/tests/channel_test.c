/*
 * libskiff's channel against a real Skiff server serving the conformance service
 * (docs/PROTOCOL.md §7): all four call kinds, metadata both ways, forced statuses, deadlines,
 * cancellation, fragmented multi-MiB messages, 1,000 concurrent calls from 8 threads on one
 * channel, a slow reader, the size limits of both sides. Messages through protobuf-c.
 * Usage: channel_test HOST PORT (the Swift test suite starts the server and runs this);
 * channel_test HOST PORT --leak-calls N makes N unary calls from 4 threads (for LeakSanitizer).
 */
#include "skiff/channel.h"
#include "skiff/testing/v1/test.pb-c.h"
#include "skiff/testing/v1/test.skiff.h"

#include "check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PATH(method) "/skiff.testing.v1.TestService/" method

static const char *host;
static uint16_t port;

/* Packs a protobuf-c message into `out` (reused). */
static skiff_bytes pack(const ProtobufCMessage *message, skiff_buffer *out) {
    size_t size = protobuf_c_message_get_packed_size(message);
    out->length = 0;
    if (skiff_buffer_reserve(out, size ? size : 1) != 0) abort();
    out->length = protobuf_c_message_pack(message, out->data);
    skiff_bytes b = {out->data, out->length};
    return b;
}

static double seconds_since(const struct timespec *start) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* Cancels the call after 100 ms, from another thread. */
static void *cancel_later(void *call) {
    nanosleep(&(struct timespec){0, 100000000}, NULL);
    skiff_call_cancel(call);
    return NULL;
}

/* A UnaryCall asking for `size` bytes back and sending `payload` bytes; returns the status code. */
static uint32_t unary_call(skiff_channel *channel, int32_t size, size_t payload, int32_t sleep_ms, int64_t timeout_ms,
    size_t *received, skiff_status *status) {
    Skiff__Testing__V1__SimpleRequest request = SKIFF__TESTING__V1__SIMPLE_REQUEST__INIT;
    Skiff__Testing__V1__Payload body = SKIFF__TESTING__V1__PAYLOAD__INIT;
    uint8_t *data = payload ? calloc(payload, 1) : NULL;
    body.body.data = data;
    body.body.len = payload;
    request.payload = &body;
    request.response_size = size;
    request.sleep_ms = sleep_ms;
    skiff_buffer out = {0}, response = {0};
    skiff_call_options options = {timeout_ms, NULL, 0};
    uint32_t code = skiff_unary(channel, PATH("UnaryCall"), pack(&request.base, &out), &response, &options, status);
    if (received) *received = 0;
    if (code == SKIFF_STATUS_OK) {
        Skiff__Testing__V1__SimpleResponse *reply =
            skiff__testing__v1__simple_response__unpack(NULL, response.length, response.data);
        CHECK(reply != NULL);
        if (reply && received) *received = reply->payload ? reply->payload->body.len : 0;
        if (reply) skiff__testing__v1__simple_response__free_unpacked(reply, NULL);
    }
    free(data);
    skiff_buffer_free(&out);
    skiff_buffer_free(&response);
    return code;
}

static void test_unary(skiff_channel *channel) {
    skiff_status status = {0};
    skiff_buffer response = {0};
    CHECK(skiff_unary(channel, PATH("EmptyCall"), text(""), &response, NULL, &status) == SKIFF_STATUS_OK);
    CHECK(response.length == 0 && status.code == SKIFF_STATUS_OK);
    skiff_status_clear(&status);
    size_t received = 0;
    int32_t sizes[] = {0, 1, 250, 70000, 3 * 1024 * 1024};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        CHECK(unary_call(channel, sizes[i], (size_t)sizes[i], 0, 0, &received, &status) == SKIFF_STATUS_OK);
        CHECK(received == (size_t)sizes[i]);
        skiff_status_clear(&status);
    }
    /* Unknown and unimplemented methods. */
    CHECK(skiff_unary(channel, PATH("NoSuchMethod"), text(""), &response, NULL, &status) ==
          SKIFF_STATUS_UNIMPLEMENTED);
    skiff_status_clear(&status);
    CHECK(skiff_unary(channel, PATH("UnimplementedCall"), text(""), &response, NULL, &status) ==
          SKIFF_STATUS_UNIMPLEMENTED);
    skiff_status_clear(&status);
    skiff_buffer_free(&response);
}

static void test_status_and_metadata(skiff_channel *channel) {
    /* A forced status comes back with its message exactly (UTF-8 included), trailers-only. */
    Skiff__Testing__V1__SimpleRequest request = SKIFF__TESTING__V1__SIMPLE_REQUEST__INIT;
    Skiff__Testing__V1__EchoStatus echo = SKIFF__TESTING__V1__ECHO_STATUS__INIT;
    echo.code = SKIFF_STATUS_NOT_FOUND;
    echo.message = "no such listing \xe2\x88\x91 100%";
    request.response_status = &echo;
    const uint8_t trace[] = {0x00, 0x01, 0xfe, 0xff};
    skiff_metadata_entry metadata[] = {
        {text("x-skiff-echo-initial"), text("hi")},
        {text("x-skiff-echo-trailing-bin"), {trace, 4}},
    };
    skiff_call_options options = {0, metadata, 2};
    skiff_buffer out = {0}, message = {0};
    skiff_call *call = skiff_call_start(channel, PATH("UnaryCall"), &options);
    CHECK(skiff_call_send(call, pack(&request.base, &out), true) == SKIFF_STATUS_OK);
    CHECK(skiff_call_receive(call, &message) == 0);
    skiff_metadata_block trailing = skiff_call_trailing_metadata(call);
    skiff_bytes value = {NULL, 0};
    CHECK(skiff_metadata_find(&trailing, "x-skiff-echo-initial", &value) && value.length == 2);
    CHECK(skiff_metadata_find(&trailing, "x-skiff-echo-trailing-bin", &value) && value.length == 4 &&
          memcmp(value.data, trace, 4) == 0);
    skiff_status status = {0};
    CHECK(skiff_call_finish(call, &status) == SKIFF_STATUS_NOT_FOUND);
    CHECK(status.message && strcmp(status.message, "no such listing \xe2\x88\x91 100%") == 0);
    skiff_status_clear(&status);

    /* A successful call: the initial echo in HEADERS, the binary one in TRAILERS. */
    request.response_status = NULL;
    request.response_size = 10;
    call = skiff_call_start(channel, PATH("UnaryCall"), &options);
    CHECK(skiff_call_send(call, pack(&request.base, &out), true) == SKIFF_STATUS_OK);
    CHECK(skiff_call_receive(call, &message) == 1);
    skiff_metadata_block initial = skiff_call_initial_metadata(call);
    CHECK(skiff_metadata_find(&initial, "x-skiff-echo-initial", &value) && value.length == 2 &&
          memcmp(value.data, "hi", 2) == 0);
    CHECK(skiff_call_receive(call, &message) == 0);
    trailing = skiff_call_trailing_metadata(call);
    CHECK(skiff_metadata_find(&trailing, "x-skiff-echo-trailing-bin", &value) && value.length == 4);
    CHECK(skiff_call_finish(call, NULL) == SKIFF_STATUS_OK);

    /* Metadata the server would refuse is refused before sending. */
    skiff_metadata_entry upper = {text("X-Upper"), text("a")};
    skiff_call_options bad = {0, &upper, 1};
    call = skiff_call_start(channel, PATH("EmptyCall"), &bad);
    CHECK(skiff_call_send(call, text(""), true) == SKIFF_STATUS_INTERNAL);
    CHECK(skiff_call_finish(call, &status) == SKIFF_STATUS_INTERNAL && status.message != NULL);
    skiff_status_clear(&status);
    skiff_buffer_free(&out);
    skiff_buffer_free(&message);
}

static void test_deadline(skiff_channel *channel) {
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    skiff_status status = {0};
    CHECK(unary_call(channel, 1, 0, 3000, 200, NULL, &status) == SKIFF_STATUS_DEADLINE_EXCEEDED);
    double took = seconds_since(&start);
    CHECK(took >= 0.19 && took < 2.0);
    skiff_status_clear(&status);
    /* A deadline long enough: the call succeeds. */
    CHECK(unary_call(channel, 1, 0, 10, 10000, NULL, &status) == SKIFF_STATUS_OK);
    skiff_status_clear(&status);
}

static void test_streaming(skiff_channel *channel) {
    skiff_buffer out = {0}, message = {0};
    /* Server streaming: 100 responses of 1,000 bytes. */
    Skiff__Testing__V1__StreamingOutputCallRequest request = SKIFF__TESTING__V1__STREAMING_OUTPUT_CALL_REQUEST__INIT;
    Skiff__Testing__V1__ResponseParameters parameters[100];
    Skiff__Testing__V1__ResponseParameters *list[100];
    for (int i = 0; i < 100; i++) {
        skiff__testing__v1__response_parameters__init(&parameters[i]);
        parameters[i].size = 1000;
        list[i] = &parameters[i];
    }
    request.response_parameters = list;
    request.n_response_parameters = 100;
    skiff_call *call = skiff_call_start(channel, PATH("StreamingOutputCall"), NULL);
    CHECK(skiff_call_send(call, pack(&request.base, &out), true) == SKIFF_STATUS_OK);
    int count = 0, result;
    while ((result = skiff_call_receive(call, &message)) == 1) {
        Skiff__Testing__V1__StreamingOutputCallResponse *reply =
            skiff__testing__v1__streaming_output_call_response__unpack(NULL, message.length, message.data);
        CHECK(reply && reply->payload && reply->payload->body.len == 1000);
        if (reply) skiff__testing__v1__streaming_output_call_response__free_unpacked(reply, NULL);
        count++;
    }
    CHECK(result == 0 && count == 100);
    CHECK(skiff_call_finish(call, NULL) == SKIFF_STATUS_OK);

    /* Client streaming: 50 requests of 1..50 bytes, then HALF_CLOSE. */
    call = skiff_call_start(channel, PATH("StreamingInputCall"), NULL);
    uint8_t body[64] = {0};
    for (int i = 1; i <= 50; i++) {
        Skiff__Testing__V1__StreamingInputCallRequest input = SKIFF__TESTING__V1__STREAMING_INPUT_CALL_REQUEST__INIT;
        Skiff__Testing__V1__Payload payload = SKIFF__TESTING__V1__PAYLOAD__INIT;
        payload.body.data = body;
        payload.body.len = (size_t)i;
        input.payload = &payload;
        CHECK(skiff_call_send(call, pack(&input.base, &out), false) == SKIFF_STATUS_OK);
    }
    CHECK(skiff_call_half_close(call) == SKIFF_STATUS_OK);
    CHECK(skiff_call_receive(call, &message) == 1);
    Skiff__Testing__V1__StreamingInputCallResponse *sum =
        skiff__testing__v1__streaming_input_call_response__unpack(NULL, message.length, message.data);
    CHECK(sum && sum->aggregated_payload_size == 50 * 51 / 2);
    if (sum) skiff__testing__v1__streaming_input_call_response__free_unpacked(sum, NULL);
    CHECK(skiff_call_receive(call, &message) == 0);
    CHECK(skiff_call_finish(call, NULL) == SKIFF_STATUS_OK);

    /* Bidirectional: ten rounds, each answered before the next is sent. */
    call = skiff_call_start(channel, PATH("FullDuplexCall"), NULL);
    request.n_response_parameters = 1;
    for (int round = 0; round < 10; round++) {
        parameters[0].size = round;
        CHECK(skiff_call_send(call, pack(&request.base, &out), false) == SKIFF_STATUS_OK);
        CHECK(skiff_call_receive(call, &message) == 1);
    }
    CHECK(skiff_call_half_close(call) == SKIFF_STATUS_OK);
    CHECK(skiff_call_receive(call, &message) == 0);
    CHECK(skiff_call_finish(call, NULL) == SKIFF_STATUS_OK);

    /* Cancellation: the call ends CANCELLED at once, and the channel carries on. */
    call = skiff_call_start(channel, PATH("FullDuplexCall"), NULL);
    CHECK(skiff_call_send(call, pack(&request.base, &out), false) == SKIFF_STATUS_OK);
    CHECK(skiff_call_receive(call, &message) == 1);
    skiff_call_cancel(call);
    CHECK(skiff_call_receive(call, &message) == -1);
    CHECK(skiff_call_send(call, pack(&request.base, &out), false) == SKIFF_STATUS_CANCELLED);
    CHECK(skiff_call_finish(call, NULL) == SKIFF_STATUS_CANCELLED);
    /* Cancelled from another thread while the owner is blocked receiving (reading the socket
     * itself, or waiting): it returns at once, not when the server answers (5 s). */
    Skiff__Testing__V1__SimpleRequest slow = SKIFF__TESTING__V1__SIMPLE_REQUEST__INIT;
    slow.sleep_ms = 5000;
    call = skiff_call_start(channel, PATH("UnaryCall"), NULL);
    CHECK(skiff_call_send(call, pack(&slow.base, &out), true) == SKIFF_STATUS_OK);
    pthread_t canceller;
    CHECK(pthread_create(&canceller, NULL, cancel_later, call) == 0);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    CHECK(skiff_call_receive(call, &message) == -1);
    CHECK(seconds_since(&start) < 0.6);
    pthread_join(canceller, NULL);
    CHECK(skiff_call_finish(call, NULL) == SKIFF_STATUS_CANCELLED);
    skiff_status status = {0};
    CHECK(unary_call(channel, 5, 0, 0, 0, NULL, &status) == SKIFF_STATUS_OK);
    skiff_status_clear(&status);
    skiff_buffer_free(&out);
    skiff_buffer_free(&message);
}

/* A slow reader: 24 MiB of responses on one stream, read only after a pause; meanwhile other
 * calls on the channel succeed, and every byte arrives (the stream window paces the server). */
static void test_slow_reader(skiff_channel *channel) {
    enum { COUNT = 384, SIZE = 65536 };
    Skiff__Testing__V1__StreamingOutputCallRequest request = SKIFF__TESTING__V1__STREAMING_OUTPUT_CALL_REQUEST__INIT;
    Skiff__Testing__V1__ResponseParameters parameters = SKIFF__TESTING__V1__RESPONSE_PARAMETERS__INIT;
    Skiff__Testing__V1__ResponseParameters **list = malloc(COUNT * sizeof *list);
    for (int i = 0; i < COUNT; i++) list[i] = &parameters;
    parameters.size = SIZE;
    request.response_parameters = list;
    request.n_response_parameters = COUNT;
    skiff_buffer out = {0}, message = {0};
    skiff_call *call = skiff_call_start(channel, PATH("StreamingOutputCall"), NULL);
    CHECK(skiff_call_send(call, pack(&request.base, &out), true) == SKIFF_STATUS_OK);
    struct timespec pause = {0, 300000000};
    nanosleep(&pause, NULL);
    skiff_status status = {0};
    CHECK(unary_call(channel, 100, 0, 0, 5000, NULL, &status) == SKIFF_STATUS_OK);
    skiff_status_clear(&status);
    int count = 0;
    while (skiff_call_receive(call, &message) == 1) count += message.length >= SIZE;
    CHECK(count == COUNT);
    CHECK(skiff_call_finish(call, NULL) == SKIFF_STATUS_OK);
    free(list);
    skiff_buffer_free(&out);
    skiff_buffer_free(&message);
}

typedef struct worker {
    skiff_channel *channel;
    int index;
    int succeeded;
} worker;

/* Each of 8 threads starts 125 calls, then finishes them: 1,000 in flight on one channel. */
static void *run_worker(void *argument) {
    worker *w = argument;
    enum { CALLS = 125 };
    skiff_call *calls[CALLS];
    skiff_buffer out = {0}, message = {0};
    for (int i = 0; i < CALLS; i++) {
        Skiff__Testing__V1__SimpleRequest request = SKIFF__TESTING__V1__SIMPLE_REQUEST__INIT;
        request.response_size = w->index * CALLS + i;
        calls[i] = skiff_call_start(w->channel, PATH("UnaryCall"), NULL);
        if (skiff_call_send(calls[i], pack(&request.base, &out), true) != SKIFF_STATUS_OK) continue;
    }
    for (int i = 0; i < CALLS; i++) {
        if (skiff_call_receive(calls[i], &message) == 1) {
            Skiff__Testing__V1__SimpleResponse *reply =
                skiff__testing__v1__simple_response__unpack(NULL, message.length, message.data);
            if (reply && reply->payload && reply->payload->body.len == (size_t)(w->index * CALLS + i)) w->succeeded++;
            if (reply) skiff__testing__v1__simple_response__free_unpacked(reply, NULL);
        }
        skiff_call_finish(calls[i], NULL);
    }
    skiff_buffer_free(&out);
    skiff_buffer_free(&message);
    return NULL;
}

static void test_concurrency(skiff_channel *channel) {
    pthread_t threads[8];
    worker workers[8];
    for (int i = 0; i < 8; i++) {
        workers[i] = (worker){channel, i, 0};
        CHECK(pthread_create(&threads[i], NULL, run_worker, &workers[i]) == 0);
    }
    int succeeded = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(threads[i], NULL);
        succeeded += workers[i].succeeded;
    }
    CHECK(succeeded == 1000);
}

/* The same with batch_writes: requests leave when the thread waits; every call still completes,
 * streaming included (a send followed by a receive). */
static void test_batched(void) {
    skiff_channel_options options;
    skiff_channel_options_defaults(&options);
    options.batch_writes = true;
    skiff_status status = {0};
    skiff_channel *channel = skiff_channel_connect(host, port, &options, &status);
    CHECK(channel != NULL);
    if (!channel) return;
    test_concurrency(channel);
    test_streaming(channel);
    /* A request made by a thread that does not wait goes out on skiff_channel_flush. */
    skiff_call *call = skiff_call_start(channel, PATH("EmptyCall"), NULL);
    CHECK(skiff_call_send(call, text(""), true) == SKIFF_STATUS_OK);
    skiff_channel_flush(channel);
    CHECK(skiff_call_finish(call, NULL) == SKIFF_STATUS_OK);
    skiff_channel_close(channel);
}

/* The typed functions protoc-gen-skiff generates (Language=C), one per call kind. */
static void test_typed(skiff_channel *channel) {
    skiff_status status = {0};
    Skiff__Testing__V1__SimpleRequest request = SKIFF__TESTING__V1__SIMPLE_REQUEST__INIT;
    request.response_size = 42;
    Skiff__Testing__V1__SimpleResponse *response = NULL;
    CHECK(skiff_testing_v1_test_service_unary_call(channel, &request, &response, NULL, &status) == SKIFF_STATUS_OK);
    CHECK(response && response->payload && response->payload->body.len == 42);
    if (response) skiff__testing__v1__simple_response__free_unpacked(response, NULL);
    skiff_status_clear(&status);
    Skiff__Testing__V1__Empty empty = SKIFF__TESTING__V1__EMPTY__INIT, *nothing = NULL;
    CHECK(skiff_testing_v1_test_service_unimplemented_call(channel, &empty, &nothing, NULL, &status) ==
          SKIFF_STATUS_UNIMPLEMENTED);
    CHECK(nothing == NULL);
    skiff_status_clear(&status);

    Skiff__Testing__V1__StreamingOutputCallRequest output = SKIFF__TESTING__V1__STREAMING_OUTPUT_CALL_REQUEST__INIT;
    Skiff__Testing__V1__ResponseParameters parameters = SKIFF__TESTING__V1__RESPONSE_PARAMETERS__INIT;
    Skiff__Testing__V1__ResponseParameters *list[3] = {&parameters, &parameters, &parameters};
    parameters.size = 7;
    output.response_parameters = list;
    output.n_response_parameters = 3;
    skiff_call *call = skiff_testing_v1_test_service_streaming_output_call_start(channel, &output, NULL);
    Skiff__Testing__V1__StreamingOutputCallResponse *part = NULL;
    int parts = 0;
    while (skiff_testing_v1_test_service_streaming_output_call_receive(call, &part) == 1) {
        parts += part->payload && part->payload->body.len == 7;
        skiff__testing__v1__streaming_output_call_response__free_unpacked(part, NULL);
    }
    CHECK(parts == 3);
    CHECK(skiff_call_finish(call, NULL) == SKIFF_STATUS_OK);

    call = skiff_testing_v1_test_service_streaming_input_call_start(channel, NULL);
    uint8_t bytes[5] = {0};
    Skiff__Testing__V1__StreamingInputCallRequest input = SKIFF__TESTING__V1__STREAMING_INPUT_CALL_REQUEST__INIT;
    Skiff__Testing__V1__Payload payload = SKIFF__TESTING__V1__PAYLOAD__INIT;
    payload.body.data = bytes;
    payload.body.len = 5;
    input.payload = &payload;
    for (int i = 0; i < 4; i++) CHECK(skiff_testing_v1_test_service_streaming_input_call_send(call, &input) == 0);
    Skiff__Testing__V1__StreamingInputCallResponse *sum = NULL;
    CHECK(skiff_testing_v1_test_service_streaming_input_call_close_and_receive(call, &sum) == 1);
    CHECK(sum && sum->aggregated_payload_size == 20);
    if (sum) skiff__testing__v1__streaming_input_call_response__free_unpacked(sum, NULL);
    CHECK(skiff_call_finish(call, NULL) == SKIFF_STATUS_OK);

    call = skiff_testing_v1_test_service_full_duplex_call_start(channel, NULL);
    output.n_response_parameters = 1;
    CHECK(skiff_testing_v1_test_service_full_duplex_call_send(call, &output, true) == SKIFF_STATUS_OK);
    CHECK(skiff_testing_v1_test_service_full_duplex_call_receive(call, &part) == 1);
    if (part) skiff__testing__v1__streaming_output_call_response__free_unpacked(part, NULL);
    CHECK(skiff_testing_v1_test_service_full_duplex_call_receive(call, &part) == 0);
    CHECK(skiff_call_finish(call, NULL) == SKIFF_STATUS_OK);

    /* A response that does not decode as the expected type is INTERNAL, named. */
    call = skiff_call_start(channel, PATH("UnaryCall"), NULL);
    request.response_size = 5;
    CHECK(skiff_call_send_message(call, &request.base, true) == SKIFF_STATUS_OK);
    ProtobufCMessage *wrong = NULL;
    /* SimpleResponse's field 1 (a message) read as EchoStatus's field 1 (an int32): a wire-type clash. */
    CHECK(skiff_call_receive_message(call, &skiff__testing__v1__echo_status__descriptor, &wrong) == -1);
    CHECK(wrong == NULL);
    CHECK(skiff_call_finish(call, &status) == SKIFF_STATUS_INTERNAL);
    CHECK(status.message && strstr(status.message, "skiff.testing.v1.EchoStatus") != NULL);
    skiff_status_clear(&status);
}

/* Ending calls early: finish drops what was not read (returning its credit) and ends the client's
 * side; close fails the calls still open, which are finished afterwards. */
static void test_ending_early(void) {
    skiff_status status = {0};
    skiff_channel *channel = skiff_channel_connect(host, port, NULL, &status);
    CHECK(channel != NULL);
    if (!channel) return;
    skiff_buffer out = {0}, message = {0};
    /* 20 responses of 1 MiB, more than the stream window: one read, then finish. */
    Skiff__Testing__V1__StreamingOutputCallRequest request = SKIFF__TESTING__V1__STREAMING_OUTPUT_CALL_REQUEST__INIT;
    Skiff__Testing__V1__ResponseParameters parameters = SKIFF__TESTING__V1__RESPONSE_PARAMETERS__INIT;
    Skiff__Testing__V1__ResponseParameters *list[20];
    for (int i = 0; i < 20; i++) list[i] = &parameters;
    parameters.size = 1024 * 1024;
    request.response_parameters = list;
    request.n_response_parameters = 20;
    skiff_call_options deadline = {20000, NULL, 0};
    skiff_call *call = skiff_call_start(channel, PATH("StreamingOutputCall"), &deadline);
    CHECK(skiff_call_send(call, pack(&request.base, &out), true) == SKIFF_STATUS_OK);
    CHECK(skiff_call_receive(call, &message) == 1);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    CHECK(skiff_call_finish(call, NULL) == SKIFF_STATUS_OK);
    CHECK(seconds_since(&start) < 10);
    /* A bidirectional call whose client never half-closed: finish ends its side. */
    request.n_response_parameters = 1;
    parameters.size = 10;
    call = skiff_call_start(channel, PATH("FullDuplexCall"), &deadline);
    CHECK(skiff_call_send(call, pack(&request.base, &out), false) == SKIFF_STATUS_OK);
    CHECK(skiff_call_finish(call, NULL) == SKIFF_STATUS_OK);
    /* A path and metadata too big for one frame (the server's MAX_FRAME_SIZE, 64 KiB) fail
     * locally with RESOURCE_EXHAUSTED; a path longer than HEADERS can carry, with INTERNAL. */
    size_t big = 70000;
    char *path = malloc(big + 1);
    char *value = malloc(3001);
    if (path && value) {
        memset(path, 'a', big);
        memcpy(path, "/a.B/", 5);
        memset(value, 'v', 3000);
        value[3000] = 0;
        path[64000] = 0;
        skiff_metadata_entry entry = {text("x-big"), text(value)};
        skiff_call_options with_metadata = {0, &entry, 1};
        call = skiff_call_start(channel, path, &with_metadata);
        CHECK(skiff_call_send(call, text(""), true) == SKIFF_STATUS_RESOURCE_EXHAUSTED);
        CHECK(skiff_call_finish(call, NULL) == SKIFF_STATUS_RESOURCE_EXHAUSTED);
        path[64000] = 'a';
        path[big] = 0;
        call = skiff_call_start(channel, path, NULL);
        CHECK(skiff_call_finish(call, NULL) == SKIFF_STATUS_INTERNAL);
    }
    free(path);
    free(value);
    /* A timeout of "forever" is a long deadline, not an overflow. */
    skiff_call_options forever = {INT64_MAX, NULL, 0};
    CHECK(skiff_unary(channel, PATH("EmptyCall"), text(""), &message, &forever, NULL) == SKIFF_STATUS_OK);
    /* Close with a call open: it fails UNAVAILABLE, and finishing it afterwards is safe. */
    call = skiff_call_start(channel, PATH("FullDuplexCall"), NULL);
    CHECK(skiff_call_send(call, pack(&request.base, &out), false) == SKIFF_STATUS_OK);
    skiff_channel_close(channel);
    CHECK(skiff_call_receive(call, &message) == -1 || message.length > 0);
    CHECK(skiff_call_finish(call, &status) == SKIFF_STATUS_UNAVAILABLE);
    skiff_status_clear(&status);
    skiff_buffer_free(&out);
    skiff_buffer_free(&message);
}

static void test_limits(void) {
    skiff_status status = {0};
    /* A request over the server's MAX_MESSAGE_SIZE (4 MiB) fails locally; the channel carries on. */
    skiff_channel *channel = skiff_channel_connect(host, port, NULL, &status);
    CHECK(channel != NULL);
    if (!channel) return;
    CHECK(unary_call(channel, 1, 0, 0, 0, NULL, &status) == SKIFF_STATUS_OK); /* the server's SETTINGS are in */
    skiff_status_clear(&status);
    CHECK(unary_call(channel, 1, 5 * 1024 * 1024, 0, 0, NULL, &status) == SKIFF_STATUS_RESOURCE_EXHAUSTED);
    skiff_status_clear(&status);
    CHECK(unary_call(channel, 1, 0, 0, 0, NULL, &status) == SKIFF_STATUS_OK);
    skiff_status_clear(&status);
    skiff_channel_close(channel);

    /* A response over the client's own MAX_MESSAGE_SIZE: RESOURCE_EXHAUSTED, the channel goes on. */
    skiff_channel_options options;
    skiff_channel_options_defaults(&options);
    options.max_message_size = 1024 * 1024;
    channel = skiff_channel_connect(host, port, &options, &status);
    CHECK(channel != NULL);
    if (!channel) return;
    CHECK(unary_call(channel, 2 * 1024 * 1024, 0, 0, 0, NULL, &status) == SKIFF_STATUS_RESOURCE_EXHAUSTED);
    skiff_status_clear(&status);
    CHECK(unary_call(channel, 1000, 0, 0, 0, NULL, &status) == SKIFF_STATUS_OK);
    skiff_status_clear(&status);
    skiff_channel_close(channel);

    /* Options out of range are refused. */
    options.max_queued_bytes = 0;
    CHECK(skiff_channel_connect(host, port, &options, &status) == NULL);
    CHECK(status.code == SKIFF_STATUS_INVALID_ARGUMENT && status.message != NULL);
    skiff_status_clear(&status);

    /* Nobody listening: UNAVAILABLE with the reason. */
    CHECK(skiff_channel_connect("127.0.0.1", 1, NULL, &status) == NULL);
    CHECK(status.code == SKIFF_STATUS_UNAVAILABLE && status.message != NULL);
    skiff_status_clear(&status);
}

typedef struct leak_worker {
    skiff_channel *channel;
    int calls;
    int succeeded;
} leak_worker;

static void *run_leak_worker(void *argument) {
    leak_worker *w = argument;
    skiff_buffer response = {0};
    for (int i = 0; i < w->calls; i++)
        w->succeeded += skiff_unary(w->channel, PATH("EmptyCall"), text(""), &response, NULL, NULL) == SKIFF_STATUS_OK;
    skiff_buffer_free(&response);
    return NULL;
}

/* `calls` unary calls from 4 threads on one channel: run under LeakSanitizer, anything a call
 * leaks shows at exit, `calls` times over. */
static int leak_run(int calls) {
    skiff_status status = {0};
    skiff_channel *channel = skiff_channel_connect(host, port, NULL, &status);
    if (!channel) {
        fprintf(stderr, "cannot connect: %s\n", status.message ? status.message : "?");
        skiff_status_clear(&status);
        return 1;
    }
    pthread_t threads[4];
    leak_worker workers[4];
    for (int i = 0; i < 4; i++) {
        workers[i] = (leak_worker){channel, calls / 4 + (i < calls % 4), 0};
        CHECK(pthread_create(&threads[i], NULL, run_leak_worker, &workers[i]) == 0);
    }
    int succeeded = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        succeeded += workers[i].succeeded;
    }
    CHECK(succeeded == calls);
    skiff_channel_close(channel);
    printf("leak run: %d calls, %d succeeded; %d checks, %d failed\n", calls, succeeded, atomic_load(&checks),
        atomic_load(&failures));
    return atomic_load(&failures) == 0 ? 0 : 1;
}

/* TLS (with --tls): the name checked is the address or tls_server_name; a certificate for
 * another name, or from roots not trusted, is refused with the reason. */
/* A TLS server of this test's own (OpenSSL) that offers only ALPN `h2`: it completes the handshake
 * without choosing `skiff/1`. */
typedef struct alpn_server {
    int listener;
    const char *cert_file, *key_file;
} alpn_server;

static int choose_h2(SSL *ssl, const unsigned char **out, unsigned char *out_length, const unsigned char *in,
    unsigned int in_length, void *argument) {
    (void)ssl, (void)argument;
    static const unsigned char h2[] = {2, 'h', '2'};
    unsigned char *chosen = NULL;
    if (SSL_select_next_proto(&chosen, out_length, h2, sizeof h2, in, in_length) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK; /* no protocol in common: the handshake goes on without ALPN */
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
}

static void *serve_without_skiff(void *argument) {
    alpn_server *server = argument;
    SSL_CTX *context = SSL_CTX_new(TLS_server_method());
    if (!context || SSL_CTX_use_certificate_chain_file(context, server->cert_file) != 1 ||
        SSL_CTX_use_PrivateKey_file(context, server->key_file, SSL_FILETYPE_PEM) != 1) {
        SSL_CTX_free(context);
        close(server->listener);
        return NULL;
    }
    SSL_CTX_set_alpn_select_cb(context, choose_h2, NULL);
    int fd = accept(server->listener, NULL, NULL);
    if (fd >= 0) {
        SSL *ssl = SSL_new(context);
        SSL_set_fd(ssl, fd);
        if (SSL_accept(ssl) == 1) {
            char ignored[256];
            while (SSL_read(ssl, ignored, sizeof ignored) > 0) {
            }
        }
        SSL_free(ssl);
        close(fd);
    }
    SSL_CTX_free(context);
    close(server->listener);
    return NULL;
}

/* A server that completes the TLS handshake without choosing ALPN skiff/1 does not serve skiff/1:
 * the channel refuses it (§1.1). */
static void test_tls_without_alpn(const char *ca_file, const char *cert_file, const char *key_file) {
    alpn_server server = {socket(AF_INET, SOCK_STREAM, 0), cert_file, key_file};
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = 0};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (bind(server.listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(server.listener, 1) != 0 ||
        getsockname(server.listener, (struct sockaddr *)&address, &length) != 0) {
        CHECK(!"a listening socket");
        return;
    }
    /* The test's own server writes with write(2): the client hanging up must not kill the test. */
    signal(SIGPIPE, SIG_IGN);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, serve_without_skiff, &server) == 0);
    skiff_channel_options options;
    skiff_channel_options_defaults(&options);
    options.tls = true;
    options.tls_ca_file = ca_file;
    options.connect_timeout_ms = 5000;
    skiff_status status = {0};
    CHECK(skiff_channel_connect("127.0.0.1", ntohs(address.sin_port), &options, &status) == NULL);
    CHECK(status.code == SKIFF_STATUS_UNAVAILABLE);
    CHECK(status.message && strstr(status.message, "did not choose ALPN skiff/1") != NULL);
    skiff_status_clear(&status);
    pthread_join(thread, NULL);
}

static void test_tls_checks(const char *ca_file, const char *other_ca_file) {
    skiff_channel_options options;
    skiff_channel_options_defaults(&options);
    options.tls = true;
    options.tls_ca_file = ca_file;
    options.tls_server_name = "localhost";
    skiff_status status = {0};
    skiff_channel *by_name = skiff_channel_connect(host, port, &options, &status);
    CHECK(by_name != NULL);
    if (by_name) {
        size_t received = 0;
        CHECK(unary_call(by_name, 1000, 1000, 0, 5000, &received, &status) == SKIFF_STATUS_OK);
        CHECK(received == 1000);
        skiff_channel_close(by_name);
    }
    skiff_status_clear(&status);

    options.tls_server_name = "skiff.example.com";
    CHECK(skiff_channel_connect(host, port, &options, &status) == NULL);
    CHECK(status.code == SKIFF_STATUS_UNAVAILABLE);
    CHECK(status.message && strstr(status.message, "certificate") != NULL);
    skiff_status_clear(&status);

    options.tls_server_name = NULL;
    options.tls_ca_file = other_ca_file;
    CHECK(skiff_channel_connect(host, port, &options, &status) == NULL);
    CHECK(status.code == SKIFF_STATUS_UNAVAILABLE);
    CHECK(status.message && strstr(status.message, "certificate") != NULL);
    skiff_status_clear(&status);

    options.tls_ca_file = "/nonexistent/roots.pem";
    CHECK(skiff_channel_connect(host, port, &options, &status) == NULL);
    CHECK(status.code == SKIFF_STATUS_UNAVAILABLE);
    CHECK(status.message && strstr(status.message, "/nonexistent/roots.pem") != NULL);
    skiff_status_clear(&status);

    /* A plain channel to a TLS-only server does not get through. */
    skiff_channel *plain = skiff_channel_connect(host, port, NULL, &status);
    skiff_status_clear(&status);
    if (plain) {
        CHECK(unary_call(plain, 10, 10, 0, 3000, NULL, &status) != SKIFF_STATUS_OK);
        skiff_status_clear(&status);
        skiff_channel_close(plain);
    }
}

int main(int argc, char **argv) {
    bool leak = argc == 5 && strcmp(argv[3], "--leak-calls") == 0;
    bool tls = argc == 7 && strcmp(argv[3], "--tls") == 0;
    if (argc != 3 && !leak && !tls) {
        fprintf(stderr, "usage: %s HOST PORT [--leak-calls N | --tls CA_FILE OTHER_CA_FILE KEY_FILE]\n", argv[0]);
        return 2;
    }
    host = argv[1];
    port = (uint16_t)atoi(argv[2]);
    if (leak) return leak_run(atoi(argv[4]));
    skiff_channel_options options;
    skiff_channel_options_defaults(&options);
    if (tls) {
        /* The same calls over TLS, the certificate checked against the address (an IP entry). */
        options.tls = true;
        options.tls_ca_file = argv[4];
    }
    skiff_status status = {0};
    skiff_channel *channel = skiff_channel_connect(host, port, &options, &status);
    if (!channel) {
        fprintf(stderr, "cannot connect: %s\n", status.message ? status.message : "?");
        skiff_status_clear(&status);
        return 1;
    }
    test_unary(channel);
    test_status_and_metadata(channel);
    test_deadline(channel);
    test_streaming(channel);
    test_slow_reader(channel);
    test_concurrency(channel);
    test_typed(channel);
    skiff_channel_close(channel);
    if (tls) {
        test_tls_checks(argv[4], argv[5]);
        test_tls_without_alpn(argv[4], argv[4], argv[6]); /* the server's certificate and key */
    } else {
        /* These make plain channels of their own. */
        test_ending_early();
        test_batched();
        test_limits();
    }
    printf("channel_test%s: %d checks, %d failed\n", tls ? " (TLS)" : "", atomic_load(&checks), atomic_load(&failures));
    return atomic_load(&failures) == 0 ? 0 : 1;
}
