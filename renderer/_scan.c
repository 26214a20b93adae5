/* Whole-text scans of manifest text for the renderer, in C (the Python versions beside them are the reference).
 *
 * A render reads every byte of every JSON manifest three more times after parsing it: for the provenance
 * line table (a regex over each text, renderer/provenance.py `_string_lines`) and for the checks that let
 * orjson stand in for json (renderer/load.py `_fast_json`: colons counted, 19-digit runs, `\u003a`). In
 * Python those cost ~30 and ~8 instructions a byte; here each is one pass at a few.
 *
 * member_lines(text) -> dict | None
 *     `_string_lines`' table: for every match of
 *         "(?:path|name|device)"\s*:\s*"([^"\\\n]*+(?:\\.[^"\\\n]*+)*+)"
 *     found left to right as re.finditer finds them, value -> the line (1-based) where the match starts,
 *     the first match of a value winning. None when a matched value holds a backslash (its JSON escapes
 *     are decoded by the Python version) or the text is not of the 1-byte kind (latin-1).
 * json_colons(data, guard) -> int
 *     The number of b":" in `data`; -1 when `guard` is true and `data` holds a run of 19 ASCII digits or
 *     b"\\u003a" / b"\\u003A" (`_fast_json` then takes json's slow way).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* Py_UNICODE_ISSPACE for a latin-1 character: what \s matches in a str pattern */
static inline int is_space(Py_UCS1 c) {
    return Py_UNICODE_ISSPACE((Py_UCS4)c);
}

/* The end of a match of the pattern starting at the '"' at `at`, or -1; the value's bounds and whether it
 * holds a backslash are written out. Possessive value: no backtracking into it, as in the pattern. */
static Py_ssize_t match_member(const Py_UCS1 *s, Py_ssize_t n, Py_ssize_t at,
                               Py_ssize_t *vstart, Py_ssize_t *vend, int *escaped) {
    Py_ssize_t i = at + 1;
    static const char *const names[] = {"path", "name", "device"};
    int matched = 0;
    for (int k = 0; k < 3 && !matched; k++) {
        size_t len = strlen(names[k]);
        if (i + (Py_ssize_t)len < n && memcmp(s + i, names[k], len) == 0 && s[i + len] == '"') {
            i += (Py_ssize_t)len + 1;
            matched = 1;
        }
    }
    if (!matched)
        return -1;
    while (i < n && is_space(s[i]))
        i++;
    if (i >= n || s[i] != ':')
        return -1;
    i++;
    while (i < n && is_space(s[i]))
        i++;
    if (i >= n || s[i] != '"')
        return -1;
    i++;
    *vstart = i;
    *escaped = 0;
    while (i < n) {
        Py_UCS1 c = s[i];
        if (c == '"') {
            *vend = i;
            return i + 1;
        }
        if (c == '\n')
            return -1;
        if (c == '\\') {
            if (i + 1 >= n || s[i + 1] == '\n')
                return -1; /* \\. needs a character that is not a newline */
            *escaped = 1;
            i += 2;
            continue;
        }
        i++;
    }
    return -1;
}

static PyObject *member_lines(PyObject *Py_UNUSED(module), PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "member_lines: text must be a str");
        return NULL;
    }
    if (PyUnicode_READY(text) < 0)
        return NULL;
    if (PyUnicode_KIND(text) != PyUnicode_1BYTE_KIND)
        Py_RETURN_NONE;
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    PyObject *table = PyDict_New();
    if (table == NULL)
        return NULL;
    Py_ssize_t i = 0, counted = 0, line = 1;
    while (i < n) {
        const Py_UCS1 *q = memchr(s + i, '"', (size_t)(n - i));
        if (q == NULL)
            break;
        Py_ssize_t at = q - s, vstart = 0, vend = 0;
        int escaped = 0;
        Py_ssize_t end = match_member(s, n, at, &vstart, &vend, &escaped);
        if (end < 0) {
            i = at + 1;
            continue;
        }
        if (escaped) {
            Py_DECREF(table);
            Py_RETURN_NONE;
        }
        for (const Py_UCS1 *p = s + counted; (p = memchr(p, '\n', (size_t)(at - (p - s)))) != NULL; p++)
            line++;
        counted = at;
        PyObject *value = PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, s + vstart, vend - vstart);
        if (value == NULL) {
            Py_DECREF(table);
            return NULL;
        }
        PyObject *number = PyLong_FromSsize_t(line);
        PyObject *kept = number == NULL ? NULL : PyDict_SetDefault(table, value, number); /* the first wins */
        Py_XDECREF(number);
        Py_DECREF(value);
        if (kept == NULL) {
            Py_DECREF(table);
            return NULL;
        }
        i = end;
    }
    return table;
}

static inline int is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}

/* A run of 19 ASCII digits anywhere in s[0:n]: any 19 consecutive positions hold exactly one multiple of
 * 19 minus one, so only those are looked at, and the run around a digit found there measured. */
static int has_digit_run(const unsigned char *s, Py_ssize_t n) {
    for (Py_ssize_t i = 18; i < n; i += 19) {
        if (!is_digit(s[i]))
            continue;
        Py_ssize_t a = i, b = i;
        while (a > 0 && is_digit(s[a - 1]))
            a--;
        while (b + 1 < n && is_digit(s[b + 1]))
            b++;
        if (b - a + 1 >= 19)
            return 1;
    }
    return 0;
}

static int has_colon_escape(const unsigned char *s, Py_ssize_t n) {
    for (const unsigned char *p = s; (p = memchr(p, '\\', (size_t)(n - (p - s)))) != NULL; p++) {
        if (n - (p - s) >= 6 && memcmp(p + 1, "u003", 4) == 0 && (p[5] == 'a' || p[5] == 'A'))
            return 1;
    }
    return 0;
}

static PyObject *json_colons(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "json_colons(data, guard) takes 2 arguments");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    int guard = PyObject_IsTrue(args[1]);
    if (guard < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    const unsigned char *s = view.buf;
    Py_ssize_t n = view.len, colons = 0;
    if (guard && (has_colon_escape(s, n) || has_digit_run(s, n))) {
        PyBuffer_Release(&view);
        return PyLong_FromLong(-1);
    }
    for (Py_ssize_t i = 0; i < n; i++)
        colons += s[i] == ':';
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(colons);
}

static PyMethodDef methods[] = {
    {"member_lines", member_lines, METH_O, "value -> first line of the path/name/device members of a JSON text"},
    {"json_colons", (PyCFunction)(void (*)(void))json_colons, METH_FASTCALL,
     "b':' count of data; -1 when guarded and it holds 19 digits in a row or \\u003a"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "renderer._scan", NULL, 0, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__scan(void) {
    return PyModule_Create(&module_def);
}
