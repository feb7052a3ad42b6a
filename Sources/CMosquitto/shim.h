// libmosquitto's header (apt: libmosquitto-dev), the Eclipse Mosquitto project's MQTT client library. Nothing links
// libmosquitto: CMosquittoLoad loads it when MQTT is configured. BeaconMQTT imports this module `internal`.
#if !__has_include(<mosquitto.h>)
#error "libmosquitto's header is missing: apt install libmosquitto-dev (scripts/setup does)"
#endif
#include <mosquitto.h>
