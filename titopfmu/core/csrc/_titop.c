/*
 * _titop.c -- the CPython extension around the core (titopfmu.core._titop).
 *
 * A thin adapter: a Model object owns one titop_model (built from flat arrays by
 * titopfmu.core.model), and its methods pass caller-owned buffers (numpy arrays, through the
 * buffer protocol) to the core. No physics here. Plain C API (no numpy headers, no cffi): it
 * builds with nothing but a C compiler and the Python headers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "titop.h"

#define BODY_INTS 11
#define BODY_DOUBLES 46 /* ..., armature (6), damping, stiffness, spring_ref (4), spring_pos (3) */
#define CLOSURE_DOUBLES 72

typedef struct {
    PyObject_HEAD
    titop_model m;
    void *mem;
    size_t data_size;
} ModelObject;

/* A contiguous buffer of at least n items of `itemsize` bytes, writable or not. */
static int get_buffer(PyObject *obj, Py_buffer *view, Py_ssize_t n, Py_ssize_t itemsize,
                      int writable, const char *what)
{
    if (PyObject_GetBuffer(obj, view, writable ? PyBUF_WRITABLE : PyBUF_SIMPLE) < 0)
        return -1;
    if (view->len < n * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, %zd needed", what, view->len,
                     n * itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static void Model_dealloc(ModelObject *self)
{
    PyMem_Free(self->mem);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Model_init(ModelObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"body_ints", "body_doubles", "port_ints", "port_doubles",
                             "ext_ints", "ext_doubles", "closure_ints", "closure_doubles",
                             "law_ints", "law_doubles", "nx", "nin", "mimic_ints",
                             "mimic_doubles", "flex_ints", "flex_doubles", NULL};
    Py_buffer b[14];
    int nx, nin;
    memset(b, 0, sizeof b);
    if (self->mem) {
        PyErr_SetString(PyExc_RuntimeError, "a Model is immutable: make a new one");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*y*y*y*y*y*y*y*y*y*ii|y*y*y*y*", kwlist,
                                     &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7],
                                     &b[8], &b[9], &nx, &nin, &b[10], &b[11], &b[12], &b[13]))
        return -1;
    int ok = -1;
    Py_ssize_t nb = b[0].len / (BODY_INTS * (Py_ssize_t)sizeof(int));
    Py_ssize_t np_ = b[2].len / (2 * (Py_ssize_t)sizeof(int));
    Py_ssize_t ne = b[4].len / (2 * (Py_ssize_t)sizeof(int));
    Py_ssize_t nc = b[6].len / (2 * (Py_ssize_t)sizeof(int));
    Py_ssize_t nl = b[8].len / (2 * (Py_ssize_t)sizeof(int));
    /* mimic joints: (follower, leader) and (multiplier, offset) per row; optional */
    Py_ssize_t nmi = b[10].buf ? b[10].len / (2 * (Py_ssize_t)sizeof(int)) : 0;
    if (b[1].len != nb * BODY_DOUBLES * (Py_ssize_t)sizeof(double) ||
        b[3].len != np_ * 3 * (Py_ssize_t)sizeof(double) ||
        b[5].len != ne * 3 * (Py_ssize_t)sizeof(double) ||
        b[7].len != nc * CLOSURE_DOUBLES * (Py_ssize_t)sizeof(double) ||
        b[9].len != nl * TITOP_LAW_DOUBLES * (Py_ssize_t)sizeof(double) ||
        (b[10].buf != NULL) != (b[11].buf != NULL) ||
        (b[11].buf && b[11].len != nmi * 2 * (Py_ssize_t)sizeof(double))) {
        PyErr_SetString(PyExc_ValueError, "inconsistent model arrays");
        goto done;
    }
    /* flexible parts (titop_flex): per part [body, n, x0, ncases, nnodes, case codes (ncases)]
       ints
       and its titop_flex_doubles row; optional */
    Py_ssize_t nfl = 0, nfi = b[12].buf ? b[12].len / (Py_ssize_t)sizeof(int) : 0;
    size_t nfd = 0, nlee = 0;
    if ((b[12].buf != NULL) != (b[13].buf != NULL)) {
        PyErr_SetString(PyExc_ValueError, "inconsistent model arrays");
        goto done;
    }
    for (Py_ssize_t o = 0; o < nfi; nfl++) {
        const int *fi = (const int *)b[12].buf + o;
        if (o + 5 > nfi || fi[1] < 1 || fi[3] < 0 || fi[4] < 0 || o + 5 + fi[3] > nfi) {
            PyErr_SetString(PyExc_ValueError, "inconsistent flexible-part arrays");
            goto done;
        }
        nfd += titop_flex_doubles(fi[1], fi[3], fi[4]);
        nlee += (size_t)fi[1] * (size_t)fi[1];
        o += 5 + fi[3];
    }
    if (b[13].buf && (size_t)b[13].len != nfd * sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "inconsistent flexible-part arrays");
        goto done;
    }
    size_t size = nb * sizeof(titop_body) + np_ * sizeof(titop_port) + ne * sizeof(titop_ext) +
                  nc * sizeof(titop_closure) + nl * sizeof(titop_law) +
                  nmi * sizeof(titop_mimic) + nfl * sizeof(titop_flex) +
                  (nfd + nlee) * sizeof(double) + nfi * sizeof(int) + 1;
    self->mem = PyMem_Calloc(1, size);
    if (!self->mem) {
        PyErr_NoMemory();
        goto done;
    }
    titop_model *m = &self->m;
    char *p = self->mem;
    m->bodies = (titop_body *)p;
    p += nb * sizeof(titop_body);
    m->ports = (titop_port *)p;
    p += np_ * sizeof(titop_port);
    m->exts = (titop_ext *)p;
    p += ne * sizeof(titop_ext);
    m->closures = (titop_closure *)p;
    p += nc * sizeof(titop_closure);
    m->laws = (titop_law *)p;
    p += nl * sizeof(titop_law);
    m->mimics = (titop_mimic *)p;
    m->nmimics = (int)nmi;
    p += nmi * sizeof(titop_mimic);
    m->flex = (titop_flex *)p;
    m->nflex = (int)nfl;
    p += nfl * sizeof(titop_flex);
    {
        double *fd = (double *)p, *lee = fd + nfd;
        int *fint = (int *)(lee + nlee);
        if (nfi)
            memcpy(fint, b[12].buf, nfi * sizeof(int));
        if (nfd)
            memcpy(fd, b[13].buf, nfd * sizeof(double));
        Py_ssize_t o = 0;
        for (Py_ssize_t f = 0; f < nfl; f++) {
            titop_flex *F = &m->flex[f];
            F->body = fint[o];
            F->n = fint[o + 1];
            F->x0 = fint[o + 2];
            F->ncases = fint[o + 3];
            F->nnodes = fint[o + 4];
            F->cases = fint + o + 5;
            titop_flex_from_row(F, fd, lee);
            fd += titop_flex_doubles(F->n, F->ncases, F->nnodes);
            lee += (size_t)F->n * F->n;
            o += 5 + F->ncases;
        }
    }
    m->nbodies = (int)nb;
    m->nports = (int)np_;
    m->nexts = (int)ne;
    m->nclosures = (int)nc;
    m->nlaws = (int)nl;
    m->nx = nx;
    m->nin = nin;
    const int *bi = b[0].buf;
    const double *bd = b[1].buf;
    for (Py_ssize_t i = 0; i < nb; i++, bi += BODY_INTS, bd += BODY_DOUBLES) {
        titop_body *B = &m->bodies[i];
        B->kind = bi[0];
        B->inverse = bi[1];
        B->parent = bi[2];
        B->slot = bi[3];
        B->port0 = bi[4];
        B->nports = bi[5];
        B->ext0 = bi[6];
        B->next = bi[7];
        B->x0 = bi[8];
        B->in0 = bi[9];
        B->pm0 = bi[10];
        B->mass = bd[0];
        memcpy(B->com, bd + 1, 3 * sizeof(double));
        memcpy(B->inertia, bd + 4, 9 * sizeof(double));
        memcpy(B->gravity, bd + 13, 3 * sizeof(double));
        memcpy(B->axis, bd + 16, 3 * sizeof(double));
        memcpy(B->R0, bd + 19, 9 * sizeof(double));
        memcpy(B->pos, bd + 28, 3 * sizeof(double));
        memcpy(B->armature, bd + 31, 6 * sizeof(double));
        B->damping = bd[37];
        B->stiffness = bd[38];
        memcpy(B->spring_ref, bd + 39, 4 * sizeof(double));
        memcpy(B->spring_pos, bd + 43, 3 * sizeof(double));
    }
    for (Py_ssize_t j = 0; j < np_; j++) {
        memcpy(m->ports[j].pc, (const double *)b[3].buf + 3 * j, 3 * sizeof(double));
        m->ports[j].child = ((const int *)b[2].buf)[2 * j];
        m->ports[j].w0 = ((const int *)b[2].buf)[2 * j + 1];
    }
    for (Py_ssize_t j = 0; j < ne; j++) {
        memcpy(m->exts[j].point, (const double *)b[5].buf + 3 * j, 3 * sizeof(double));
        m->exts[j].inertial = ((const int *)b[4].buf)[2 * j];
        m->exts[j].w0 = ((const int *)b[4].buf)[2 * j + 1];
    }
    for (Py_ssize_t j = 0; j < nc; j++) {
        const double *d = (const double *)b[7].buf + CLOSURE_DOUBLES * j;
        m->closures[j].left = ((const int *)b[6].buf)[2 * j];
        m->closures[j].right = ((const int *)b[6].buf)[2 * j + 1];
        memcpy(m->closures[j].K, d, 36 * sizeof(double));
        memcpy(m->closures[j].Dm, d + 36, 36 * sizeof(double));
    }
    for (Py_ssize_t j = 0; j < nl; j++) {
        titop_law_from_row((const double *)b[9].buf + TITOP_LAW_DOUBLES * j, &m->laws[j]);
        m->laws[j].src = ((const int *)b[8].buf)[2 * j];
        m->laws[j].dst = ((const int *)b[8].buf)[2 * j + 1];
    }
    for (Py_ssize_t j = 0; j < nmi; j++) {
        m->mimics[j].follower = ((const int *)b[10].buf)[2 * j];
        m->mimics[j].leader = ((const int *)b[10].buf)[2 * j + 1];
        m->mimics[j].multiplier = ((const double *)b[11].buf)[2 * j];
        m->mimics[j].offset = ((const double *)b[11].buf)[2 * j + 1];
    }
    int bad_body;
    char msg[200];
    if (titop_model_init(m, &bad_body, msg, sizeof msg) != TITOP_OK) {
        PyObject *e = Py_BuildValue("(si)", msg, bad_body);
        PyErr_SetObject(PyExc_ValueError, e);
        Py_XDECREF(e);
        PyMem_Free(self->mem);
        self->mem = NULL;
        memset(m, 0, sizeof *m);
        goto done;
    }
    self->data_size = titop_data_size(m);
    ok = 0;
done:
    for (int k = 0; k < 14; k++)
        if (k < 10 || b[k].obj)
            PyBuffer_Release(&b[k]);
    return ok;
}

static PyObject *status_result(int st, int bad_body)
{
    if (st == TITOP_OK)
        return PyLong_FromLong(0);
    return Py_BuildValue("(ii)", st, bad_body);
}

/* eval and zeval: one evaluation on doubles, or on complex values (complex128 buffers: the
   complex step of any output of the data buffer); w = 1 or 2 doubles per value */
static PyObject *evaluate(ModelObject *self, PyObject *const *args, Py_ssize_t nargs, int w)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, w == 1 ? "eval(data, t, x, inputs, full, dx)"
                                                : "zeval(zdata, t, zx, zinputs, full, zdx)");
        return NULL;
    }
    titop_model *m = &self->m;
    double t = PyFloat_AsDouble(args[1]);
    if (t == -1.0 && PyErr_Occurred())
        return NULL;
    int full = PyObject_IsTrue(args[4]);
    Py_buffer vd, vx, vi, vdx;
    int have_dx = args[5] != Py_None;
    if (get_buffer(args[0], &vd, w * (Py_ssize_t)self->data_size, sizeof(double), 1, "data") < 0)
        return NULL;
    if (get_buffer(args[2], &vx, w * (Py_ssize_t)m->nx, sizeof(double), 0, "x") < 0)
        goto e1;
    if (get_buffer(args[3], &vi, w * (Py_ssize_t)m->nin, sizeof(double), 0, "inputs") < 0)
        goto e2;
    if (have_dx && get_buffer(args[5], &vdx, w * (Py_ssize_t)m->nx, sizeof(double), 1, "dx") < 0)
        goto e3;
    int bad_body;
    int st = (w == 1 ? titop_eval : titopz_eval)(m, vd.buf, t, vx.buf, vi.buf, full,
                                                 have_dx ? vdx.buf : NULL, &bad_body);
    if (have_dx)
        PyBuffer_Release(&vdx);
    PyBuffer_Release(&vi);
    PyBuffer_Release(&vx);
    PyBuffer_Release(&vd);
    return status_result(st, bad_body);
e3:
    PyBuffer_Release(&vi);
e2:
    PyBuffer_Release(&vx);
e1:
    PyBuffer_Release(&vd);
    return NULL;
}

/* eval(data, t, x, inputs, full, dx or None) -> 0 or (status, body) */
static PyObject *Model_eval(ModelObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return evaluate(self, args, nargs, 1);
}

/* zeval(zdata, t, zx, zinputs, full, zdx or None) -> 0 or (status, body) */
static PyObject *Model_zeval(ModelObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return evaluate(self, args, nargs, 2);
}

/* jacobian(zwork, t, x, inputs, jx or None, jin or None) -> 0 or (status, body): the matrices
   ∂dx/∂x (nx x nx) and ∂dx/∂inputs (nx x nin), row-major, column by column by complex step. */
static PyObject *Model_jacobian(ModelObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "jacobian(zwork, t, x, inputs, jx, jin)");
        return NULL;
    }
    titop_model *m = &self->m;
    double t = PyFloat_AsDouble(args[1]);
    if (t == -1.0 && PyErr_Occurred())
        return NULL;
    Py_ssize_t zsize = 2 * ((Py_ssize_t)self->data_size + 2 * m->nx + m->nin);
    Py_buffer vz, vx, vi, vjx, vji;
    int hx = args[4] != Py_None, hi = args[5] != Py_None;
    int st = TITOP_OK, bad_body = -1, n = m->nx, ni = m->nin;
    if (get_buffer(args[0], &vz, zsize, sizeof(double), 1, "zwork") < 0)
        return NULL;
    if (get_buffer(args[2], &vx, n, sizeof(double), 0, "x") < 0)
        goto e1;
    if (get_buffer(args[3], &vi, ni, sizeof(double), 0, "inputs") < 0)
        goto e2;
    if (hx && get_buffer(args[4], &vjx, (Py_ssize_t)n * n, sizeof(double), 1, "jx") < 0)
        goto e3;
    if (hi && get_buffer(args[5], &vji, (Py_ssize_t)n * ni, sizeof(double), 1, "jin") < 0)
        goto e4;
    double *dir = PyMem_Calloc((size_t)(n + ni) + 1, sizeof(double));
    double *col = PyMem_Calloc((size_t)n + 1, sizeof(double));
    if (!dir || !col) {
        PyMem_Free(dir);
        PyMem_Free(col);
        PyErr_NoMemory();
        goto e5;
    }
    Py_BEGIN_ALLOW_THREADS
    for (int c = 0; c < (hx ? n : 0) + (hi ? ni : 0) && st == TITOP_OK; c++) {
        int is_x = hx && c < n;
        int k = is_x ? c : c - (hx ? n : 0);
        double *vxd = dir, *vid = dir + n;
        (is_x ? vxd : vid)[k] = 1.0;
        st = titop_derivative_jvp(m, vz.buf, t, vx.buf, vi.buf, vxd, vid, col, &bad_body);
        (is_x ? vxd : vid)[k] = 0.0;
        double *J = is_x ? vjx.buf : vji.buf;
        int w = is_x ? n : ni;
        for (int r = 0; r < n; r++)
            J[(size_t)r * w + k] = col[r];
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(dir);
    PyMem_Free(col);
    if (hi)
        PyBuffer_Release(&vji);
    if (hx)
        PyBuffer_Release(&vjx);
    PyBuffer_Release(&vi);
    PyBuffer_Release(&vx);
    PyBuffer_Release(&vz);
    return status_result(st, bad_body);
e5:
    if (hi)
        PyBuffer_Release(&vji);
e4:
    if (hx)
        PyBuffer_Release(&vjx);
e3:
    PyBuffer_Release(&vi);
e2:
    PyBuffer_Release(&vx);
e1:
    PyBuffer_Release(&vz);
    return NULL;
}

/* ---- one body on its own (titop.h, "the object path"): double buffers ---- */

typedef struct {
    Py_buffer v[8];
    int n;
} bufset;

static void release_all(bufset *b)
{
    while (b->n > 0)
        PyBuffer_Release(&b->v[--b->n]);
}

/* The buffer of obj (n doubles at least) into *ptr; None gives NULL when optional. */
static int take(bufset *b, PyObject *obj, Py_ssize_t n, int writable, int optional,
                const char *what, void **ptr)
{
    if (obj == Py_None && optional) {
        *ptr = NULL;
        return 0;
    }
    if (get_buffer(obj, &b->v[b->n], n, sizeof(double), writable, what) < 0)
        return -1;
    *ptr = b->v[b->n++].buf;
    return 0;
}

static int body_arg(ModelObject *self, PyObject *obj, int *i)
{
    long v = PyLong_AsLong(obj);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < 0 || v >= self->m.nbodies) {
        PyErr_Format(PyExc_IndexError, "body %ld out of 0..%d", v, self->m.nbodies - 1);
        return -1;
    }
    *i = (int)v;
    return 0;
}

static int nargs_is(Py_ssize_t nargs, Py_ssize_t n, const char *usage)
{
    if (nargs != n) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    return 0;
}

#define DATA(k) take(&b, args[k], (Py_ssize_t)self->data_size, 1, 0, "data", &data)
#define NPORTS(i) ((Py_ssize_t)self->m.bodies[i].nports)

/* block_kinematics(data, body, x, inputs, parent or None, ports or None) */
static PyObject *Model_block_kinematics(ModelObject *self, PyObject *const *args,
                                        Py_ssize_t nargs)
{
    bufset b = {.n = 0};
    void *data, *x, *in, *parent, *ports;
    int i;
    if (nargs_is(nargs, 6, "block_kinematics(data, body, x, inputs, parent, ports)") < 0 ||
        body_arg(self, args[1], &i) < 0 || DATA(0) < 0 ||
        take(&b, args[2], self->m.nx, 0, 0, "x", &x) < 0 ||
        take(&b, args[3], self->m.nin, 0, 0, "inputs", &in) < 0 ||
        take(&b, args[4], 18, 0, 1, "parent", &parent) < 0 ||
        take(&b, args[5], 18 * NPORTS(i), 1, 1, "ports", &ports) < 0) {
        release_all(&b);
        return NULL;
    }
    titop_block_kinematics(&self->m, data, i, x, in, parent, ports);
    release_all(&b);
    Py_RETURN_NONE;
}

/* block_bias(data, body, inputs) */
static PyObject *Model_block_bias(ModelObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    bufset b = {.n = 0};
    void *data, *in;
    int i;
    if (nargs_is(nargs, 3, "block_bias(data, body, inputs)") < 0 ||
        body_arg(self, args[1], &i) < 0 || DATA(0) < 0 ||
        take(&b, args[2], self->m.nin, 0, 0, "inputs", &in) < 0) {
        release_all(&b);
        return NULL;
    }
    titop_block_bias(&self->m, data, i, in);
    release_all(&b);
    Py_RETURN_NONE;
}

/* block_map(data, body, inputs, out) */
static PyObject *Model_block_map(ModelObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    bufset b = {.n = 0};
    void *data, *in, *out;
    int i;
    if (nargs_is(nargs, 4, "block_map(data, body, inputs, out)") < 0 ||
        body_arg(self, args[1], &i) < 0 || DATA(0) < 0 ||
        take(&b, args[2], self->m.nin, 0, 0, "inputs", &in) < 0 ||
        take(&b, args[3], (Py_ssize_t)titop_map_size(&self->m, i, NULL, NULL), 1, 0, "out",
             &out) < 0) {
        release_all(&b);
        return NULL;
    }
    int st = titop_block_map(&self->m, data, i, in, out);
    release_all(&b);
    return status_result(st, i);
}

/* block_respond(data, body, inputs, accp or None, wc or None, full, accc or None) */
static PyObject *Model_block_respond(ModelObject *self, PyObject *const *args,
                                     Py_ssize_t nargs)
{
    bufset b = {.n = 0};
    void *data, *in, *accp, *wc, *accc;
    int i, full;
    if (nargs_is(nargs, 7, "block_respond(data, body, inputs, accp, wc, full, accc)") < 0 ||
        body_arg(self, args[1], &i) < 0 || (full = PyObject_IsTrue(args[5])) < 0 ||
        DATA(0) < 0 || take(&b, args[2], self->m.nin, 0, 0, "inputs", &in) < 0 ||
        take(&b, args[3], 6, 0, 1, "accp", &accp) < 0 ||
        take(&b, args[4], 6 * NPORTS(i), 0, 1, "wc", &wc) < 0 ||
        take(&b, args[6], 6 * NPORTS(i), 1, 1, "accc", &accc) < 0) {
        release_all(&b);
        return NULL;
    }
    int st = titop_block_respond(&self->m, data, i, in, accp, wc, full, accc);
    release_all(&b);
    return status_result(st, i);
}

/* block_acceleration(data, body, accp, alpha, out) */
static PyObject *Model_block_acceleration(ModelObject *self, PyObject *const *args,
                                          Py_ssize_t nargs)
{
    bufset b = {.n = 0};
    void *data, *accp, *alpha, *out;
    int i;
    if (nargs_is(nargs, 5, "block_acceleration(data, body, accp, alpha, out)") < 0 ||
        body_arg(self, args[1], &i) < 0 || DATA(0) < 0 ||
        take(&b, args[2], 6, 0, 0, "accp", &accp) < 0 ||
        take(&b, args[3], self->m.bodies[i].nv, 0, 0, "alpha", &alpha) < 0 ||
        take(&b, args[4], 6, 1, 0, "out", &out) < 0) {
        release_all(&b);
        return NULL;
    }
    titop_block_acceleration(&self->m, data, i, accp, alpha, out);
    release_all(&b);
    Py_RETURN_NONE;
}

/* block_state_rate(data, body, x, alpha, dx) */
static PyObject *Model_block_state_rate(ModelObject *self, PyObject *const *args,
                                        Py_ssize_t nargs)
{
    bufset b = {.n = 0};
    void *data, *x, *alpha, *dx;
    int i;
    if (nargs_is(nargs, 5, "block_state_rate(data, body, x, alpha, dx)") < 0 ||
        body_arg(self, args[1], &i) < 0 || DATA(0) < 0 ||
        take(&b, args[2], self->m.nx, 0, 0, "x", &x) < 0 ||
        take(&b, args[3], self->m.bodies[i].kind == TITOP_RIGID ? 6 : self->m.bodies[i].nv, 0,
             0, "alpha", &alpha) < 0 ||
        take(&b, args[4], self->m.nx, 1, 0, "dx", &dx) < 0) {
        release_all(&b);
        return NULL;
    }
    titop_block_state_rate(&self->m, data, i, x, alpha, dx);
    release_all(&b);
    Py_RETURN_NONE;
}

/* map_size(body) -> (ka, ne, size) */
static PyObject *Model_map_size(ModelObject *self, PyObject *arg)
{
    int i, ka, ne;
    if (body_arg(self, arg, &i) < 0)
        return NULL;
    size_t size = titop_map_size(&self->m, i, &ka, &ne);
    return Py_BuildValue("(iin)", ka, ne, (Py_ssize_t)size);
}

/* motion vectors of an evaluated buffer: what (0 body, 1 port, 2 joint), w = 1 (double) or 2
   (complex) */
static PyObject *motion(ModelObject *self, PyObject *const *args, Py_ssize_t nargs, int what,
                        int w)
{
    static const char *usage[3] = {"body_motion(data, body, out)", "port_motion(data, port, out)",
                                   "joint_motion(data, body, out)"};
    bufset b = {.n = 0};
    void *data, *out;
    if (nargs_is(nargs, 3, usage[what]) < 0)
        return NULL;
    long k = PyLong_AsLong(args[1]);
    if (k == -1 && PyErr_Occurred())
        return NULL;
    int count = what == 1 ? self->m.nports : self->m.nbodies;
    if (k < 0 || k >= count) {
        PyErr_Format(PyExc_IndexError, "%s %ld out of 0..%d", what == 1 ? "port" : "body", k,
                     count - 1);
        return NULL;
    }
    Py_ssize_t n = what == 2 ? 3 * self->m.bodies[k].nv : 18;
    if (take(&b, args[0], w * (Py_ssize_t)self->data_size, 0, 0, "data", &data) < 0 ||
        take(&b, args[2], w * n, 1, 0, "out", &out) < 0) {
        release_all(&b);
        return NULL;
    }
    int i = (int)k;
    if (what == 0)
        (w == 1 ? titop_body_motion : titopz_body_motion)(&self->m, data, i, out);
    else if (what == 1)
        (w == 1 ? titop_port_motion : titopz_port_motion)(&self->m, data, i, out);
    else
        (w == 1 ? titop_joint_motion : titopz_joint_motion)(&self->m, data, i, out);
    release_all(&b);
    Py_RETURN_NONE;
}

#define MOTION(name, what, w)                                                                  \
    static PyObject *Model_##name(ModelObject *self, PyObject *const *args, Py_ssize_t nargs) \
    {                                                                                          \
        return motion(self, args, nargs, what, w);                                             \
    }
MOTION(body_motion, 0, 1)
MOTION(port_motion, 1, 1)
MOTION(joint_motion, 2, 1)
MOTION(zbody_motion, 0, 2)
MOTION(zport_motion, 1, 2)
MOTION(zjoint_motion, 2, 2)

static PyObject *Model_layout(ModelObject *self, PyObject *unused)
{
    (void)unused;
    titop_layout L;
    titop_data_layout(&self->m, &L);
    return Py_BuildValue(
        "{s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n}",
        "mimic", (Py_ssize_t)L.mimic, "mimic_stride", (Py_ssize_t)L.mimic_stride, "flex",
        (Py_ssize_t)L.flex, "body_stride",
        (Py_ssize_t)L.body_stride, "R", (Py_ssize_t)L.R, "ip", (Py_ssize_t)L.ip, "tw",
        (Py_ssize_t)L.tw, "acc", (Py_ssize_t)L.acc, "acc_parent", (Py_ssize_t)L.acc_parent,
        "alpha", (Py_ssize_t)L.alpha, "effort", (Py_ssize_t)L.effort, "wrench_parent",
        (Py_ssize_t)L.wrench_parent, "out", (Py_ssize_t)L.out, "h", (Py_ssize_t)L.h, "E",
        (Py_ssize_t)L.E, "p", (Py_ssize_t)L.p, "ports", (Py_ssize_t)L.ports, "port_stride",
        (Py_ssize_t)L.port_stride, "port_w", (Py_ssize_t)L.port_w);
}

/* mimic_project(x): make the state x (nx, float64, in place) consistent with the mimic joints
   (titop_mimic_project) */
static PyObject *Model_mimic_project(ModelObject *self, PyObject *arg)
{
    Py_buffer vx;
    if (get_buffer(arg, &vx, self->m.nx, sizeof(double), 1, "x") < 0)
        return NULL;
    titop_mimic_project(&self->m, vx.buf);
    PyBuffer_Release(&vx);
    Py_RETURN_NONE;
}

static PyObject *Model_get_data_size(ModelObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromSize_t(self->data_size);
}

static PyObject *Model_get_zwork_size(ModelObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromSize_t(2 * (self->data_size + 2 * (size_t)self->m.nx + self->m.nin));
}

static PyObject *Model_get_nx(ModelObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(self->m.nx);
}

static PyObject *Model_get_nin(ModelObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(self->m.nin);
}

static PyMethodDef Model_methods[] = {
    {"eval", (PyCFunction)(void (*)(void))Model_eval, METH_FASTCALL,
     "eval(data, t, x, inputs, full, dx) -> 0 or (status, body): one evaluation of the model"},
    {"zeval", (PyCFunction)(void (*)(void))Model_zeval, METH_FASTCALL,
     "zeval(zdata, t, zx, zinputs, full, zdx) -> 0 or (status, body): eval on complex values"},
    {"jacobian", (PyCFunction)(void (*)(void))Model_jacobian, METH_FASTCALL,
     "jacobian(zwork, t, x, inputs, jx, jin) -> 0 or (status, body): exact ∂dx/∂x and "
     "∂dx/∂inputs by complex step"},
    {"layout", (PyCFunction)Model_layout, METH_NOARGS, "offsets of the data buffer"},
#define FAST(name, doc) {#name, (PyCFunction)(void (*)(void))Model_##name, METH_FASTCALL, doc},
    FAST(block_kinematics, "block_kinematics(data, body, x, inputs, parent, ports): kinematics "
         "of one body (titop.h)")
    FAST(block_bias, "block_bias(data, body, inputs): its bias h")
    FAST(block_map, "block_map(data, body, inputs, out) -> 0 or (status, body): its loop map")
    FAST(block_respond, "block_respond(data, body, inputs, accp, wc, full, accc) -> 0 or "
         "(status, body): its outputs at given loop inputs")
    FAST(block_acceleration, "block_acceleration(data, body, accp, alpha, out): ẋ'_P of a "
         "joint body")
    FAST(block_state_rate, "block_state_rate(data, body, x, alpha, dx): its state derivative")
    FAST(body_motion, "body_motion(data, body, out): motion vector (18) of a body at P")
    FAST(port_motion, "port_motion(data, port, out): motion vector (18) at a child port")
    FAST(joint_motion, "joint_motion(data, body, out): joint motion [u̇, u, p] (3 nv)")
    FAST(zbody_motion, "zbody_motion(zdata, body, zout): body_motion on complex values")
    FAST(zport_motion, "zport_motion(zdata, port, zout): port_motion on complex values")
    FAST(zjoint_motion, "zjoint_motion(zdata, body, zout): joint_motion on complex values")
#undef FAST
    {"map_size", (PyCFunction)Model_map_size, METH_O, "map_size(body) -> (ka, ne, size)"},
    {"mimic_project", (PyCFunction)Model_mimic_project, METH_O,
     "mimic_project(x): each mimic follower's q, q̇ set from its leader's, in place"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Model_getset[] = {
    {"data_size", (getter)Model_get_data_size, NULL, "doubles of a data buffer", NULL},
    {"zwork_size", (getter)Model_get_zwork_size, NULL, "doubles of a complex-step buffer",
     NULL},
    {"nx", (getter)Model_get_nx, NULL, "states", NULL},
    {"nin", (getter)Model_get_nin, NULL, "inputs", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject ModelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "titopfmu.core._titop.Model",
    .tp_basicsize = sizeof(ModelObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A titop_model (see titop.h), built from flat arrays by titopfmu.core.model.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Model_init,
    .tp_dealloc = (destructor)Model_dealloc,
    .tp_methods = Model_methods,
    .tp_getset = Model_getset,
};

/* ---- spatial helpers: f(in..., out) on float64 buffers ---- */

static int args_buffers(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t expect,
                        Py_ssize_t n_in, const Py_ssize_t *sizes, Py_buffer *views)
{
    if (nargs != expect) {
        PyErr_Format(PyExc_TypeError, "expected %zd arguments", expect);
        return -1;
    }
    for (Py_ssize_t k = 0; k < nargs; k++)
        if (get_buffer(args[k], &views[k], sizes[k], sizeof(double), k >= n_in,
                       "argument") < 0) {
            while (k-- > 0)
                PyBuffer_Release(&views[k]);
            return -1;
        }
    return 0;
}

#define HELPER(name, n_in, call, ...)                                                          \
    static PyObject *py_##name(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)        \
    {                                                                                          \
        (void)mod;                                                                             \
        static const Py_ssize_t sizes[] = {__VA_ARGS__};                                       \
        const Py_ssize_t n = sizeof sizes / sizeof sizes[0];                                   \
        Py_buffer v[6];                                                                        \
        if (args_buffers(args, nargs, n, n_in, sizes, v) < 0)                                  \
            return NULL;                                                                       \
        call;                                                                                  \
        for (Py_ssize_t k = 0; k < n; k++)                                                     \
            PyBuffer_Release(&v[k]);                                                           \
        Py_RETURN_NONE;                                                                        \
    }

HELPER(euler_dcm, 1, titop_euler_dcm(v[0].buf, v[1].buf), 3, 9)
HELPER(dcm_euler, 1, titop_dcm_euler(v[0].buf, v[1].buf), 9, 3)
HELPER(euler_quaternion, 1, titop_euler_quaternion(v[0].buf, v[1].buf), 3, 4)
HELPER(quaternion_dcm, 1, titop_quaternion_dcm(v[0].buf, v[1].buf), 4, 9)
HELPER(quaternion_rate, 2, titop_quaternion_rate(v[0].buf, v[1].buf, v[2].buf), 4, 3, 4)
HELPER(rotation_vector, 1, titop_rotation_vector(v[0].buf, v[1].buf), 9, 3)
HELPER(cut_deflection, 2, titop_cut_deflection(v[0].buf, v[1].buf, v[2].buf, v[3].buf), 18,
       18, 6, 6)
HELPER(cut_block, 4,
       titop_cut_block(v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf), 36, 36, 18,
       18, 6, 6)

/* joint_law(row, m, tau): the joint law of a flat row (titop.h, TITOP_LAW_DOUBLES values) on a
   joint motion m = [q̈, q̇, q], into tau (1); the row's values are the caller's to check
   (check_law) */
static PyObject *py_joint_law(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    (void)mod;
    static const Py_ssize_t sizes[] = {TITOP_LAW_DOUBLES, 3, 1};
    Py_buffer v[3];
    if (args_buffers(args, nargs, 3, 2, sizes, v) < 0)
        return NULL;
    titop_law law;
    titop_law_from_row(v[0].buf, &law);
    titop_spring_damper_block(&law, v[1].buf, v[2].buf);
    for (int k = 0; k < 3; k++)
        PyBuffer_Release(&v[k]);
    Py_RETURN_NONE;
}

/* check_law(row) -> None, or (parameter, rule) of the first value out of range */
static PyObject *py_check_law(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    (void)mod;
    static const Py_ssize_t sizes[] = {TITOP_LAW_DOUBLES};
    Py_buffer v[1];
    if (args_buffers(args, nargs, 1, 1, sizes, v) < 0)
        return NULL;
    titop_law law;
    titop_law_from_row(v[0].buf, &law);
    PyBuffer_Release(&v[0]);
    int code = titop_check_law(&law);
    if (code == TITOP_LAW_OK)
        Py_RETURN_NONE;
    return Py_BuildValue("(ss)", titop_law_parameter(code), titop_law_rule(code));
}

/* joint_position(kind, q, p) / joint_coordinates(kind, p, q) */
static PyObject *joint_conversion(PyObject *const *args, Py_ssize_t nargs, int to_position)
{
    static const int NQ[8] = {7, 0, 0, 0, 1, 1, 4, 7};
    static const int NV[8] = {6, 0, 0, 0, 1, 1, 3, 6};
    if (nargs_is(nargs, 3, to_position ? "joint_position(kind, q, p)"
                                       : "joint_coordinates(kind, p, q)") < 0)
        return NULL;
    long kind = PyLong_AsLong(args[0]);
    if (kind == -1 && PyErr_Occurred())
        return NULL;
    if (kind < TITOP_REVOLUTE || kind > TITOP_FREE) {
        PyErr_Format(PyExc_ValueError, "not a joint kind with a dof: %ld", kind);
        return NULL;
    }
    bufset b = {.n = 0};
    void *src, *dst;
    Py_ssize_t nq = NQ[kind], nv = NV[kind];
    if (take(&b, args[1], to_position ? nq : nv, 0, 0, "input", &src) < 0 ||
        take(&b, args[2], to_position ? nv : nq, 1, 0, "out", &dst) < 0) {
        release_all(&b);
        return NULL;
    }
    if (to_position)
        titop_joint_position((int)kind, src, dst);
    else
        titop_joint_coordinates((int)kind, src, dst);
    release_all(&b);
    Py_RETURN_NONE;
}

static PyObject *py_joint_position(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    (void)mod;
    return joint_conversion(args, nargs, 1);
}

static PyObject *py_joint_coordinates(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    (void)mod;
    return joint_conversion(args, nargs, 0);
}

/* ---- parameter checks (titop.h): the code, the quantities in caller-owned buffers ---- */

static PyObject *py_check_inertia(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    (void)mod;
    if (nargs != 3 && nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "check_inertia(I, definite, moments[, reference]) -> code");
        return NULL;
    }
    int definite = PyObject_IsTrue(args[1]);
    if (definite < 0)
        return NULL;
    double reference = nargs == 4 ? PyFloat_AsDouble(args[3]) : 0.0;
    if (reference == -1.0 && PyErr_Occurred())
        return NULL;
    bufset b = {.n = 0};
    void *in, *moments;
    if (take(&b, args[0], 9, 0, 0, "I", &in) < 0 ||
        take(&b, args[2], 3, 1, 0, "moments", &moments) < 0) {
        release_all(&b);
        return NULL;
    }
    int code = titop_check_inertia(in, definite, reference, moments);
    release_all(&b);
    return PyLong_FromLong(code);
}

static PyObject *py_check_apparent_inertia(PyObject *mod, PyObject *const *args,
                                           Py_ssize_t nargs)
{
    (void)mod;
    if (nargs != 4 && nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "check_apparent_inertia(S, D, nv, J[, armature]) -> code");
        return NULL;
    }
    long nv = PyLong_AsLong(args[2]);
    if (nv == -1 && PyErr_Occurred())
        return NULL;
    if (nv < 1 || nv > 6) {
        PyErr_Format(PyExc_ValueError, "nv must be 1 to 6, got %ld", nv);
        return NULL;
    }
    bufset b = {.n = 0};
    void *S, *D, *J, *arm = NULL;
    if (take(&b, args[0], 6 * nv, 0, 0, "S", &S) < 0 || take(&b, args[1], 36, 0, 0, "D", &D) < 0 ||
        take(&b, args[3], nv * nv, 1, 0, "J", &J) < 0 ||
        (nargs == 5 && take(&b, args[4], nv, 0, 1, "armature", &arm) < 0)) {
        release_all(&b);
        return NULL;
    }
    double Jfull[36];
    int code = titop_check_apparent_inertia(S, D, (int)nv, arm, Jfull);
    memcpy(J, Jfull, (size_t)(nv * nv) * sizeof(double));
    release_all(&b);
    return PyLong_FromLong(code);
}

static PyObject *py_check_dynamic_model(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    (void)mod;
    if (nargs_is(nargs, 4, "check_dynamic_model(mass, I, com, D) -> code") < 0)
        return NULL;
    double mass = PyFloat_AsDouble(args[0]);
    if (mass == -1.0 && PyErr_Occurred())
        return NULL;
    bufset b = {.n = 0};
    void *in, *com, *D;
    if (take(&b, args[1], 9, 0, 0, "I", &in) < 0 || take(&b, args[2], 3, 0, 0, "com", &com) < 0 ||
        take(&b, args[3], 36, 1, 1, "D", &D) < 0) {
        release_all(&b);
        return NULL;
    }
    int code = titop_check_dynamic_model(mass, in, com, D);
    release_all(&b);
    return PyLong_FromLong(code);
}

static PyObject *py_check_axis(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    (void)mod;
    if (nargs_is(nargs, 2, "check_axis(axis, unit) -> code") < 0)
        return NULL;
    bufset b = {.n = 0};
    void *a, *unit;
    if (take(&b, args[0], 3, 0, 0, "axis", &a) < 0 ||
        take(&b, args[1], 3, 1, 0, "unit", &unit) < 0) {
        release_all(&b);
        return NULL;
    }
    int code = titop_check_axis(a, unit);
    release_all(&b);
    return PyLong_FromLong(code);
}

static PyObject *py_rotation_error(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    (void)mod;
    if (nargs_is(nargs, 1, "rotation_error(P) -> float") < 0)
        return NULL;
    bufset b = {.n = 0};
    void *P;
    if (take(&b, args[0], 9, 0, 0, "P", &P) < 0) {
        release_all(&b);
        return NULL;
    }
    double err = titop_rotation_error(P);
    release_all(&b);
    return PyFloat_FromDouble(err);
}

static PyMethodDef module_methods[] = {
    {"check_inertia", (PyCFunction)(void (*)(void))py_check_inertia, METH_FASTCALL,
     "check_inertia(I, definite, moments[, reference]) -> code: titop_check_inertia (titop.h)"},
    {"check_apparent_inertia", (PyCFunction)(void (*)(void))py_check_apparent_inertia,
     METH_FASTCALL, "check_apparent_inertia(S, D, nv, J[, armature]) -> code: eq. (20)'s J = "
     "S^T D S + diag(armature) of a body alone"},
    {"check_dynamic_model", (PyCFunction)(void (*)(void))py_check_dynamic_model, METH_FASTCALL,
     "check_dynamic_model(mass, I, com, D) -> code: D_P of eq. (4) (into D unless None) within "
     "range, the code naming the parameter out of it (titop_check_dynamic_model)"},
    {"check_axis", (PyCFunction)(void (*)(void))py_check_axis, METH_FASTCALL,
     "check_axis(axis, unit) -> code: the unit vector of a joint axis (titop_check_axis)"},
    {"rotation_error", (PyCFunction)(void (*)(void))py_rotation_error, METH_FASTCALL,
     "rotation_error(P) -> largest of |P^T P - 1| and |det P - 1|"},
    {"joint_position", (PyCFunction)(void (*)(void))py_joint_position, METH_FASTCALL,
     "joint_position(kind, q, p): position output p (nv) of a joint configuration q (nq)"},
    {"joint_coordinates", (PyCFunction)(void (*)(void))py_joint_coordinates, METH_FASTCALL,
     "joint_coordinates(kind, p, q): joint configuration q (nq) of a position output p (nv)"},
    {"euler_dcm", (PyCFunction)(void (*)(void))py_euler_dcm, METH_FASTCALL,
     "euler_dcm(theta, out): P_{b/i} of 3-2-1 Euler angles"},
    {"dcm_euler", (PyCFunction)(void (*)(void))py_dcm_euler, METH_FASTCALL,
     "dcm_euler(R, out): 3-2-1 Euler angles of P_{b/i}"},
    {"euler_quaternion", (PyCFunction)(void (*)(void))py_euler_quaternion, METH_FASTCALL,
     "euler_quaternion(theta, out): quaternion [w, x, y, z] of Euler angles"},
    {"quaternion_dcm", (PyCFunction)(void (*)(void))py_quaternion_dcm, METH_FASTCALL,
     "quaternion_dcm(q, out): P_{b/i} of a quaternion"},
    {"quaternion_rate", (PyCFunction)(void (*)(void))py_quaternion_rate, METH_FASTCALL,
     "quaternion_rate(q, omega, out): q̇ of the body rate ω"},
    {"rotation_vector", (PyCFunction)(void (*)(void))py_rotation_vector, METH_FASTCALL,
     "rotation_vector(R, out): rotation vector (rad) of a DCM"},
    {"cut_deflection", (PyCFunction)(void (*)(void))py_cut_deflection, METH_FASTCALL,
     "cut_deflection(left, right, dx, dxd): relative motion across a loop closure's cut"},
    {"cut_block", (PyCFunction)(void (*)(void))py_cut_block, METH_FASTCALL,
     "cut_block(K, D, left, right, wl, wr): a loop closure's wrenches on its two sides"},
    {"joint_law", (PyCFunction)(void (*)(void))py_joint_law, METH_FASTCALL,
     "joint_law(row, m, tau): the joint law of a row (k, d, q_ref, friction, "
     "friction_velocity, limited, lower, upper, k_stop, d_stop) on m = [q̈, q̇, q]"},
    {"check_law", (PyCFunction)(void (*)(void))py_check_law, METH_FASTCALL,
     "check_law(row) -> None or (parameter, rule): titop_check_law"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_titop",
                                       "The TITOP core (C99) behind titopfmu.", -1,
                                       module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__titop(void)
{
    if (PyType_Ready(&ModelType) < 0)
        return NULL;
    PyObject *mod = PyModule_Create(&moduledef);
    if (!mod)
        return NULL;
    Py_INCREF(&ModelType);
    if (PyModule_AddObject(mod, "Model", (PyObject *)&ModelType) < 0) {
        Py_DECREF(&ModelType);
        Py_DECREF(mod);
        return NULL;
    }
    PyModule_AddIntConstant(mod, "VERSION", TITOP_VERSION);
    PyModule_AddIntConstant(mod, "CHECK_OK", TITOP_CHECK_OK);
    PyModule_AddIntConstant(mod, "CHECK_TRIANGLE", TITOP_CHECK_TRIANGLE);
    PyModule_AddIntConstant(mod, "CHECK_NOT_SYMMETRIC", TITOP_CHECK_NOT_SYMMETRIC);
    PyModule_AddIntConstant(mod, "CHECK_NOT_PSD", TITOP_CHECK_NOT_PSD);
    PyModule_AddIntConstant(mod, "CHECK_NOT_PD", TITOP_CHECK_NOT_PD);
    PyModule_AddIntConstant(mod, "CHECK_SINGULAR", TITOP_CHECK_SINGULAR);
    PyModule_AddIntConstant(mod, "CHECK_MASS", TITOP_CHECK_MASS);
    PyModule_AddIntConstant(mod, "CHECK_COM", TITOP_CHECK_COM);
    PyModule_AddIntConstant(mod, "CHECK_INERTIA_RANGE", TITOP_CHECK_INERTIA_RANGE);
    PyModule_AddIntConstant(mod, "CHECK_AXIS", TITOP_CHECK_AXIS);
    PyModule_AddIntConstant(mod, "LAW_DOUBLES", TITOP_LAW_DOUBLES);
    const char *names[2] = {"RANGE_MIN", "RANGE_MAX"};
    const double values[2] = {TITOP_RANGE_MIN, TITOP_RANGE_MAX};
    for (int k = 0; k < 2; k++) {
        PyObject *v = PyFloat_FromDouble(values[k]);
        if (!v || PyModule_AddObject(mod, names[k], v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(mod);
            return NULL;
        }
    }
    PyModule_AddIntConstant(mod, "OK", TITOP_OK);
    PyModule_AddIntConstant(mod, "SINGULAR", TITOP_SINGULAR);
    PyModule_AddIntConstant(mod, "NONFINITE", TITOP_NONFINITE);
    PyModule_AddIntConstant(mod, "UNSETTLED", TITOP_UNSETTLED);
    PyModule_AddIntConstant(mod, "FLEX_NODE", TITOP_FLEX_NODE);
    return mod;
}
