// See lazy_library.h.
#include "lazy_library.h"

#include <dlfcn.h>
#include <stdio.h>

const char *lazy_library_open(const char *soname, const char *package, const char *const names[], void *slots[],
                              size_t count, char *failure, size_t failure_size) {
    // RTLD_LOCAL: nothing else in the process should bind to it by accident.
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(failure, failure_size, "cannot load %s (apt: %s): %s", soname, package, why ? why : "unknown error");
        return failure;
    }
    for (size_t index = 0; index < count; index++) {
        if ((slots[index] = dlsym(library, names[index])) == NULL) {
            snprintf(failure, failure_size, "%s has no %s", soname, names[index]);
            return failure;
        }
    }
    return NULL;
}
