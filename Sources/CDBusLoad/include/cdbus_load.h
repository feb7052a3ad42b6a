// libdbus, loaded when beacond first uses D-Bus rather than when it starts (see dbus_load.c).
#pragma once

/// Loads libdbus-1.so.3 and every function beacond uses from it, once. NULL when they are all there, else why not.
const char *beacond_dbus_load(void);
