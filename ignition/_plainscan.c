/* The plain-file test of ignition/rules/plain.py for a whole list, in C: sound, not complete.
 *
 * plain_file_list(entries) -> bool
 *     True only when `plain_file(entry)` holds for every entry; False means "not sure" and the Python tests
 *     decide (tests/ignition/test_plainscan.py checks that promise against `plain_file`). It takes the
 *     commonest shape only, which a rendered cluster holds by the ten thousand:
 *         {"path": "/clean/absolute", "mode": 0..0o777, "overwrite": bool,
 *          "contents": {"source": "" | "data:,<text>" | "data:;base64,<padded base64>",
 *                       "compression": "" | "gzip"}}
 *     every member optional but `path`, `contents` and its `source`; members of exactly those JSON types
 *     (no null, no bool for a number); <text> the characters and %XX escapes of PLAIN_DATA_URL's text part;
 *     the path printable ASCII without an empty, "." or ".." element. Anything else (owners, a media type,
 *     a missing source) answers False.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

static int url_char(unsigned char c) {
    /* [!$&'()*+,\-./0-9:;=?@A-Z_a-z~] */
    if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
        return 1;
    return c != 0 && strchr("!$&'()*+,-./:;=?@_~", c) != NULL;
}

static int hex_digit(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
}

static int b64_char(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '+' || c == '/';
}

/* An exact str of ASCII characters: its bytes and length, or NULL */
static const unsigned char *ascii_of(PyObject *value, Py_ssize_t *n) {
    if (!PyUnicode_CheckExact(value) || PyUnicode_READY(value) < 0 || !PyUnicode_IS_ASCII(value))
        return NULL;
    *n = PyUnicode_GET_LENGTH(value);
    return PyUnicode_1BYTE_DATA(value);
}

/* "/" then elements of printable ASCII other than "/", none empty, "." or ".." */
static int clean_absolute(PyObject *value) {
    Py_ssize_t n;
    const unsigned char *s = ascii_of(value, &n);
    if (s == NULL || n < 2 || s[0] != '/')
        return 0;
    Py_ssize_t start = 1;
    for (Py_ssize_t i = 1; i <= n; i++) {
        if (i < n && s[i] != '/') {
            if (s[i] < 0x20 || s[i] > 0x7e)
                return 0;
            continue;
        }
        Py_ssize_t len = i - start;
        if (len == 0 || (len == 1 && s[start] == '.') || (len == 2 && s[start] == '.' && s[start + 1] == '.'))
            return 0;
        start = i + 1;
    }
    return 1;
}

static int plain_source(PyObject *value) {
    Py_ssize_t n;
    const unsigned char *s = ascii_of(value, &n);
    if (s == NULL)
        return 0;
    if (n == 0)
        return 1;
    if (n >= 6 && memcmp(s, "data:,", 6) == 0) {
        for (Py_ssize_t i = 6; i < n; i++) {
            if (s[i] == '%') {
                if (i + 2 >= n || !hex_digit(s[i + 1]) || !hex_digit(s[i + 2]))
                    return 0;
                i += 2;
            } else if (!url_char(s[i])) {
                return 0;
            }
        }
        return 1;
    }
    if (n >= 13 && memcmp(s, "data:;base64,", 13) == 0) {
        Py_ssize_t len = n - 13;
        const unsigned char *b = s + 13;
        if (len % 4 != 0)
            return 0;
        Py_ssize_t pad = len > 0 && b[len - 1] == '=' ? (b[len - 2] == '=' ? 2 : 1) : 0;
        for (Py_ssize_t i = 0; i < len - pad; i++) {
            if (!b64_char(b[i]))
                return 0;
        }
        return 1;
    }
    return 0;
}

static int is_key(PyObject *key, const char *name) {
    return PyUnicode_CheckExact(key) && PyUnicode_CompareWithASCIIString(key, name) == 0;
}

static int plain_contents(PyObject *contents) {
    if (!PyDict_CheckExact(contents))
        return 0;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int sourced = 0;
    while (PyDict_Next(contents, &pos, &key, &value)) {
        if (is_key(key, "source")) {
            if (!plain_source(value))
                return 0;
            sourced = 1;
        } else if (is_key(key, "compression")) {
            if (!PyUnicode_CheckExact(value) || (PyUnicode_CompareWithASCIIString(value, "") != 0
                                                 && PyUnicode_CompareWithASCIIString(value, "gzip") != 0))
                return 0;
        } else {
            return 0;
        }
    }
    return sourced;
}

static int plain_entry(PyObject *entry) {
    if (!PyDict_CheckExact(entry))
        return 0;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int pathed = 0, contented = 0;
    while (PyDict_Next(entry, &pos, &key, &value)) {
        if (is_key(key, "path")) {
            if (!clean_absolute(value))
                return 0;
            pathed = 1;
        } else if (is_key(key, "mode")) {
            if (!PyLong_CheckExact(value))
                return 0;
            int overflow = 0;
            long mode = PyLong_AsLongAndOverflow(value, &overflow);
            if (overflow || mode < 0 || mode > 0777)
                return 0;
        } else if (is_key(key, "overwrite")) {
            if (!PyBool_Check(value))
                return 0;
        } else if (is_key(key, "contents")) {
            if (!plain_contents(value))
                return 0;
            contented = 1;
        } else {
            return 0;
        }
    }
    return pathed && contented;
}

static PyObject *plain_file_list(PyObject *Py_UNUSED(module), PyObject *entries) {
    if (!PyList_CheckExact(entries))
        Py_RETURN_FALSE;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(entries); i++) {
        if (!plain_entry(PyList_GET_ITEM(entries, i)))
            Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

static PyMethodDef methods[] = {
    {"plain_file_list", plain_file_list, METH_O, "True only when every entry is a plain file of the commonest shape"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "ignition._plainscan", NULL, 0, methods,
                                        NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__plainscan(void) {
    return PyModule_Create(&module_def);
}
