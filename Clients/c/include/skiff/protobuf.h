/*
 * Calls with protobuf-c messages: what the typed functions protoc-gen-skiff generates for C
 * (`--skiff_opt=Language=C`) are made of. Requests are packed, responses unpacked with protobuf-c
 * (free them with protobuf_c_message_free_unpacked or the type's __free_unpacked). Link with
 * -lprotobuf-c (`pkg-config --libs libprotobuf-c`).
 *
 * Thread safety: as skiff/channel.h.
 */
#ifndef SKIFF_PROTOBUF_H
#define SKIFF_PROTOBUF_H

#include <protobuf-c/protobuf-c.h>

#include "skiff/channel.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A unary call: packs `request`, and on OK unpacks the response as `response_type` into
 * `*response` (NULL otherwise). A response that does not decode is INTERNAL.
 */
uint32_t skiff_unary_message(skiff_channel *channel, const char *path, const ProtobufCMessage *request,
    const ProtobufCMessageDescriptor *response_type, ProtobufCMessage **response, const skiff_call_options *options,
    skiff_status *status);

/** Packs and sends one request message (skiff_call_send). */
uint32_t skiff_call_send_message(skiff_call *call, const ProtobufCMessage *message, bool last);

/**
 * Receives one response message as `type` into `*message` (skiff_call_receive): 1 with a message,
 * 0 when the response has ended, -1 when the call failed, or when the message does not decode
 * (the call is then reset and skiff_call_finish reports INTERNAL).
 */
int skiff_call_receive_message(skiff_call *call, const ProtobufCMessageDescriptor *type, ProtobufCMessage **message);

#ifdef __cplusplus
}
#endif

#endif /* SKIFF_PROTOBUF_H */
