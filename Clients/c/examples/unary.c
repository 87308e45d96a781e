/* The example of docs/C-CLIENT.md: one UnaryCall of the conformance service through its generated
 * typed function, with a deadline. Run a server with `skiff-server --enable-test-service`, then
 * `build/examples/unary [HOST PORT]`. */
#include <skiff/channel.h>
#include <stdio.h>
#include <stdlib.h>

#include "skiff/testing/v1/test.skiff.h"

int main(int argc, char **argv) {
    const char *host = argc > 2 ? argv[1] : "127.0.0.1";
    uint16_t port = (uint16_t)(argc > 2 ? atoi(argv[2]) : 7700);

    skiff_status status = {0};
    skiff_channel *channel = skiff_channel_connect(host, port, NULL, &status);
    if (!channel) {
        fprintf(stderr, "%s\n", status.message);
        skiff_status_clear(&status);
        return 1;
    }
    Skiff__Testing__V1__SimpleRequest request = SKIFF__TESTING__V1__SIMPLE_REQUEST__INIT;
    request.response_size = 10;
    Skiff__Testing__V1__SimpleResponse *response = NULL;
    skiff_call_options options = {.timeout_ms = 1000};
    int exit_code = 0;
    if (skiff_testing_v1_test_service_unary_call(channel, &request, &response, &options, &status) != SKIFF_STATUS_OK) {
        fprintf(stderr, "%s: %s\n", skiff_status_name(status.code), status.message ? status.message : "");
        exit_code = 1;
    } else {
        printf("UnaryCall answered with %zu bytes of payload\n", response->payload ? response->payload->body.len : 0);
        skiff__testing__v1__simple_response__free_unpacked(response, NULL);
    }
    skiff_status_clear(&status);
    skiff_channel_close(channel);
    return exit_code;
}
