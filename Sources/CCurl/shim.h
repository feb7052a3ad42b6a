// libcurl's easy interface (apt: libcurl4-openssl-dev), for bike-registry's mail: SMTP with STARTTLS or implicit TLS,
// AUTH, and the relay's certificate verified. BikeRegistryMail imports this module `internal`, so no C type leaks.
#include <curl/curl.h>
#include <string.h>

// curl_easy_setopt and curl_easy_getinfo are variadic: Swift can call neither, so each type of value has its own.
static inline CURLcode beacond_curl_set_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode beacond_curl_set_string(CURL *curl, CURLoption option, const char *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode beacond_curl_set_list(CURL *curl, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode beacond_curl_set_buffer(CURL *curl, CURLoption option, char *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline long beacond_curl_response_code(CURL *curl) {
    long code = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
    return code;
}

// The message curl uploads as the DATA of one transaction, read from memory.
struct beacond_curl_upload {
    const char *bytes;
    size_t length;
    size_t offset;
};

static size_t beacond_curl_read_upload(char *buffer, size_t size, size_t count, void *context) {
    struct beacond_curl_upload *upload = context;
    size_t room = size * count, left = upload->length - upload->offset;
    size_t n = left < room ? left : room;
    memcpy(buffer, upload->bytes + upload->offset, n);
    upload->offset += n;
    return n;
}

static inline CURLcode beacond_curl_set_upload(CURL *curl, struct beacond_curl_upload *upload) {
    CURLcode code = curl_easy_setopt(curl, CURLOPT_READFUNCTION, beacond_curl_read_upload);
    if (code == CURLE_OK) code = curl_easy_setopt(curl, CURLOPT_READDATA, upload);
    if (code == CURLE_OK) code = curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    if (code == CURLE_OK) code = curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)upload->length);
    return code;
}
