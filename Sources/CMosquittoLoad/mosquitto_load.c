// beacond's MQTT calls go through these definitions, which call libmosquitto through pointers looked up when MQTT is
// first used (CLazyLibrary): a station without MQTT configured never loads it, nor the TLS library it needs.
//
// BeaconMQTT calls beacond_mosquitto_load, which reports a failure as an error, before anything else, and every other
// call starts from a client that only a successful load could have made.
#include "cmosquitto_load.h"

#include <lazy_library.h>
#include <mosquitto.h>

// (return type, name, parameters, arguments) of each function beacond calls; V for the ones that return nothing.
#define MOSQUITTO_FUNCTIONS(X, V) \
    X(int, mosquitto_lib_init, (void), ()) \
    X(struct mosquitto *, mosquitto_new, (const char *id, bool clean_session, void *obj), (id, clean_session, obj)) \
    V(mosquitto_destroy, (struct mosquitto *m), (m)) \
    V(mosquitto_user_data_set, (struct mosquitto *m, void *obj), (m, obj)) \
    X(int, mosquitto_int_option, (struct mosquitto *m, enum mosq_opt_t option, int value), (m, option, value)) \
    X(int, mosquitto_username_pw_set, (struct mosquitto *m, const char *username, const char *password), \
      (m, username, password)) \
    X(int, mosquitto_will_set, \
      (struct mosquitto *m, const char *topic, int length, const void *payload, int qos, bool retain), \
      (m, topic, length, payload, qos, retain)) \
    X(int, mosquitto_tls_set, \
      (struct mosquitto *m, const char *cafile, const char *capath, const char *certfile, const char *keyfile, \
       int (*pw_callback)(char *buf, int size, int rwflag, void *userdata)), \
      (m, cafile, capath, certfile, keyfile, pw_callback)) \
    X(int, mosquitto_reconnect_delay_set, \
      (struct mosquitto *m, unsigned int delay, unsigned int delay_max, bool exponential), \
      (m, delay, delay_max, exponential)) \
    X(int, mosquitto_connect_async, (struct mosquitto *m, const char *host, int port, int keepalive), \
      (m, host, port, keepalive)) \
    X(int, mosquitto_threaded_set, (struct mosquitto *m, bool threaded), (m, threaded)) \
    X(int, mosquitto_loop, (struct mosquitto *m, int timeout, int max_packets), (m, timeout, max_packets)) \
    X(int, mosquitto_reconnect, (struct mosquitto *m), (m)) \
    X(int, mosquitto_disconnect, (struct mosquitto *m), (m)) \
    X(int, mosquitto_publish, \
      (struct mosquitto *m, int *mid, const char *topic, int length, const void *payload, int qos, bool retain), \
      (m, mid, topic, length, payload, qos, retain)) \
    X(int, mosquitto_subscribe, (struct mosquitto *m, int *mid, const char *pattern, int qos), (m, mid, pattern, qos)) \
    V(mosquitto_connect_callback_set, (struct mosquitto *m, void (*callback)(struct mosquitto *, void *, int)), \
      (m, callback)) \
    V(mosquitto_disconnect_callback_set, (struct mosquitto *m, void (*callback)(struct mosquitto *, void *, int)), \
      (m, callback)) \
    V(mosquitto_publish_callback_set, (struct mosquitto *m, void (*callback)(struct mosquitto *, void *, int)), \
      (m, callback)) \
    V(mosquitto_message_callback_set, \
      (struct mosquitto *m, void (*callback)(struct mosquitto *, void *, const struct mosquitto_message *)), \
      (m, callback)) \
    X(const char *, mosquitto_strerror, (int code), (code)) \
    X(const char *, mosquitto_connack_string, (int code), (code))

LAZY_LIBRARY(beacond_mosquitto_load, "libmosquitto.so.1", "libmosquitto1", MOSQUITTO_FUNCTIONS)

LAZY_LIBRARY_NOTE(dlopen_note,
                  "[{\"feature\":\"mqtt\","
                  "\"description\":\"sightings and health to an MQTT broker and Home Assistant (mqtt = ...)\","
                  "\"priority\":\"suggested\",\"soname\":[\"libmosquitto.so.1\"]}]");
