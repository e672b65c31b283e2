/*
 * Optional accelerator for the hot loop of deep iteration: decoding the DefaultRecords of one
 * v2 batch's (decompressed) records area into kdump's Record tuples.
 *
 * It is a strict subset of the pure-Python decoder in records.py (decode_v2_record_area): for any
 * input it either returns exactly what that decoder returns, or returns None, and the caller then
 * runs the Python decoder, which produces Kafka's error messages. So every error text lives in one
 * place, and this file only has to be right about well-formed records.
 *
 * Why C: the pure-Python loop spends ~1.1 us a record in the interpreter (PERFORMANCE-NOTES.md);
 * the issue asks for 5x kafka-python. setup.py builds it as an optional extension; without a
 * compiler, or with KDUMP_PURE_PYTHON=1, kdump runs the Python decoder.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "_sequence.h"

#define RECORD_FIELDS 8
#define MAX_VARINT_BYTES 5
/* Python accepts 10-byte varlongs; 9 bytes (63 bits) always fit a uint64, longer ones go to Python. */
#define MAX_VARLONG_BYTES_HERE 9
/* length, attributes, timestampDelta, offsetDelta, keyLength, valueLength, headersCount: 1 byte each at least */
#define MIN_RECORD_BYTES 7

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

/* A zig-zag varint or varlong. Like the Python decoder, a 5-byte varint is not truncated to 32 bits. */
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
    *out = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return 0;
}

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
    if (read_zigzag(data, len, pos, MAX_VARLONG_BYTES_HERE, &ts_delta) < 0 ||
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

    int64_t offset, timestamp;
    if (__builtin_add_overflow(base_offset, offset_delta, &offset))
        goto fail;
    if (has_log_append_ts)
        timestamp = log_append_ts;
    else if (__builtin_add_overflow(base_ts, ts_delta, &timestamp))
        goto fail;
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

PyDoc_STRVAR(decode_doc,
"decode(data, count, base_offset, base_timestamp, log_append_time, base_sequence, record_type)\n"
"--\n\n"
"The ``count`` records of a v2 records area as a list of ``record_type`` tuples, and the position\n"
"after the last one; None when the records are not well formed (decode them in Python for the error).\n"
"``log_append_time`` is the batch's max timestamp under LogAppendTime, else None.");

static PyObject *
decode(PyObject *module, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t count;
    long long base_offset, base_ts, base_seq;
    PyObject *log_append_obj;
    PyTypeObject *record_type;

    if (!PyArg_ParseTuple(args, "y*nLLOLO!:decode", &view, &count, &base_offset, &base_ts, &log_append_obj,
                          &base_seq, &PyType_Type, &record_type))
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
    if (count < 0 || count > len / MIN_RECORD_BYTES) {  /* cannot fit: Python reports why */
        Py_INCREF(Py_None);
        result = Py_None;
        goto done;
    }
    PyObject *records = PyList_New(count);
    if (records == NULL)
        goto done;
    Py_ssize_t pos = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
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
    result = Py_BuildValue("(Nn)", records, pos);

done:
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS, decode_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "kdump.format._v2records",
    "C decoder for the records of v2 batches (optional; records.py has the reference in Python).",
    -1,
    methods,
};

PyMODINIT_FUNC
PyInit__v2records(void)
{
    return PyModule_Create(&module_def);
}
