/* TLS for a channel, through OpenSSL (docs/PROTOCOL.md §1.1): TLS 1.2 or later, the server's
 * certificate verified against the given roots (or the system's) and the expected name, ALPN
 * `skiff/1` required. The socket stays non-blocking; the channel polls it. */
#include "internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

struct skiff_tls {
    SSL_CTX *context;
    SSL *ssl;
};

/* ---- A socket BIO that never raises SIGPIPE ----
 * OpenSSL's socket BIO writes with write(2), which raises SIGPIPE when the server has gone; a
 * library must not change the process's signal handling, so this one sends with MSG_NOSIGNAL. */

static int bio_write(BIO *bio, const char *data, int length) {
    int fd = *(int *)BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    ssize_t sent;
    do sent = send(fd, data, (size_t)length, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (sent < 0 && errno == EINTR);
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_write(bio);
    return (int)sent;
}

static int bio_read(BIO *bio, char *data, int length) {
    int fd = *(int *)BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    ssize_t received;
    do received = recv(fd, data, (size_t)length, MSG_DONTWAIT);
    while (received < 0 && errno == EINTR);
    if (received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_read(bio);
    return (int)received;
}

static long bio_control(BIO *bio, int command, long number, void *pointer) {
    (void)bio, (void)number, (void)pointer;
    return command == BIO_CTRL_FLUSH ? 1 : 0;
}

static int bio_destroy(BIO *bio) {
    free(BIO_get_data(bio));
    BIO_set_data(bio, NULL);
    return 1;
}

static BIO_METHOD *socket_method;
static pthread_once_t socket_method_once = PTHREAD_ONCE_INIT;

static void make_socket_method(void) {
    BIO_METHOD *method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "skiff socket");
    if (method && BIO_meth_set_write(method, bio_write) && BIO_meth_set_read(method, bio_read) &&
        BIO_meth_set_ctrl(method, bio_control) && BIO_meth_set_destroy(method, bio_destroy))
        socket_method = method;
    else
        BIO_meth_free(method);
}

static BIO *socket_bio(int fd) {
    pthread_once(&socket_method_once, make_socket_method);
    int *data = malloc(sizeof *data);
    BIO *bio = socket_method && data ? BIO_new(socket_method) : NULL;
    if (!bio) {
        free(data);
        return NULL;
    }
    *data = fd;
    BIO_set_data(bio, data);
    BIO_set_init(bio, 1);
    return bio;
}

/* ---- Handshake ---- */

/* The reason OpenSSL gives for the last failure, after `what`. */
static void explain(SSL *ssl, const char *what, char *reason, size_t size) {
    long verified = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;
    unsigned long error = ERR_peek_last_error();
    if (verified != X509_V_OK) {
        snprintf(reason, size, "%s: the server's certificate was not accepted: %s", what,
            X509_verify_cert_error_string(verified));
    } else if (error) {
        char text[200];
        ERR_error_string_n(error, text, sizeof text);
        snprintf(reason, size, "%s: %s", what, text);
    } else {
        snprintf(reason, size, "%s: the connection closed during the TLS handshake", what);
    }
    ERR_clear_error();
}

void skiff_tls_free(skiff_tls *tls) {
    if (!tls) return;
    SSL_free(tls->ssl);
    SSL_CTX_free(tls->context);
    free(tls);
}

skiff_tls *skiff_tls_connect(
    int fd, const char *host, const skiff_channel_options *options, int64_t deadline_ns, char *reason, size_t size) {
    ERR_clear_error();
    const char *name = options->tls_server_name ? options->tls_server_name : host;
    skiff_tls *tls = calloc(1, sizeof *tls);
    if (!tls || !(tls->context = SSL_CTX_new(TLS_client_method()))) {
        snprintf(reason, size, "cannot set TLS up");
        skiff_tls_free(tls);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(tls->context, TLS1_2_VERSION);
    SSL_CTX_set_verify(tls->context, SSL_VERIFY_PEER, NULL);
    int roots = options->tls_ca_file ? SSL_CTX_load_verify_locations(tls->context, options->tls_ca_file, NULL)
                                     : SSL_CTX_set_default_verify_paths(tls->context);
    if (roots != 1) {
        snprintf(reason, size, "cannot load the trusted certificates from %.120s",
            options->tls_ca_file ? options->tls_ca_file : "the system's default locations");
        ERR_clear_error();
        skiff_tls_free(tls);
        return NULL;
    }
    tls->ssl = SSL_new(tls->context);
    BIO *bio = tls->ssl ? socket_bio(fd) : NULL;
    if (!bio) {
        snprintf(reason, size, "cannot set TLS up");
        skiff_tls_free(tls);
        return NULL;
    }
    SSL_set_bio(tls->ssl, bio, bio);
    /* The name checked: an address against the certificate's IP entries, a name against its DNS
     * entries (and sent as SNI). Partial wildcards are not accepted. */
    unsigned char address[16];
    bool is_address = inet_pton(AF_INET, name, address) == 1 || inet_pton(AF_INET6, name, address) == 1;
    X509_VERIFY_PARAM *checks = SSL_get0_param(tls->ssl);
    X509_VERIFY_PARAM_set_hostflags(checks, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    int named = is_address ? X509_VERIFY_PARAM_set1_ip_asc(checks, name)
                           : X509_VERIFY_PARAM_set1_host(checks, name, 0) && SSL_set_tlsext_host_name(tls->ssl, name);
    static const unsigned char alpn[] = {7, 's', 'k', 'i', 'f', 'f', '/', '1'};
    if (named != 1 || SSL_set_alpn_protos(tls->ssl, alpn, sizeof alpn) != 0) {
        snprintf(reason, size, "cannot set TLS up for the name %.120s", name);
        ERR_clear_error();
        skiff_tls_free(tls);
        return NULL;
    }
    SSL_set_mode(tls->ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    for (;;) {
        int result = SSL_connect(tls->ssl);
        if (result == 1) break;
        int error = SSL_get_error(tls->ssl, result);
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        int64_t left_ms = (deadline_ns - ((int64_t)t.tv_sec * 1000000000 + t.tv_nsec)) / 1000000;
        if ((error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) || left_ms <= 0) {
            if (left_ms <= 0 && (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE))
                snprintf(reason, size, "TLS with %.120s: the handshake timed out", name);
            else
                explain(tls->ssl, "TLS handshake failed", reason, size);
            skiff_tls_free(tls);
            return NULL;
        }
        struct pollfd wait = {fd, error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, 0};
        (void)poll(&wait, 1, left_ms > INT_MAX ? INT_MAX : (int)left_ms);
    }
    const unsigned char *chosen = NULL;
    unsigned int chosen_length = 0;
    SSL_get0_alpn_selected(tls->ssl, &chosen, &chosen_length);
    if (chosen_length != 7 || memcmp(chosen, "skiff/1", 7) != 0) {
        snprintf(reason, size, "TLS with %.120s: the server did not choose ALPN skiff/1 (it does not serve skiff/1 on this port)",
            name);
        skiff_tls_free(tls);
        return NULL;
    }
    return tls;
}

/* ---- Reading and writing ---- */

ssize_t skiff_tls_write(skiff_tls *tls, const uint8_t *data, size_t length) {
    ERR_clear_error();
    int written = SSL_write(tls->ssl, data, length > INT_MAX ? INT_MAX : (int)length);
    if (written > 0) return written;
    int error = SSL_get_error(tls->ssl, written);
    return error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ ? 0 : -1;
}

ssize_t skiff_tls_read(skiff_tls *tls, uint8_t *data, size_t capacity) {
    ERR_clear_error();
    int read = SSL_read(tls->ssl, data, capacity > INT_MAX ? INT_MAX : (int)capacity);
    if (read > 0) return read;
    int error = SSL_get_error(tls->ssl, read);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) return -1;
    return error == SSL_ERROR_ZERO_RETURN ? 0 : -2;
}

bool skiff_tls_has_pending(skiff_tls *tls) { return SSL_has_pending(tls->ssl) == 1; }
