/* Shared by the C accelerators: the varints of Kafka's DefaultRecord (ByteUtils.readVarint/readVarlong,
 * zig-zag, Kafka 4.4.0 clients/src/main/java/org/apache/kafka/common/utils/ByteUtils.java), and a walk of
 * one record that builds no Python objects (kdump_raw_record, for the text renderer in render/_v2lines.c).
 * The walk accepts exactly what _v2records.c's read_record accepts; anything else is handed back (-1)
 * to the decoders that word Kafka's errors. */
#ifndef KDUMP_VARINT_H
#define KDUMP_VARINT_H

#include <Python.h>
#include <stdint.h>

#define MAX_VARINT_BYTES 5
#define MAX_VARLONG_BYTES 10

/* Unsigned base-128 varint at *pos; 0 on success, -1 when it is longer than max_bytes or runs off the end. */
static inline int
read_uvarint(const unsigned char *data, Py_ssize_t len, Py_ssize_t *pos, int max_bytes, uint64_t *out)
{
    uint64_t value = 0;
    int shift = 0;
    Py_ssize_t p = *pos;
    for (int n = 1;; n++) {
        if (p >= len)
            return -1;
        unsigned char b = data[p++];
        value |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *pos = p;
            *out = value;
            return 0;
        }
        if (n >= max_bytes)
            return -1;
        shift += 7;
    }
}

/*
 * A zig-zag varint or varlong, wrapped as Kafka's ByteUtils does: a varint keeps the low 32 bits of
 * its (up to 35) bits, a varlong the low 64 of its (up to 70); shifting into a uint64 does the latter.
 */
static inline int
read_zigzag(const unsigned char *data, Py_ssize_t len, Py_ssize_t *pos, int max_bytes, int64_t *out)
{
    uint64_t u;
    Py_ssize_t p = *pos;
    if (p < len && data[p] < 0x80) {  /* the one-byte case, by far the most common */
        u = data[p];
        *pos = p + 1;
    }
    else if (read_uvarint(data, len, pos, max_bytes, &u) < 0) {
        return -1;
    }
    if (max_bytes == MAX_VARINT_BYTES) {
        uint32_t u32 = (uint32_t)u;
        *out = (int32_t)((u32 >> 1) ^ (0u - (u32 & 1)));
    }
    else {
        *out = (int64_t)((u >> 1) ^ (0 - (u & 1)));
    }
    return 0;
}

/* A length-prefixed byte string in place: *n -1 for null (any negative length, as Kafka reads it). */
static inline int
kdump_raw_bytes(const unsigned char *data, Py_ssize_t len, Py_ssize_t *pos, const unsigned char **at,
                Py_ssize_t *n)
{
    int64_t size;
    if (read_zigzag(data, len, pos, MAX_VARINT_BYTES, &size) < 0)
        return -1;
    if (size < 0) {
        *at = NULL;
        *n = -1;
        return 0;
    }
    if (size > len - *pos)
        return -1;
    *at = data + *pos;
    *n = (Py_ssize_t)size;
    *pos += (Py_ssize_t)size;
    return 0;
}

/* One record of a v2 records area, as pointers into it (key_size/value_size -1 for null). */
typedef struct {
    int64_t timestamp_delta;
    int64_t offset_delta;
    const unsigned char *key;
    Py_ssize_t key_size;
    const unsigned char *value;
    Py_ssize_t value_size;
    Py_ssize_t headers_at;      /* where the first header starts */
    int64_t header_count;
} kdump_raw_record;

/* One header at *pos (its key is never null); 0, or -1 when malformed. */
static inline int
kdump_raw_header(const unsigned char *data, Py_ssize_t len, Py_ssize_t *pos, const unsigned char **key,
                 Py_ssize_t *key_size, const unsigned char **value, Py_ssize_t *value_size)
{
    if (kdump_raw_bytes(data, len, pos, key, key_size) < 0 || *key_size < 0)
        return -1;
    return kdump_raw_bytes(data, len, pos, value, value_size);
}

/* The record at *pos, which then moves past it; 0, or -1 when it is not a well-formed record. */
static inline int
kdump_read_raw_record(const unsigned char *data, Py_ssize_t len, Py_ssize_t *pos, kdump_raw_record *r)
{
    int64_t length;
    if (read_zigzag(data, len, pos, MAX_VARINT_BYTES, &length) < 0)
        return -1;
    Py_ssize_t start = *pos;
    if (length < 0 || length > len - start)
        return -1;
    Py_ssize_t end = start + (Py_ssize_t)length;
    *pos += 1;  /* attributes: unused */
    if (read_zigzag(data, len, pos, MAX_VARLONG_BYTES, &r->timestamp_delta) < 0 ||
        read_zigzag(data, len, pos, MAX_VARINT_BYTES, &r->offset_delta) < 0 ||
        kdump_raw_bytes(data, len, pos, &r->key, &r->key_size) < 0 ||
        kdump_raw_bytes(data, len, pos, &r->value, &r->value_size) < 0)
        return -1;
    if (*pos < len && data[*pos] == 0) {
        *pos += 1;
        r->header_count = 0;
    }
    else if (read_zigzag(data, len, pos, MAX_VARINT_BYTES, &r->header_count) < 0 || r->header_count < 0 ||
             r->header_count > len - *pos) {
        return -1;
    }
    r->headers_at = *pos;
    for (int64_t i = 0; i < r->header_count; i++) {
        const unsigned char *key, *value;
        Py_ssize_t key_size, value_size;
        if (kdump_raw_header(data, len, pos, &key, &key_size, &value, &value_size) < 0)
            return -1;
    }
    return *pos == end ? 0 : -1;
}

#endif
