// Everything is in include/csystem_shims.h (static inline); SwiftPM needs one C file to build the target.
#include "csystem_shims.h"
