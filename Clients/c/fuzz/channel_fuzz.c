/*
 * libFuzzer target: the client's whole read path. A channel over a socketpair runs a unary call
 * (stream 1) and a server-streaming call (stream 3); the input is what the "server" sends after
 * its preface. Whatever arrives, the calls end (with a status or UNAVAILABLE when the bytes run
 * out), nothing crashes or leaks, and the channel closes cleanly.
 */
#include "skiff/channel.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int ends[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, ends) != 0) abort();
    skiff_channel_options options;
    skiff_channel_options_defaults(&options);
    options.max_message_size = 65536; /* small limits, so inputs reach them */
    options.max_frame_size = 16384;
    skiff_channel *channel = skiff_channel_adopt(ends[0], &options, NULL);
    if (!channel) abort();
    skiff_call_options call_options = {2000, NULL, 0};
    skiff_bytes empty = {NULL, 0};
    skiff_call *unary = skiff_call_start(channel, "/skiff.testing.v1.TestService/UnaryCall", &call_options);
    skiff_call *stream = skiff_call_start(channel, "/skiff.testing.v1.TestService/StreamingOutputCall", &call_options);
    if (!unary || !stream) abort();
    (void)skiff_call_send(unary, empty, true);
    (void)skiff_call_send(stream, empty, true);
    /* The server's side: its preface, then the input, then the end of the connection. */
    ssize_t written = write(ends[1], skiff_preface, SKIFF_PREFACE_SIZE);
    for (size_t at = 0; written >= 0 && at < size; at += (size_t)written) written = write(ends[1], data + at, size - at);
    shutdown(ends[1], SHUT_WR);
    skiff_buffer message = {0};
    while (skiff_call_receive(stream, &message) == 1) {
    }
    (void)skiff_call_receive(unary, &message);
    (void)skiff_call_initial_metadata(unary);
    (void)skiff_call_trailing_metadata(stream);
    skiff_status status = {0};
    (void)skiff_call_finish(unary, &status);
    skiff_status_clear(&status);
    (void)skiff_call_finish(stream, &status);
    skiff_status_clear(&status);
    skiff_buffer_free(&message);
    skiff_channel_close(channel);
    close(ends[1]);
    return 0;
}
