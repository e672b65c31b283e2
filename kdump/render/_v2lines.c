/*
 * Optional accelerator for the two hottest lines of `kdump --files X.log`:
 *   string_lines: with --print-data-log and the default StringDecoder, the `| offset: ...` lines
 *                 of one batch's v2 data records, as one string;
 *   batch_line:   the `baseOffset: ...` line of a v2 batch.
 *
 * The references are _v2_data_lines and _python_batch_line in log_text.py; these return exactly what
 * they return, or None for anything they do not handle (a field that is not an int64 or bytes),
 * and the caller then runs the Python version. Why C: formatting costs as much as decoding in
 * Python (~0.8 us a record line, ~2 us a batch line), and these are the
 * lines operators print for whole segments. setup.py builds it as an optional extension;
 * KDUMP_PURE_PYTHON=1 turns it off.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../format/_sequence.h"

/* A growable byte buffer that starts on the stack: a batch line never needs the heap. */
typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
    char inline_space[1024];
} Buffer;

static void
buffer_init(Buffer *b)
{
    b->data = b->inline_space;
    b->len = 0;
    b->cap = (Py_ssize_t)sizeof(b->inline_space);
}

static void
buffer_free(Buffer *b)
{
    if (b->data != b->inline_space)
        PyMem_Free(b->data);
}

/* Out of line: taken only when a batch's record lines outgrow the buffer. */
static int
grow(Buffer *b, Py_ssize_t extra)
{
    Py_ssize_t cap = b->cap;
    while (cap < b->len + extra) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        cap *= 2;
    }
    char *data;
    if (b->data == b->inline_space) {
        data = PyMem_Malloc((size_t)cap);
        if (data != NULL)
            memcpy(data, b->data, (size_t)b->len);
    }
    else {
        data = PyMem_Realloc(b->data, (size_t)cap);
    }
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static inline int
put(Buffer *b, const char *text, Py_ssize_t n)
{
    if (b->len + n > b->cap && grow(b, n) < 0)
        return -1;
    memcpy(b->data + b->len, text, (size_t)n);
    b->len += n;
    return 0;
}

#define PUT_LITERAL(b, s) put((b), (s), (Py_ssize_t)(sizeof(s) - 1))

static const char DIGIT_PAIRS[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Decimal text of a signed 64-bit integer, as Python's str(int) writes it (two digits a step). */
static inline int
put_int(Buffer *b, int64_t value)
{
    if (b->len + 20 > b->cap && grow(b, 20) < 0)
        return -1;
    char digits[20];
    int i = (int)sizeof(digits);
    uint64_t magnitude = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
    while (magnitude >= 100) {
        unsigned pair = (unsigned)(magnitude % 100) * 2;
        magnitude /= 100;
        digits[--i] = DIGIT_PAIRS[pair + 1];
        digits[--i] = DIGIT_PAIRS[pair];
    }
    if (magnitude >= 10) {
        unsigned pair = (unsigned)magnitude * 2;
        digits[--i] = DIGIT_PAIRS[pair + 1];
        digits[--i] = DIGIT_PAIRS[pair];
    }
    else {
        digits[--i] = (char)('0' + magnitude);
    }
    char *out = b->data + b->len;
    if (value < 0)
        *out++ = '-';
    memcpy(out, digits + i, sizeof(digits) - (size_t)i);
    b->len = (Py_ssize_t)(out - b->data) + (Py_ssize_t)sizeof(digits) - i;
    return 0;
}

/* 1 when every byte is ASCII (then the UTF-8 "replace" decoding is the bytes themselves). */
static int
is_ascii(const unsigned char *p, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t word;
        memcpy(&word, p + i, 8);
        if (word & 0x8080808080808080ULL)
            return 0;
    }
    for (; i < n; i++)
        if (p[i] & 0x80)
            return 0;
    return 1;
}

static inline int
is_continuation(unsigned char byte)
{
    return (byte & 0xC0) == 0x80;
}

/* Java's new String(bytes, UTF_8) (JDK 17 String.decodeUTF8_UTF16 with replacement), appended as
   UTF-8: well-formed sequences are copied, each malformed one becomes one U+FFFD, with Java's rule
   for how many bytes it covers. Mirrors decoders.java_utf8_replace, step for step. */
static int
put_decoded(Buffer *b, PyObject *bytes)
{
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(bytes);
    Py_ssize_t n = PyBytes_GET_SIZE(bytes);
    if (is_ascii(s, n))
        return put(b, (const char *)s, n);
    /* At most 3 output bytes per input byte (U+FFFD is 3 bytes). */
    if (b->len + 3 * n > b->cap && grow(b, 3 * n) < 0)
        return -1;
    unsigned char *out = (unsigned char *)b->data + b->len;
#define REPLACEMENT() (*out++ = 0xEF, *out++ = 0xBF, *out++ = 0xBD)
    Py_ssize_t sp = 0;
    while (sp < n) {
        unsigned char b1 = s[sp++];
        if (b1 < 0x80) {
            *out++ = b1;
        }
        else if (b1 >= 0xC2 && b1 <= 0xDF) {
            if (sp < n) {
                if (is_continuation(s[sp])) {
                    *out++ = b1;
                    *out++ = s[sp++];
                }
                else {
                    REPLACEMENT();
                }
                continue;
            }
            REPLACEMENT();
            break;
        }
        else if (b1 >= 0xE0 && b1 <= 0xEF) {
            if (sp + 1 < n) {
                unsigned char b2 = s[sp], b3 = s[sp + 1];
                int bad2 = (b1 == 0xE0 && (b2 & 0xE0) == 0x80) || !is_continuation(b2);
                if (bad2 || !is_continuation(b3)) {
                    REPLACEMENT();
                    sp += bad2 ? 0 : 1;
                }
                else {
                    unsigned code = (unsigned)(b1 & 0x0F) << 12 | (unsigned)(b2 & 0x3F) << 6 | (b3 & 0x3F);
                    if (code >= 0xD800 && code <= 0xDFFF) {
                        REPLACEMENT();
                    }
                    else {
                        *out++ = b1;
                        *out++ = b2;
                        *out++ = b3;
                    }
                    sp += 2;
                }
                continue;
            }
            if (sp < n && ((b1 == 0xE0 && (s[sp] & 0xE0) == 0x80) || !is_continuation(s[sp]))) {
                REPLACEMENT();
                continue;
            }
            REPLACEMENT();
            break;
        }
        else if (b1 >= 0xF0 && b1 <= 0xF7) {
            if (sp + 2 < n) {
                unsigned char b2 = s[sp], b3 = s[sp + 1], b4 = s[sp + 2];
                unsigned code = (unsigned)(b1 & 0x07) << 18 | (unsigned)(b2 & 0x3F) << 12
                                | (unsigned)(b3 & 0x3F) << 6 | (b4 & 0x3F);
                if (!is_continuation(b2) || !is_continuation(b3) || !is_continuation(b4)
                    || code < 0x10000 || code > 0x10FFFF) {
                    REPLACEMENT();
                    if (b1 > 0xF4 || (b1 == 0xF0 && (b2 < 0x90 || b2 > 0xBF))
                        || (b1 == 0xF4 && (b2 & 0xF0) != 0x80) || !is_continuation(b2))
                        ;                         /* only the lead byte is consumed */
                    else if (!is_continuation(b3))
                        sp += 1;
                    else
                        sp += 2;
                }
                else {
                    *out++ = b1;
                    *out++ = b2;
                    *out++ = b3;
                    *out++ = b4;
                    sp += 3;
                }
                continue;
            }
            if (b1 > 0xF4 || (sp < n && ((b1 == 0xF0 && (s[sp] < 0x90 || s[sp] > 0xBF))
                                         || (b1 == 0xF4 && (s[sp] & 0xF0) != 0x80)
                                         || !is_continuation(s[sp])))) {
                REPLACEMENT();
                continue;
            }
            sp++;
            REPLACEMENT();
            if (sp < n && !is_continuation(s[sp]))
                continue;
            break;
        }
        else {
            REPLACEMENT();
        }
    }
#undef REPLACEMENT
    b->len = (Py_ssize_t)((char *)out - b->data);
    return 0;
}

static int
put_str(Buffer *b, PyObject *text)
{
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    return utf8 == NULL ? -1 : put(b, utf8, size);
}

/* An int field that fits int64; 1 when it does not (the Python version then formats the batch). */
static int
get_int64(PyObject *obj, int64_t *out)
{
    if (!PyLong_CheckExact(obj))
        return 1;
    int overflow;
    long long value = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow || (value == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 1;
    }
    *out = value;
    return 0;
}

/* One record's line; 0 done, 1 not handled here, -1 Python error. */
static int
put_line(Buffer *b, PyObject *record, PyObject *head, PyObject *key_label, PyObject *value_label,
         int key_printed_for_null_value)
{
    if (!PyTuple_Check(record) || PyTuple_GET_SIZE(record) < 6)
        return 1;
    int64_t offset, timestamp, sequence;
    if (get_int64(PyTuple_GET_ITEM(record, 0), &offset) || get_int64(PyTuple_GET_ITEM(record, 1), &timestamp) ||
        get_int64(PyTuple_GET_ITEM(record, 5), &sequence))
        return 1;
    PyObject *key = PyTuple_GET_ITEM(record, 2);
    PyObject *value = PyTuple_GET_ITEM(record, 3);
    PyObject *headers = PyTuple_GET_ITEM(record, 4);
    if ((key != Py_None && !PyBytes_CheckExact(key)) || (value != Py_None && !PyBytes_CheckExact(value)) ||
        !PyTuple_Check(headers))
        return 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(headers); i++) {
        PyObject *header = PyTuple_GET_ITEM(headers, i);
        if (!PyTuple_Check(header) || PyTuple_GET_SIZE(header) != 2 || !PyBytes_CheckExact(PyTuple_GET_ITEM(header, 0)))
            return 1;
    }

    if (PUT_LITERAL(b, "| offset: ") < 0 || put_int(b, offset) < 0 || put_str(b, head) < 0 ||
        put_int(b, timestamp) < 0 || put_str(b, key_label) < 0 ||
        put_int(b, key == Py_None ? -1 : PyBytes_GET_SIZE(key)) < 0 || put_str(b, value_label) < 0 ||
        put_int(b, value == Py_None ? -1 : PyBytes_GET_SIZE(value)) < 0 || PUT_LITERAL(b, " sequence: ") < 0 ||
        put_int(b, sequence) < 0 || PUT_LITERAL(b, " headerKeys: [") < 0)
        return -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(headers); i++) {
        if ((i > 0 && PUT_LITERAL(b, ",") < 0) || put_decoded(b, PyTuple_GET_ITEM(PyTuple_GET_ITEM(headers, i), 0)) < 0)
            return -1;
    }
    if (PUT_LITERAL(b, "]") < 0)
        return -1;
    if (value != Py_None) {
        if (key != Py_None && (PUT_LITERAL(b, " key: ") < 0 || put_decoded(b, key) < 0))
            return -1;
        if (PUT_LITERAL(b, " payload: ") < 0 || put_decoded(b, value) < 0)
            return -1;
    }
    else if (key != Py_None && key_printed_for_null_value) {
        if (PUT_LITERAL(b, " key: ") < 0 || put_decoded(b, key) < 0)
            return -1;
    }
    return 0;
}

PyDoc_STRVAR(string_lines_doc,
"string_lines(records, head, key_label, value_label, key_printed_for_null_value)\n"
"--\n\n"
"The record lines of v2 data records with StringDecoder contents, joined by newlines;\n"
"None when a record holds something the Python formatter must handle.");

static PyObject *
string_lines(PyObject *module, PyObject *args)
{
    PyObject *records, *head, *key_label, *value_label;
    int key_printed_for_null_value;
    if (!PyArg_ParseTuple(args, "O!UUUp:string_lines", &PyList_Type, &records, &head, &key_label, &value_label,
                          &key_printed_for_null_value))
        return NULL;
    Buffer b;
    buffer_init(&b);
    PyObject *result = NULL;
    Py_ssize_t count = PyList_GET_SIZE(records);
    for (Py_ssize_t i = 0; i < count; i++) {
        if (i > 0 && PUT_LITERAL(&b, "\n") < 0)
            goto done;
        int status = put_line(&b, PyList_GET_ITEM(records, i), head, key_label, value_label,
                              key_printed_for_null_value);
        if (status < 0)
            goto done;
        if (status > 0) {
            Py_INCREF(Py_None);
            result = Py_None;
            goto done;
        }
    }
    result = PyUnicode_DecodeUTF8(b.data, b.len, "strict");

done:
    buffer_free(&b);
    return result;
}

enum { B_POSITION, B_BASE_OFFSET, B_LAST_OFFSET, B_SIZE, B_MAGIC, B_CRC, B_ATTRIBUTES, B_LEADER_EPOCH, B_BASE_TS,
       B_MAX_TS, B_PRODUCER_ID, B_PRODUCER_EPOCH, B_BASE_SEQ, B_COUNT, B_VALID, BATCH_FIELDS };

/*
 * Appends the line of a v2 Batch tuple to ``b``: 0 when written, 1 when the batch is not one this
 * code handles (a field that is not an int64, a lastOffsetDelta past int32: the Python formatter
 * decides), -1 on an error. ``horizon`` NULL means "deleteHorizonMs: OptionalLong[<baseTimestamp>] ".
 */
static int
put_batch_line(Buffer *b, PyObject *batch, PyObject *flags, PyObject *horizon, PyObject *ts_name, PyObject *codec)
{
    if (!PyTuple_Check(batch) || PyTuple_GET_SIZE(batch) != BATCH_FIELDS)
        return 1;
    int64_t f[B_VALID];
    for (int i = 0; i < B_VALID; i++)
        if (get_int64(PyTuple_GET_ITEM(batch, i), &f[i]))
            return 1;
    int64_t delta;  /* lastOffsetDelta is an int32 in the header; anything else is left to Python */
    if (__builtin_sub_overflow(f[B_LAST_OFFSET], f[B_BASE_OFFSET], &delta) || delta < INT32_MIN || delta > INT32_MAX)
        return 1;
    int64_t last_seq = f[B_BASE_SEQ] == -1 ? -1 : kdump_increment_sequence(f[B_BASE_SEQ], delta);
    if (PUT_LITERAL(b, "baseOffset: ") < 0 || put_int(b, f[B_BASE_OFFSET]) < 0 ||
        PUT_LITERAL(b, " lastOffset: ") < 0 || put_int(b, f[B_LAST_OFFSET]) < 0 ||
        PUT_LITERAL(b, " count: ") < 0 || put_int(b, f[B_COUNT]) < 0 ||
        PUT_LITERAL(b, " baseSequence: ") < 0 || put_int(b, f[B_BASE_SEQ]) < 0 ||
        PUT_LITERAL(b, " lastSequence: ") < 0 || put_int(b, last_seq) < 0 ||
        PUT_LITERAL(b, " producerId: ") < 0 || put_int(b, f[B_PRODUCER_ID]) < 0 ||
        PUT_LITERAL(b, " producerEpoch: ") < 0 || put_int(b, f[B_PRODUCER_EPOCH]) < 0 ||
        PUT_LITERAL(b, " partitionLeaderEpoch: ") < 0 || put_int(b, f[B_LEADER_EPOCH]) < 0 ||
        PUT_LITERAL(b, " ") < 0 || put_str(b, flags) < 0)
        return -1;
    if (horizon == NULL) {
        if (PUT_LITERAL(b, "deleteHorizonMs: OptionalLong[") < 0 || put_int(b, f[B_BASE_TS]) < 0 ||
            PUT_LITERAL(b, "] ") < 0)
            return -1;
    }
    else if (put_str(b, horizon) < 0) {
        return -1;
    }
    if (PUT_LITERAL(b, "position: ") < 0 || put_int(b, f[B_POSITION]) < 0 || PUT_LITERAL(b, " ") < 0 ||
        put_str(b, ts_name) < 0 || PUT_LITERAL(b, ": ") < 0 || put_int(b, f[B_MAX_TS]) < 0 ||
        PUT_LITERAL(b, " size: ") < 0 || put_int(b, f[B_SIZE]) < 0 ||
        PUT_LITERAL(b, " magic: ") < 0 || put_int(b, f[B_MAGIC]) < 0 ||
        PUT_LITERAL(b, " compresscodec: ") < 0 || put_str(b, codec) < 0 ||
        PUT_LITERAL(b, " crc: ") < 0 || put_int(b, f[B_CRC]) < 0)
        return -1;
    int valid = PyObject_IsTrue(PyTuple_GET_ITEM(batch, B_VALID));  /* None (not checked) prints false */
    if (valid < 0 || (valid ? PUT_LITERAL(b, " isvalid: true") : PUT_LITERAL(b, " isvalid: false")) < 0)
        return -1;
    return 0;
}

PyDoc_STRVAR(batch_line_doc,
"batch_line(batch, flags, horizon, timestamp_name, codec)\n"
"--\n\n"
"The line of a v2 Batch tuple, given its per-attributes texts; ``horizon`` None means\n"
"'deleteHorizonMs: OptionalLong[<baseTimestamp>] '. None when a field is not an int64.");

static PyObject *
batch_line(PyObject *module, PyObject *args)
{
    PyObject *batch, *flags, *horizon, *ts_name, *codec;
    if (!PyArg_ParseTuple(args, "OUOUU:batch_line", &batch, &flags, &horizon, &ts_name, &codec))
        return NULL;
    if (horizon != Py_None && !PyUnicode_Check(horizon))
        Py_RETURN_NONE;
    Buffer b;
    buffer_init(&b);
    PyObject *result = NULL;
    int status = put_batch_line(&b, batch, flags, horizon == Py_None ? NULL : horizon, ts_name, codec);
    if (status == 0)
        result = PyUnicode_DecodeUTF8(b.data, b.len, "strict");
    else if (status == 1)
        result = Py_NewRef(Py_None);
    buffer_free(&b);
    return result;
}

/* ATTRIBUTE_TEXT_* index log_text._AttributeText, the per-(magic, attributes) texts render caches. */
enum { ATTRIBUTE_TS_NAME, ATTRIBUTE_CODEC, ATTRIBUTE_FLAGS, ATTRIBUTE_HORIZON, ATTRIBUTE_C_HORIZON, ATTRIBUTE_FIELDS };

PyDoc_STRVAR(batch_lines_doc,
"batch_lines(batches, texts, render)\n"
"--\n\n"
"The lines of a list of Batch tuples, each followed by a newline, as one string. A v2 batch whose\n"
"(magic << 16 | attributes) key ``texts`` maps to its _AttributeText is written here, like batch_line;\n"
"any other batch (a key not cached yet, an older magic, a field batch_line declines) is ``render(batch)``,\n"
"which caches its key's texts. An error from ``render`` is raised; the lines before it are lost.");

static PyObject *
batch_lines(PyObject *module, PyObject *args)
{
    PyObject *batches, *texts, *render;
    if (!PyArg_ParseTuple(args, "O!O!O:batch_lines", &PyList_Type, &batches, &PyDict_Type, &texts, &render))
        return NULL;
    Buffer b;
    buffer_init(&b);
    PyObject *result = NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(batches); i++) {
        PyObject *batch = PyList_GET_ITEM(batches, i);
        int status = 1;
        if (PyTuple_Check(batch) && PyTuple_GET_SIZE(batch) == BATCH_FIELDS) {
            int64_t magic, attributes;
            if (!get_int64(PyTuple_GET_ITEM(batch, B_MAGIC), &magic) && magic >= 2 &&
                !get_int64(PyTuple_GET_ITEM(batch, B_ATTRIBUTES), &attributes) && attributes >= 0 &&
                attributes <= 0xFFFF) {
                PyObject *key = PyLong_FromLongLong((magic << 16) | attributes);
                if (key == NULL)
                    goto done;
                PyObject *fixed = PyDict_GetItemWithError(texts, key);  /* borrowed */
                Py_DECREF(key);
                if (fixed == NULL && PyErr_Occurred())
                    goto done;
                if (fixed != NULL && PyTuple_Check(fixed) && PyTuple_GET_SIZE(fixed) == ATTRIBUTE_FIELDS) {
                    PyObject *horizon = PyTuple_GET_ITEM(fixed, ATTRIBUTE_C_HORIZON);
                    PyObject *flags = PyTuple_GET_ITEM(fixed, ATTRIBUTE_FLAGS);
                    PyObject *ts_name = PyTuple_GET_ITEM(fixed, ATTRIBUTE_TS_NAME);
                    PyObject *codec = PyTuple_GET_ITEM(fixed, ATTRIBUTE_CODEC);
                    if ((horizon == Py_None || PyUnicode_Check(horizon)) && PyUnicode_Check(flags) &&
                        PyUnicode_Check(ts_name) && PyUnicode_Check(codec)) {
                        Py_ssize_t mark = b.len;
                        status = put_batch_line(&b, batch, flags, horizon == Py_None ? NULL : horizon, ts_name,
                                                codec);
                        if (status < 0)
                            goto done;
                        if (status == 1)
                            b.len = mark;  /* declined part-way: drop what it wrote */
                    }
                }
            }
        }
        if (status == 1) {
            PyObject *line = PyObject_CallOneArg(render, batch);
            if (line == NULL)
                goto done;
            int failed = !PyUnicode_Check(line) || put_str(&b, line) < 0;
            if (failed && !PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "render must return str");
            Py_DECREF(line);
            if (failed)
                goto done;
        }
        if (PUT_LITERAL(&b, "\n") < 0)
            goto done;
    }
    result = PyUnicode_DecodeUTF8(b.data, b.len, "strict");

done:
    buffer_free(&b);
    return result;
}

PyDoc_STRVAR(java_utf8_doc,
"java_utf8(data)\n"
"--\n\n"
"Java's new String(data, UTF_8) for bytes that are not well-formed UTF-8: decoders.java_utf8_replace\n"
"in C (the same put_decoded the record lines use).");

static PyObject *
java_utf8(PyObject *module, PyObject *arg)
{
    if (!PyBytes_CheckExact(arg)) {
        PyErr_SetString(PyExc_TypeError, "java_utf8 takes bytes");
        return NULL;
    }
    Buffer b;
    buffer_init(&b);
    PyObject *result = put_decoded(&b, arg) < 0 ? NULL : PyUnicode_DecodeUTF8(b.data, b.len, "strict");
    buffer_free(&b);
    return result;
}

static PyMethodDef methods[] = {
    {"java_utf8", java_utf8, METH_O, java_utf8_doc},
    {"string_lines", string_lines, METH_VARARGS, string_lines_doc},
    {"batch_line", batch_line, METH_VARARGS, batch_line_doc},
    {"batch_lines", batch_lines, METH_VARARGS, batch_lines_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "kdump.render._v2lines",
    "C formatter for v2 record lines (optional; log_text.py has the reference in Python).",
    -1,
    methods,
};

PyMODINIT_FUNC
PyInit__v2lines(void)
{
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    /* The layouts this module reads by slot (put_line's record fields 0-5, the B_* enum); log_text.py
       refuses the module unless they equal Record._fields and Batch._fields. */
    PyObject *record = Py_BuildValue("(ssssssss)", "offset", "timestamp", "key", "value", "headers", "sequence",
                                     "legacy_crc", "legacy_valid");
    PyObject *batch = Py_BuildValue("(sssssssssssssss)", "position", "base_offset", "last_offset", "size", "magic",
                                    "crc", "attributes", "partition_leader_epoch", "base_timestamp", "max_timestamp",
                                    "producer_id", "producer_epoch", "base_sequence", "records_count", "is_valid");
    if (record == NULL || batch == NULL || PyModule_AddObject(module, "RECORD_FIELDS", record) < 0) {
        Py_XDECREF(record);
        Py_XDECREF(batch);
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddObject(module, "BATCH_FIELDS", batch) < 0) {
        Py_DECREF(batch);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
