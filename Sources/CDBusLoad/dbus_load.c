// beacond's D-Bus calls go through these definitions, which call libdbus through pointers looked up when D-Bus is
// first used (CLazyLibrary).
//
// Why: only the BlueZ D-Bus backends talk to D-Bus, and a binary that names libdbus loads it, and with it
// libsystemd and the compression and crypto libraries libsystemd needs, into every process at start: 0.8 MiB
// resident in a daemon that replays a capture or reads the HCI socket and never calls one of them (docs/performance-history.md,
// "RSS: what it took"). So no binary names it: CDBus has libdbus's headers and no library to link, and the
// .note.dlopen below tells packagers which library is loaded this way, as systemd's own optional libraries are.
//
// BeaconDBus calls beacond_dbus_load, which reports a failure as an error, before anything else, and every other
// call starts from a connection or a message that only a successful load could have made.
#include "cdbus_load.h"

#include <dbus/dbus.h>
#include <lazy_library.h>

// (return type, name, parameters, arguments) of each function beacond calls; V for the ones that return nothing.
#define DBUS_FUNCTIONS(X, V) \
    V(dbus_bus_add_match, (DBusConnection *c, const char *rule, DBusError *e), (c, rule, e)) \
    X(DBusConnection *, dbus_bus_get_private, (DBusBusType type, DBusError *e), (type, e)) \
    X(const char *, dbus_bus_get_unique_name, (DBusConnection *c), (c)) \
    X(dbus_bool_t, dbus_bus_register, (DBusConnection *c, DBusError *e), (c, e)) \
    X(int, dbus_bus_request_name, (DBusConnection *c, const char *name, unsigned int flags, DBusError *e), (c, name, flags, e)) \
    V(dbus_connection_close, (DBusConnection *c), (c)) \
    V(dbus_connection_flush, (DBusConnection *c), (c)) \
    X(dbus_bool_t, dbus_connection_get_is_connected, (DBusConnection *c), (c)) \
    X(dbus_bool_t, dbus_connection_get_unix_fd, (DBusConnection *c, int *fd), (c, fd)) \
    X(DBusConnection *, dbus_connection_open_private, (const char *address, DBusError *e), (address, e)) \
    X(DBusMessage *, dbus_connection_pop_message, (DBusConnection *c), (c)) \
    X(dbus_bool_t, dbus_connection_read_write, (DBusConnection *c, int timeout), (c, timeout)) \
    X(dbus_bool_t, dbus_connection_send, (DBusConnection *c, DBusMessage *m, dbus_uint32_t *serial), (c, m, serial)) \
    V(dbus_connection_set_exit_on_disconnect, (DBusConnection *c, dbus_bool_t exit), (c, exit)) \
    V(dbus_connection_unref, (DBusConnection *c), (c)) \
    V(dbus_error_free, (DBusError *e), (e)) \
    V(dbus_error_init, (DBusError *e), (e)) \
    X(dbus_bool_t, dbus_error_is_set, (const DBusError *e), (e)) \
    V(dbus_free, (void *memory), (memory)) \
    X(const char *, dbus_message_get_error_name, (DBusMessage *m), (m)) \
    X(const char *, dbus_message_get_interface, (DBusMessage *m), (m)) \
    X(const char *, dbus_message_get_member, (DBusMessage *m), (m)) \
    X(const char *, dbus_message_get_path, (DBusMessage *m), (m)) \
    X(dbus_uint32_t, dbus_message_get_reply_serial, (DBusMessage *m), (m)) \
    X(const char *, dbus_message_get_sender, (DBusMessage *m), (m)) \
    X(dbus_uint32_t, dbus_message_get_serial, (DBusMessage *m), (m)) \
    X(int, dbus_message_get_type, (DBusMessage *m), (m)) \
    X(dbus_bool_t, dbus_message_iter_append_basic, (DBusMessageIter *i, int type, const void *value), (i, type, value)) \
    X(dbus_bool_t, dbus_message_iter_close_container, (DBusMessageIter *i, DBusMessageIter *sub), (i, sub)) \
    X(int, dbus_message_iter_get_arg_type, (DBusMessageIter *i), (i)) \
    V(dbus_message_iter_get_basic, (DBusMessageIter *i, void *value), (i, value)) \
    X(char *, dbus_message_iter_get_signature, (DBusMessageIter *i), (i)) \
    X(dbus_bool_t, dbus_message_iter_init, (DBusMessage *m, DBusMessageIter *i), (m, i)) \
    V(dbus_message_iter_init_append, (DBusMessage *m, DBusMessageIter *i), (m, i)) \
    X(dbus_bool_t, dbus_message_iter_next, (DBusMessageIter *i), (i)) \
    X(dbus_bool_t, dbus_message_iter_open_container, (DBusMessageIter *i, int type, const char *signature, DBusMessageIter *sub), (i, type, signature, sub)) \
    V(dbus_message_iter_recurse, (DBusMessageIter *i, DBusMessageIter *sub), (i, sub)) \
    X(DBusMessage *, dbus_message_new_error, (DBusMessage *reply_to, const char *name, const char *text), (reply_to, name, text)) \
    X(DBusMessage *, dbus_message_new_method_call, (const char *destination, const char *path, const char *interface, const char *method), (destination, path, interface, method)) \
    X(DBusMessage *, dbus_message_new_method_return, (DBusMessage *call), (call)) \
    X(DBusMessage *, dbus_message_new_signal, (const char *path, const char *interface, const char *name), (path, interface, name)) \
    V(dbus_message_unref, (DBusMessage *m), (m))

LAZY_LIBRARY(beacond_dbus_load, "libdbus-1.so.3", "libdbus-1-3", DBUS_FUNCTIONS)

LAZY_LIBRARY_NOTE(dlopen_note,
                  "[{\"feature\":\"bluez-dbus\","
                  "\"description\":\"BlueZ's D-Bus API, for the monitor (default) and dbus capture backends\","
                  "\"priority\":\"recommended\",\"soname\":[\"libdbus-1.so.3\"]}]");
