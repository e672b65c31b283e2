/*
 * Optional accelerator for the hot loop of deep iteration: decoding the DefaultRecords of one
 * v2 batch's (decompressed) records area into kdump's Record tuples.
 *
 * It is a strict subset of the pure-Python decoder in records.py (decode_v2_record_area): for any
 * input it either returns exactly what that decoder returns, or returns None, and the caller then
 * runs the Python decoder, which produces Kafka's error messages. So every error text lives in one
 * place, and this file only has to be right about well-formed records.
 *
 * Compressed batches arrive as a stream of decompressed chunks: then ``data`` is a window over it,
 * decoding starts at ``start`` and stops before a record the window does not hold whole (``final``
 * false), and the caller carries that record over into the next window.
 *
 * Why C: the pure-Python loop spends ~1.1 us a record in the interpreter, and deep decoding is
 * meant to run at 5x kafka-python (benchmarks/bench_dump.py). setup.py builds it as an optional extension; without a
 * compiler, or with KDUMP_PURE_PYTHON=1, kdump runs the Python decoder.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "_sequence.h"
#include "_varint.h"

#define RECORD_FIELDS 8
/* length, attributes, timestampDelta, offsetDelta, keyLength, valueLength, headersCount: 1 byte each at least */
#define MIN_RECORD_BYTES 7

/* key, value or header value: a length-prefixed byte string; -1 means null. Sets *out (new ref) or fails. */
static inline int
read_nullable_bytes(const unsigned char *data, Py_ssize_t len, Py_ssize_t *pos, PyObject **out)
{
    int64_t n;
    if (read_zigzag(data, len, pos, MAX_VARINT_BYTES, &n) < 0)
        return -1;
    if (n < 0) {  /* the Python decoder (and Kafka) read any negative length as null */
        Py_INCREF(Py_None);
        *out = Py_None;
        return 0;
    }
    if (n > len - *pos)
        return -1;
    *out = PyBytes_FromStringAndSize((const char *)data + *pos, (Py_ssize_t)n);
    if (*out == NULL)
        return -2;
    *pos += (Py_ssize_t)n;
    return 0;
}

/* The headers after headersCount; -1 to hand the record to Python, -2 on a Python error. */
static int
read_headers(const unsigned char *data, Py_ssize_t len, Py_ssize_t *pos, int64_t count, PyObject **out)
{
    if (count < 0 || count > len - *pos)
        return -1;
    PyObject *headers = PyTuple_New((Py_ssize_t)count);
    if (headers == NULL)
        return -2;
    for (Py_ssize_t i = 0; i < (Py_ssize_t)count; i++) {
        int64_t n;
        if (read_zigzag(data, len, pos, MAX_VARINT_BYTES, &n) < 0 || n < 0 || n > len - *pos) {
            Py_DECREF(headers);
            return -1;
        }
        PyObject *key = PyBytes_FromStringAndSize((const char *)data + *pos, (Py_ssize_t)n);
        if (key == NULL) {
            Py_DECREF(headers);
            return -2;
        }
        *pos += (Py_ssize_t)n;
        PyObject *value;
        int status = read_nullable_bytes(data, len, pos, &value);
        if (status < 0) {
            Py_DECREF(key);
            Py_DECREF(headers);
            return status;
        }
        PyObject *pair = PyTuple_Pack(2, key, value);
        Py_DECREF(key);
        Py_DECREF(value);
        if (pair == NULL) {
            Py_DECREF(headers);
            return -2;
        }
        PyTuple_SET_ITEM(headers, i, pair);
    }
    *out = headers;
    return 0;
}

/* One record at *pos into a new Record; -1 to hand the batch to Python, -2 on a Python error. */
static int
read_record(const unsigned char *data, Py_ssize_t len, Py_ssize_t *pos, PyTypeObject *record_type,
            int64_t base_offset, int64_t base_ts, int has_log_append_ts, int64_t log_append_ts,
            int64_t base_seq, PyObject **out)
{
    int64_t length, ts_delta, offset_delta, header_count;
    PyObject *key = NULL, *value = NULL, *headers = NULL;
    int status = -1;

    if (read_zigzag(data, len, pos, MAX_VARINT_BYTES, &length) < 0)
        return -1;
    Py_ssize_t start = *pos;
    if (length < 0 || length > len - start)
        return -1;
    Py_ssize_t end = start + (Py_ssize_t)length;
    *pos += 1;  /* attributes: unused */
    if (read_zigzag(data, len, pos, MAX_VARLONG_BYTES, &ts_delta) < 0 ||
        read_zigzag(data, len, pos, MAX_VARINT_BYTES, &offset_delta) < 0)
        return -1;
    if ((status = read_nullable_bytes(data, len, pos, &key)) < 0)
        return status;
    if ((status = read_nullable_bytes(data, len, pos, &value)) < 0)
        goto fail;
    status = -1;
    if (*pos < len && data[*pos] == 0) {
        *pos += 1;
        headers = PyTuple_New(0);
        if (headers == NULL) {
            status = -2;
            goto fail;
        }
    }
    else {
        if (read_zigzag(data, len, pos, MAX_VARINT_BYTES, &header_count) < 0)
            goto fail;
        if ((status = read_headers(data, len, pos, header_count, &headers)) < 0)
            goto fail;
        status = -1;
    }
    if (*pos != end)
        goto fail;

    /* Java long arithmetic wraps. */
    int64_t offset = (int64_t)((uint64_t)base_offset + (uint64_t)offset_delta);
    int64_t timestamp = has_log_append_ts ? log_append_ts : (int64_t)((uint64_t)base_ts + (uint64_t)ts_delta);
    int64_t sequence = base_seq < 0 ? -1 : kdump_increment_sequence(base_seq, offset_delta);

    status = -2;
    /* What tuple.__new__(Record, ...) does (CPython's tuple_subtype_new), without building a tuple first. */
    PyObject *record = record_type->tp_alloc(record_type, RECORD_FIELDS);
    if (record == NULL)
        goto fail;
    PyObject *fields[3] = {PyLong_FromLongLong(offset), PyLong_FromLongLong(timestamp),
                           PyLong_FromLongLong(sequence)};
    for (int i = 0; i < 3; i++) {
        if (fields[i] == NULL) {
            for (int j = 0; j < 3; j++)
                Py_XDECREF(fields[j]);
            Py_DECREF(record);
            goto fail;
        }
    }
    PyTuple_SET_ITEM(record, 0, fields[0]);
    PyTuple_SET_ITEM(record, 1, fields[1]);
    PyTuple_SET_ITEM(record, 2, key);
    PyTuple_SET_ITEM(record, 3, value);
    PyTuple_SET_ITEM(record, 4, headers);
    PyTuple_SET_ITEM(record, 5, fields[2]);
    Py_INCREF(Py_None);
    PyTuple_SET_ITEM(record, 6, Py_None);
    Py_INCREF(Py_None);
    PyTuple_SET_ITEM(record, 7, Py_None);
    *out = record;
    return 0;

fail:
    Py_XDECREF(key);
    Py_XDECREF(value);
    Py_XDECREF(headers);
    return status;
}

/* True if data[pos:] holds the record's length field and all the bytes it announces. A length field
 * that is too long or negative counts as whole: decoding it fails, and Python words the error. */
static int
record_is_whole(const unsigned char *data, Py_ssize_t len, Py_ssize_t pos)
{
    uint64_t u = 0;
    for (int i = 0; i < MAX_VARINT_BYTES; i++) {
        if (pos + i >= len)
            return 0;
        unsigned char b = data[pos + i];
        u |= (uint64_t)(b & 0x7F) << (7 * i);
        if (b < 0x80) {
            uint32_t u32 = (uint32_t)u;
            int64_t length = (int32_t)((u32 >> 1) ^ (0u - (u32 & 1)));
            return length < 0 || length <= len - (pos + i + 1);
        }
    }
    return 1;
}

PyDoc_STRVAR(decode_doc,
"decode(data, count, base_offset, base_timestamp, log_append_time, base_sequence, record_type, start=0, final=True)\n"
"--\n\n"
"Up to ``count`` records of a v2 records area from byte ``start``, as a list of ``record_type`` tuples,\n"
"and the position after the last one; None when the records are not well formed (decode them in\n"
"Python for the error). With ``final`` false, ``data`` is a window over a stream: decoding stops\n"
"before a record the window does not hold whole.\n"
"``log_append_time`` is the batch's max timestamp under LogAppendTime, else None.");

static PyObject *
decode(PyObject *module, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t count, start = 0;
    long long base_offset, base_ts, base_seq;
    PyObject *log_append_obj;
    PyTypeObject *record_type;
    int final = 1;

    if (!PyArg_ParseTuple(args, "y*nLLOLO!|np:decode", &view, &count, &base_offset, &base_ts, &log_append_obj,
                          &base_seq, &PyType_Type, &record_type, &start, &final))
        return NULL;
    PyObject *result = NULL;
    if (!PyType_IsSubtype(record_type, &PyTuple_Type) || record_type->tp_itemsize != sizeof(PyObject *)) {
        PyErr_SetString(PyExc_TypeError, "record_type must be a tuple subclass");
        goto done;
    }
    int has_log_append_ts = log_append_obj != Py_None;
    long long log_append_ts = 0;
    if (has_log_append_ts) {
        log_append_ts = PyLong_AsLongLong(log_append_obj);
        if (log_append_ts == -1 && PyErr_Occurred())
            goto done;
    }
    const unsigned char *data = (const unsigned char *)view.buf;
    Py_ssize_t len = view.len;
    if (start < 0 || start > len || count < 0) {
        Py_INCREF(Py_None);
        result = Py_None;
        goto done;
    }
    Py_ssize_t fits = (len - start) / MIN_RECORD_BYTES;
    if (count > fits) {
        if (final) {  /* cannot fit: Python reports why */
            Py_INCREF(Py_None);
            result = Py_None;
            goto done;
        }
        count = fits + 1;  /* a window: at most this many could be whole in it */
    }
    PyObject *records = PyList_New(count);
    if (records == NULL)
        goto done;
    Py_ssize_t pos = start;
    Py_ssize_t i = 0;
    for (; i < count; i++) {
        if (!final && !record_is_whole(data, len, pos))
            break;
        PyObject *record;
        int status = read_record(data, len, &pos, record_type, base_offset, base_ts, has_log_append_ts,
                                 log_append_ts, base_seq, &record);
        if (status < 0) {
            Py_DECREF(records);  /* slots not yet filled are NULL, which list_dealloc skips */
            if (status == -1) {
                Py_INCREF(Py_None);
                result = Py_None;
            }
            goto done;
        }
        PyList_SET_ITEM(records, i, record);
    }
    if (i < count) {  /* stopped at the window's end: keep the filled slots only */
        PyObject *whole = PyList_GetSlice(records, 0, i);
        Py_DECREF(records);
        if (whole == NULL)
            goto done;
        records = whole;
    }
    result = Py_BuildValue("(Nn)", records, pos);

done:
    PyBuffer_Release(&view);
    return result;
}

/* ---- columns: the same records written straight into Arrow-style column buffers ---------------- */

/*
 * Buffers of ``columns``, in this order: fixed-width little-endian arrays, and byte strings as a
 * length (int32, -1 for null) per value plus the bytes of the non-null ones back to back.
 */
enum {
    COL_OFFSET,          /* int64 per record */
    COL_TIMESTAMP,       /* int64 */
    COL_SEQUENCE,        /* int32 */
    COL_KEY_LENGTH,      /* int32, -1 null */
    COL_KEY_DATA,
    COL_VALUE_LENGTH,    /* int32, -1 null */
    COL_VALUE_DATA,
    COL_HEADER_COUNT,    /* int32 per record */
    COL_HEADER_KEY_LENGTH,
    COL_HEADER_KEY_DATA,
    COL_HEADER_VALUE_LENGTH,
    COL_HEADER_VALUE_DATA,
    COLUMN_BUFFERS
};

/* Grow ``ba`` by n bytes and return where they start (NULL with a Python error set). */
static inline char *
grow(PyObject *ba, Py_ssize_t n)
{
    Py_ssize_t old = PyByteArray_GET_SIZE(ba);
    if (PyByteArray_Resize(ba, old + n) < 0)
        return NULL;
    return PyByteArray_AS_STRING(ba) + old;
}

static inline int
put_i32(PyObject *ba, int32_t v)
{
    char *p = grow(ba, 4);
    if (p == NULL)
        return -2;
    memcpy(p, &v, 4);
    return 0;
}

/* A length-prefixed byte string into a length buffer and a data buffer; -1 malformed, -2 error. */
static inline int
put_bytes(const unsigned char *data, Py_ssize_t len, Py_ssize_t *pos, PyObject *lengths, PyObject *bytes,
          int nullable)
{
    int64_t n;
    if (read_zigzag(data, len, pos, MAX_VARINT_BYTES, &n) < 0)
        return -1;
    if (n < 0) {
        if (!nullable)
            return -1;
        return put_i32(lengths, -1);
    }
    if (n > len - *pos)
        return -1;
    if (put_i32(lengths, (int32_t)n) < 0)
        return -2;
    if (n > 0) {
        char *p = grow(bytes, (Py_ssize_t)n);
        if (p == NULL)
            return -2;
        memcpy(p, data + *pos, (size_t)n);
    }
    *pos += (Py_ssize_t)n;
    return 0;
}

PyDoc_STRVAR(columns_doc,
"columns(data, count, base_offset, base_timestamp, log_append_time, base_sequence, buffers)\n"
"--\n\n"
"The ``count`` records of a whole v2 records area appended to the 12 bytearrays of ``buffers``\n"
"(offset, timestamp, sequence, key lengths and bytes, value lengths and bytes, header counts, header\n"
"key lengths and bytes, header value lengths and bytes). Returns the number of records, or None\n"
"when the area is not exactly ``count`` well-formed records: then the buffers are as they were and\n"
"``decode`` (or the Python decoder, for the error) reads the batch. Values are those ``decode``\n"
"returns, in native byte order (little-endian on the platforms Arrow runs on).");

static PyObject *
columns(PyObject *module, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t count;
    long long base_offset, base_ts, base_seq;
    PyObject *log_append_obj, *buffers;
    PyObject *cols[COLUMN_BUFFERS];
    Py_ssize_t before[COLUMN_BUFFERS];

    if (!PyArg_ParseTuple(args, "y*nLLOLO!:columns", &view, &count, &base_offset, &base_ts, &log_append_obj,
                          &base_seq, &PyTuple_Type, &buffers))
        return NULL;
    PyObject *result = NULL;
    if (PyTuple_GET_SIZE(buffers) != COLUMN_BUFFERS) {
        PyErr_SetString(PyExc_TypeError, "buffers must be a tuple of 12 bytearrays");
        goto done;
    }
    for (int c = 0; c < COLUMN_BUFFERS; c++) {
        cols[c] = PyTuple_GET_ITEM(buffers, c);
        if (!PyByteArray_CheckExact(cols[c])) {
            PyErr_SetString(PyExc_TypeError, "buffers must be a tuple of 12 bytearrays");
            goto done;
        }
        before[c] = PyByteArray_GET_SIZE(cols[c]);
    }
    int has_log_append_ts = log_append_obj != Py_None;
    long long log_append_ts = 0;
    if (has_log_append_ts) {
        log_append_ts = PyLong_AsLongLong(log_append_obj);
        if (log_append_ts == -1 && PyErr_Occurred())
            goto done;
    }
    const unsigned char *data = (const unsigned char *)view.buf;
    Py_ssize_t len = view.len;
    int status = -1;
    if (count < 0 || count > len / MIN_RECORD_BYTES)
        goto rollback;
    /* Fixed-width columns: room for every record up front. */
    char *offsets = grow(cols[COL_OFFSET], count * 8);
    char *timestamps = offsets == NULL ? NULL : grow(cols[COL_TIMESTAMP], count * 8);
    char *sequences = timestamps == NULL ? NULL : grow(cols[COL_SEQUENCE], count * 4);
    char *header_counts = sequences == NULL ? NULL : grow(cols[COL_HEADER_COUNT], count * 4);
    if (header_counts == NULL) {
        status = -2;
        goto rollback;
    }
    Py_ssize_t pos = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t length, ts_delta, offset_delta, header_count;
        if (read_zigzag(data, len, &pos, MAX_VARINT_BYTES, &length) < 0 || length < 0 || length > len - pos)
            goto rollback;
        Py_ssize_t end = pos + (Py_ssize_t)length;
        pos += 1;  /* attributes: unused */
        if (read_zigzag(data, len, &pos, MAX_VARLONG_BYTES, &ts_delta) < 0 ||
            read_zigzag(data, len, &pos, MAX_VARINT_BYTES, &offset_delta) < 0)
            goto rollback;
        if ((status = put_bytes(data, len, &pos, cols[COL_KEY_LENGTH], cols[COL_KEY_DATA], 1)) < 0 ||
            (status = put_bytes(data, len, &pos, cols[COL_VALUE_LENGTH], cols[COL_VALUE_DATA], 1)) < 0)
            goto rollback;
        status = -1;
        if (read_zigzag(data, len, &pos, MAX_VARINT_BYTES, &header_count) < 0 || header_count < 0 ||
            header_count > len - pos)
            goto rollback;
        for (int64_t h = 0; h < header_count; h++) {
            if ((status = put_bytes(data, len, &pos, cols[COL_HEADER_KEY_LENGTH], cols[COL_HEADER_KEY_DATA], 0)) < 0 ||
                (status = put_bytes(data, len, &pos, cols[COL_HEADER_VALUE_LENGTH],
                                    cols[COL_HEADER_VALUE_DATA], 1)) < 0)
                goto rollback;
        }
        status = -1;
        if (pos != end)
            goto rollback;
        /* Java long arithmetic wraps, as in read_record. */
        int64_t offset = (int64_t)((uint64_t)base_offset + (uint64_t)offset_delta);
        int64_t timestamp = has_log_append_ts ? log_append_ts : (int64_t)((uint64_t)base_ts + (uint64_t)ts_delta);
        int32_t sequence = base_seq < 0 ? -1 : (int32_t)kdump_increment_sequence(base_seq, offset_delta);
        int32_t headers = (int32_t)header_count;
        /* The fixed-width buffers may have moved: data buffers are other objects, these were grown once. */
        memcpy(PyByteArray_AS_STRING(cols[COL_OFFSET]) + before[COL_OFFSET] + i * 8, &offset, 8);
        memcpy(PyByteArray_AS_STRING(cols[COL_TIMESTAMP]) + before[COL_TIMESTAMP] + i * 8, &timestamp, 8);
        memcpy(PyByteArray_AS_STRING(cols[COL_SEQUENCE]) + before[COL_SEQUENCE] + i * 4, &sequence, 4);
        memcpy(PyByteArray_AS_STRING(cols[COL_HEADER_COUNT]) + before[COL_HEADER_COUNT] + i * 4, &headers, 4);
    }
    if (pos != len)
        goto rollback;
    result = PyLong_FromSsize_t(count);
    goto done;

rollback:
    for (int c = 0; c < COLUMN_BUFFERS; c++) {
        if (PyByteArray_GET_SIZE(cols[c]) != before[c] && PyByteArray_Resize(cols[c], before[c]) < 0)
            status = -2;
    }
    if (status != -2) {
        Py_INCREF(Py_None);
        result = Py_None;
    }

done:
    PyBuffer_Release(&view);
    return result;
}

/* ---- scan: the framing walk of a shallow read, v2 batches only --------------------------------- */

static inline int64_t
be64(const unsigned char *p)
{
    return (int64_t)(((uint64_t)p[0] << 56) | ((uint64_t)p[1] << 48) | ((uint64_t)p[2] << 40) | ((uint64_t)p[3] << 32) |
                     ((uint64_t)p[4] << 24) | ((uint64_t)p[5] << 16) | ((uint64_t)p[6] << 8) | (uint64_t)p[7]);
}

static inline uint32_t
be32u(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

#define LOG_OVERHEAD 12
#define HEADER_SIZE_UP_TO_MAGIC 17
#define MIN_RECORD_OVERHEAD 14
#define V2_HEADER_SIZE 61
#define V2_ATTRIBUTES_OFFSET 21
#define BATCH_FIELDS 15

/* Whether the v2 batch of ``total`` bytes at ``data`` has the CRC it stores: 1, 0, or -1 on an error. */
static int
crc_matches(PyObject *crc, const unsigned char *data, Py_ssize_t total, uint32_t stored)
{
    if (total < V2_HEADER_SIZE)
        return 0;
    PyObject *covered = PyMemoryView_FromMemory((char *)data + V2_ATTRIBUTES_OFFSET, total - V2_ATTRIBUTES_OFFSET,
                                                PyBUF_READ);
    if (covered == NULL)
        return -1;
    PyObject *value = PyObject_CallOneArg(crc, covered);
    /* The memory is the caller's buffer, exported to us only for this call: no view may outlive it. */
    if (Py_REFCNT(covered) > 1) {
        PyObject *released = PyObject_CallMethod(covered, "release", NULL);
        if (released == NULL) {
            Py_DECREF(covered);
            Py_XDECREF(value);
            return -1;
        }
        Py_DECREF(released);
    }
    Py_DECREF(covered);
    if (value == NULL)
        return -1;
    unsigned long computed = PyLong_AsUnsignedLong(value);
    Py_DECREF(value);
    if (computed == (unsigned long)-1 && PyErr_Occurred())
        return -1;
    return computed == stored;
}

PyDoc_STRVAR(scan_doc,
"scan(data, start, end, base, crc, batch_type, limit)\n"
"--\n\n"
"The v2 batches that follow each other whole in ``data[start:end]``, at most ``limit`` of them, as a list\n"
"of ``batch_type`` tuples (positions are ``base`` + the index; ``is_valid`` is None when ``crc`` is None,\n"
"else whether ``crc(covered bytes)`` equals the stored CRC), and the index where it stopped. It stops\n"
"at whatever is not a plain case: a magic other than 2, a size field below 14, an entry that runs past\n"
"``end``, a tail of 17 bytes or fewer; kdump.format.batch.scan_batches goes on from there in Python.");

static PyObject *
scan(PyObject *module, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t start, end, limit;
    long long base;
    PyObject *crc;
    PyTypeObject *batch_type;

    if (!PyArg_ParseTuple(args, "y*nnLOO!n:scan", &view, &start, &end, &base, &crc, &PyType_Type, &batch_type, &limit))
        return NULL;
    PyObject *result = NULL;
    PyObject *batches = NULL;
    if (!PyType_IsSubtype(batch_type, &PyTuple_Type) || batch_type->tp_itemsize != sizeof(PyObject *)) {
        PyErr_SetString(PyExc_TypeError, "batch_type must be a tuple subclass");
        goto done;
    }
    if (crc == Py_None)
        crc = NULL;
    const unsigned char *data = (const unsigned char *)view.buf;
    Py_ssize_t len = view.len;
    if (start < 0)
        start = 0;
    if (end > len)
        end = len;
    batches = PyList_New(0);
    if (batches == NULL)
        goto done;
    Py_ssize_t pos = start;
    for (Py_ssize_t n = 0; n < limit && pos < end - HEADER_SIZE_UP_TO_MAGIC; n++) {
        const unsigned char *p = data + pos;
        if (p[16] != 2 || pos + V2_HEADER_SIZE > len)
            break;
        int32_t size = (int32_t)be32u(p + 8);
        if (size < MIN_RECORD_OVERHEAD || (int64_t)pos > (int64_t)end - LOG_OVERHEAD - size)
            break;  /* scan_batches raises Kafka's error, or stops at a partial entry */
        int64_t base_offset = be64(p), last_offset;
        int32_t last_delta = (int32_t)be32u(p + 23);
        if (__builtin_add_overflow(base_offset, (int64_t)last_delta, &last_offset))
            break;  /* Python's integers do not wrap */
        Py_ssize_t total = LOG_OVERHEAD + (Py_ssize_t)size;
        uint32_t stored = be32u(p + 17);
        PyObject *valid = NULL;
        if (crc != NULL) {
            int matches = crc_matches(crc, p, total, stored);
            if (matches < 0)
                goto fail;
            valid = matches ? Py_True : Py_False;
            Py_INCREF(valid);
        } else {
            valid = Py_None;
            Py_INCREF(valid);
        }
        PyObject *batch = batch_type->tp_alloc(batch_type, BATCH_FIELDS);
        if (batch == NULL) {
            Py_DECREF(valid);
            goto fail;
        }
        /* The order of kdump.format.layout.BATCH_FIELDS (exported below and checked on load). */
        PyObject *items[BATCH_FIELDS] = {
            PyLong_FromLongLong(base + pos),
            PyLong_FromLongLong(base_offset),
            PyLong_FromLongLong(last_offset),
            PyLong_FromSsize_t(total),
            PyLong_FromLong(2),
            PyLong_FromUnsignedLong(stored),
            PyLong_FromLong(((unsigned)p[21] << 8) | p[22]),
            PyLong_FromLong((int32_t)be32u(p + 12)),
            PyLong_FromLongLong(be64(p + 27)),
            PyLong_FromLongLong(be64(p + 35)),
            PyLong_FromLongLong(be64(p + 43)),
            PyLong_FromLong((int16_t)(((unsigned)p[51] << 8) | p[52])),
            PyLong_FromLong((int32_t)be32u(p + 53)),
            PyLong_FromLong((int32_t)be32u(p + 57)),
            valid,
        };
        int missing = 0;
        for (int i = 0; i < BATCH_FIELDS; i++) {
            if (items[i] == NULL)
                missing = 1;
            PyTuple_SET_ITEM(batch, i, items[i]);   /* a NULL slot is skipped by the tuple's dealloc */
        }
        if (missing || PyList_Append(batches, batch) < 0) {
            Py_DECREF(batch);
            goto fail;
        }
        /* Numbers and a bool only: no cycle can run through it, so the collector need not walk it (CPython
           untracks such plain tuples itself, but not a subclass's); a shallow scan makes one per batch. */
        if (PyObject_GC_IsTracked(batch))
            PyObject_GC_UnTrack(batch);
        Py_DECREF(batch);
        pos += total;
    }
    result = Py_BuildValue("(Nn)", batches, pos);
    batches = NULL;
    goto done;

fail:
    Py_XDECREF(batches);
done:
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS, decode_doc},
    {"columns", columns, METH_VARARGS, columns_doc},
    {"scan", scan, METH_VARARGS, scan_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "kdump.format._v2records",
    "C decoder for the records of v2 batches and walk of their framing (optional; records.py and batch.py have the\n"
    "references in Python).",
    -1,
    methods,
};

PyMODINIT_FUNC
PyInit__v2records(void)
{
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    /* The Record layout read_record fills and the Batch layout scan fills, slot by slot;
       kdump.accelerators refuses this module unless they equal kdump.format.layout's. */
    PyObject *fields = Py_BuildValue("(ssssssss)", "offset", "timestamp", "key", "value", "headers", "sequence",
                                     "legacy_crc", "legacy_valid");
    if (fields == NULL || PyModule_AddObject(module, "RECORD_FIELDS", fields) < 0) {
        Py_XDECREF(fields);
        Py_DECREF(module);
        return NULL;
    }
    PyObject *batch = Py_BuildValue("(sssssssssssssss)", "position", "base_offset", "last_offset", "size", "magic",
                                    "crc", "attributes", "partition_leader_epoch", "base_timestamp", "max_timestamp",
                                    "producer_id", "producer_epoch", "base_sequence", "records_count", "is_valid");
    if (batch == NULL || PyModule_AddObject(module, "BATCH_FIELDS", batch) < 0) {
        Py_XDECREF(batch);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
