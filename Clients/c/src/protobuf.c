/* Calls with protobuf-c messages: see include/skiff/protobuf.h. */
#include "skiff/protobuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Requests up to this size are packed on the stack; larger ones into a heap buffer. */
#define STACK_REQUEST 1024

/* Packs `message` into `stack` (STACK_REQUEST bytes) when it fits, else into `heap`; `bytes` views
 * the result. -1 when memory runs out. */
static int pack(const ProtobufCMessage *message, uint8_t *stack, skiff_buffer *heap, skiff_bytes *bytes) {
    size_t size = protobuf_c_message_get_packed_size(message);
    uint8_t *into = stack;
    if (size > STACK_REQUEST) {
        if (skiff_buffer_reserve(heap, size) != 0) return -1;
        into = heap->data;
    }
    bytes->data = into;
    bytes->length = protobuf_c_message_pack(message, into);
    return 0;
}

static void undecodable(const ProtobufCMessageDescriptor *type, char *text, size_t size) {
    snprintf(text, size, "could not decode the response as %s", type->name);
}

/* Unpacks a response as `type`; on failure fails the call with INTERNAL, naming the type. */
static ProtobufCMessage *unpack(skiff_call *call, const ProtobufCMessageDescriptor *type, skiff_bytes bytes) {
    ProtobufCMessage *message = protobuf_c_message_unpack(type, NULL, bytes.length, bytes.data);
    if (!message) {
        char text[200];
        undecodable(type, text, sizeof text);
        skiff_call_fail(call, SKIFF_STATUS_INTERNAL, text);
    }
    return message;
}

uint32_t skiff_unary_message(skiff_channel *channel, const char *path, const ProtobufCMessage *request,
    const ProtobufCMessageDescriptor *response_type, ProtobufCMessage **response, const skiff_call_options *options,
    skiff_status *status) {
    *response = NULL;
    uint8_t stack[STACK_REQUEST];
    skiff_buffer heap = {0};
    skiff_bytes bytes;
    skiff_call *call = pack(request, stack, &heap, &bytes) == 0 ? skiff_call_start(channel, path, options) : NULL;
    if (!call) {
        skiff_buffer_free(&heap);
        if (status) {
            status->code = SKIFF_STATUS_RESOURCE_EXHAUSTED;
            status->message = NULL;
        }
        return SKIFF_STATUS_RESOURCE_EXHAUSTED;
    }
    int received = -1;
    if (skiff_call_send(call, bytes, true) == SKIFF_STATUS_OK) {
        skiff_bytes reply;
        received = skiff_call_receive_kept(call, &reply);
        if (received == 1) {
            *response = unpack(call, response_type, reply);
            /* Exactly one message: a second one is the server's mistake. */
            if (*response && skiff_call_receive_kept(call, &reply) == 1) skiff_call_cancel(call);
        }
    }
    skiff_buffer_free(&heap);
    uint32_t code = skiff_call_finish(call, status);
    if (code == SKIFF_STATUS_OK && received == 0) {
        /* OK without a message: the empty message, as skiff_unary's empty response. */
        skiff_bytes none = {NULL, 0};
        *response = protobuf_c_message_unpack(response_type, NULL, none.length, none.data);
    }
    if (code != SKIFF_STATUS_OK && *response) {
        protobuf_c_message_free_unpacked(*response, NULL);
        *response = NULL;
    }
    return code;
}

uint32_t skiff_call_send_message(skiff_call *call, const ProtobufCMessage *message, bool last) {
    uint8_t stack[STACK_REQUEST];
    skiff_buffer heap = {0};
    skiff_bytes bytes;
    if (pack(message, stack, &heap, &bytes) != 0) {
        skiff_call_fail(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return SKIFF_STATUS_RESOURCE_EXHAUSTED;
    }
    uint32_t code = skiff_call_send(call, bytes, last);
    skiff_buffer_free(&heap);
    return code;
}

int skiff_call_receive_message(skiff_call *call, const ProtobufCMessageDescriptor *type, ProtobufCMessage **message) {
    *message = NULL;
    skiff_bytes bytes;
    int received = skiff_call_receive_kept(call, &bytes);
    if (received == 1 && !(*message = unpack(call, type, bytes))) received = -1;
    return received;
}
