// libdbus's headers (apt: libdbus-1-dev), the reference D-Bus library BlueZ's own tools use. Nothing links libdbus:
// CDBusLoad loads it when D-Bus is first used. BeaconDBus imports this module `internal`, so no C type leaks out.
#if !__has_include(<dbus/dbus.h>)
#error "libdbus's headers are missing: apt install libdbus-1-dev (scripts/setup does)"
#endif
#include <dbus/dbus.h>
