/* Calls with protobuf-c messages: see include/skiff/protobuf.h. */
#include "skiff/protobuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Packs `message` into `buffer` (its length reset). */
static int pack(const ProtobufCMessage *message, skiff_buffer *buffer) {
    size_t size = protobuf_c_message_get_packed_size(message);
    buffer->length = 0;
    if (skiff_buffer_reserve(buffer, size ? size : 1) != 0) return -1;
    buffer->length = protobuf_c_message_pack(message, buffer->data);
    return 0;
}

static void undecodable(const ProtobufCMessageDescriptor *type, char *text, size_t size) {
    snprintf(text, size, "could not decode the response as %s", type->name);
}

uint32_t skiff_unary_message(skiff_channel *channel, const char *path, const ProtobufCMessage *request,
    const ProtobufCMessageDescriptor *response_type, ProtobufCMessage **response, const skiff_call_options *options,
    skiff_status *status) {
    *response = NULL;
    skiff_buffer packed = {0}, reply = {0};
    if (pack(request, &packed) != 0) {
        if (status) {
            status->code = SKIFF_STATUS_RESOURCE_EXHAUSTED;
            status->message = NULL;
        }
        return SKIFF_STATUS_RESOURCE_EXHAUSTED;
    }
    skiff_bytes bytes = {packed.data, packed.length};
    uint32_t code = skiff_unary(channel, path, bytes, &reply, options, status);
    if (code == SKIFF_STATUS_OK) {
        *response = protobuf_c_message_unpack(response_type, NULL, reply.length, reply.data);
        if (!*response) {
            code = SKIFF_STATUS_INTERNAL;
            if (status) {
                char text[200];
                undecodable(response_type, text, sizeof text);
                skiff_status_clear(status);
                status->code = code;
                status->message = malloc(strlen(text) + 1);
                if (status->message) memcpy(status->message, text, strlen(text) + 1);
            }
        }
    }
    skiff_buffer_free(&packed);
    skiff_buffer_free(&reply);
    return code;
}

uint32_t skiff_call_send_message(skiff_call *call, const ProtobufCMessage *message, bool last) {
    skiff_buffer packed = {0};
    if (pack(message, &packed) != 0) {
        skiff_call_fail(call, SKIFF_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return SKIFF_STATUS_RESOURCE_EXHAUSTED;
    }
    skiff_bytes bytes = {packed.data, packed.length};
    uint32_t code = skiff_call_send(call, bytes, last);
    skiff_buffer_free(&packed);
    return code;
}

int skiff_call_receive_message(skiff_call *call, const ProtobufCMessageDescriptor *type, ProtobufCMessage **message) {
    *message = NULL;
    skiff_buffer bytes = {0};
    int received = skiff_call_receive(call, &bytes);
    if (received == 1) {
        *message = protobuf_c_message_unpack(type, NULL, bytes.length, bytes.data);
        if (!*message) {
            char text[200];
            undecodable(type, text, sizeof text);
            skiff_call_fail(call, SKIFF_STATUS_INTERNAL, text);
            received = -1;
        }
    }
    skiff_buffer_free(&bytes);
    return received;
}
