// A shared library loaded when it is first needed rather than when beacond starts, for the optional ones (libdbus
// for the BlueZ D-Bus backends, libmosquitto for MQTT): a binary that names a library loads it, and what it needs,
// into every process at start, used or not.
//
// A loader (CDBusLoad, CMosquittoLoad) lists the functions it uses as an X-macro, X(return type, name, (parameters),
// (arguments)) and V(name, (parameters), (arguments)) for the ones that return nothing, and says
// LAZY_LIBRARY(load function, soname, Debian package, list). That defines each function under the library's own
// name with the library header's prototype, which the compiler checks the definition against, calling through a
// pointer looked up by the load function; and the load function, which opens the library once and returns NULL, or
// why not. Nothing calls the library before its load function has succeeded: the Swift layer above makes sure.
//
// LAZY_LIBRARY_NOTE(variable, json) adds the ELF note of the dlopen metadata specification
// (https://systemd.io/ELF_DLOPEN_METADATA/): owner "FDO", type 0x407c0c0a, a JSON array naming the library, what it
// is for and how much it matters, so packagers see the dependency no DT_NEEDED entry shows. `used` keeps it through
// the linker's garbage collection of unreferenced sections.
#pragma once

#include <pthread.h>
#include <stddef.h>

/// Opens `soname` (RTLD_NOW | RTLD_LOCAL) and looks up each of `names` into `slots`. NULL when all are there, else
/// why not, written into `failure` (naming `package` to install).
const char *lazy_library_open(const char *soname, const char *package, const char *const names[], void *slots[],
                              size_t count, char *failure, size_t failure_size);

#define LAZY_LIBRARY_NAME_(ret, name, params, args) #name,
#define LAZY_LIBRARY_VNAME_(name, params, args) #name,
#define LAZY_LIBRARY_INDEX_(ret, name, params, args) lazy_index_##name,
#define LAZY_LIBRARY_VINDEX_(name, params, args) lazy_index_##name,
#define LAZY_LIBRARY_DEFINE_(ret, name, params, args) \
    ret name params { return ((ret(*) params)lazy_slots[lazy_index_##name])args; }
#define LAZY_LIBRARY_VDEFINE_(name, params, args) \
    void name params { ((void(*) params)lazy_slots[lazy_index_##name])args; }

#define LAZY_LIBRARY(load_function, soname, package, FUNCTIONS) \
    static const char *const lazy_names[] = {FUNCTIONS(LAZY_LIBRARY_NAME_, LAZY_LIBRARY_VNAME_)}; \
    enum { FUNCTIONS(LAZY_LIBRARY_INDEX_, LAZY_LIBRARY_VINDEX_) lazy_count }; \
    static void *lazy_slots[lazy_count]; \
    static pthread_once_t lazy_once = PTHREAD_ONCE_INIT; \
    static const char *lazy_failure; \
    static char lazy_failure_text[256]; \
    static void lazy_load(void) { \
        lazy_failure = lazy_library_open(soname, package, lazy_names, lazy_slots, lazy_count, lazy_failure_text, \
                                         sizeof lazy_failure_text); \
    } \
    const char *load_function(void) { \
        pthread_once(&lazy_once, lazy_load); \
        return lazy_failure; \
    } \
    FUNCTIONS(LAZY_LIBRARY_DEFINE_, LAZY_LIBRARY_VDEFINE_)

#define LAZY_LIBRARY_NOTE(variable, json) \
    __attribute__((used, section(".note.dlopen"), aligned(4))) static const struct { \
        unsigned int name_size, description_size, type; \
        char name[4]; \
        _Alignas(4) char description[sizeof(json)]; \
    } variable = {sizeof "FDO", sizeof(json), 0x407c0c0a, "FDO", json}
