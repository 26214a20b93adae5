/* A pool's later plain files merged into the fold in C (renderer/merge_mc.py `_merge_batched_files_py` is the
 * reference, and the fallback where this is not built).
 *
 * The loop runs once per file of a pool after its first MachineConfig: 20,000 times for the benchmark's
 * cluster, ~15 dict operations each. In Python that is most of the merge; here it is the dict copies.
 *
 * merge_files(batched, items, index, made_final, unfinished, merged_into, reset_copy) -> None
 *     For each file `f` of `batched` (exact dicts, as plain files are), in order, exactly what the Python
 *     loop does:
 *       path = f["path"]; contents = f.get("contents")
 *       usual = contents is an exact dict without "compression", and f has no "user" and no "group"
 *       existing = index.get(path)
 *       new path:  usual -> new = f.copy(), new["contents"] = contents.copy(), overwrite true beside a
 *                  source when unset; made_final[path] = f
 *                  else -> new = reset_copy(f), appended to `unfinished`
 *                  new appended to `items`, index[path] = new
 *       seen path: if made_final.pop(path) gave an original: existing.clear(), existing.update(reset_copy(original)),
 *                  existing appended to `unfinished`;
 *                  merged_into(existing); then the child (usual: {**f, "contents": {**contents, "compression": ""}},
 *                  else reset_copy(f)) merged into existing as `ignfold.merge_adopted` does.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *s_path, *s_contents, *s_compression, *s_user, *s_group, *s_source, *s_overwrite, *s_empty;

/* `ignfold.merge_adopted(existing, child)`: an inner dict updates the existing one, or is taken over
 * when that is absent (a non-dict) and the child's is not empty; any other value is set. */
static int merge_adopted(PyObject *existing, PyObject *child) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(child, &pos, &key, &value)) {
        if (PyDict_CheckExact(value)) {
            PyObject *current = PyDict_GetItemWithError(existing, key);
            if (current == NULL && PyErr_Occurred())
                return -1;
            if (current != NULL && PyDict_CheckExact(current)) {
                if (PyDict_Update(current, value) < 0)
                    return -1;
                continue;
            }
            if (PyDict_GET_SIZE(value) == 0)
                continue;
        }
        if (PyDict_SetItem(existing, key, value) < 0)
            return -1;
    }
    return 0;
}

/* {**f, "contents": {**contents, "compression": ""}} */
static PyObject *reset_usual(PyObject *f, PyObject *contents) {
    PyObject *child = PyDict_Copy(f);
    if (child == NULL)
        return NULL;
    PyObject *reset = PyDict_Copy(contents);
    if (reset == NULL || PyDict_SetItem(reset, s_compression, s_empty) < 0 ||
        PyDict_SetItem(child, s_contents, reset) < 0) {
        Py_XDECREF(reset);
        Py_DECREF(child);
        return NULL;
    }
    Py_DECREF(reset);
    return child;
}

/* The copy of a new usual file in final form: contents copied, `overwrite: true` beside a source when unset. */
static PyObject *final_copy(PyObject *f, PyObject *contents) {
    PyObject *new = PyDict_Copy(f);
    if (new == NULL)
        return NULL;
    PyObject *own = PyDict_Copy(contents);
    if (own == NULL || PyDict_SetItem(new, s_contents, own) < 0)
        goto fail;
    PyObject *source = PyDict_GetItemWithError(contents, s_source);
    if (source == NULL && PyErr_Occurred())
        goto fail;
    if (source != NULL && source != Py_None) {
        PyObject *overwrite = PyDict_GetItemWithError(new, s_overwrite);
        if (overwrite == NULL && PyErr_Occurred())
            goto fail;
        if ((overwrite == NULL || overwrite == Py_None) && PyDict_SetItem(new, s_overwrite, Py_True) < 0)
            goto fail;
    }
    Py_DECREF(own);
    return new;
fail:
    Py_XDECREF(own);
    Py_DECREF(new);
    return NULL;
}

/* 1 when the key is in the dict, 0 when not, -1 on error */
static int has(PyObject *dict, PyObject *key) {
    return PyDict_Contains(dict, key);
}

static int merge_one(PyObject *f, PyObject *items, PyObject *index, PyObject *made_final, PyObject *unfinished,
                     PyObject *merged_into, PyObject *reset_copy) {
    if (!PyDict_CheckExact(f)) {
        PyErr_SetString(PyExc_TypeError, "merge_files: a batched file is not a dict");
        return -1;
    }
    PyObject *path = PyDict_GetItemWithError(f, s_path); /* borrowed */
    if (path == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, s_path);
        return -1;
    }
    PyObject *contents = PyDict_GetItemWithError(f, s_contents); /* borrowed */
    if (contents == NULL && PyErr_Occurred())
        return -1;
    int usual = contents != NULL && PyDict_CheckExact(contents);
    int found;
    if (usual) {
        if ((found = has(contents, s_compression)) < 0)
            return -1;
        usual = !found;
    }
    if (usual) {
        if ((found = has(f, s_user)) < 0)
            return -1;
        usual = !found;
    }
    if (usual) {
        if ((found = has(f, s_group)) < 0)
            return -1;
        usual = !found;
    }
    /* both held across the callbacks, which run Python code that could replace them in `f` */
    Py_INCREF(path);
    Py_XINCREF(contents);
    int rc = -1;
    PyObject *existing = PyDict_GetItemWithError(index, path);
    if (existing == NULL && PyErr_Occurred())
        goto done;
    if (existing == NULL || existing == Py_None) {
        PyObject *new;
        if (usual) {
            new = final_copy(f, contents);
            if (new == NULL || PyDict_SetItem(made_final, path, f) < 0) {
                Py_XDECREF(new);
                goto done;
            }
        } else {
            new = PyObject_CallOneArg(reset_copy, f);
            if (new == NULL || PyList_Append(unfinished, new) < 0) {
                Py_XDECREF(new);
                goto done;
            }
        }
        rc = (PyList_Append(items, new) < 0 || PyDict_SetItem(index, path, new) < 0) ? -1 : 0;
        Py_DECREF(new);
        goto done;
    }
    Py_INCREF(existing);
    PyObject *original = PyDict_GetItemWithError(made_final, path);
    if (original == NULL && PyErr_Occurred())
        goto release;
    if (original != NULL) {
        Py_INCREF(original);
        if (PyDict_DelItem(made_final, path) < 0) {
            Py_DECREF(original);
            goto release;
        }
        if (original != Py_None) {
            PyObject *copy = PyObject_CallOneArg(reset_copy, original);
            Py_DECREF(original);
            if (copy == NULL)
                goto release;
            if (!PyDict_Check(existing)) {
                Py_DECREF(copy);
                PyErr_SetString(PyExc_TypeError, "merge_files: a result file is not a dict");
                goto release;
            }
            PyDict_Clear(existing);
            int failed = PyDict_Update(existing, copy) < 0 || PyList_Append(unfinished, existing) < 0;
            Py_DECREF(copy);
            if (failed)
                goto release;
        } else {
            Py_DECREF(original);
        }
    }
    PyObject *noted = PyObject_CallOneArg(merged_into, existing);
    if (noted == NULL)
        goto release;
    Py_DECREF(noted);
    PyObject *child = usual ? reset_usual(f, contents) : PyObject_CallOneArg(reset_copy, f);
    if (child == NULL)
        goto release;
    if (!PyDict_CheckExact(child) || !PyDict_Check(existing)) {
        Py_DECREF(child);
        PyErr_SetString(PyExc_TypeError, "merge_files: a file copy is not a dict");
        goto release;
    }
    rc = merge_adopted(existing, child);
    Py_DECREF(child);
release:
    Py_DECREF(existing);
done:
    Py_XDECREF(contents);
    Py_DECREF(path);
    return rc;
}

static PyObject *merge_files(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError,
                        "merge_files(batched, items, index, made_final, unfinished, merged_into, reset_copy)");
        return NULL;
    }
    PyObject *batched = args[0], *items = args[1], *index = args[2], *made_final = args[3], *unfinished = args[4];
    if (!PyList_CheckExact(batched) || !PyList_CheckExact(items) || !PyDict_CheckExact(index) ||
        !PyDict_CheckExact(made_final) || !PyList_CheckExact(unfinished)) {
        PyErr_SetString(PyExc_TypeError, "merge_files: batched, items and unfinished are lists, index and made_final dicts");
        return NULL;
    }
    /* by index, not by a borrowed item pointer: a callback may change the list (it does not today) */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(batched); i++) {
        PyObject *f = PyList_GET_ITEM(batched, i);
        Py_INCREF(f);
        int rc = merge_one(f, items, index, made_final, unfinished, args[5], args[6]);
        Py_DECREF(f);
        if (rc < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"merge_files", (PyCFunction)(void (*)(void))merge_files, METH_FASTCALL,
     "merge a pool's later plain files into the fold's result list (merge_mc._merge_batched_files_py)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "renderer._foldfiles", NULL, 0, methods,
                                        NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__foldfiles(void) {
    struct { PyObject **slot; const char *text; } names[] = {
        {&s_path, "path"}, {&s_contents, "contents"}, {&s_compression, "compression"}, {&s_user, "user"},
        {&s_group, "group"}, {&s_source, "source"}, {&s_overwrite, "overwrite"}, {&s_empty, ""},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (*names[i].slot == NULL && (*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL)
            return NULL;
    }
    return PyModule_Create(&module_def);
}
