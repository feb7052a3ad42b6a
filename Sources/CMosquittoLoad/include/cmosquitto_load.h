// libmosquitto, loaded when MQTT is configured rather than when beacond starts (see mosquitto_load.c).
#pragma once

/// Loads libmosquitto.so.1 and every function beacond uses from it, once. NULL when they are all there, else why not.
const char *beacond_mosquitto_load(void);
