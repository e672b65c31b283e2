/*
 * Optional accelerator for `kdump --files X.log --print-data-log` with the default StringDecoder:
 * the `| offset: ...` lines of one batch's v2 data records, as one string.
 *
 * The reference is _v2_string_lines in log_text.py; this returns exactly "\n".join() of its lines,
 * or None for anything it does not handle (a field that is not an int64 or bytes), and the caller
 * then runs the Python version. Why C: formatting cost as much as decoding, ~0.8 us a line in
 * Python (PERFORMANCE-NOTES.md), and --print-data-log is what operators run on whole segments.
 * setup.py builds it as an optional extension; KDUMP_PURE_PYTHON=1 turns it off.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} Buffer;

static int
reserve(Buffer *b, Py_ssize_t extra)
{
    if (b->len + extra <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        cap *= 2;
    }
    char *data = PyMem_Realloc(b->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static int
put(Buffer *b, const char *text, Py_ssize_t n)
{
    if (reserve(b, n) < 0)
        return -1;
    memcpy(b->data + b->len, text, (size_t)n);
    b->len += n;
    return 0;
}

#define PUT_LITERAL(b, s) put((b), (s), (Py_ssize_t)(sizeof(s) - 1))

/* Decimal text of a signed 64-bit integer, as Python's str(int) writes it. */
static int
put_int(Buffer *b, int64_t value)
{
    char digits[24];
    int i = (int)sizeof(digits);
    uint64_t magnitude = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
    do {
        digits[--i] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude);
    if (value < 0)
        digits[--i] = '-';
    return put(b, digits + i, (Py_ssize_t)sizeof(digits) - i);
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

/* bytes.decode("utf-8", "replace"), appended as UTF-8. */
static int
put_decoded(Buffer *b, PyObject *bytes)
{
    const char *p = PyBytes_AS_STRING(bytes);
    Py_ssize_t n = PyBytes_GET_SIZE(bytes);
    if (is_ascii((const unsigned char *)p, n))
        return put(b, p, n);
    PyObject *text = PyUnicode_DecodeUTF8(p, n, "replace");
    if (text == NULL)
        return -1;
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);  /* "replace" never yields surrogates */
    int status = utf8 == NULL ? -1 : put(b, utf8, size);
    Py_DECREF(text);
    return status;
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
    Buffer b = {NULL, 0, 0};
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
    result = PyUnicode_DecodeUTF8(b.data ? b.data : "", b.len, "strict");

done:
    PyMem_Free(b.data);
    return result;
}

static PyMethodDef methods[] = {
    {"string_lines", string_lines, METH_VARARGS, string_lines_doc},
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
    return PyModule_Create(&module_def);
}
