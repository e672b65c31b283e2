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
#include "../format/_varint.h"

/* A growable byte buffer that starts on the stack: a batch line never needs the heap. */
typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
    int non_ascii;   /* set by whatever may write a byte >= 0x80: else buffer_str need not check */
    char inline_space[1024];
} Buffer;

static void
buffer_init(Buffer *b)
{
    b->data = b->inline_space;
    b->len = 0;
    b->cap = (Py_ssize_t)sizeof(b->inline_space);
    b->non_ascii = 0;
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

/* memcpy of a few bytes, inline: a record line is made of ~10 short pieces (labels, a 15-byte key), and a
   call to libc's memcpy for each was a fifth of --print-data-log's time (perf, benchmarks/bench_real_tool.py). */
static inline char *
copy_short(char *out, const char *src, size_t n)
{
    if (n > 64) {
        memcpy(out, src, n);
        return out + n;
    }
    char *end = out + n;
    for (; n >= 8; n -= 8, out += 8, src += 8)
        memcpy(out, src, 8);
    if (n >= 4) {
        memcpy(out, src, 4);
        out += 4, src += 4, n -= 4;
    }
    while (n--)
        *out++ = *src++;
    return end;
}

static inline int
put(Buffer *b, const char *text, Py_ssize_t n)
{
    if (b->len + n > b->cap && grow(b, n) < 0)
        return -1;
    copy_short(b->data + b->len, text, (size_t)n);
    b->len += n;
    return 0;
}

#define PUT_LITERAL(b, s) put((b), (s), (Py_ssize_t)(sizeof(s) - 1))

static const char DIGIT_PAIRS[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Decimal text of a signed 64-bit integer at ``out`` (room for 20 bytes), as Python's str(int) writes it;
   returns where it ends. The digits are counted first and written in place from the end, two a step (a copy
   of variable length per number cost more than the digits). */
static inline char *
int_at(char *out, int64_t value)
{
    uint64_t magnitude = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
    if (value < 0)
        *out++ = '-';
    int n = 1;
    for (uint64_t bound = 10; n < 20 && magnitude >= bound; bound *= 10)
        n++;
    char *end = out + n, *p = end;
    while (magnitude >= 100) {
        unsigned pair = (unsigned)(magnitude % 100) * 2;
        magnitude /= 100;
        *--p = DIGIT_PAIRS[pair + 1];
        *--p = DIGIT_PAIRS[pair];
    }
    if (magnitude >= 10) {
        unsigned pair = (unsigned)magnitude * 2;
        *--p = DIGIT_PAIRS[pair + 1];
        *--p = DIGIT_PAIRS[pair];
    }
    else {
        *--p = (char)('0' + magnitude);
    }
    return end;
}

#define INT_TEXT_MAX 20

static inline int
put_int(Buffer *b, int64_t value)
{
    if (b->len + INT_TEXT_MAX > b->cap && grow(b, INT_TEXT_MAX) < 0)
        return -1;
    b->len = (Py_ssize_t)(int_at(b->data + b->len, value) - b->data);
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
put_decoded_raw(Buffer *b, const unsigned char *s, Py_ssize_t n)
{
    if (is_ascii(s, n))
        return put(b, (const char *)s, n);
    b->non_ascii = 1;
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

static inline int
put_decoded(Buffer *b, PyObject *bytes)
{
    return put_decoded_raw(b, (const unsigned char *)PyBytes_AS_STRING(bytes), PyBytes_GET_SIZE(bytes));
}

static int
put_str(Buffer *b, PyObject *text)
{
    if (!PyUnicode_IS_ASCII(text))
        b->non_ascii = 1;
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    return utf8 == NULL ? -1 : put(b, utf8, size);
}

/* The buffer as a str: an ASCII one is copied as it is, anything else decoded (it is UTF-8). */
static PyObject *
buffer_str(Buffer *b)
{
    if (b->non_ascii)
        return PyUnicode_DecodeUTF8(b->data, b->len, "strict");
    PyObject *text = PyUnicode_New(b->len, 127);
    if (text != NULL)
        memcpy(PyUnicode_DATA(text), b->data, (size_t)b->len);
    return text;
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

/* A label's UTF-8 bytes, resolved once per call rather than once per line. */
typedef struct {
    const char *s;
    Py_ssize_t n;
} Text;

static int
text_of(Buffer *b, PyObject *text, Text *out)
{
    if (!PyUnicode_IS_ASCII(text))
        b->non_ascii = 1;
    out->s = PyUnicode_AsUTF8AndSize(text, &out->n);
    return out->s == NULL ? -1 : 0;
}

/* The labels of a record line: " <ts name>: ", " keySize: ", " valueSize: " (or the dialect's names). */
typedef struct {
    Text head, key, value;
} LineLabels;

static int
labels_of(Buffer *b, PyObject *head, PyObject *key_label, PyObject *value_label, LineLabels *out)
{
    return text_of(b, head, &out->head) < 0 || text_of(b, key_label, &out->key) < 0 ||
           text_of(b, value_label, &out->value) < 0 ? -1 : 0;
}

#define COPY_LITERAL(out, s) (memcpy((out), (s), sizeof(s) - 1), (out) + sizeof(s) - 1)
#define COPY_TEXT(out, t) copy_short((out), (t).s, (size_t)(t).n)

/* A record line up to its header keys: "| offset: O <ts name>: T keySize: K valueSize: V sequence: S headerKeys: [",
   with one check of the room it needs. */
static int
put_line_head(Buffer *b, int64_t offset, const LineLabels *labels, int64_t timestamp, Py_ssize_t key_size,
              Py_ssize_t value_size, int64_t sequence)
{
    Py_ssize_t need = 5 * INT_TEXT_MAX + 64 + labels->head.n + labels->key.n + labels->value.n;
    if (b->len + need > b->cap && grow(b, need) < 0)
        return -1;
    char *out = b->data + b->len;
    out = COPY_LITERAL(out, "| offset: ");
    out = int_at(out, offset);
    out = COPY_TEXT(out, labels->head);
    out = int_at(out, timestamp);
    out = COPY_TEXT(out, labels->key);
    out = int_at(out, key_size);
    out = COPY_TEXT(out, labels->value);
    out = int_at(out, value_size);
    out = COPY_LITERAL(out, " sequence: ");
    out = int_at(out, sequence);
    out = COPY_LITERAL(out, " headerKeys: [");
    b->len = (Py_ssize_t)(out - b->data);
    return 0;
}

/* What --print-data-log adds after "]" with StringDecoder (a size of -1 is null): DumpLogSegments prints
   the key only with a value, except from 2.4 on (key_printed_for_null_value). */
static int
put_contents(Buffer *b, const unsigned char *key, Py_ssize_t key_size, const unsigned char *value,
             Py_ssize_t value_size, int key_printed_for_null_value)
{
    if (value_size >= 0) {
        if (key_size >= 0 && (PUT_LITERAL(b, " key: ") < 0 || put_decoded_raw(b, key, key_size) < 0))
            return -1;
        if (PUT_LITERAL(b, " payload: ") < 0 || put_decoded_raw(b, value, value_size) < 0)
            return -1;
    }
    else if (key_size >= 0 && key_printed_for_null_value) {
        if (PUT_LITERAL(b, " key: ") < 0 || put_decoded_raw(b, key, key_size) < 0)
            return -1;
    }
    return 0;
}

/* One record's line; 0 done, 1 not handled here, -1 Python error. */
static int
put_line(Buffer *b, PyObject *record, const LineLabels *labels, int key_printed_for_null_value)
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

    if (put_line_head(b, offset, labels, timestamp, key == Py_None ? -1 : PyBytes_GET_SIZE(key),
                      value == Py_None ? -1 : PyBytes_GET_SIZE(value), sequence) < 0)
        return -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(headers); i++) {
        if ((i > 0 && PUT_LITERAL(b, ",") < 0) || put_decoded(b, PyTuple_GET_ITEM(PyTuple_GET_ITEM(headers, i), 0)) < 0)
            return -1;
    }
    if (PUT_LITERAL(b, "]") < 0)
        return -1;
    return put_contents(b, key == Py_None ? NULL : (const unsigned char *)PyBytes_AS_STRING(key),
                        key == Py_None ? -1 : PyBytes_GET_SIZE(key),
                        value == Py_None ? NULL : (const unsigned char *)PyBytes_AS_STRING(value),
                        value == Py_None ? -1 : PyBytes_GET_SIZE(value), key_printed_for_null_value);
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
    LineLabels labels;
    if (labels_of(&b, head, key_label, value_label, &labels) < 0)
        goto done;
    Py_ssize_t count = PyList_GET_SIZE(records);
    for (Py_ssize_t i = 0; i < count; i++) {
        if (i > 0 && PUT_LITERAL(&b, "\n") < 0)
            goto done;
        int status = put_line(&b, PyList_GET_ITEM(records, i), &labels, key_printed_for_null_value);
        if (status < 0)
            goto done;
        if (status > 0) {
            Py_INCREF(Py_None);
            result = Py_None;
            goto done;
        }
    }
    result = buffer_str(&b);

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
        result = buffer_str(&b);
    else if (status == 1)
        result = Py_NewRef(Py_None);
    buffer_free(&b);
    return result;
}

/* ATTRIBUTE_TEXT_* index log_text._AttributeText, the per-(magic, attributes) texts render caches. */
enum { ATTRIBUTE_TS_NAME, ATTRIBUTE_CODEC, ATTRIBUTE_FLAGS, ATTRIBUTE_HORIZON, ATTRIBUTE_C_HORIZON, ATTRIBUTE_FIELDS };

/* The cached texts of a v2 batch's (magic << 16 | attributes) key in ``texts`` (borrowed), NULL when there
   are none to use here (a key not cached yet, an older magic, texts of another shape); -1 on an error. */
static int
cached_texts(PyObject *batch, PyObject *texts, PyObject **fixed)
{
    *fixed = NULL;
    int64_t magic, attributes;
    if (!PyTuple_Check(batch) || PyTuple_GET_SIZE(batch) != BATCH_FIELDS ||
        get_int64(PyTuple_GET_ITEM(batch, B_MAGIC), &magic) || magic < 2 ||
        get_int64(PyTuple_GET_ITEM(batch, B_ATTRIBUTES), &attributes) || attributes < 0 || attributes > 0xFFFF)
        return 0;
    PyObject *key = PyLong_FromLongLong((magic << 16) | attributes);
    if (key == NULL)
        return -1;
    PyObject *found = PyDict_GetItemWithError(texts, key);  /* borrowed */
    Py_DECREF(key);
    if (found == NULL)
        return PyErr_Occurred() ? -1 : 0;
    if (!PyTuple_Check(found) || PyTuple_GET_SIZE(found) != ATTRIBUTE_FIELDS)
        return 0;
    PyObject *horizon = PyTuple_GET_ITEM(found, ATTRIBUTE_C_HORIZON);
    if ((horizon == Py_None || PyUnicode_Check(horizon)) && PyUnicode_Check(PyTuple_GET_ITEM(found, ATTRIBUTE_FLAGS)) &&
        PyUnicode_Check(PyTuple_GET_ITEM(found, ATTRIBUTE_TS_NAME)) &&
        PyUnicode_Check(PyTuple_GET_ITEM(found, ATTRIBUTE_CODEC)))
        *fixed = found;
    return 0;
}

/* A batch's line from its cached texts: 0 written, 1 declined (nothing written), -1 error. */
static int
put_cached_batch_line(Buffer *b, PyObject *batch, PyObject *fixed)
{
    PyObject *horizon = PyTuple_GET_ITEM(fixed, ATTRIBUTE_C_HORIZON);
    Py_ssize_t mark = b->len;
    int status = put_batch_line(b, batch, PyTuple_GET_ITEM(fixed, ATTRIBUTE_FLAGS), horizon == Py_None ? NULL : horizon,
                                PyTuple_GET_ITEM(fixed, ATTRIBUTE_TS_NAME), PyTuple_GET_ITEM(fixed, ATTRIBUTE_CODEC));
    if (status == 1)
        b->len = mark;  /* declined part-way: drop what it wrote */
    return status;
}

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
        PyObject *fixed;
        int status = 1;
        if (cached_texts(batch, texts, &fixed) < 0)
            goto done;
        if (fixed != NULL && (status = put_cached_batch_line(&b, batch, fixed)) < 0)
            goto done;
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
    result = buffer_str(&b);

done:
    buffer_free(&b);
    return result;
}

/* Where a run of record lines stands: the offsets seen (for DumpLogSegments' "Non-consecutive offsets"),
   and the gaps found, int64 pairs (previous, offset). */
typedef struct {
    int has_first, has_previous;
    int64_t first, previous;
    Buffer gaps;
} OffsetWalk;

#define V2_HEADER_SIZE 61        /* DefaultRecordBatch.RECORD_BATCH_OVERHEAD */
#define GROUP_SIZE 4096          /* format.record_stream.GROUP_SIZE: larger batches go the streaming way */
#define ATTR_CODEC_MASK 0x07
#define ATTR_LOG_APPEND_TIME 0x08
#define ATTR_CONTROL 0x20

/*
 * A v2 data batch's line and its record lines, each followed by a newline, read from the batch's bytes at
 * ``at`` (``size`` of them): 0 written, 1 declined (nothing written, ``walk`` as it was), -1 error. Declined:
 * a compressed or control batch, more than GROUP_SIZE records, records that are not exactly ``count``
 * well-formed ones filling the batch (records.iter_records' one-call case, which small_v2_area and the C
 * decoder take): the Python path then prints it, or Kafka's error for it.
 */
static int
put_data_batch(Buffer *b, PyObject *batch, PyObject *fixed, const unsigned char *at, Py_ssize_t size,
               LineLabels *labels, int contents, int key_printed_for_null_value, OffsetWalk *walk)
{
    int64_t f[B_VALID];
    for (int i = 0; i < B_VALID; i++)
        if (get_int64(PyTuple_GET_ITEM(batch, i), &f[i]))
            return 1;
    int64_t attributes = f[B_ATTRIBUTES], count = f[B_COUNT];
    if (f[B_MAGIC] != 2 || (attributes & (ATTR_CODEC_MASK | ATTR_CONTROL)) || count < 0 || count > GROUP_SIZE ||
        f[B_SIZE] != size || size < V2_HEADER_SIZE)
        return 1;
    Py_ssize_t mark = b->len, gaps_mark = walk->gaps.len;
    OffsetWalk saved = *walk;
    int status = put_cached_batch_line(b, batch, fixed);
    if (status != 0)
        return status;
    if (PUT_LITERAL(b, "\n") < 0)
        return -1;
    /* " CreateTime: " or " LogAppendTime: ": the record lines' name of the batch's timestamp type. */
    char head[64];
    Text ts_name;
    if (text_of(b, PyTuple_GET_ITEM(fixed, ATTRIBUTE_TS_NAME), &ts_name) < 0)
        return -1;
    if (ts_name.n > (Py_ssize_t)sizeof(head) - 3) {
        b->len = mark;
        return 1;
    }
    head[0] = ' ';
    memcpy(head + 1, ts_name.s, (size_t)ts_name.n);
    memcpy(head + 1 + ts_name.n, ": ", 2);
    labels->head.s = head;
    labels->head.n = ts_name.n + 3;
    const unsigned char *data = at + V2_HEADER_SIZE;
    Py_ssize_t len = size - V2_HEADER_SIZE, pos = 0;
    int log_append_time = (attributes & ATTR_LOG_APPEND_TIME) != 0;
    status = 0;
    for (int64_t i = 0; i < count && status == 0; i++) {
        kdump_raw_record r;
        if (kdump_read_raw_record(data, len, &pos, &r) < 0) {
            status = 1;
            break;
        }
        /* Java long arithmetic wraps (DefaultRecord.readFrom, Kafka 4.4.0). */
        int64_t offset = (int64_t)((uint64_t)f[B_BASE_OFFSET] + (uint64_t)r.offset_delta);
        int64_t timestamp = log_append_time ? f[B_MAX_TS] : (int64_t)((uint64_t)f[B_BASE_TS] + (uint64_t)r.timestamp_delta);
        int64_t sequence = f[B_BASE_SEQ] < 0 ? -1 : kdump_increment_sequence(f[B_BASE_SEQ], r.offset_delta);
        if (walk->has_previous && offset != (int64_t)((uint64_t)walk->previous + 1)) {
            int64_t pair[2] = {walk->previous, offset};
            if (put(&walk->gaps, (const char *)pair, sizeof(pair)) < 0) {
                status = -1;
                break;
            }
        }
        if (!walk->has_first) {
            walk->has_first = 1;
            walk->first = offset;
        }
        walk->has_previous = 1;
        walk->previous = offset;
        if (put_line_head(b, offset, labels, timestamp, r.key_size, r.value_size, sequence) < 0) {
            status = -1;
            break;
        }
        Py_ssize_t hp = r.headers_at;
        for (int64_t h = 0; h < r.header_count && status == 0; h++) {
            const unsigned char *hkey, *hvalue;
            Py_ssize_t hkey_size, hvalue_size;
            if (kdump_raw_header(data, len, &hp, &hkey, &hkey_size, &hvalue, &hvalue_size) < 0)
                status = 1;  /* not reached: the walk checked every header */
            else if ((h > 0 && PUT_LITERAL(b, ",") < 0) || put_decoded_raw(b, hkey, hkey_size) < 0)
                status = -1;
        }
        if (status == 0 && (PUT_LITERAL(b, "]") < 0 ||
                            (contents && put_contents(b, r.key, r.key_size, r.value, r.value_size,
                                                      key_printed_for_null_value) < 0) ||
                            PUT_LITERAL(b, "\n") < 0))
            status = -1;
    }
    labels->head.s = NULL;  /* ``head`` is this call's */
    if (status == 0 && pos != len)
        status = 1;  /* bytes after the last record: Python raises Kafka's error */
    if (status == 1) {
        b->len = mark;
        saved.gaps = walk->gaps;
        saved.gaps.len = gaps_mark;
        *walk = saved;
    }
    return status;
}

static Buffer run_text;        /* data_lines' buffer (the GIL is held throughout a call) */
static PyObject *run_view;     /* the memoryview over it that the last call returned */

/* The view the last call returned is released before the buffer is written again (or moved by a realloc):
   a caller that kept it gets "operation forbidden on released memoryview", never freed memory. */
static int
release_run_view(void)
{
    if (run_view == NULL)
        return 0;
    PyObject *released = PyObject_CallMethod(run_view, "release", NULL);
    if (released == NULL)
        return -1;   /* BufferError: something still exports it; the buffer is left alone */
    Py_DECREF(released);
    Py_CLEAR(run_view);
    return 0;
}

PyDoc_STRVAR(data_lines_doc,
"data_lines(window, base, batches, index, texts, key_label, value_label, contents, key_printed_for_null_value,\n"
"           previous)\n"
"--\n\n"
"The lines --deep-iteration prints for ``batches[index:]`` (Batch tuples whose bytes lie in ``window``, whose\n"
"first byte is at file position ``base``): each batch line, then its record lines (StringDecoder key and\n"
"value when ``contents``), each followed by a newline, as a view of UTF-8 bytes (valid until the next call,\n"
"which releases it), for as many batches in a row as are\n"
"uncompressed v2 data batches of well-formed records whose texts ``texts`` caches; it stops before the\n"
"first other one. ``previous`` is the offset before them (None: none). Returns (text, the index it stopped\n"
"at, the first record offset or None, the last (or ``previous``), [(previous, offset), ...] gaps).");

static PyObject *
data_lines(PyObject *module, PyObject *args)
{
    Py_buffer view;
    long long base;
    Py_ssize_t index;
    PyObject *batches, *texts, *key_label, *value_label, *previous;
    int contents, key_printed_for_null_value;
    if (!PyArg_ParseTuple(args, "y*LO!nO!UUppO:data_lines", &view, &base, &PyList_Type, &batches, &index,
                          &PyDict_Type, &texts, &key_label, &value_label, &contents, &key_printed_for_null_value,
                          &previous))
        return NULL;
    OffsetWalk walk = {0};
    buffer_init(&walk.gaps);
    /* One buffer for every call, kept at the size of the largest run (a run is a window's batches): a fresh
       one per call was grown by doubling and faulted in again each time, a copy of the whole text. */
    Buffer *bp = &run_text;
    if (release_run_view() < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    if (bp->data == NULL)
        buffer_init(bp);
    bp->len = 0;
    bp->non_ascii = 0;
#define b (*bp)
    PyObject *result = NULL, *gaps = NULL;
    LineLabels labels = {{NULL, 0}, {NULL, 0}, {NULL, 0}};
    if (text_of(&b, key_label, &labels.key) < 0 || text_of(&b, value_label, &labels.value) < 0)
        goto done;
    if (previous != Py_None) {
        if (get_int64(previous, &walk.previous)) {
            PyErr_SetString(PyExc_ValueError, "previous must be an int64 or None");
            goto done;
        }
        walk.has_previous = 1;
    }
    Py_ssize_t i = index < 0 ? 0 : index;
    for (; i < PyList_GET_SIZE(batches); i++) {
        PyObject *batch = PyList_GET_ITEM(batches, i);
        PyObject *fixed;
        int64_t position, size;
        if (cached_texts(batch, texts, &fixed) < 0)
            goto done;
        if (fixed == NULL || get_int64(PyTuple_GET_ITEM(batch, B_POSITION), &position) ||
            get_int64(PyTuple_GET_ITEM(batch, B_SIZE), &size) || position < base || size < 0 ||
            position - base > (int64_t)view.len - size)
            break;
        int status = put_data_batch(&b, batch, fixed, (const unsigned char *)view.buf + (position - base),
                                    (Py_ssize_t)size, &labels, contents, key_printed_for_null_value, &walk);
        if (status < 0)
            goto done;
        if (status == 1)
            break;
    }
    Py_ssize_t n = walk.gaps.len / (Py_ssize_t)(2 * sizeof(int64_t));
    gaps = PyList_New(n);
    if (gaps == NULL)
        goto done;
    for (Py_ssize_t g = 0; g < n; g++) {
        int64_t pair[2];
        memcpy(pair, walk.gaps.data + g * (Py_ssize_t)sizeof(pair), sizeof(pair));
        PyObject *item = Py_BuildValue("(LL)", (long long)pair[0], (long long)pair[1]);
        if (item == NULL)
            goto done;
        PyList_SET_ITEM(gaps, g, item);
    }
    PyObject *text = PyMemoryView_FromMemory(b.data, b.len, PyBUF_READ);
    if (text == NULL)
        goto done;
    PyObject *first = walk.has_first ? PyLong_FromLongLong(walk.first) : Py_NewRef(Py_None);
    PyObject *last = walk.has_previous ? PyLong_FromLongLong(walk.previous) : Py_NewRef(Py_None);
    if (first == NULL || last == NULL) {
        Py_DECREF(text);
        Py_XDECREF(first);
        Py_XDECREF(last);
        goto done;
    }
    run_view = Py_NewRef(text);
    result = Py_BuildValue("(NnNNO)", text, i, first, last, gaps);

done:
#undef b
    Py_XDECREF(gaps);
    buffer_free(&walk.gaps);
    PyBuffer_Release(&view);
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
    PyObject *result = put_decoded(&b, arg) < 0 ? NULL : buffer_str(&b);
    buffer_free(&b);
    return result;
}

static PyMethodDef methods[] = {
    {"java_utf8", java_utf8, METH_O, java_utf8_doc},
    {"string_lines", string_lines, METH_VARARGS, string_lines_doc},
    {"batch_line", batch_line, METH_VARARGS, batch_line_doc},
    {"batch_lines", batch_lines, METH_VARARGS, batch_lines_doc},
    {"data_lines", data_lines, METH_VARARGS, data_lines_doc},
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
