/* scrapy_urlunify._speedups: compiled versions of two hot paths, each with a pure-Python twin.
 *
 * PlainPath is the short path of Unifier._compute for a URL already written as the WHATWG
 * parser writes it (core/unify.py): split the URL by the unifier's canonical character classes,
 * look its host up in the unifier's host table, run the host's compiled test, and build the
 * Result as Unifier._plain_parts does. Any URL it cannot take whole (a host not seen yet, a
 * test asking for the steps, non-ASCII text) is handed back to the Python code, which gives
 * the same answer. tests/core/test_speedups.py checks both paths agree.
 *
 * ordered_add and ordered_contains are the probe-and-insert of FingerprintSet
 * (stores/fingerprints.py) on its array('Q') table.
 *
 * The build is optional (setup.py): without a C compiler the package runs on its Python code.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* PlainPath                                                                                */

typedef struct {
    PyObject_HEAD
    PyObject *hosts;          /* dict: host -> HostRules (the unifier's own table) */
    PyObject *index_pages;    /* frozenset of lower-case index file names */
    Py_ssize_t index_max_len; /* the longest of them: a longer last segment is none */
    PyObject *ident_head;     /* str, or NULL when the scheme is part of identifiers */
    PyObject *prefix_text;    /* str: the scope's prefix */
    PyObject *take_steps;     /* the marker a host's test returns for "take the steps" */
    PyObject *empty;          /* "" */
    PyTypeObject *result_type;
    Py_ssize_t i_ident, i_fast_test, i_canonical;
    unsigned char path_ok[128], query_ok[128], fragment_ok[128];
    vectorcallfunc vectorcall;
} PlainPath;

static int
fill_table(unsigned char *table, PyObject *chars, const char *name)
{
    memset(table, 0, 128);
    if (!PyUnicode_Check(chars) || !PyUnicode_IS_ASCII(chars)) {
        PyErr_Format(PyExc_TypeError, "%s must be an ASCII str", name);
        return -1;
    }
    const unsigned char *s = PyUnicode_1BYTE_DATA(chars);
    Py_ssize_t n = PyUnicode_GET_LENGTH(chars);
    for (Py_ssize_t i = 0; i < n; i++)
        table[s[i]] = 1;
    return 0;
}

static int
is_host_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

typedef struct {
    const unsigned char *p;
    Py_ssize_t n;
} Slice;

static int
slice_cmp(const void *a, const void *b)
{
    const Slice *x = a, *y = b;
    Py_ssize_t m = x->n < y->n ? x->n : y->n;
    int c = memcmp(x->p, y->p, (size_t)m);
    if (c)
        return c;
    return (x->n > y->n) - (x->n < y->n);
}

static PyObject *
ascii_str(const unsigned char *s, Py_ssize_t n)
{
    PyObject *o = PyUnicode_New(n, 127);
    if (o != NULL)
        memcpy(PyUnicode_1BYTE_DATA(o), s, (size_t)n);
    return o;
}

/* Whether the lower-case spelling of s[0:n] is in the set. -1: error. */
static int
lower_in(PyObject *set, const unsigned char *s, Py_ssize_t n)
{
    PyObject *o = PyUnicode_New(n, 127);
    if (o == NULL)
        return -1;
    unsigned char *d = PyUnicode_1BYTE_DATA(o);
    for (Py_ssize_t i = 0; i < n; i++)
        d[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (unsigned char)(s[i] + 32) : s[i];
    int r = PySet_Contains(set, o);
    Py_DECREF(o);
    return r;
}

#define SMALL_ITEMS 32

static PyObject *
plainpath_run(PlainPath *self, PyObject *url)
{
    if (!PyUnicode_CheckExact(url) || !PyUnicode_IS_ASCII(url))
        Py_RETURN_NONE;
    const unsigned char *s = PyUnicode_1BYTE_DATA(url);
    Py_ssize_t n = PyUnicode_GET_LENGTH(url);
    Py_ssize_t pos, scheme_len;
    /* (https?)://([a-z0-9.\-]+)(/[path]*)(?:\?([query]*))?(?:#([fragment]*))?\Z */
    if (n >= 8 && memcmp(s, "https://", 8) == 0) {
        scheme_len = 5;
        pos = 8;
    }
    else if (n >= 7 && memcmp(s, "http://", 7) == 0) {
        scheme_len = 4;
        pos = 7;
    }
    else
        Py_RETURN_NONE;
    Py_ssize_t host_start = pos;
    while (pos < n && is_host_char(s[pos]))
        pos++;
    if (pos == host_start || pos >= n || s[pos] != '/')
        Py_RETURN_NONE;
    Py_ssize_t host_end = pos, path_start = pos;
    pos++;
    while (pos < n && s[pos] < 128 && self->path_ok[s[pos]])
        pos++;
    Py_ssize_t path_end = pos;
    Py_ssize_t q_start = -1, q_end = -1, f_start = -1;
    if (pos < n && s[pos] == '?') {
        q_start = ++pos;
        while (pos < n && s[pos] < 128 && self->query_ok[s[pos]])
            pos++;
        q_end = pos;
    }
    if (pos < n && s[pos] == '#') {
        f_start = ++pos;
        while (pos < n && s[pos] < 128 && self->fragment_ok[s[pos]])
            pos++;
    }
    if (pos != n)
        Py_RETURN_NONE;
    /* a dot segment: the parser would resolve it */
    for (Py_ssize_t i = path_start; i + 1 < path_end; i++)
        if (s[i] == '/' && s[i + 1] == '.')
            Py_RETURN_NONE;

    PyObject *host = NULL, *path = NULL, *query = NULL, *fragment = NULL, *test = NULL;
    PyObject *fetch = NULL, *ident = NULL, *result = NULL;
    Slice small[SMALL_ITEMS], *items = small;

    host = ascii_str(s + host_start, host_end - host_start);
    if (host == NULL)
        goto done;
    PyObject *hr = PyDict_GetItemWithError(self->hosts, host); /* borrowed */
    if (hr == NULL) {
        if (!PyErr_Occurred())
            result = Py_NewRef(Py_None); /* a host not seen yet: the parser checks it */
        goto done;
    }
    if (!PyTuple_Check(hr) || PyTuple_GET_SIZE(hr) <= self->i_canonical
            || PyTuple_GET_SIZE(hr) <= self->i_fast_test || PyTuple_GET_SIZE(hr) <= self->i_ident) {
        PyErr_SetString(PyExc_TypeError, "the host table must hold HostRules");
        goto done;
    }
    Py_INCREF(hr); /* the test below runs Python code, which may change the table */
    int canonical = PyObject_IsTrue(PyTuple_GET_ITEM(hr, self->i_canonical));
    if (canonical <= 0) {
        if (canonical == 0)
            result = Py_NewRef(Py_None);
        Py_DECREF(hr);
        goto done;
    }
    path = ascii_str(s + path_start, path_end - path_start);
    if (path == NULL)
        goto drop_hr;
    if (q_start >= 0) {
        query = ascii_str(s + q_start, q_end - q_start);
        if (query == NULL)
            goto drop_hr;
    }
    if (f_start >= 0) {
        fragment = ascii_str(s + f_start, n - f_start);
        if (fragment == NULL)
            goto drop_hr;
    }
    {
        PyObject *args[5] = {path, query ? query : Py_None, fragment ? fragment : Py_None, self->empty, host};
        test = PyObject_Vectorcall(PyTuple_GET_ITEM(hr, self->i_fast_test), args, 5, NULL);
    }
    if (test == NULL)
        goto drop_hr;
    if (test == self->take_steps) {
        result = Py_NewRef(self->take_steps);
        goto drop_hr;
    }
    int drop_fragment = PyObject_IsTrue(test);
    if (drop_fragment < 0)
        goto drop_hr;
    PyObject *identity_host = PyTuple_GET_ITEM(hr, self->i_ident);
    PyObject *head = self->ident_head;
    if (!PyUnicode_Check(identity_host) || !PyUnicode_IS_ASCII(identity_host)
            || (head != NULL && !PyUnicode_IS_ASCII(head))
            || (head == NULL && !PyUnicode_IS_ASCII(self->prefix_text))) {
        result = Py_NewRef(Py_None); /* an identifier not in ASCII: left to the Python code */
        goto drop_hr;
    }
    if (drop_fragment) {
        fetch = PyUnicode_Substring(url, 0, f_start - 1);
        if (fetch == NULL)
            goto drop_hr;
    }
    else
        fetch = Py_NewRef(url);

    /* the path: no trailing slash (the root stays), then no index page (repeated) */
    const unsigned char *p = s + path_start;
    Py_ssize_t plen = path_end - path_start;
    if (plen > 1 && p[plen - 1] == '/') {
        while (plen > 0 && p[plen - 1] == '/')
            plen--;
        if (plen == 0)
            plen = 1;
    }
    for (;;) {
        Py_ssize_t k = plen - 1;
        while (k > 0 && p[k] != '/')
            k--;
        const unsigned char *last = p + k + 1;
        Py_ssize_t last_len = plen - k - 1;
        if (last_len > self->index_max_len || memchr(last, '.', (size_t)last_len) == NULL)
            break;
        int found = lower_in(self->index_pages, last, last_len);
        if (found < 0)
            goto drop_hr;
        if (!found)
            break;
        plen = k;
        while (plen > 0 && p[plen - 1] == '/')
            plen--;
        if (plen == 0)
            plen = 1;
    }

    /* the query: no empty items, sorted */
    Py_ssize_t nitems = 0, qlen = 0;
    if (q_start >= 0) {
        Py_ssize_t cap = 1;
        for (Py_ssize_t i = q_start; i < q_end; i++)
            cap += s[i] == '&';
        if (cap > SMALL_ITEMS) {
            items = PyMem_Malloc((size_t)cap * sizeof(Slice));
            if (items == NULL) {
                PyErr_NoMemory();
                goto drop_hr;
            }
        }
        Py_ssize_t start = q_start;
        for (Py_ssize_t i = q_start; i <= q_end; i++) {
            if (i == q_end || s[i] == '&') {
                Py_ssize_t len = i - start;
                if (len > 0 && s[i - 1] != '=') {
                    items[nitems].p = s + start;
                    items[nitems].n = len;
                    nitems++;
                    qlen += len + 1;
                }
                start = i + 1;
            }
        }
        if (nitems > 1)
            qsort(items, (size_t)nitems, sizeof(Slice), slice_cmp);
    }
    Py_ssize_t head_len = head != NULL ? PyUnicode_GET_LENGTH(head)
                                       : PyUnicode_GET_LENGTH(self->prefix_text) + scheme_len + 3;
    Py_ssize_t host_len = PyUnicode_GET_LENGTH(identity_host);
    Py_ssize_t frag_len = (fragment != NULL && !drop_fragment) ? PyUnicode_GET_LENGTH(fragment) + 1 : 0;
    ident = PyUnicode_New(head_len + host_len + plen + qlen + frag_len, 127);
    if (ident == NULL)
        goto drop_hr;
    unsigned char *d = PyUnicode_1BYTE_DATA(ident);
    if (head != NULL) {
        memcpy(d, PyUnicode_1BYTE_DATA(head), (size_t)head_len);
        d += head_len;
    }
    else {
        Py_ssize_t pl = PyUnicode_GET_LENGTH(self->prefix_text);
        memcpy(d, PyUnicode_1BYTE_DATA(self->prefix_text), (size_t)pl);
        d += pl;
        memcpy(d, s, (size_t)scheme_len + 3);
        d += scheme_len + 3;
    }
    memcpy(d, PyUnicode_1BYTE_DATA(identity_host), (size_t)host_len);
    d += host_len;
    memcpy(d, p, (size_t)plen);
    d += plen;
    for (Py_ssize_t i = 0; i < nitems; i++) {
        *d++ = i ? '&' : '?';
        memcpy(d, items[i].p, (size_t)items[i].n);
        d += items[i].n;
    }
    if (frag_len) {
        *d++ = '#';
        memcpy(d, s + f_start, (size_t)frag_len - 1);
    }

    result = self->result_type->tp_alloc(self->result_type, 3);
    if (result != NULL) {
        PyTuple_SET_ITEM(result, 0, fetch);
        PyTuple_SET_ITEM(result, 1, ident);
        PyTuple_SET_ITEM(result, 2, Py_NewRef(Py_None));
        fetch = ident = NULL;
    }
drop_hr:
    Py_DECREF(hr);
done:
    if (items != small)
        PyMem_Free(items);
    Py_XDECREF(host);
    Py_XDECREF(path);
    Py_XDECREF(query);
    Py_XDECREF(fragment);
    Py_XDECREF(test);
    Py_XDECREF(fetch);
    Py_XDECREF(ident);
    return result;
}

static PyObject *
plainpath_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "PlainPath takes one URL");
        return NULL;
    }
    return plainpath_run((PlainPath *)callable, args[0]);
}

static PyObject *
plainpath_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"hosts", "path_chars", "query_chars", "fragment_chars", "index_pages",
                             "ident_head", "prefix_text", "take_steps", "result_type", "fields", NULL};
    PyObject *hosts, *path_chars, *query_chars, *fragment_chars, *index_pages, *ident_head;
    PyObject *prefix_text, *take_steps, *result_type;
    Py_ssize_t i_ident, i_fast_test, i_canonical;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!UUUO!OUOO!(nnn)", kwlist, &PyDict_Type, &hosts,
                                     &path_chars, &query_chars, &fragment_chars, &PyFrozenSet_Type,
                                     &index_pages, &ident_head, &prefix_text, &take_steps, &PyType_Type,
                                     &result_type, &i_ident, &i_fast_test, &i_canonical))
        return NULL;
    if (ident_head != Py_None && !PyUnicode_Check(ident_head)) {
        PyErr_SetString(PyExc_TypeError, "ident_head must be a str or None");
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)result_type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "result_type must be a tuple type");
        return NULL;
    }
    if (i_ident < 0 || i_fast_test < 0 || i_canonical < 0) {
        PyErr_SetString(PyExc_ValueError, "fields must be indexes");
        return NULL;
    }
    PlainPath *self = (PlainPath *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    if (fill_table(self->path_ok, path_chars, "path_chars") < 0
            || fill_table(self->query_ok, query_chars, "query_chars") < 0
            || fill_table(self->fragment_ok, fragment_chars, "fragment_chars") < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->hosts = Py_NewRef(hosts);
    self->index_pages = Py_NewRef(index_pages);
    self->index_max_len = 0;
    PyObject *names = PyObject_GetIter(index_pages), *name;
    if (names == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    while ((name = PyIter_Next(names)) != NULL) {
        if (PyUnicode_Check(name) && PyUnicode_GET_LENGTH(name) > self->index_max_len)
            self->index_max_len = PyUnicode_GET_LENGTH(name);
        Py_DECREF(name);
    }
    Py_DECREF(names);
    if (PyErr_Occurred()) {
        Py_DECREF(self);
        return NULL;
    }
    self->ident_head = ident_head == Py_None ? NULL : Py_NewRef(ident_head);
    self->prefix_text = Py_NewRef(prefix_text);
    self->take_steps = Py_NewRef(take_steps);
    self->result_type = (PyTypeObject *)Py_NewRef(result_type);
    self->empty = PyUnicode_New(0, 0);
    if (self->empty == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->i_ident = i_ident;
    self->i_fast_test = i_fast_test;
    self->i_canonical = i_canonical;
    self->vectorcall = plainpath_vectorcall;
    return (PyObject *)self;
}

static int
plainpath_traverse(PlainPath *self, visitproc visit, void *arg)
{
    Py_VISIT(self->hosts);
    Py_VISIT(self->index_pages);
    Py_VISIT(self->ident_head);
    Py_VISIT(self->prefix_text);
    Py_VISIT(self->take_steps);
    Py_VISIT(self->result_type);
    return 0;
}

static int
plainpath_clear(PlainPath *self)
{
    Py_CLEAR(self->hosts);
    Py_CLEAR(self->index_pages);
    Py_CLEAR(self->ident_head);
    Py_CLEAR(self->prefix_text);
    Py_CLEAR(self->take_steps);
    Py_CLEAR(self->result_type);
    Py_CLEAR(self->empty);
    return 0;
}

static void
plainpath_dealloc(PlainPath *self)
{
    PyObject_GC_UnTrack(self);
    plainpath_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject PlainPathType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "scrapy_urlunify._speedups.PlainPath",
    .tp_doc = PyDoc_STR("PlainPath(hosts, path_chars, query_chars, fragment_chars, index_pages, ident_head, "
                        "prefix_text, take_steps, result_type, fields)(url) -> Result | take_steps | None\n\n"
                        "The compiled short path of Unifier._compute (see core/unify.py)."),
    .tp_basicsize = sizeof(PlainPath),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = plainpath_new,
    .tp_dealloc = (destructor)plainpath_dealloc,
    .tp_traverse = (traverseproc)plainpath_traverse,
    .tp_clear = (inquiry)plainpath_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(PlainPath, vectorcall),
};

/* ---------------------------------------------------------------------------------------- */
/* FingerprintSet's probes                                                                  */

/* The table of a FingerprintSet, writable, as uint64 slots. */
static int
get_table(PyObject *table, Py_buffer *view)
{
    if (PyObject_GetBuffer(table, view, PyBUF_WRITABLE | PyBUF_FORMAT) < 0)
        return -1;
    if (view->itemsize != 8 || view->format == NULL || (strcmp(view->format, "Q") != 0 && strcmp(view->format, "L") != 0)) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "the table must be an array('Q')");
        return -1;
    }
    return 0;
}

static int
parse_probe(PyObject *const *args, Py_ssize_t nargs, const char *name, uint64_t *fp, unsigned long long *n,
            int *shift_in, int *shift_out)
{
    if (nargs != 5) {
        PyErr_Format(PyExc_TypeError, "%s(table, fp, n, shift_in, shift_out)", name);
        return -1;
    }
    unsigned long long v = PyLong_AsUnsignedLongLong(args[1]);
    if (v == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    *fp = (uint64_t)v;
    *n = PyLong_AsUnsignedLongLong(args[2]);
    if (*n == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    *shift_in = (int)PyLong_AsLong(args[3]);
    *shift_out = (int)PyLong_AsLong(args[4]);
    if (PyErr_Occurred())
        return -1;
    if (*shift_in < 0 || *shift_in > 63 || *shift_out < 0 || *shift_out > 63) {
        PyErr_SetString(PyExc_ValueError, "shifts must be in [0, 63]");
        return -1;
    }
    return 0;
}

/* The slot of the first member not smaller than fp in the run from its home slot, or of the
 * run's end (the empty slot ending it); -1 when the table has no empty slot from there. */
static Py_ssize_t
seek(const uint64_t *t, Py_ssize_t len, uint64_t fp, unsigned long long n, int shift_in, int shift_out)
{
    /* floor(fp * n / 2**64) to within a quarter slot, as FingerprintSet computes it */
    Py_ssize_t i = (Py_ssize_t)(((unsigned __int128)(fp >> shift_in) * n) >> shift_out);
    while (i < len && t[i] && t[i] < fp)
        i++;
    return i < len ? i : -1;
}

/* ordered_add(table, fp, n, shift_in, shift_out) -> slot index of the run's end after the
 * insert (>= 0: added; the caller extends the table when it is the last slot), or -1 when fp
 * was a member. fp != 0 (the caller keeps 0 apart). */
static PyObject *
ordered_add(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t fp;
    unsigned long long n;
    int shift_in, shift_out;
    if (parse_probe(args, nargs, "ordered_add", &fp, &n, &shift_in, &shift_out) < 0)
        return NULL;
    if (fp == 0) {
        PyErr_SetString(PyExc_ValueError, "0 is kept apart from the table");
        return NULL;
    }
    Py_buffer view;
    if (get_table(args[0], &view) < 0)
        return NULL;
    uint64_t *t = view.buf;
    Py_ssize_t len = view.len / 8;
    Py_ssize_t i = seek(t, len, fp, n, shift_in, shift_out);
    Py_ssize_t end = -1;
    if (i < 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "the table has no empty slot after the home slot");
        return NULL;
    }
    if (t[i] == fp) {
        PyBuffer_Release(&view);
        return PyLong_FromLong(-1);
    }
    end = i;
    while (end < len && t[end])
        end++;
    if (end >= len) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "the table's last slot must stay empty");
        return NULL;
    }
    if (end > i)
        memmove(t + i + 1, t + i, (size_t)(end - i) * 8);
    t[i] = fp;
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(end);
}

/* ordered_contains(table, fp, n, shift_in, shift_out) -> bool (fp != 0) */
static PyObject *
ordered_contains(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t fp;
    unsigned long long n;
    int shift_in, shift_out;
    if (parse_probe(args, nargs, "ordered_contains", &fp, &n, &shift_in, &shift_out) < 0)
        return NULL;
    Py_buffer view;
    if (get_table(args[0], &view) < 0)
        return NULL;
    Py_ssize_t i = seek(view.buf, view.len / 8, fp, n, shift_in, shift_out);
    int found = fp != 0 && i >= 0 && ((uint64_t *)view.buf)[i] == fp;
    PyBuffer_Release(&view);
    return PyBool_FromLong(found);
}

/* ordered_rehash(old, new, n, shift_in, shift_out) -> int: FingerprintSet._resize's pass.
 * The members of old, in order, each to its home slot in new or right after the member before
 * it. Returns 0 when done; else the length new needs (its last slot stays empty), with new
 * left untouched: the caller extends it and calls again. */
static PyObject *
ordered_rehash(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "ordered_rehash(old, new, n, shift_in, shift_out)");
        return NULL;
    }
    unsigned long long n = PyLong_AsUnsignedLongLong(args[2]);
    if (n == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    int shift_in = (int)PyLong_AsLong(args[3]), shift_out = (int)PyLong_AsLong(args[4]);
    if (PyErr_Occurred())
        return NULL;
    if (shift_in < 0 || shift_in > 63 || shift_out < 0 || shift_out > 63) {
        PyErr_SetString(PyExc_ValueError, "shifts must be in [0, 63]");
        return NULL;
    }
    Py_buffer old, new;
    if (get_table(args[0], &old) < 0)
        return NULL;
    if (get_table(args[1], &new) < 0) {
        PyBuffer_Release(&old);
        return NULL;
    }
    const uint64_t *o = old.buf;
    uint64_t *t = new.buf;
    Py_ssize_t olen = old.len / 8, len = new.len / 8;
    Py_ssize_t free_slot = 0, needed = 0;
    for (int write = 0; write < 2; write++) {
        free_slot = 0;
        for (Py_ssize_t k = 0; k < olen; k++) {
            uint64_t fp = o[k];
            if (!fp)
                continue;
            Py_ssize_t i = (Py_ssize_t)(((unsigned __int128)(fp >> shift_in) * n) >> shift_out);
            if (i < free_slot)
                i = free_slot;
            if (write)
                t[i] = fp;
            else if (i + 2 > needed)
                needed = i + 2;
            free_slot = i + 1;
        }
        if (!write && needed > len) {
            PyBuffer_Release(&old);
            PyBuffer_Release(&new);
            return PyLong_FromSsize_t(needed);
        }
    }
    PyBuffer_Release(&old);
    PyBuffer_Release(&new);
    return PyLong_FromLong(0);
}

static PyMethodDef methods[] = {
    {"ordered_rehash", (PyCFunction)(void (*)(void))ordered_rehash, METH_FASTCALL,
     "ordered_rehash(old, new, n, shift_in, shift_out) -> int: FingerprintSet's resize."},
    {"ordered_add", (PyCFunction)(void (*)(void))ordered_add, METH_FASTCALL,
     "ordered_add(table, fp, n, shift_in, shift_out) -> int: FingerprintSet's insert."},
    {"ordered_contains", (PyCFunction)(void (*)(void))ordered_contains, METH_FASTCALL,
     "ordered_contains(table, fp, n, shift_in, shift_out) -> bool: FingerprintSet's search."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "scrapy_urlunify._speedups",
    "Compiled twins of two hot paths (see the source's opening comment).", -1, methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    if (PyType_Ready(&PlainPathType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&PlainPathType);
    if (PyModule_AddObject(m, "PlainPath", (PyObject *)&PlainPathType) < 0) {
        Py_DECREF(&PlainPathType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
