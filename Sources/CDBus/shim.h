// libdbus (apt: libdbus-1-dev), the reference D-Bus library BlueZ's own tools use.
// BeaconDBus imports this module `internal`, so no C type leaks out of it.
#include <dbus/dbus.h>
