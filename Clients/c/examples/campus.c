/*
 * The campus story of docs/C-CLIENT.md against a running skiff-server: Alice and Bob sign up with
 * campus addresses, verify them and log in; Alice follows her live feed and posts a listing; Bob
 * finds it by searching and writes to her about it; the message arrives on Alice's feed.
 *
 * The verification e-mails go to the server's log (its log/outbox mailer), so start the server at
 * debug level with its standard error in a file and pass that file:
 *
 *   skiff-server --storage memory --log-level debug 2> server.log &
 *   build/examples/campus 127.0.0.1 7700 server.log
 *
 * Every step's failure ends the program with its status and exit code 1.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep, getpid */
#include <skiff/protobuf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "skiff/accounts/v1/accounts.skiff.h"
#include "skiff/chat/v1/chat.skiff.h"
#include "skiff/listings/v1/listings.skiff.h"

/* One logged-in user and the metadata that authenticates their calls. */
typedef struct user {
    char name[64], email[128], user_id[64], bearer[256];
    skiff_metadata_entry authorization;
    skiff_call_options options;
} user;

static int failed(const char *step, skiff_status *status) {
    fprintf(stderr, "%s failed: %s: %s\n", step, skiff_status_name(status->code),
        status->message ? status->message : "");
    skiff_status_clear(status);
    return 0;
}

/* The verification token of the last mail to `name`: the mail's body says "Welcome, <name>!" and,
 * further on, "Verification token: <token>". Polls the log for up to 10 s. */
static int find_token(const char *log_path, const char *name, char *token, size_t capacity) {
    char welcome[96];
    snprintf(welcome, sizeof welcome, "Welcome, %s!", name);
    for (int attempt = 0; attempt < 200; attempt++) {
        FILE *file = fopen(log_path, "rb");
        if (file) {
            /* The log's last MiB: the mail was logged moments ago. */
            static char text[1 << 20];
            if (fseek(file, -(long)(sizeof text - 1), SEEK_END) != 0) rewind(file);
            size_t length = fread(text, 1, sizeof text - 1, file);
            fclose(file);
            text[length] = 0;
            char *mail = NULL;
            for (char *at = strstr(text, welcome); at; at = strstr(at + 1, welcome)) mail = at;
            char *label = mail ? strstr(mail, "Verification token: ") : NULL;
            if (label) {
                label += strlen("Verification token: ");
                size_t n = strcspn(label, " \t\r\n\"\\");
                if (n > 0 && n < capacity) {
                    memcpy(token, label, n);
                    token[n] = 0;
                    return 1;
                }
            }
        }
        nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
    }
    fprintf(stderr, "no verification mail for %s in %s: is the server at --log-level debug?\n", name, log_path);
    return 0;
}

/* Signs up, verifies the address from the mail and logs in. */
static int join(skiff_channel *channel, const char *log_path, user *u, const char *name, const char *run) {
    skiff_status status = {0};
    skiff_call_options plain = {.timeout_ms = 10000};
    snprintf(u->name, sizeof u->name, "%s %s", name, run);
    snprintf(u->email, sizeof u->email, "%s.%s@campus.example.edu", name, run);

    Skiff__Accounts__V1__SignUpRequest sign_up = SKIFF__ACCOUNTS__V1__SIGN_UP_REQUEST__INIT;
    sign_up.email = u->email;
    sign_up.password = "correct horse battery staple";
    sign_up.display_name = u->name;
    Skiff__Accounts__V1__SignUpResponse *signed_up = NULL;
    if (skiff_accounts_v1_accounts_sign_up(channel, &sign_up, &signed_up, &plain, &status)) return failed("SignUp", &status);
    skiff__accounts__v1__sign_up_response__free_unpacked(signed_up, NULL);

    char token[256];
    if (!find_token(log_path, u->name, token, sizeof token)) return 0;
    Skiff__Accounts__V1__VerifyEmailRequest verify = SKIFF__ACCOUNTS__V1__VERIFY_EMAIL_REQUEST__INIT;
    verify.token = token;
    Skiff__Accounts__V1__VerifyEmailResponse *verified = NULL;
    if (skiff_accounts_v1_accounts_verify_email(channel, &verify, &verified, &plain, &status)) {
        return failed("VerifyEmail", &status);
    }
    skiff__accounts__v1__verify_email_response__free_unpacked(verified, NULL);

    Skiff__Accounts__V1__LogInRequest log_in = SKIFF__ACCOUNTS__V1__LOG_IN_REQUEST__INIT;
    log_in.email = u->email;
    log_in.password = sign_up.password;
    Skiff__Accounts__V1__LogInResponse *session = NULL;
    if (skiff_accounts_v1_accounts_log_in(channel, &log_in, &session, &plain, &status)) return failed("LogIn", &status);
    snprintf(u->user_id, sizeof u->user_id, "%s", session->user_id);
    snprintf(u->bearer, sizeof u->bearer, "Bearer %s", session->session_token);
    skiff__accounts__v1__log_in_response__free_unpacked(session, NULL);

    /* Every later call of this user carries `authorization: Bearer <token>`. */
    u->authorization.key = skiff_bytes_of_string("authorization");
    u->authorization.value = skiff_bytes_of_string(u->bearer);
    u->options = (skiff_call_options){.timeout_ms = 10000, .metadata = &u->authorization, .metadata_count = 1};
    printf("%s signed up, verified %s and logged in\n", name, u->email);
    return 1;
}

static int story(skiff_channel *channel, const char *log_path) {
    char run[32];
    snprintf(run, sizeof run, "r%ld%ld", (long)getpid(), (long)time(NULL) % 100000);
    static user alice, bob;
    if (!join(channel, log_path, &alice, "alice", run) || !join(channel, log_path, &bob, "bob", run)) return 0;
    skiff_status status = {0};

    /* Alice follows her feed from its start (after_sequence 0), so nothing sent to her after the
     * subscription began can be missed, however the calls below interleave with it. */
    Skiff__Chat__V1__SubscribeFeedRequest subscribe = SKIFF__CHAT__V1__SUBSCRIBE_FEED_REQUEST__INIT;
    skiff_call_options feed_options = alice.options;
    feed_options.timeout_ms = 30000;
    skiff_call *feed = skiff_chat_v1_chat_subscribe_feed_start(channel, &subscribe, &feed_options);
    if (!feed) return 0;

    Skiff__Listings__V1__Listing listing = SKIFF__LISTINGS__V1__LISTING__INIT;
    char title[96], query[64];
    snprintf(title, sizeof title, "Blue rain jacket %s", run);
    snprintf(query, sizeof query, "jacket %s", run);
    char *tags[] = {"rain", "outdoor"};
    listing.title = title;
    listing.description = "Worn one winter, hood included.";
    listing.price_cents = 2500;
    listing.category = SKIFF__LISTINGS__V1__CATEGORY__CATEGORY_CLOTHING;
    listing.condition = SKIFF__LISTINGS__V1__CONDITION__CONDITION_LIGHTLY_USED;
    listing.size = "M";
    listing.tags = tags;
    listing.n_tags = 2;
    Skiff__Listings__V1__Location pick_up = SKIFF__LISTINGS__V1__LOCATION__INIT;
    pick_up.zip_code = "94305";
    listing.location = &pick_up;
    Skiff__Listings__V1__CreateListingRequest create = SKIFF__LISTINGS__V1__CREATE_LISTING_REQUEST__INIT;
    create.listing = &listing;
    Skiff__Listings__V1__CreateListingResponse *created = NULL;
    int ok = 0;
    char listing_id[128] = "";
    if (skiff_listings_v1_listings_create_listing(channel, &create, &created, &alice.options, &status)) {
        failed("CreateListing", &status);
        goto done;
    }
    snprintf(listing_id, sizeof listing_id, "%s", created->listing->listing_id);
    printf("alice posted \"%s\" for $%.2f\n", created->listing->title, (double)created->listing->price_cents / 100);
    skiff__listings__v1__create_listing_response__free_unpacked(created, NULL);

    Skiff__Listings__V1__SearchListingsRequest search = SKIFF__LISTINGS__V1__SEARCH_LISTINGS_REQUEST__INIT;
    search.query = query;
    Skiff__Listings__V1__SearchListingsResponse *found = NULL;
    if (skiff_listings_v1_listings_search_listings(channel, &search, &found, &bob.options, &status)) {
        failed("SearchListings", &status);
        goto done;
    }
    int seen = found->n_results == 1 && strcmp(found->results[0]->listing->listing_id, listing_id) == 0;
    printf("bob searched \"%s\": %zu result(s)\n", query, found->n_results);
    skiff__listings__v1__search_listings_response__free_unpacked(found, NULL);
    if (!seen) {
        fprintf(stderr, "the search did not find alice's listing (and only it)\n");
        goto done;
    }

    Skiff__Chat__V1__SendMessageRequest send = SKIFF__CHAT__V1__SEND_MESSAGE_REQUEST__INIT;
    send.recipient_id = alice.user_id;
    send.text = "Hi! Is the jacket still available?";
    send.listing_id = listing_id;
    Skiff__Chat__V1__SendMessageResponse *sent = NULL;
    if (skiff_chat_v1_chat_send_message(channel, &send, &sent, &bob.options, &status)) {
        failed("SendMessage", &status);
        goto done;
    }
    skiff__chat__v1__send_message_response__free_unpacked(sent, NULL);
    printf("bob wrote to alice about the listing\n");

    /* Alice's feed: the first message event is Bob's. */
    Skiff__Chat__V1__FeedEvent *event = NULL;
    while (!ok && skiff_chat_v1_chat_subscribe_feed_receive(feed, &event) == 1) {
        if (event->event_case == SKIFF__CHAT__V1__FEED_EVENT__EVENT_MESSAGE) {
            Skiff__Chat__V1__Message *message = event->message;
            ok = strcmp(message->sender_id, bob.user_id) == 0 && strcmp(message->text, send.text) == 0;
            printf("alice's feed, event %lld: a message from %s: \"%s\"\n", (long long)event->sequence,
                strcmp(message->sender_id, bob.user_id) == 0 ? "bob" : message->sender_id, message->text);
        }
        skiff__chat__v1__feed_event__free_unpacked(event, NULL);
    }
done:
    /* A feed runs until the client ends it: cancel, then finish (which frees the call). */
    skiff_call_cancel(feed);
    uint32_t code = skiff_call_finish(feed, &status);
    if (!ok && code != SKIFF_STATUS_CANCELLED) failed("SubscribeFeed", &status);
    skiff_status_clear(&status);
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s HOST PORT SERVER_LOG\n", argv[0]);
        return 2;
    }
    skiff_status status = {0};
    skiff_channel *channel = skiff_channel_connect(argv[1], (uint16_t)atoi(argv[2]), NULL, &status);
    if (!channel) return failed("connect", &status), 1;
    int ok = story(channel, argv[3]);
    skiff_channel_close(channel);
    if (ok) printf("campus story: done\n");
    return ok ? 0 : 1;
}
