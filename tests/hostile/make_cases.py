#!/usr/bin/env python3
"""make_cases.py OUTDIR — writes the hostile-input corpus of rlx.

Every case is a crafted export directory (torch-ir.json, weights.safetensors,
reference.safetensors) that breaks one rule an attacker could break: huge,
negative or overflowing ints in size-like arguments, values that torch
refuses, inconsistent graphs, data that indexes out of range at run time, a
float64 reference that would let a wrong output pass, and so on. One
directory per case in OUTDIR/<name>/, and OUTDIR/cases.tsv, which
tests/hostile/run.sh reads: one line per case,

    name <TAB> exit codes <TAB> rule <TAB> command <TAB> text <TAB> text ...

  exit codes  the accepted exit status(es) of rlx, comma-separated: 2 = an
              error (exit 2, never a signal or a sanitizer report), 1 = a
              parity FAIL from `rlx verify`, 0 = success (the reference then
              holds torch's result, so "0" means "computes the right thing")
  command     rlx's arguments, space-separated; {dir} is the case directory
  text        what the output must contain when rlx exits 2 (or 1): the
              culprit node, op, tensor or file; "a||b" accepts either;
              "!t" means the output must not contain t

Python 3 standard library only (json, struct), so it runs where torch is not
installed. Each case is a function whose docstring says which rule it tests.
"""
import json
import math
import os
import struct
import sys

I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
P62 = 1 << 62
P40 = 1 << 40

# ---------------------------------------------------------------- encoding

ST_DTYPE = {'f32': 'F32', 'f64': 'F64', 'f16': 'F16', 'bf16': 'BF16', 'i64': 'I64', 'i32': 'I32',
            'i16': 'I16', 'i8': 'I8', 'u8': 'U8', 'bool': 'BOOL'}
SIZE = {'f32': 4, 'f64': 8, 'f16': 2, 'bf16': 2, 'i64': 8, 'i32': 4, 'i16': 2, 'i8': 1, 'u8': 1,
        'bool': 1}
FMT = {'f32': 'f', 'f64': 'd', 'f16': 'e', 'i64': 'q', 'i32': 'i', 'i16': 'h', 'i8': 'b', 'u8': 'B',
       'bool': 'B'}
MAX_DATA = 64 << 20  # tensors bigger than this are not written to reference.safetensors


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def pack(dtype, shape, data=None):
    """Raw little-endian bytes of a tensor; data is a flat list (None: zeros)."""
    n = numel(shape)
    if isinstance(data, (bytes, bytearray)):
        return bytes(data)
    if data is None:
        return bytes(n * SIZE[dtype])
    if len(data) != n:
        raise ValueError('%d values for shape %s' % (len(data), shape))
    if dtype == 'bf16':
        return b''.join(struct.pack('<f', float(v))[2:] for v in data)
    if dtype == 'bool':
        return bytes(1 if v else 0 for v in data)
    if dtype in ('f32', 'f64', 'f16'):
        return struct.pack('<%d%s' % (n, FMT[dtype]), *[float(v) for v in data])
    return struct.pack('<%d%s' % (n, FMT[dtype]), *[int(v) for v in data])


def st_bytes(tensors, align=8):
    """A safetensors image of {name: (dtype, shape, raw bytes)}, each tensor's
    data starting at a multiple of `align` (1: packed, so misaligned)."""
    header, blobs, off = {}, [], 0
    for name, (dtype, shape, raw) in tensors.items():
        if off % align:
            blobs.append(bytes(align - off % align))
            off += align - off % align
        header[name] = {'dtype': ST_DTYPE.get(dtype, dtype), 'shape': list(shape),
                        'data_offsets': [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * (-(8 + len(h)) % 8)
    return struct.pack('<Q', len(h)) + h + b''.join(blobs)


# tagged arguments
def R(name):
    return {'ref': name}


def I(v):
    return {'int': v}


def F(v):
    if isinstance(v, float) and math.isnan(v):
        return {'float': 'nan'}
    if isinstance(v, float) and math.isinf(v):
        return {'float': 'inf' if v > 0 else '-inf'}
    return {'float': v}


def B(v):
    return {'bool': v}


def S(v):
    return {'str': v}


def D(v):
    return {'dtype': v}


def N():
    return {'none': True}


def L(*items):
    return {'list': list(items)}


def Ls(*ints):
    return {'list': [I(v) for v in ints]}


def T(shape, dtype='f32'):
    return {'shape': list(shape), 'dtype': dtype}


NAN, INF = float('nan'), float('inf')

# ---------------------------------------------------------------- cases


class Case:
    def __init__(self, name):
        self.name = name
        self.inputs, self.weights, self.nodes, self.outputs = [], [], [], []
        self.wfile = {}     # safetensors key -> (dtype, shape, raw)
        self.ref = {}       # reference key -> (dtype, shape, raw)
        self.ref_set = set()
        self.doc_patch = None  # function(doc) -> doc or raw text
        self.extra = {}     # file name -> bytes
        self.no_reference = False
        self.align = 8  # of tensor data in both safetensors files (1: packed)

    def input(self, id, shape, dtype='f32', data=None):
        self.inputs.append({'id': id, 'shape': list(shape), 'dtype': dtype})
        if data is not None:
            self.ref_in(id, dtype, shape, data)
        return R(id)

    def weight(self, id, key, shape, dtype='f32', data=None, file_shape=None, file_dtype=None):
        self.weights.append({'id': id, 'key': key, 'shape': list(shape), 'dtype': dtype, 'kind': 'param'})
        fs, fd = file_shape if file_shape is not None else shape, file_dtype or dtype
        self.wfile[key] = (fd, list(fs), pack(fd, fs, data))
        return R(id)

    def node(self, id, op, args, out=None, kwargs=None):
        self.nodes.append({'id': id, 'op': op, 'args': list(args), 'kwargs': kwargs or {}, 'out': out})
        return R(id)

    def output(self, ref, shape=None, dtype='f32', data=None):
        """A graph output. Without a shape (the case does not know it, or it
        does not exist), the output is sum(ref) as a 0-d `dtype` tensor:
        outputs must record a type, and the sum keeps `ref` live whatever
        shape rlx infers for it."""
        if shape is None:
            ref = self.node('sum_' + ref, 'aten.sum.default', [R(ref)], out=T([], dtype))['ref']
            shape = []
        o = {'ref': ref, 'shape': list(shape), 'dtype': dtype}
        if data is not None:
            self.ref_out(len(self.outputs), dtype, shape, data)
        self.outputs.append(o)

    def ref_in(self, id, dtype, shape, data):
        self.ref['in::' + id] = (dtype, list(shape), pack(dtype, shape, data))
        self.ref_set.add('in::' + id)

    def ref_out(self, i, dtype, shape, data):
        self.ref['out::%d' % i] = (dtype, list(shape), pack(dtype, shape, data))
        self.ref_set.add('out::%d' % i)

    def doc(self):
        return {'format': 'rlx-torch-ir', 'version': 1, 'model_name': self.name,
                'producer': 'tests/hostile/make_cases.py', 'decomposition': 'high',
                'inputs': self.inputs, 'weights': self.weights, 'nodes': self.nodes,
                'outputs': self.outputs}

    def write(self, d):
        os.makedirs(d, exist_ok=True)
        doc = self.doc()
        if self.doc_patch:
            doc = self.doc_patch(doc)
        text = doc if isinstance(doc, (str, bytes)) else json.dumps(doc)
        with open(os.path.join(d, 'torch-ir.json'), 'wb') as f:
            f.write(text.encode() if isinstance(text, str) else text)
        with open(os.path.join(d, 'weights.safetensors'), 'wb') as f:
            f.write(st_bytes(self.wfile, self.align))
        ref = dict(self.ref)
        for i in self.inputs:  # zeros for inputs the case did not fill
            k = 'in::' + i['id']
            if k not in ref and numel(i['shape']) * SIZE[i['dtype']] <= MAX_DATA:
                ref[k] = (i['dtype'], i['shape'], pack(i['dtype'], i['shape']))
        for n, o in enumerate(self.outputs):  # zeros for outputs (a wrong result then fails parity)
            k = 'out::%d' % n
            if k not in ref and 'shape' in o and numel(o['shape']) * SIZE[o['dtype']] <= MAX_DATA:
                ref[k] = (o['dtype'], o['shape'], pack(o['dtype'], o['shape']))
        if not self.no_reference:
            with open(os.path.join(d, 'reference.safetensors'), 'wb') as f:
                f.write(st_bytes(ref, self.align))
        for name, data in self.extra.items():
            with open(os.path.join(d, name), 'wb') as f:
                f.write(data)


CASES = []


def case(rc=(2,), expect=(), cmd='verify {dir}'):
    """Registers a case builder; the docstring is the rule it tests."""
    def deco(fn):
        CASES.append((fn.__name__, tuple(rc) if not isinstance(rc, int) else (rc,), tuple(expect), cmd, fn))
        return fn
    return deco


def unary_graph(c, op, x_shape, x_dtype, args, out, name=None, x_data=None, out_data=None, kwargs=None):
    """x -> one node -> output: the shape of most cases."""
    x = c.input('x', x_shape, x_dtype, x_data)
    name = name or op.split('.')[1]
    c.node(name, op, [x] + list(args), out=out, kwargs=kwargs)
    if isinstance(out, dict):
        c.output(name, out['shape'], out['dtype'], out_data)
    else:
        c.output(name, dtype='i64' if x_dtype in ('i64', 'i32', 'bool') else x_dtype)
    return name


# ---- sanity: a well-formed tiny graph verifies (the harness itself works)

@case(rc=0)
def pristine(c):
    """a valid graph (x -> relu) verifies: exit 0"""
    unary_graph(c, 'aten.relu.default', [2, 3], 'f32', [], T([2, 3]), name='relu',
                x_data=[-1, 2, -3, 4, -5, 6], out_data=[0, 2, 0, 4, 0, 6])


@case(rc=0, cmd='run {dir} --output-dir {dir}/out')
def pristine_run(c):
    """a valid graph runs with `rlx run` (inputs from reference.safetensors): exit 0"""
    unary_graph(c, 'aten.relu.default', [2, 3], 'f32', [], T([2, 3]), name='relu')


# ---- issue item 1: as_strided bounds

@case(expect=["'as_strided'"])
def as_strided_stride_2p62(c):
    """as_strided stride 2^62+1024: (size-1)*stride wraps and passes the bounds check (OOB read)"""
    unary_graph(c, 'aten.as_strided.default', [8192], 'f32', [Ls(5), Ls(P62 + 1024), I(0)], T([5]))


@case(expect=["'as_strided'"])
def as_strided_span_sum_overflow(c):
    """as_strided strides [2^62, 2^62]: the sum of the spans overflows int64"""
    unary_graph(c, 'aten.as_strided.default', [16], 'f32', [Ls(2, 2), Ls(P62, P62), I(0)], T([2, 2]))


@case(expect=["'as_strided'"])
def as_strided_offset_int64_max(c):
    """as_strided storage_offset INT64_MAX: offset + span overflows"""
    unary_graph(c, 'aten.as_strided.default', [16], 'f32', [Ls(2), Ls(1), I(I64_MAX)], T([2]))


@case(expect=["'as_strided'"])
def as_strided_negative_offset(c):
    """as_strided storage_offset -1 reads before the tensor"""
    unary_graph(c, 'aten.as_strided.default', [16], 'f32', [Ls(2), Ls(1), I(-1)], T([2]))


@case(expect=["'as_strided'"])
def as_strided_negative_stride(c):
    """as_strided stride -1 from offset 0 reads before the tensor"""
    unary_graph(c, 'aten.as_strided.default', [16], 'f32', [Ls(3), Ls(-1), I(0)], T([3]))


@case(expect=["'as_strided'"])
def as_strided_size_huge(c):
    """as_strided size [2^40, 2^40] stride [0, 0]: element count overflows (2^80)"""
    unary_graph(c, 'aten.as_strided.default', [16], 'f32', [Ls(P40, P40), Ls(0, 0), I(0)], None)


# ---- issue item 2: division by zero while loading

@case(expect=["'pixel_shuffle'"])
def pixel_shuffle_r0(c):
    """pixel_shuffle upscale_factor 0 (C / (r*r) divides by zero: SIGFPE)"""
    unary_graph(c, 'aten.pixel_shuffle.default', [1, 4, 2, 2], 'f32', [I(0)], T([1, 4, 2, 2]))


@case(expect=["'pixel_shuffle'"])
def pixel_shuffle_r2p32(c):
    """pixel_shuffle upscale_factor 2^32 (r*r wraps to 0: SIGFPE)"""
    unary_graph(c, 'aten.pixel_shuffle.default', [1, 4, 2, 2], 'f32', [I(1 << 32)], T([1, 4, 2, 2]))


@case(expect=["'pixel_shuffle'"])
def pixel_shuffle_r_neg(c):
    """pixel_shuffle upscale_factor -2 (torch: must be positive)"""
    unary_graph(c, 'aten.pixel_shuffle.default', [1, 4, 2, 2], 'f32', [I(-2)], T([1, 1, 4, 4]))


@case(expect=["'pixel_shuffle'"])
def pixel_shuffle_r_int64_min(c):
    """pixel_shuffle upscale_factor INT64_MIN (r*r overflows)"""
    unary_graph(c, 'aten.pixel_shuffle.default', [1, 4, 2, 2], 'f32', [I(I64_MIN)], T([1, 4, 2, 2]))


@case(expect=["'pixel_unshuffle'"])
def pixel_unshuffle_r0(c):
    """pixel_unshuffle downscale_factor 0 (H / r divides by zero: SIGFPE)"""
    unary_graph(c, 'aten.pixel_unshuffle.default', [1, 1, 4, 4], 'f32', [I(0)], T([1, 1, 4, 4]))


@case(expect=["'pixel_unshuffle'"])
def pixel_unshuffle_r_neg(c):
    """pixel_unshuffle downscale_factor -2 (torch: must be positive)"""
    unary_graph(c, 'aten.pixel_unshuffle.default', [1, 1, 4, 4], 'f32', [I(-2)], T([1, 4, 2, 2]))


def im2col(c, k, d, p, s, out=None):
    unary_graph(c, 'aten.im2col.default', [1, 1, 4, 4], 'f32', [Ls(*k), Ls(*d), Ls(*p), Ls(*s)], out)


@case(expect=["'im2col'"])
def im2col_stride0(c):
    """im2col stride 0 (divides by zero: SIGFPE)"""
    im2col(c, [2, 2], [1, 1], [0, 0], [0, 0], T([1, 4, 9]))


@case(expect=["'im2col'"])
def im2col_stride_neg(c):
    """im2col stride -1 (torch: stride must be positive)"""
    im2col(c, [2, 2], [1, 1], [0, 0], [-1, -1], None)


@case(expect=["'im2col'"])
def im2col_kernel0(c):
    """im2col kernel_size 0 (torch: kernel size must be positive)"""
    im2col(c, [0, 0], [1, 1], [0, 0], [1, 1], None)


@case(expect=["'im2col'"])
def im2col_dilation0(c):
    """im2col dilation 0 (torch: dilation must be positive)"""
    im2col(c, [2, 2], [0, 0], [0, 0], [1, 1], T([1, 4, 16]))


@case(expect=["'im2col'"])
def im2col_padding_neg(c):
    """im2col padding -1 (torch: padding must be non-negative)"""
    im2col(c, [2, 2], [1, 1], [-1, -1], [1, 1], None)


@case(expect=["'im2col'"])
def im2col_padding_2p62(c):
    """im2col padding 2^62 (H + 2*pad overflows)"""
    im2col(c, [2, 2], [1, 1], [P62, P62], [1, 1], None)


def col2im(c, o, k, d, p, s, out=None):
    unary_graph(c, 'aten.col2im.default', [1, 4, 9], 'f32', [Ls(*o), Ls(*k), Ls(*d), Ls(*p), Ls(*s)], out)


@case(expect=["'col2im'"])
def col2im_stride0(c):
    """col2im stride 0 (the block count divides by the stride)"""
    col2im(c, [4, 4], [2, 2], [1, 1], [0, 0], [0, 0], T([1, 1, 4, 4]))


@case(expect=["'col2im'"])
def col2im_kernel0(c):
    """col2im kernel_size 0"""
    col2im(c, [4, 4], [0, 0], [1, 1], [0, 0], [1, 1], T([1, 1, 4, 4]))


@case(expect=["'col2im'"])
def col2im_dilation0(c):
    """col2im dilation 0"""
    col2im(c, [4, 4], [2, 2], [0, 0], [0, 0], [1, 1], T([1, 1, 4, 4]))


@case(expect=["'col2im'"])
def col2im_output_size_huge(c):
    """col2im output_size [2^40, 2^40] (output element count 2^80)"""
    col2im(c, [P40, P40], [2, 2], [1, 1], [0, 0], [1, 1], None)


@case(expect=["'col2im'"])
def col2im_padding_2p62(c):
    """col2im padding 2^62 (out + 2*pad overflows)"""
    col2im(c, [4, 4], [2, 2], [1, 1], [P62, P62], [1, 1], T([1, 1, 4, 4]))


@case(expect=["'unfold'"])
def unfold_step0(c):
    """Tensor.unfold step 0 (divides by zero)"""
    unary_graph(c, 'aten.unfold.default', [4], 'f32', [I(0), I(2), I(0)], None)


@case(expect=["'unfold'"])
def unfold_size_int64_min(c):
    """Tensor.unfold size INT64_MIN"""
    unary_graph(c, 'aten.unfold.default', [4], 'f32', [I(0), I(I64_MIN), I(1)], None)


# ---- issue item 6: undefined behaviour on non-finite or extreme values

@case(expect=["'full'"])
def full_inf_to_int64(c):
    """full(fill_value=inf, dtype=int64): torch refuses (cannot convert without overflow); UB cast"""
    c.node('full', 'aten.full.default', [Ls(2), F(INF)], out=T([2], 'i64'), kwargs={'dtype': D('i64')})
    c.output('full', [2], 'i64')


@case(expect=["'full'"])
def full_nan_to_int64(c):
    """full(fill_value=nan, dtype=int64): torch refuses; UB cast"""
    c.node('full', 'aten.full.default', [Ls(2), F(NAN)], out=T([2], 'i64'), kwargs={'dtype': D('i64')})
    c.output('full', [2], 'i64')


@case(expect=["'full'"])
def full_1e30_to_int32(c):
    """full(fill_value=1e30, dtype=int32): out of the int32 range (torch refuses)"""
    c.node('full', 'aten.full.default', [Ls(2), F(1e30)], out=T([2], 'i32'), kwargs={'dtype': D('i32')})
    c.output('full', [2], 'i32')


@case(expect=["'full'"])
def full_300_to_int8(c):
    """full(fill_value=300, dtype=int8): out of the int8 range (torch refuses)"""
    c.node('full', 'aten.full.default', [Ls(2), I(300)], out=T([2], 'i8'), kwargs={'dtype': D('i8')})
    c.output('full', [2], 'i8')


@case(expect=["'scalar_tensor'"])
def scalar_tensor_nan_to_int64(c):
    """scalar_tensor(nan, dtype=int64): torch refuses; UB cast"""
    c.node('scalar_tensor', 'aten.scalar_tensor.default', [F(NAN)], out=T([], 'i64'),
           kwargs={'dtype': D('i64')})
    c.output('scalar_tensor', [], 'i64')


@case(expect=["'fill'"])
def fill_inf_int64(c):
    """fill.Scalar(int64 tensor, inf): torch refuses; UB cast"""
    unary_graph(c, 'aten.fill.Scalar', [2], 'i64', [F(INF)], T([2], 'i64'))


@case(expect=["'masked_fill'"])
def masked_fill_inf_int64(c):
    """masked_fill.Scalar(int64 tensor, mask, -inf): torch refuses; UB cast"""
    x = c.input('x', [2], 'i64')
    m = c.input('m', [2], 'bool')
    c.node('masked_fill', 'aten.masked_fill.Scalar', [x, m, F(-INF)], out=T([2], 'i64'))
    c.output('masked_fill', [2], 'i64')


@case(rc=0)
def eq_scalar_inf_int64(c):
    """eq.Scalar(int64 tensor, inf) is all False (no cast of inf to int64; x holds INT64_MIN)"""
    unary_graph(c, 'aten.eq.Scalar', [3], 'i64', [F(INF)], T([3], 'bool'), x_data=[I64_MIN, 0, 1],
                out_data=[0, 0, 0])


@case(rc=0)
def eq_scalar_neginf_int64(c):
    """eq.Scalar(int64 tensor, -inf) is all False (x holds INT64_MIN, what (int64)-inf gives on x86)"""
    unary_graph(c, 'aten.eq.Scalar', [3], 'i64', [F(-INF)], T([3], 'bool'), x_data=[I64_MIN, 0, 1],
                out_data=[0, 0, 0])


@case(rc=0)
def ne_scalar_nan_int64(c):
    """ne.Scalar(int64 tensor, nan) is all True"""
    unary_graph(c, 'aten.ne.Scalar', [3], 'i64', [F(NAN)], T([3], 'bool'), x_data=[I64_MIN, 0, 1],
                out_data=[1, 1, 1])


@case(rc=0)
def lt_scalar_1e30_int32(c):
    """lt.Scalar(int32 tensor, 1e30) is all True (1e30 does not fit int32)"""
    unary_graph(c, 'aten.lt.Scalar', [3], 'i32', [F(1e30)], T([3], 'bool'), x_data=[-5, 0, 2147483647],
                out_data=[1, 1, 1])


@case(expect=["'arange'"])
def arange_nan_start(c):
    """arange(start=nan): torch refuses (unsupported range)"""
    c.node('arange', 'aten.arange.start_step', [F(NAN), F(5.0), F(1.0)], out=T([5]))
    c.output('arange', [5])


@case(expect=["'arange'"])
def arange_inf_end(c):
    """arange(end=inf): torch refuses (unsupported range); rlx trusts the recorded length"""
    c.node('arange', 'aten.arange.default', [F(INF)], out=T([4]))
    c.output('arange', [4])


@case(expect=["'arange'"])
def arange_inf_step_int64(c):
    """arange(0, 10, inf, dtype=int64): torch refuses; (int64)inf is UB"""
    c.node('arange', 'aten.arange.start_step', [I(0), I(10), F(INF)], out=T([1], 'i64'),
           kwargs={'dtype': D('i64')})
    c.output('arange', [1], 'i64')


@case(expect=["'arange'"])
def arange_inf_start_int64(c):
    """arange(-inf, 10, 1, dtype=int64): torch refuses; (int64)-inf is UB"""
    c.node('arange', 'aten.arange.start_step', [F(-INF), I(10), I(1)], out=T([3], 'i64'),
           kwargs={'dtype': D('i64')})
    c.output('arange', [3], 'i64')


@case(expect=["'arange'"])
def arange_step0(c):
    """arange(0, 5, 0): torch refuses (step must be nonzero)"""
    c.node('arange', 'aten.arange.start_step', [I(0), I(5), I(0)], out=T([5], 'i64'))
    c.output('arange', [5], 'i64')


@case(expect=["'arange'"])
def arange_length_mismatch(c):
    """arange(3) recorded with 5 elements: the recorded length disagrees with the arguments"""
    c.node('arange', 'aten.arange.default', [I(3)], out=T([5], 'i64'))
    c.output('arange', [5], 'i64')


@case(expect=["'arange'"])
def arange_int64_overflow(c):
    """arange(0, ., 2^62) over 8 elements: start + 7*step overflows int64"""
    c.node('arange', 'aten.arange.start_step', [I(0), I(I64_MAX), I(P62)], out=T([8], 'i64'))
    c.output('arange', [8], 'i64')


@case(expect=["'arange'"])
def arange_huge(c):
    """arange(2^40): 8 TiB of int64 folded at compile time; must be an error, not an OOM kill"""
    c.node('arange', 'aten.arange.default', [I(P40)], out=T([P40], 'i64'))
    c.output('arange')


@case(rc=0)
def softmax_all_neginf_row(c):
    """softmax of a row that is all -inf is NaN (torch), no UB"""
    ninf = -INF
    unary_graph(c, 'aten._softmax.default', [2, 3], 'f32', [I(-1), B(False)], T([2, 3]),
                name='softmax', x_data=[ninf, ninf, ninf, 0, 0, 0],
                out_data=[NAN, NAN, NAN, 1 / 3, 1 / 3, 1 / 3])


@case(rc=0)
def log_softmax_all_neginf_row(c):
    """log_softmax of a row that is all -inf is NaN (torch), no UB"""
    ninf = -INF
    l3 = -math.log(3)
    unary_graph(c, 'aten._log_softmax.default', [2, 3], 'f32', [I(-1), B(False)], T([2, 3]),
                name='log_softmax', x_data=[ninf, ninf, ninf, 0, 0, 0],
                out_data=[NAN, NAN, NAN, l3, l3, l3])


def grid_case(c, g, pad=2, mode=0, out=True):
    x = c.input('x', [1, 1, 2, 2], 'f32', [1, 2, 3, 4])
    gr = c.input('grid', [1, 1, len(g) // 2, 2], 'f32', g)
    c.node('grid_sampler', 'aten.grid_sampler_2d.default', [x, gr, I(mode), I(pad), B(False)],
           out=T([1, 1, 1, len(g) // 2]) if out else None)
    c.output('grid_sampler')


@case(rc=0, cmd='run {dir} --output-dir {dir}/out')
def grid_sample_reflect_nan(c):
    """grid_sample, reflection padding, NaN grid: no UB or out-of-bounds read"""
    grid_case(c, [NAN, NAN, NAN, 0.0, 0.0, NAN])


@case(rc=0, cmd='run {dir} --output-dir {dir}/out')
def grid_sample_reflect_inf(c):
    """grid_sample, reflection padding, +-inf grid: no UB or out-of-bounds read"""
    grid_case(c, [INF, INF, -INF, -INF, INF, 0.0])


@case(rc=0, cmd='run {dir} --output-dir {dir}/out')
def grid_sample_reflect_1e30(c):
    """grid_sample, reflection padding, grid 1e30: no UB or out-of-bounds read"""
    grid_case(c, [1e30, 1e30, -1e30, -1e30, 1e30, -3e38])


@case(rc=0, cmd='run {dir} --output-dir {dir}/out')
def grid_sample_border_nan_bicubic(c):
    """grid_sample, border padding, bicubic, non-finite grid: no UB or out-of-bounds read"""
    grid_case(c, [NAN, INF, -INF, 1e30, 3e38, NAN], pad=1, mode=2)


@case(rc=0, cmd='run {dir} --output-dir {dir}/out')
def grid_sample_zeros_nearest_huge(c):
    """grid_sample, zeros padding, nearest, huge grid: no UB or out-of-bounds read"""
    grid_case(c, [NAN, INF, -INF, 1e30, 3e38, -3e38], pad=0, mode=1)


@case(expect=["'grid_sampler'"])
def grid_sample_bad_padding_mode(c):
    """grid_sampler padding_mode 9 (valid: 0, 1, 2)"""
    grid_case(c, [0.0, 0.0], pad=9, out=False)


@case(expect=["'grid_sampler'"])
def grid_sample_bad_mode(c):
    """grid_sampler interpolation_mode 7 (valid: 0, 1, 2)"""
    grid_case(c, [0.0, 0.0], mode=7, out=False)


@case(expect=["'grid_sampler'"])
def grid_sample_mode_2p32(c):
    """grid_sampler interpolation_mode 2^32 (truncated to 0 by an int cast)"""
    grid_case(c, [0.0, 0.0], mode=1 << 32, out=False)


@case(expect=["'grid_sampler'"])
def grid_sample_grid_last_dim_3(c):
    """grid_sampler with a grid whose last dim is 3 (must be 2)"""
    x = c.input('x', [1, 1, 2, 2])
    g = c.input('grid', [1, 1, 2, 3])
    c.node('grid_sampler', 'aten.grid_sampler_2d.default', [x, g, I(0), I(0), B(False)])
    c.output('grid_sampler')


@case(expect=["'constant_pad_nd'"])
def pad_neginf_int64(c):
    """constant_pad_nd of an int64 tensor with value -inf: torch refuses; UB cast"""
    unary_graph(c, 'aten.constant_pad_nd.default', [2], 'i64', [Ls(1, 1), F(-INF)], T([4], 'i64'))


@case(expect=["'constant_pad_nd'"])
def pad_nan_int32(c):
    """constant_pad_nd of an int32 tensor with value nan: torch refuses; UB cast"""
    unary_graph(c, 'aten.constant_pad_nd.default', [2], 'i32', [Ls(1, 1), F(NAN)], T([4], 'i32'))


@case(expect=["'constant_pad_nd'"])
def pad_int64_extremes(c):
    """constant_pad_nd pad [INT64_MIN, INT64_MAX]: the sum looks fine, j - lo overflows"""
    unary_graph(c, 'aten.constant_pad_nd.default', [2], 'f32', [Ls(I64_MIN, I64_MAX), F(0.0)], None)


@case(expect=["'constant_pad_nd'"])
def pad_huge(c):
    """constant_pad_nd pad [0, 2^62]: an output of 2^62 elements"""
    unary_graph(c, 'aten.constant_pad_nd.default', [2], 'f32', [Ls(0, P62), F(0.0)], None)


@case(expect=["'constant_pad_nd'"])
def pad_int64_max_rank2(c):
    """constant_pad_nd pad [INT64_MAX, 0, INT64_MAX, 0] on [2, 2]: dims and their product overflow"""
    unary_graph(c, 'aten.constant_pad_nd.default', [2, 2], 'f32', [Ls(I64_MAX - 2, 0, I64_MAX - 2, 0), F(0.0)],
                None)


@case(expect=["'reflection_pad1d'"])
def reflection_pad_2p62(c):
    """reflection_pad1d padding 2^62 (must be smaller than the dim)"""
    unary_graph(c, 'aten.reflection_pad1d.default', [1, 1, 4], 'f32', [Ls(P62, P62)], None)


@case(expect=["'pad'"])
def pad_circular_int64_min(c):
    """pad(mode='circular') with INT64_MIN padding"""
    unary_graph(c, 'aten.pad.default', [1, 1, 4], 'f32', [Ls(I64_MIN, 0), S('circular'), N()], None)


@case(expect=["'pad'"])
def pad_bad_mode(c):
    """pad(mode='frobnicate')"""
    unary_graph(c, 'aten.pad.default', [1, 1, 4], 'f32', [Ls(1, 1), S('frobnicate'), N()], None)


@case(rc=(0, 2), expect=["'diagonal'"])
def diagonal_offset_int64_min(c):
    """diagonal offset INT64_MIN (-offset overflows); the result is empty in torch"""
    unary_graph(c, 'aten.diagonal.default', [2, 2], 'f32', [I(I64_MIN), I(0), I(1)], T([0]), out_data=[])


@case(rc=(0, 2), expect=["'diagonal'"])
def diagonal_offset_int64_max(c):
    """diagonal offset INT64_MAX; the result is empty in torch"""
    unary_graph(c, 'aten.diagonal.default', [2, 2], 'f32', [I(I64_MAX), I(0), I(1)], T([0]), out_data=[])


def pool(c, op, k, s, p, extra=(), shape=(1, 1, 4, 4), out=None):
    unary_graph(c, op, list(shape), 'f32', [Ls(*k), Ls(*s), Ls(*p)] + list(extra), out)


@case(expect=["'avg_pool2d'"])
def avg_pool_padding_2p62(c):
    """avg_pool2d padding 2^62 (2*pad overflows before the half-kernel check)"""
    pool(c, 'aten.avg_pool2d.default', [2, 2], [1, 1], [P62, P62])


@case(expect=["'max_pool2d'"])
def max_pool_padding_2p62(c):
    """max_pool2d padding 2^62 (2*pad overflows)"""
    pool(c, 'aten.max_pool2d.default', [2, 2], [1, 1], [P62, P62], [Ls(1, 1), B(False)])


@case(expect=["'max_pool2d'"])
def max_pool_kernel0(c):
    """max_pool2d kernel_size 0"""
    pool(c, 'aten.max_pool2d.default', [0, 0], [1, 1], [0, 0], [Ls(1, 1), B(False)])


@case(expect=["'avg_pool2d'"])
def avg_pool_kernel0(c):
    """avg_pool2d kernel_size 0"""
    pool(c, 'aten.avg_pool2d.default', [0, 0], [1, 1], [0, 0])


@case(expect=["'max_pool2d'"])
def max_pool_stride_neg(c):
    """max_pool2d stride -1"""
    pool(c, 'aten.max_pool2d.default', [2, 2], [-1, -1], [0, 0], [Ls(1, 1), B(False)])


@case(expect=["'max_pool2d'"])
def max_pool_dilation0(c):
    """max_pool2d dilation 0"""
    pool(c, 'aten.max_pool2d.default', [2, 2], [1, 1], [0, 0], [Ls(0, 0), B(False)])


@case(expect=["'max_pool2d'"])
def max_pool_dilation_2p62(c):
    """max_pool2d dilation 2^62 (d*(k-1) overflows)"""
    pool(c, 'aten.max_pool2d.default', [3, 3], [1, 1], [0, 0], [Ls(P62, P62), B(False)])


@case(expect=["'max_pool2d'"])
def max_pool_kernel_int64_max(c):
    """max_pool2d kernel_size INT64_MAX with ceil_mode"""
    pool(c, 'aten.max_pool2d.default', [I64_MAX, I64_MAX], [I64_MAX, I64_MAX], [0, 0], [Ls(1, 1), B(True)])


@case(expect=["'avg_pool2d'"])
def avg_pool_divisor_override0(c):
    """avg_pool2d divisor_override 0: torch refuses (divisor must be not zero)"""
    pool(c, 'aten.avg_pool2d.default', [2, 2], [2, 2], [0, 0], [B(False), B(True), I(0)], out=T([1, 1, 2, 2]))


@case(expect=["'max_pool1d'"])
def max_pool1d_rank1(c):
    """max_pool1d on a rank-1 tensor (needs [C, L] or [N, C, L])"""
    pool(c, 'aten.max_pool1d.default', [2], [2], [0], [Ls(1), B(False)], shape=[4])


@case(expect=["'adaptive_avg_pool2d'"])
def adaptive_pool_output_huge(c):
    """adaptive_avg_pool2d output_size [2^40, 2^40] (output element count 2^80)"""
    unary_graph(c, 'aten.adaptive_avg_pool2d.default', [1, 1, 4, 4], 'f32', [Ls(P40, P40)], None)


@case(expect=["'adaptive_avg_pool2d'"])
def adaptive_pool_output_negative(c):
    """adaptive_avg_pool2d output_size [-5, -5]: torch refuses; rlx reads <= 0 as 'keep the size'"""
    unary_graph(c, 'aten.adaptive_avg_pool2d.default', [1, 1, 4, 4], 'f32', [Ls(-5, -5)], None)


@case(expect=["'adaptive_max_pool2d'"])
def adaptive_max_pool_output_2p62(c):
    """adaptive_max_pool2d output_size [2^62, 1]"""
    unary_graph(c, 'aten.adaptive_max_pool2d.default', [1, 1, 4, 4], 'f32', [Ls(P62, 1)], None)


# ---- issue item 9: validation as strict as torch's

@case(expect=["'unsqueeze'"])
def unsqueeze_dim_2p62(c):
    """unsqueeze dim 2^62: torch refuses (dim out of range); rlx trusts the recorded shape"""
    unary_graph(c, 'aten.unsqueeze.default', [2, 3], 'f32', [I(P62)], T([2, 3, 1]))


@case(expect=["'unsqueeze'"])
def unsqueeze_dim_neg100(c):
    """unsqueeze dim -100 on a rank-2 tensor: torch refuses"""
    unary_graph(c, 'aten.unsqueeze.default', [2, 3], 'f32', [I(-100)], T([1, 2, 3]))


@case(expect=["'squeeze'"])
def squeeze_dim_2p62(c):
    """squeeze.dim dim 2^62: torch refuses"""
    unary_graph(c, 'aten.squeeze.dim', [2, 1], 'f32', [I(P62)], T([2]))


@case(expect=["'view'"])
def view_two_minus_ones(c):
    """view(x, [-1, -1]): torch refuses (only one dimension can be inferred)"""
    unary_graph(c, 'aten.view.default', [2, 3], 'f32', [Ls(-1, -1)], T([2, 3]))


@case(expect=["'view'"])
def view_negative_size(c):
    """view(x, [-2, -3]): torch refuses (invalid shape dimension -2)"""
    unary_graph(c, 'aten.view.default', [2, 3], 'f32', [Ls(-2, -3)], T([6]))


@case(expect=["'view'"])
def view_args_disagree_with_record(c):
    """view(x, [3, 2]) recorded as [2, 3]: the arguments and the record disagree"""
    unary_graph(c, 'aten.view.default', [2, 3], 'f32', [Ls(3, 2)], T([2, 3]))


@case(expect=["'flatten'"])
def flatten_dims_out_of_range(c):
    """flatten(x, 5, -7): torch refuses (dim out of range)"""
    unary_graph(c, 'aten.flatten.using_ints', [2, 3], 'f32', [I(5), I(-7)], T([6]))


@case(expect=["'expand'"])
def expand_negative_size(c):
    """expand(x, [-2, 3]): torch refuses (only -1 keeps a size)"""
    unary_graph(c, 'aten.expand.default', [1, 3], 'f32', [Ls(-2, 3)], T([1, 3]))


@case(expect=["'expand'"])
def expand_args_disagree_with_record(c):
    """expand(x, [4, 3]) recorded as [2, 3]"""
    unary_graph(c, 'aten.expand.default', [1, 3], 'f32', [Ls(4, 3)], T([2, 3]))


@case(expect=["'sum'"])
def sum_duplicate_dims(c):
    """sum(x, [1, 1]): torch refuses (dim 1 appears multiple times)"""
    unary_graph(c, 'aten.sum.dim_IntList', [2, 3], 'f32', [Ls(1, 1), B(False)], T([2]))


@case(expect=["'mean'"])
def mean_duplicate_dims_negative(c):
    """mean(x, [0, -2]) on rank 2: dims 0 and -2 are the same axis"""
    unary_graph(c, 'aten.mean.dim', [2, 3], 'f32', [Ls(0, -2), B(False)], T([3]))


@case(expect=["'amax'"])
def amax_duplicate_dims(c):
    """amax(x, [1, 1]): torch refuses"""
    unary_graph(c, 'aten.amax.default', [2, 3], 'f32', [Ls(1, 1), B(False)], T([2]))


@case(expect=["'var'"])
def var_duplicate_dims(c):
    """var.correction(x, [1, -1]): torch refuses"""
    unary_graph(c, 'aten.var.correction', [2, 3], 'f32', [Ls(1, -1)], T([2]), kwargs={'correction': I(1)})


@case(expect=["'chunk'"])
def chunk_zero(c):
    """chunk(x, 0): torch refuses (chunks must be greater than 0)"""
    x = c.input('x', [4])
    c.node('chunk', 'aten.chunk.default', [x, I(0)], out=[T([4])])
    c.node('getitem', '_getitem', [R('chunk'), I(0)], out=T([4]))
    c.output('getitem', [4])


@case(expect=["'split'"])
def split_zero(c):
    """split(x, 0) of a non-empty dim: torch refuses"""
    x = c.input('x', [4])
    c.node('split', 'aten.split.Tensor', [x, I(0)], out=[T([4])])
    c.node('getitem', '_getitem', [R('split'), I(0)], out=T([4]))
    c.output('getitem', [4])


@case(expect=["'split'"])
def split_negative(c):
    """split(x, -1): torch refuses"""
    x = c.input('x', [4])
    c.node('split', 'aten.split.Tensor', [x, I(-1)], out=[T([4])])
    c.node('getitem', '_getitem', [R('split'), I(0)], out=T([4]))
    c.output('getitem', [4])


@case(expect=["'split_with_sizes'"])
def split_with_sizes_wrong_sum(c):
    """split_with_sizes(x, [1, 1]) of a dim of 4: torch refuses (sizes must sum to 4)"""
    x = c.input('x', [4])
    c.node('split_with_sizes', 'aten.split_with_sizes.default', [x, Ls(1, 1)], out=[T([1]), T([1])])
    c.node('getitem', '_getitem', [R('split_with_sizes'), I(0)], out=T([1]))
    c.output('getitem', [1])


@case(expect=["'split'"])
def split_record_past_end(c):
    """split(x, 3) recorded as two pieces of 3 of a dim of 4 (pieces past the end)"""
    x = c.input('x', [4])
    c.node('split', 'aten.split.Tensor', [x, I(3)], out=[T([3]), T([3])])
    c.node('getitem', '_getitem', [R('split'), I(1)], out=T([3]))
    c.output('getitem', [3])


@case(expect=["outputs"])
def outputs_empty(c):
    """outputs: [] (torch.export always has an output; rlx verify compares nothing)"""
    c.input('x', [2])
    c.node('relu', 'aten.relu.default', [R('x')], out=T([2]))


@case(expect=["'one_hot'"])
def one_hot_index_too_big(c):
    """one_hot with a class 5 >= num_classes 3: torch refuses at run time (RLX_ERR_RUNTIME)"""
    unary_graph(c, 'aten.one_hot.default', [3], 'i64', [I(3)], T([3, 3], 'i64'), x_data=[0, 1, 5])


@case(expect=["'one_hot'"])
def one_hot_index_negative(c):
    """one_hot with a class -1: torch refuses at run time"""
    unary_graph(c, 'aten.one_hot.default', [3], 'i64', [I(3)], T([3, 3], 'i64'), x_data=[0, 1, -1])


@case(expect=["'one_hot'"])
def one_hot_num_classes_disagree(c):
    """one_hot(x, 3) recorded as [3, 4]: the argument and the record disagree"""
    unary_graph(c, 'aten.one_hot.default', [3], 'i64', [I(3)], T([3, 4], 'i64'), x_data=[0, 1, 2])


@case(expect=["threads"], cmd='verify {dir} --threads 300')
def threads_300(c):
    """--threads 300 (more than the 256 threads rlx supports)"""
    unary_graph(c, 'aten.relu.default', [2, 3], 'f32', [], T([2, 3]), name='relu')


@case(expect=["threads"], cmd='run {dir} --threads 1024 --output-dir {dir}/out')
def threads_1024_run(c):
    """rlx run --threads 1024"""
    unary_graph(c, 'aten.relu.default', [2, 3], 'f32', [], T([2, 3]), name='relu')


@case(expect=["'permute'"])
def permute_duplicate_dims(c):
    """permute(x, [0, 0]): not a permutation"""
    unary_graph(c, 'aten.permute.default', [2, 3], 'f32', [Ls(0, 0)], None)


@case(expect=["'transpose'"])
def transpose_dim_int64_min(c):
    """transpose(x, INT64_MIN, 0): dim out of range"""
    unary_graph(c, 'aten.transpose.int', [2, 3], 'f32', [I(I64_MIN), I(0)], None)


# ---- convolution

def conv(c, args, x=(1, 1, 4, 4), w=(1, 1, 2, 2), op='aten.conv2d.default', bias=None, out=None, xdt='f32',
         wdt='f32', out_shape=None):
    xv = c.input('x', list(x), xdt)
    wv = c.weight('p_w', 'w', list(w), wdt)
    b = N()
    if bias is not None:
        b = c.weight('p_b', 'b', [bias])
    name = op.split('.')[1]
    c.node(name, op, [xv, wv, b] + list(args), out=out)
    c.output(name, out_shape)


@case(expect=["'conv2d'"])
def conv_stride0(c):
    """conv2d stride 0"""
    conv(c, [Ls(0, 0), Ls(0, 0), Ls(1, 1), I(1)])


@case(expect=["'conv2d'"])
def conv_stride_neg(c):
    """conv2d stride -1"""
    conv(c, [Ls(-1, -1), Ls(0, 0), Ls(1, 1), I(1)])


@case(expect=["'conv2d'"])
def conv_dilation0(c):
    """conv2d dilation 0"""
    conv(c, [Ls(1, 1), Ls(0, 0), Ls(0, 0), I(1)])


@case(expect=["'conv2d'"])
def conv_padding_neg(c):
    """conv2d padding -1"""
    conv(c, [Ls(1, 1), Ls(-1, -1), Ls(1, 1), I(1)])


@case(expect=["'conv2d'"])
def conv_padding_2p62(c):
    """conv2d padding 2^62 (2*pad overflows)"""
    conv(c, [Ls(1, 1), Ls(P62, P62), Ls(1, 1), I(1)])


@case(expect=["'conv2d'"])
def conv_dilation_2p62(c):
    """conv2d dilation 2^62 (d*(k-1) overflows)"""
    conv(c, [Ls(1, 1), Ls(0, 0), Ls(P62, P62), I(1)])


@case(expect=["'conv2d'"])
def conv_groups0(c):
    """conv2d groups 0"""
    conv(c, [Ls(1, 1), Ls(0, 0), Ls(1, 1), I(0)])


@case(expect=["'conv2d'"])
def conv_groups_neg(c):
    """conv2d groups -1"""
    conv(c, [Ls(1, 1), Ls(0, 0), Ls(1, 1), I(-1)])


@case(expect=["'conv2d'"])
def conv_groups_int64_min(c):
    """conv2d groups INT64_MIN (C % G, O % G with a negative G)"""
    conv(c, [Ls(1, 1), Ls(0, 0), Ls(1, 1), I(I64_MIN)], x=(1, 2, 4, 4), w=(2, 1, 2, 2))


@case(expect=["'conv2d'"])
def conv_kernel_zero(c):
    """conv2d with a 0x0 kernel: torch refuses"""
    conv(c, [Ls(1, 1), Ls(0, 0), Ls(1, 1), I(1)], w=(1, 1, 0, 0))


@case(expect=["'conv2d'"])
def conv_in_channels_mismatch(c):
    """conv2d weight for 3 input channels on a 1-channel input"""
    conv(c, [Ls(1, 1), Ls(0, 0), Ls(1, 1), I(1)], w=(1, 3, 2, 2))


@case(expect=["'conv2d'"])
def conv_bias_wrong_length(c):
    """conv2d bias of length 5 for 1 output channel"""
    conv(c, [Ls(1, 1), Ls(0, 0), Ls(1, 1), I(1)], bias=5)


@case(expect=["'conv2d'"])
def conv_weight_rank5(c):
    """conv2d with a rank-5 weight on a rank-4 input"""
    conv(c, [Ls(1, 1), Ls(0, 0), Ls(1, 1), I(1)], w=(1, 1, 2, 2, 2))


@case(expect=["'conv2d'"])
def conv_dtype_mismatch(c):
    """conv2d of an f32 input with an f64 weight: torch refuses (same dtype)"""
    conv(c, [Ls(1, 1), Ls(0, 0), Ls(1, 1), I(1)], wdt='f64')


@case(expect=["'conv2d'"])
def conv_spatial_list_too_long(c):
    """conv2d stride with 3 entries for 2 spatial dims"""
    conv(c, [Ls(1, 1, 1), Ls(0, 0), Ls(1, 1), I(1)])


@case(rc=(0, 2), expect=["'conv2d'"])
def conv_stride_huge_ok(c):
    """conv2d stride 2^62 is legal in torch (one output per axis: [1,1,1,1] of zeros); refusing it is fine"""
    conv(c, [Ls(P62, P62), Ls(0, 0), Ls(1, 1), I(1)], out=T([1, 1, 1, 1]), out_shape=[1, 1, 1, 1])


@case(expect=["'conv_transpose2d'"])
def conv_transpose_output_padding_neg(c):
    """conv_transpose2d output_padding -2: torch refuses; a smaller output than the kernel writes"""
    conv(c, [Ls(1, 1), Ls(0, 0), Ls(-2, -2), I(1), Ls(1, 1)], x=(1, 1, 2, 2), op='aten.conv_transpose2d.input')


@case(expect=["'conv_transpose2d'"])
def conv_transpose_output_padding_ge_stride(c):
    """conv_transpose2d output_padding 1 with stride 1, dilation 1: torch refuses"""
    conv(c, [Ls(1, 1), Ls(0, 0), Ls(1, 1), I(1), Ls(1, 1)], x=(1, 1, 2, 2), op='aten.conv_transpose2d.input')


@case(expect=["'conv_transpose2d'"])
def conv_transpose_output_padding_2p62(c):
    """conv_transpose2d output_padding 2^62"""
    conv(c, [Ls(1, 1), Ls(0, 0), Ls(P62, P62), I(1), Ls(1, 1)], x=(1, 1, 2, 2), op='aten.conv_transpose2d.input')


@case(expect=["'conv_transpose2d'"])
def conv_transpose_padding_too_big(c):
    """conv_transpose2d padding 5 on a 2x2 input (negative output size)"""
    conv(c, [Ls(1, 1), Ls(5, 5), Ls(0, 0), I(1), Ls(1, 1)], x=(1, 1, 2, 2), op='aten.conv_transpose2d.input')


@case(expect=["'convolution'"])
def convolution_transposed_groups_huge(c):
    """convolution(transposed=True, groups=2^62): O = w.dims[1] * G overflows"""
    conv(c, [Ls(1, 1), Ls(0, 0), Ls(1, 1), B(True), Ls(0, 0), I(P62)], op='aten.convolution.default',
         x=(1, 1, 2, 2))


# ---- shape and data movement

@case(expect=["'view'"])
def reshape_bad_numel(c):
    """view recorded as [7] of a 6-element tensor"""
    unary_graph(c, 'aten.view.default', [2, 3], 'f32', [Ls(7)], T([7]))


@case(expect=["'expand'"])
def expand_huge(c):
    """expand to [2^24, 2^24] (1 PiB of f32): must be an error, not an OOM kill"""
    unary_graph(c, 'aten.expand.default', [1, 1], 'f32', [Ls(1 << 24, 1 << 24)], T([1 << 24, 1 << 24]))


@case(expect=["'expand'"])
def expand_numel_overflow(c):
    """expand [1, 1] to [2^32, 2^32]: 2^64 elements, a count that wraps to 0"""
    unary_graph(c, 'aten.expand.default', [1, 1], 'f32', [Ls(1 << 32, 1 << 32)], None)


@case(expect=["'expand'"])
def expand_to_smaller(c):
    """expand [3] to [2]"""
    unary_graph(c, 'aten.expand.default', [3], 'f32', [Ls(2)], T([2]))


@case(expect=["'slice'"])
def slice_step0(c):
    """slice step 0"""
    unary_graph(c, 'aten.slice.Tensor', [4], 'f32', [I(0), I(0), I(4), I(0)], None)


@case(expect=["'slice'"])
def slice_step_neg(c):
    """slice step -1 (torch refuses: step must be positive)"""
    unary_graph(c, 'aten.slice.Tensor', [4], 'f32', [I(0), I(0), I(4), I(-1)], None)


@case(expect=["'slice'"])
def slice_step_int64_min(c):
    """slice step INT64_MIN"""
    unary_graph(c, 'aten.slice.Tensor', [4], 'f32', [I(0), I(0), I(4), I(I64_MIN)], None)


@case(rc=0)
def slice_extremes_ok(c):
    """slice [INT64_MIN:INT64_MAX:INT64_MAX] is x[0:1] (clamped like Python)"""
    unary_graph(c, 'aten.slice.Tensor', [4], 'f32', [I(0), I(I64_MIN), I(I64_MAX), I(I64_MAX)], T([1]),
                x_data=[1, 2, 3, 4], out_data=[1])


@case(expect=["'slice'"])
def slice_dim_out_of_range(c):
    """slice dim 5 of a rank-1 tensor"""
    unary_graph(c, 'aten.slice.Tensor', [4], 'f32', [I(5), I(0), I(4), I(1)], None)


@case(expect=["'narrow'"])
def narrow_start_int64_min(c):
    """narrow start INT64_MIN"""
    unary_graph(c, 'aten.narrow.default', [4], 'f32', [I(0), I(I64_MIN), I(1)], None)


@case(expect=["'narrow'"])
def narrow_length_int64_max(c):
    """narrow start 1, length INT64_MAX (start + length overflows)"""
    unary_graph(c, 'aten.narrow.default', [4], 'f32', [I(0), I(1), I(I64_MAX)], None)


@case(expect=["'narrow'"])
def narrow_length_neg(c):
    """narrow length -1"""
    unary_graph(c, 'aten.narrow.default', [4], 'f32', [I(0), I(1), I(-1)], None)


@case(expect=["'select'"])
def select_index_int64_min(c):
    """select index INT64_MIN"""
    unary_graph(c, 'aten.select.int', [4], 'f32', [I(0), I(I64_MIN)], None)


@case(expect=["'select'"])
def select_index_past_end(c):
    """select index 4 of a dim of 4"""
    unary_graph(c, 'aten.select.int', [4], 'f32', [I(0), I(4)], None)


def cat_case(c, shapes, dim, out=None, dtypes=None, op='aten.cat.default'):
    refs = []
    for i, s in enumerate(shapes):
        refs.append(c.input('x%d' % i, s, (dtypes or ['f32'] * len(shapes))[i]))
    name = op.split('.')[1]
    c.node(name, op, [L(*refs), I(dim)], out=out)
    c.output(name)


@case(expect=["'cat'"])
def cat_rank_mismatch(c):
    """cat of a rank-2 and a rank-3 tensor"""
    cat_case(c, [[2, 3], [2, 3, 1]], 0, T([4, 3]))


@case(expect=["'cat'"])
def cat_other_dim_mismatch(c):
    """cat along dim 0 of [2, 3] and [2, 4]"""
    cat_case(c, [[2, 3], [2, 4]], 0, T([4, 3]))


@case(expect=["'cat'"])
def cat_dim_out_of_range(c):
    """cat along dim 7 of rank-2 tensors"""
    cat_case(c, [[2, 3], [2, 3]], 7, T([4, 3]))


@case(expect=["'cat'"])
def cat_dim_int64_min(c):
    """cat along dim INT64_MIN"""
    cat_case(c, [[2, 3], [2, 3]], I64_MIN, T([4, 3]))


@case(expect=["'cat'"])
def cat_empty_list(c):
    """cat of no tensors"""
    c.input('x0', [2])
    c.node('cat', 'aten.cat.default', [L(), I(0)], out=T([0]))
    c.output('cat')


@case(expect=["'cat'"])
def cat_none_entry(c):
    """cat of [x, None]"""
    x = c.input('x0', [2])
    c.node('cat', 'aten.cat.default', [L(x, N()), I(0)], out=T([2]))
    c.output('cat')


@case(expect=["'cat'||'x0'"])
def cat_size_overflow(c):
    """cat along dim 1 of two [0, 2^62] tensors: the axis length 2^63 overflows"""
    cat_case(c, [[0, P62], [0, P62]], 1, None)


@case(expect=["'stack'"])
def stack_shape_mismatch(c):
    """stack of [2, 3] and [3, 2]: torch refuses (equal sizes); a reshape must not hide it"""
    cat_case(c, [[2, 3], [3, 2]], 0, T([2, 2, 3]), op='aten.stack.default')


@case(expect=["'stack'"])
def stack_dim_out_of_range(c):
    """stack along dim 9"""
    cat_case(c, [[2], [2]], 9, T([2, 2]), op='aten.stack.default')


@case(expect=["'repeat'"])
def repeat_product_overflow(c):
    """repeat [2, 2] by [2^31, 2^31]: 2^64 elements"""
    unary_graph(c, 'aten.repeat.default', [2, 2], 'f32', [Ls(1 << 31, 1 << 31)], None)


@case(expect=["'repeat'"])
def repeat_dim_overflow(c):
    """repeat [2] by [2^62]: the dim 2^63 overflows"""
    unary_graph(c, 'aten.repeat.default', [2], 'f32', [Ls(P62)], None)


@case(expect=["'repeat'"])
def repeat_huge(c):
    """repeat [2] by [2^40]: 8 TiB; must be an error, not an OOM kill"""
    unary_graph(c, 'aten.repeat.default', [2], 'f32', [Ls(P40)], T([2 * P40]))


@case(expect=["'repeat'"])
def repeat_negative(c):
    """repeat by -1"""
    unary_graph(c, 'aten.repeat.default', [2], 'f32', [Ls(-1)], None)


@case(expect=["'tile'"])
def tile_overflow(c):
    """tile [2, 2] by [2^62, 4]"""
    unary_graph(c, 'aten.tile.default', [2, 2], 'f32', [Ls(P62, 4)], None)


@case(rc=0)
def repeat_zero_ok(c):
    """repeat [2] by [0] is empty"""
    unary_graph(c, 'aten.repeat.default', [2], 'f32', [Ls(0)], T([0]), out_data=[])


@case(rc=(0, 2), expect=["'roll'"])
def roll_shift_int64_min(c):
    """roll by INT64_MIN of 3 elements (shift modulo the size; no overflow)"""
    unary_graph(c, 'aten.roll.default', [3], 'f32', [Ls(I64_MIN), Ls(0)], T([3]), x_data=[0, 1, 2],
                out_data=[2, 0, 1])


@case(expect=["'roll'"])
def roll_dim_out_of_range(c):
    """roll along dim 3 of a rank-1 tensor"""
    unary_graph(c, 'aten.roll.default', [3], 'f32', [Ls(1), Ls(3)], None)


@case(expect=["'roll'"])
def roll_shifts_dims_count(c):
    """roll with 2 shifts for 1 dim"""
    unary_graph(c, 'aten.roll.default', [3], 'f32', [Ls(1, 1), Ls(0)], None)


@case(rc=0)
def tril_int64_min(c):
    """tril(x, INT64_MIN) keeps nothing"""
    unary_graph(c, 'aten.tril.default', [2, 2], 'f32', [I(I64_MIN)], T([2, 2]), x_data=[1, 2, 3, 4],
                out_data=[0, 0, 0, 0])


@case(rc=0)
def tril_int64_max(c):
    """tril(x, INT64_MAX) keeps everything"""
    unary_graph(c, 'aten.tril.default', [2, 2], 'f32', [I(I64_MAX)], T([2, 2]), x_data=[1, 2, 3, 4],
                out_data=[1, 2, 3, 4])


@case(rc=0)
def triu_int64_min(c):
    """triu(x, INT64_MIN) keeps everything"""
    unary_graph(c, 'aten.triu.default', [2, 2], 'f32', [I(I64_MIN)], T([2, 2]), x_data=[1, 2, 3, 4],
                out_data=[1, 2, 3, 4])


@case(expect=["'tril'"])
def tril_rank1(c):
    """tril of a rank-1 tensor"""
    unary_graph(c, 'aten.tril.default', [4], 'f32', [I(0)], None)


@case(expect=["'flip'"])
def flip_dim_out_of_range(c):
    """flip dims [4] of a rank-2 tensor"""
    unary_graph(c, 'aten.flip.default', [2, 2], 'f32', [Ls(4)], None)


@case(expect=["'flip'"])
def flip_duplicate_dims(c):
    """flip dims [0, 0]: torch refuses (dim appears multiple times)"""
    unary_graph(c, 'aten.flip.default', [2, 2], 'f32', [Ls(0, 0)], T([2, 2]))


@case(expect=["'topk'"])
def topk_k_too_big(c):
    """topk k=5 of 3 elements"""
    x = c.input('x', [3])
    c.node('topk', 'aten.topk.default', [x, I(5)], out=[T([5]), T([5], 'i64')])
    c.node('getitem', '_getitem', [R('topk'), I(0)], out=T([5]))
    c.output('getitem')


@case(expect=["'topk'"])
def topk_k_negative(c):
    """topk k=-1"""
    x = c.input('x', [3])
    c.node('topk', 'aten.topk.default', [x, I(-1)], out=None)
    c.node('getitem', '_getitem', [R('topk'), I(0)])
    c.output('getitem')


@case(expect=["'topk'"])
def topk_dim_out_of_range(c):
    """topk along dim 2 of a rank-1 tensor"""
    x = c.input('x', [3])
    c.node('topk', 'aten.topk.default', [x, I(1), I(2)], out=None)
    c.node('getitem', '_getitem', [R('topk'), I(0)])
    c.output('getitem')


@case(expect=["'sort'"])
def sort_dim_int64_max(c):
    """sort along dim INT64_MAX"""
    x = c.input('x', [3])
    c.node('sort', 'aten.sort.default', [x, I(I64_MAX)], out=None)
    c.node('getitem', '_getitem', [R('sort'), I(0)])
    c.output('getitem')


# ---- tensor factories

@case(expect=["'full'"])
def full_huge(c):
    """full([2^24, 2^24], 1.0): 1 PiB folded at compile time; must be an error, not an OOM kill"""
    c.node('full', 'aten.full.default', [Ls(1 << 24, 1 << 24), F(1.0)], out=T([1 << 24, 1 << 24]))
    c.output('full')


@case(expect=["'zeros'"])
def zeros_2p40_f64(c):
    """zeros([2^40], dtype=f64): 8 TiB"""
    c.node('zeros', 'aten.zeros.default', [Ls(P40)], out=T([P40], 'f64'))
    c.output('zeros')


@case(expect=["rank 9"])
def full_rank9(c):
    """full recorded with a rank-9 shape (rlx handles rank <= 8)"""
    c.node('full', 'aten.full.default', [Ls(*[1] * 9), F(1.0)], out=T([1] * 9))
    c.output('full')


@case(expect=["'full'"])
def full_size_arg_disagrees(c):
    """full([3], 1.0) recorded as [5]: the size argument and the record disagree"""
    c.node('full', 'aten.full.default', [Ls(3), F(1.0)], out=T([5]))
    c.output('full', [5])


@case(expect=["'histc'"])
def histc_bins0(c):
    """histc bins=0"""
    unary_graph(c, 'aten.histc.default', [4], 'f32', [I(0), F(0.0), F(1.0)], None)


@case(expect=["'histc'"])
def histc_bins_huge(c):
    """histc bins=2^40"""
    unary_graph(c, 'aten.histc.default', [4], 'f32', [I(P40), F(0.0), F(1.0)], None)


@case(expect=["'histc'"])
def histc_min_gt_max(c):
    """histc min=1 > max=0: torch refuses"""
    unary_graph(c, 'aten.histc.default', [4], 'f32', [I(4), F(1.0), F(0.0)], None)


@case(expect=["'histc'"])
def histc_nan_range(c):
    """histc min=nan: torch refuses (range of [nan, 1] is not finite)"""
    unary_graph(c, 'aten.histc.default', [4], 'f32', [I(4), F(NAN), F(1.0)], None)


# ---- indexing out of range at run time (RLX_ERR_RUNTIME, exit 2)

@case(expect=["'embedding'"])
def embedding_index_oob(c):
    """embedding index 4 of a 4-row table"""
    w = c.weight('p_w', 'emb.weight', [4, 2])
    idx = c.input('idx', [2], 'i64', [1, 4])
    c.node('embedding', 'aten.embedding.default', [w, idx], out=T([2, 2]))
    c.output('embedding', [2, 2])


@case(expect=["'embedding'"])
def embedding_index_negative(c):
    """embedding index -1 (torch refuses)"""
    w = c.weight('p_w', 'emb.weight', [4, 2])
    idx = c.input('idx', [2], 'i64', [1, -1])
    c.node('embedding', 'aten.embedding.default', [w, idx], out=T([2, 2]))
    c.output('embedding', [2, 2])


@case(expect=["'embedding'"])
def embedding_index_int64_min_i32(c):
    """embedding with int32 index INT32_MIN"""
    w = c.weight('p_w', 'emb.weight', [4, 2])
    idx = c.input('idx', [2], 'i32', [1, -(1 << 31)])
    c.node('embedding', 'aten.embedding.default', [w, idx], out=T([2, 2]))
    c.output('embedding', [2, 2])


@case(expect=["'embedding'"])
def embedding_float_indices(c):
    """embedding with float indices (torch refuses)"""
    w = c.weight('p_w', 'emb.weight', [4, 2])
    idx = c.input('idx', [2], 'f32', [1, 2])
    c.node('embedding', 'aten.embedding.default', [w, idx], out=T([2, 2]))
    c.output('embedding', [2, 2])


@case(expect=["'index_select'"])
def index_select_oob(c):
    """index_select index 3 of a dim of 3"""
    x = c.input('x', [3, 2])
    idx = c.input('idx', [1], 'i64', [3])
    c.node('index_select', 'aten.index_select.default', [x, I(0), idx], out=T([1, 2]))
    c.output('index_select', [1, 2])


@case(expect=["'index_select'"])
def index_select_negative(c):
    """index_select index -1 (torch refuses negative indices here)"""
    x = c.input('x', [3, 2])
    idx = c.input('idx', [1], 'i64', [-1])
    c.node('index_select', 'aten.index_select.default', [x, I(0), idx], out=T([1, 2]))
    c.output('index_select', [1, 2])


@case(expect=["'gather'"])
def gather_oob(c):
    """gather index 10 along a dim of 2"""
    x = c.input('x', [2, 2])
    idx = c.input('idx', [2, 2], 'i64', [0, 1, 10, 0])
    c.node('gather', 'aten.gather.default', [x, I(1), idx], out=T([2, 2]))
    c.output('gather', [2, 2])


@case(expect=["'gather'"])
def gather_negative(c):
    """gather index -1 (torch refuses)"""
    x = c.input('x', [2, 2])
    idx = c.input('idx', [2, 2], 'i64', [0, 1, -1, 0])
    c.node('gather', 'aten.gather.default', [x, I(1), idx], out=T([2, 2]))
    c.output('gather', [2, 2])


@case(expect=["'gather'"])
def gather_index_larger_than_input(c):
    """gather with an index [4, 1] of a [2, 2] input: torch refuses (index.size(0) > self.size(0))"""
    x = c.input('x', [2, 2])
    idx = c.input('idx', [4, 1], 'i64', [0, 0, 0, 0])
    c.node('gather', 'aten.gather.default', [x, I(1), idx], out=T([4, 1]))
    c.output('gather', [4, 1])


@case(expect=["'index'"])
def index_tensor_oob(c):
    """x[idx] with idx 5 of a dim of 3"""
    x = c.input('x', [3])
    idx = c.input('idx', [1], 'i64', [5])
    c.node('index', 'aten.index.Tensor', [x, L(idx)], out=T([1]))
    c.output('index', [1])


@case(expect=["'index'"])
def index_tensor_negative_oob(c):
    """x[idx] with idx -4 of a dim of 3"""
    x = c.input('x', [3])
    idx = c.input('idx', [1], 'i64', [-4])
    c.node('index', 'aten.index.Tensor', [x, L(idx)], out=T([1]))
    c.output('index', [1])


@case(expect=["'index'"])
def index_tensor_two_indices_oob(c):
    """x[i, j] with j = 2 of a dim of 2"""
    x = c.input('x', [2, 2])
    i = c.input('i', [1], 'i64', [0])
    j = c.input('j', [1], 'i64', [2])
    c.node('index', 'aten.index.Tensor', [x, L(i, j)], out=T([1]))
    c.output('index', [1])


@case(rc=0)
def index_tensor_negative_ok(c):
    """x[idx] with idx -1 wraps (torch)"""
    x = c.input('x', [3], 'f32', [1, 2, 3])
    idx = c.input('idx', [1], 'i64', [-1])
    c.node('index', 'aten.index.Tensor', [x, L(idx)], out=T([1]))
    c.output('index', [1], 'f32', [3])


@case(expect=["'scatter'"])
def scatter_index_oob(c):
    """scatter index 7 into a dim of 3 (an out-of-bounds write)"""
    x = c.input('x', [3])
    idx = c.input('idx', [1], 'i64', [7])
    s = c.input('src', [1])
    c.node('scatter', 'aten.scatter.src', [x, I(0), idx, s], out=T([3]))
    c.output('scatter', [3])


@case(expect=["'scatter'"])
def scatter_value_index_negative(c):
    """scatter.value index -1 (torch refuses)"""
    x = c.input('x', [3])
    idx = c.input('idx', [1], 'i64', [-1])
    c.node('scatter', 'aten.scatter.value', [x, I(0), idx, F(1.0)], out=T([3]))
    c.output('scatter', [3])


@case(expect=["'scatter_add'"])
def scatter_add_index_oob(c):
    """scatter_add index 1000000 (an out-of-bounds write)"""
    x = c.input('x', [3])
    idx = c.input('idx', [2], 'i64', [0, 1000000])
    s = c.input('src', [2])
    c.node('scatter_add', 'aten.scatter_add.default', [x, I(0), idx, s], out=T([3]))
    c.output('scatter_add', [3])


@case(expect=["'scatter_reduce'"])
def scatter_reduce_index_oob(c):
    """scatter_reduce amax index 3 of a dim of 3"""
    x = c.input('x', [3])
    idx = c.input('idx', [1], 'i64', [3])
    s = c.input('src', [1])
    c.node('scatter_reduce', 'aten.scatter_reduce.two', [x, I(0), idx, s, S('amax')], out=T([3]))
    c.output('scatter_reduce', [3])


@case(expect=["'scatter'"])
def scatter_index_larger_than_src(c):
    """scatter with an index [3, 3] and src [1, 1]: torch refuses (index larger than src)"""
    x = c.input('x', [2, 2])
    idx = c.input('idx', [3, 3], 'i64')
    s = c.input('src', [1, 1])
    c.node('scatter', 'aten.scatter.src', [x, I(0), idx, s], out=T([2, 2]))
    c.output('scatter', [2, 2])


@case(expect=["'index_put'"])
def index_put_oob(c):
    """index_put at index 3 of a dim of 3 (an out-of-bounds write)"""
    x = c.input('x', [3])
    idx = c.input('idx', [1], 'i64', [3])
    v = c.input('v', [1])
    c.node('index_put', 'aten.index_put.default', [x, L(idx), v, B(False)], out=T([3]))
    c.output('index_put', [3])


@case(expect=["'index_put'"])
def index_put_accumulate_negative_oob(c):
    """index_put(accumulate=True) at index -4 of a dim of 3"""
    x = c.input('x', [3])
    idx = c.input('idx', [1], 'i64', [-4])
    v = c.input('v', [1])
    c.node('index_put', 'aten.index_put.default', [x, L(idx), v, B(True)], out=T([3]))
    c.output('index_put', [3])


@case(expect=["'masked_scatter'"])
def masked_scatter_source_too_small(c):
    """masked_scatter with 4 true mask entries and a 2-element source (torch refuses; OOB read)"""
    x = c.input('x', [4])
    m = c.input('m', [4], 'bool', [1, 1, 1, 1])
    s = c.input('src', [2])
    c.node('masked_scatter', 'aten.masked_scatter.default', [x, m, s], out=T([4]))
    c.output('masked_scatter', [4])


@case(expect=["'slice_scatter'"])
def slice_scatter_src_mismatch(c):
    """slice_scatter of a [3] source into x[0:2]"""
    x = c.input('x', [4])
    s = c.input('src', [3])
    c.node('slice_scatter', 'aten.slice_scatter.default', [x, s, I(0), I(0), I(2), I(1)], out=T([4]))
    c.output('slice_scatter', [4])


@case(expect=["'slice_scatter'"])
def slice_scatter_step0(c):
    """slice_scatter step 0"""
    x = c.input('x', [4])
    s = c.input('src', [2])
    c.node('slice_scatter', 'aten.slice_scatter.default', [x, s, I(0), I(0), I(2), I(0)], out=T([4]))
    c.output('slice_scatter', [4])


@case(expect=["'slice_scatter'"])
def slice_scatter_step_neg(c):
    """slice_scatter step -1"""
    x = c.input('x', [4])
    s = c.input('src', [2])
    c.node('slice_scatter', 'aten.slice_scatter.default', [x, s, I(0), I(0), I(2), I(-1)], out=T([4]))
    c.output('slice_scatter', [4])


@case(expect=["'_embedding_bag'"])
def embedding_bag_offsets_oob(c):
    """_embedding_bag offsets [0, 10] for 3 indices"""
    w = c.weight('p_w', 'bag.weight', [4, 2])
    ix = c.input('ix', [3], 'i64', [0, 1, 2])
    off = c.input('off', [2], 'i64', [0, 10])
    c.node('_embedding_bag', 'aten._embedding_bag.default', [w, ix, off, B(False), I(0)], out=None)
    c.node('getitem', '_getitem', [R('_embedding_bag'), I(0)])
    c.output('getitem')


@case(expect=["'_embedding_bag'"])
def embedding_bag_offsets_decreasing(c):
    """_embedding_bag offsets [2, 0] (torch refuses)"""
    w = c.weight('p_w', 'bag.weight', [4, 2])
    ix = c.input('ix', [3], 'i64', [0, 1, 2])
    off = c.input('off', [2], 'i64', [2, 0])
    c.node('_embedding_bag', 'aten._embedding_bag.default', [w, ix, off, B(False), I(0)], out=None)
    c.node('getitem', '_getitem', [R('_embedding_bag'), I(0)])
    c.output('getitem')


@case(expect=["'_embedding_bag'"])
def embedding_bag_index_oob(c):
    """_embedding_bag index 9 of a 4-row table"""
    w = c.weight('p_w', 'bag.weight', [4, 2])
    ix = c.input('ix', [3], 'i64', [0, 9, 2])
    off = c.input('off', [2], 'i64', [0, 1])
    c.node('_embedding_bag', 'aten._embedding_bag.default', [w, ix, off, B(False), I(0)], out=None)
    c.node('getitem', '_getitem', [R('_embedding_bag'), I(0)])
    c.output('getitem')


@case(expect=["'_embedding_bag'"])
def embedding_bag_bad_mode(c):
    """_embedding_bag mode 7 (valid: 0 sum, 1 mean, 2 max)"""
    w = c.weight('p_w', 'bag.weight', [4, 2])
    ix = c.input('ix', [3], 'i64', [0, 1, 2])
    off = c.input('off', [2], 'i64', [0, 1])
    c.node('_embedding_bag', 'aten._embedding_bag.default', [w, ix, off, B(False), I(7)], out=None)
    c.node('getitem', '_getitem', [R('_embedding_bag'), I(0)])
    c.output('getitem')


@case(expect=["'_embedding_bag'"])
def embedding_bag_padding_idx_huge(c):
    """_embedding_bag padding_idx 2^62 (torch: padding_idx must be within the table)"""
    w = c.weight('p_w', 'bag.weight', [4, 2])
    ix = c.input('ix', [3], 'i64', [0, 1, 2])
    off = c.input('off', [2], 'i64', [0, 1])
    c.node('_embedding_bag', 'aten._embedding_bag.default',
           [w, ix, off, B(False), I(0), B(False), N(), B(False), I(P62)], out=None)
    c.node('getitem', '_getitem', [R('_embedding_bag'), I(0)])
    c.output('getitem')


def gmm(c, offs, E=2):
    x = c.input('x', [4, 2])
    o = c.input('offs', [len(offs)], 'i32', offs)
    w = c.weight('p_w', 'experts.w', [E, 2, 3])
    c.node('g', 'transformers.grouped_mm_fallback.default', [x, w, o], out=T([4, 3]))
    c.output('g', [4, 3])


@case(expect=["'g'"])
def grouped_mm_offsets_count_mismatch(c):
    """grouped mm with 5 offsets for 2 experts (reads experts past the weight)"""
    gmm(c, [1, 2, 3, 4, 4])


@case(expect=["'g'"])
def grouped_mm_offset_int32_min(c):
    """grouped mm with an offset INT32_MIN"""
    gmm(c, [-(1 << 31), 4])


# ---- integer arithmetic (torch semantics, no UB, no SIGFPE)

def int_binary(c, op, a, b, out_dtype='i64', dtype='i64', out_data=None, args=()):
    x = c.input('x', [len(a)], dtype, a)
    y = c.input('y', [len(b)], dtype, b)
    name = op.split('.')[1]
    c.node(name, op, [x, y] + list(args), out=T([len(a)], out_dtype))
    c.output(name, [len(a)], out_dtype, out_data)


@case(expect=["'floor_divide'"])
def floor_divide_int_by_zero(c):
    """floor_divide of int64 by 0: torch raises ZeroDivisionError; SIGFPE in C"""
    int_binary(c, 'aten.floor_divide.default', [1, 2], [0, 1])


@case(expect=["'div'"])
def div_trunc_int_by_zero(c):
    """div(rounding_mode='trunc') of int64 by 0: torch raises ZeroDivisionError"""
    int_binary(c, 'aten.div.Tensor_mode', [1, 2], [0, 1], args=[], out_dtype='i64')
    c.nodes[-1]['kwargs'] = {'rounding_mode': S('trunc')}


@case(expect=["'remainder'"])
def remainder_int_by_zero(c):
    """remainder of int64 by 0: torch raises ZeroDivisionError"""
    int_binary(c, 'aten.remainder.Tensor', [1, 2], [0, 1])


@case(expect=["'fmod'"])
def fmod_int_by_zero(c):
    """fmod of int32 by 0: torch raises ZeroDivisionError"""
    int_binary(c, 'aten.fmod.Tensor', [1, 2], [0, 1], dtype='i32', out_dtype='i32')


@case(expect=["'floor_divide'"])
def floor_divide_scalar_int_zero(c):
    """floor_divide.Scalar of int64 by 0 (a constant divisor)"""
    unary_graph(c, 'aten.floor_divide.Scalar', [2], 'i64', [I(0)], T([2], 'i64'), x_data=[1, 2])


@case(rc=(0, 2), expect=["'floor_divide'"])
def floor_divide_int64_min_by_neg1(c):
    """floor_divide INT64_MIN by -1 (idiv traps on x86); torch wraps to INT64_MIN"""
    int_binary(c, 'aten.floor_divide.default', [I64_MIN, 4], [-1, 2], out_data=[I64_MIN, 2])


@case(rc=(0, 2), expect=["'remainder'"])
def remainder_int64_min_by_neg1(c):
    """remainder INT64_MIN by -1 (idiv traps on x86); the result is 0"""
    int_binary(c, 'aten.remainder.Tensor', [I64_MIN, 5], [-1, 3], out_data=[0, 2])


@case(rc=0)
def add_int64_overflow(c):
    """INT64_MAX + 1 wraps to INT64_MIN as in torch (no signed-overflow UB)"""
    int_binary(c, 'aten.add.Tensor', [I64_MAX, 1], [1, 1], out_data=[I64_MIN, 2])


@case(rc=0)
def sub_int64_overflow(c):
    """INT64_MIN - 1 wraps to INT64_MAX"""
    int_binary(c, 'aten.sub.Tensor', [I64_MIN, 1], [1, 1], out_data=[I64_MAX, 0])


@case(rc=0)
def mul_int64_overflow(c):
    """2^62 * 4 wraps to 0"""
    int_binary(c, 'aten.mul.Tensor', [P62, 3], [4, 3], out_data=[0, 9])


@case(rc=0)
def neg_int64_min(c):
    """neg(INT64_MIN) is INT64_MIN"""
    unary_graph(c, 'aten.neg.default', [2], 'i64', [], T([2], 'i64'), x_data=[I64_MIN, 1],
                out_data=[I64_MIN, -1])


@case(rc=0)
def abs_int64_min(c):
    """abs(INT64_MIN) is INT64_MIN"""
    unary_graph(c, 'aten.abs.default', [2], 'i64', [], T([2], 'i64'), x_data=[I64_MIN, -1],
                out_data=[I64_MIN, 1])


@case(rc=0)
def sum_int64_overflow(c):
    """sum([INT64_MAX, 1]) wraps to INT64_MIN"""
    unary_graph(c, 'aten.sum.default', [2], 'i64', [], T([], 'i64'), x_data=[I64_MAX, 1], out_data=[I64_MIN])


@case(rc=0)
def cumsum_int64_overflow(c):
    """cumsum([INT64_MAX, 1]) wraps"""
    unary_graph(c, 'aten.cumsum.default', [2], 'i64', [I(0)], T([2], 'i64'), x_data=[I64_MAX, 1],
                out_data=[I64_MAX, I64_MIN])


@case(rc=0)
def prod_int64_overflow(c):
    """prod([2^62, 4]) wraps to 0"""
    unary_graph(c, 'aten.prod.default', [2], 'i64', [], T([], 'i64'), x_data=[P62, 4], out_data=[0])


@case(rc=0)
def lshift_by_64(c):
    """1 << 64 is 0 in torch (a C shift by >= the width is UB)"""
    int_binary(c, 'aten.bitwise_left_shift.Tensor', [1, 1], [64, 3], out_data=[0, 8])


@case(rc=0)
def lshift_by_negative(c):
    """1 << -1 is 0 in torch"""
    int_binary(c, 'aten.bitwise_left_shift.Tensor', [1, 1], [-1, 1], out_data=[0, 2])


@case(rc=0)
def rshift_negative_by_64(c):
    """-8 >> 64 is -1 in torch (sign fill)"""
    int_binary(c, 'aten.bitwise_right_shift.Tensor', [-8, 8], [64, 1], out_data=[-1, 4])


@case(rc=0)
def lshift_int64_min_by_1(c):
    """INT64_MIN << 1 is 0; -1 << 1 is -2 (left shift of a negative value is UB in C)"""
    int_binary(c, 'aten.bitwise_left_shift.Tensor', [I64_MIN, -1], [1, 1], out_data=[0, -2])


def wrap64(v):
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= 1 << 63 else v


@case(rc=0)
def pow_int64_overflow(c):
    """3 ** 100 in int64 wraps like torch's repeated multiplication"""
    unary_graph(c, 'aten.pow.Tensor_Scalar', [2], 'i64', [I(100)], T([2], 'i64'), x_data=[3, 1],
                out_data=[wrap64(3 ** 100), 1])


@case(rc=0)
def pow_int64_negative_exponent_tensor(c):
    """int64 [2, 1, -1] ** [-1, -1, -1] is [0, 1, -1] in torch"""
    int_binary(c, 'aten.pow.Tensor_Tensor', [2, 1, -1], [-1, -1, -1], out_data=[0, 1, -1])


# ---- non-finite and huge shapes

@case(expect=["rank 9"])
def input_rank9(c):
    """an input of rank 9 (rlx handles rank <= 8)"""
    c.input('x', [1] * 9)
    c.node('relu', 'aten.relu.default', [R('x')])
    c.output('relu')


@case(expect=["rank 9"])
def weight_rank9_in_file(c):
    """a weight whose safetensors entry has rank 9"""
    w = c.weight('p_w', 'w', [1], file_shape=[1] * 9)
    c.node('relu', 'aten.relu.default', [w])
    c.output('relu')


@case(expect=["'relu'||'x'"])
def input_dim_2p40(c):
    """an input [2^40] f32 (4 TiB): an error, not an OOM kill"""
    c.input('x', [P40])
    c.node('relu', 'aten.relu.default', [R('x')], out=T([P40]))
    c.output('relu')


@case(expect=["inputs[0]"])
def input_numel_overflow(c):
    """an input [2^24, 2^24, 2] (over the 2^48 element bound)"""
    c.input('x', [1 << 24, 1 << 24, 2])
    c.node('relu', 'aten.relu.default', [R('x')])
    c.output('relu')


@case(rc=(0, 2), expect=["'relu'||'x'"])
def zero_numel_huge_dims(c):
    """relu of a [0, 2^62, 2^62] tensor: no elements, but the strides overflow int64"""
    c.input('x', [0, P62, P62])
    c.node('relu', 'aten.relu.default', [R('x')], out=T([0, P62, P62]))
    c.output('relu', [0, P62, P62], 'f32', [])


@case(rc=(0, 2), expect=["'sum'||'x'"])
def zero_numel_sum_huge_output(c):
    """sum over axis 1 of [2^40, 0]: an output of 2^40 zeros"""
    c.input('x', [P40, 0])
    c.node('sum', 'aten.sum.dim_IntList', [R('x'), Ls(1), B(False)], out=T([P40]))
    c.output('sum')


@case(rc=(0, 2), expect=["'tril'||'x'"])
def zero_numel_tril_huge(c):
    """tril of [0, 2^24, 2^24]: the mask constant would hold 2^48 elements"""
    c.input('x', [0, 1 << 24, 1 << 24])
    c.node('tril', 'aten.tril.default', [R('x'), I(0)], out=T([0, 1 << 24, 1 << 24]))
    c.output('tril', [0, 1 << 24, 1 << 24], 'f32', [])


@case(rc=(0, 2), expect=["'unbind'||'x'"])
def zero_numel_unbind_2p40(c):
    """unbind of [2^40, 0]: 2^40 outputs"""
    c.input('x', [P40, 0])
    c.node('unbind', 'aten.unbind.int', [R('x'), I(0)], out=None)
    c.node('getitem', '_getitem', [R('unbind'), I(0)], out=T([0]))
    c.output('getitem', [0], 'f32', [])


@case(rc=(0, 2), expect=["'unbind'||'x'"])
def zero_numel_unbind_2p26(c):
    """unbind of [2^26, 0]: 67 million outputs (time and memory)"""
    c.input('x', [1 << 26, 0])
    c.node('unbind', 'aten.unbind.int', [R('x'), I(0)], out=None)
    c.node('getitem', '_getitem', [R('unbind'), I(0)], out=T([0]))
    c.output('getitem', [0], 'f32', [])


@case(rc=(0, 2), expect=["'diagonal'||'x'"])
def zero_numel_diagonal_huge(c):
    """diagonal(dims 1, 2) of [0, 2^40, 2^40]: index constants of 2^40 elements"""
    c.input('x', [0, P40, P40])
    c.node('diagonal', 'aten.diagonal.default', [R('x'), I(0), I(1), I(2)], out=T([0, P40]))
    c.output('diagonal', [0, P40], 'f32', [])


@case(rc=(0, 2), expect=["'unfold'||'x'"])
def zero_numel_unfold_huge(c):
    """unfold(1, 1, 1) of [0, 2^40]: an index constant of 2^40 elements"""
    c.input('x', [0, P40])
    c.node('unfold', 'aten.unfold.default', [R('x'), I(1), I(1), I(1)], out=T([0, P40, 1]))
    c.output('unfold', [0, P40, 1], 'f32', [])


@case(rc=(0, 2), expect=["'repeat'||'x'"])
def zero_numel_repeat_overflow(c):
    """repeat [0, 2] by [1, 2^62]: the dim 2^63 overflows though there are no elements"""
    c.input('x', [0, 2])
    c.node('repeat', 'aten.repeat.default', [R('x'), Ls(1, P62)], out=None)
    c.output('repeat')


@case(rc=(0, 2), expect=["'expand'||'x'"])
def zero_numel_expand_huge(c):
    """expand [0, 1] to [0, 2^62, 2^62] (rank grows; strides overflow)"""
    c.input('x', [0, 1, 1])
    c.node('expand', 'aten.expand.default', [R('x'), Ls(0, P62, P62)], out=T([0, P62, P62]))
    c.output('expand', [0, P62, P62], 'f32', [])


@case(rc=(0, 2), expect=["'constant_pad_nd'||'x'"])
def zero_numel_pad_huge(c):
    """constant_pad_nd of [0, 1024] by [0, 2^62 - 1024]: no elements, a huge dim (sizes a double holds
    exactly: the JSON check refuses the others)"""
    c.input('x', [0, 1024])
    c.node('constant_pad_nd', 'aten.constant_pad_nd.default', [R('x'), Ls(0, P62 - 1024), F(0.0)], out=T([0, P62]))
    c.output('constant_pad_nd', [0, P62], 'f32', [])


@case(expect=["line 1", "cannot hold exactly"])
def json_int_not_a_double(c):
    """an int argument of 2^53 + 1: cJSON would read 2^53; refused with its place in the file"""
    c.input('x', [4])
    c.node('add', 'aten.add.Tensor', [R('x'), I((1 << 53) + 1)], out=T([4]))
    c.output('add')


@case(rc=(0, 2), expect=["'mm'"])
def zero_numel_mm_huge_k(c):
    """mm of [2, 0] x [0, 2^40]: an output of 2^41 zeros"""
    a = c.input('a', [2, 0])
    b = c.input('b', [0, P40])
    c.node('mm', 'aten.mm.default', [a, b], out=T([2, P40]))
    c.output('mm')


@case(rc=(0, 2), expect=["'permute'||'x'"])
def zero_numel_permute_huge(c):
    """permute of [0, 2^62, 4]: strides overflow"""
    c.input('x', [0, P62, 4])
    c.node('permute', 'aten.permute.default', [R('x'), Ls(0, 2, 1)], out=T([0, 4, P62]))
    c.output('permute', [0, 4, P62], 'f32', [])


# ---- graph structure

@case(expect=["'nope'"])
def output_ref_undefined(c):
    """a graph output that refers to nothing"""
    c.input('x', [2])
    c.output('nope', [2])


@case(expect=["'nope'"])
def getitem_of_undefined(c):
    """_getitem of a node that does not exist"""
    c.input('x', [2])
    c.node('getitem', '_getitem', [R('nope'), I(0)])
    c.output('getitem')


@case(expect=["'nope'"])
def cat_list_undefined_ref(c):
    """a ref inside a list argument that refers to nothing"""
    x = c.input('x', [2])
    c.node('cat', 'aten.cat.default', [L(x, R('nope')), I(0)], out=T([4]))
    c.output('cat')


@case(expect=["'nope'"])
def kwarg_undefined_ref(c):
    """a keyword argument that refers to nothing"""
    c.input('x', [2])
    c.node('relu', 'aten.relu.default', [], kwargs={'self': R('nope')})
    c.output('relu')


@case(expect=["'r'"])
def duplicate_node_id(c):
    """two nodes with the id 'r'"""
    x = c.input('x', [2])
    c.node('r', 'aten.relu.default', [x], out=T([2]))
    c.node('r', 'aten.neg.default', [x], out=T([2]))
    c.output('r')


@case(expect=["'x'"])
def node_id_equals_input_id(c):
    """a node whose id is the input's"""
    x = c.input('x', [2])
    c.node('x', 'aten.relu.default', [x], out=T([2]))
    c.output('x')


@case(expect=["'x'"])
def duplicate_input_id(c):
    """two inputs named 'x'"""
    c.input('x', [2])
    c.input('x', [3])
    c.node('relu', 'aten.relu.default', [R('x')])
    c.output('relu')


@case(expect=["'x'"])
def weight_id_equals_input_id(c):
    """a weight placeholder with the input's id"""
    c.input('x', [2])
    c.weight('x', 'w', [2])
    c.node('relu', 'aten.relu.default', [R('x')])
    c.output('relu')


@case(expect=["'b'"])
def cycle_forward_ref(c):
    """a node that uses a later node (a cycle: a -> b -> a)"""
    x = c.input('x', [2])
    c.node('a', 'aten.add.Tensor', [x, R('b')], out=T([2]))
    c.node('b', 'aten.relu.default', [R('a')], out=T([2]))
    c.output('b')


@case(expect=["'a'"])
def self_reference(c):
    """a node that uses itself"""
    c.input('x', [2])
    c.node('a', 'aten.relu.default', [R('a')], out=T([2]))
    c.output('a')


def topk_then(c, idx):
    x = c.input('x', [3])
    c.node('topk', 'aten.topk.default', [x, I(2)], out=[T([2]), T([2], 'i64')])
    c.node('getitem', '_getitem', [R('topk'), idx])
    c.output('getitem')


@case(expect=["'getitem'", "'topk'"])
def getitem_out_of_range(c):
    """_getitem index 2 of a 2-output node"""
    topk_then(c, I(2))


@case(expect=["'getitem'", "'topk'"])
def getitem_negative(c):
    """_getitem index -1"""
    topk_then(c, I(-1))


@case(expect=["'getitem'", "'topk'"])
def getitem_int64_max(c):
    """_getitem index INT64_MAX"""
    topk_then(c, I(I64_MAX))


@case(expect=["'getitem'", "'topk'"])
def getitem_index_40(c):
    """_getitem index 40 (past the 31-bit used-outputs mask)"""
    topk_then(c, I(40))


@case(expect=["'getitem'"])
def getitem_float_index(c):
    """_getitem with a float index"""
    topk_then(c, F(0.0))


@case(expect=["'getitem'"])
def getitem_of_single_output(c):
    """_getitem of a node with one output"""
    x = c.input('x', [3])
    c.node('relu', 'aten.relu.default', [x], out=T([3]))
    c.node('getitem', '_getitem', [R('relu'), I(0)])
    c.output('getitem')


@case(expect=["'topk'"])
def multi_output_used_directly(c):
    """a multi-output node used directly as a tensor (not through _getitem)"""
    x = c.input('x', [3])
    c.node('topk', 'aten.topk.default', [x, I(2)], out=[T([2]), T([2], 'i64')])
    c.node('relu', 'aten.relu.default', [R('topk')])
    c.output('relu')


@case(expect=["'native_dropout'"])
def native_dropout_mask_type_null(c):
    """native_dropout whose used mask output records no type (null)"""
    x = c.input('x', [3])
    c.node('native_dropout', 'aten.native_dropout.default', [x, F(0.5), B(False)], out=[T([3]), None])
    c.node('getitem', '_getitem', [R('native_dropout'), I(1)])
    c.output('getitem')


@case(expect=["'native_dropout'"])
def native_dropout_one_output_recorded(c):
    """native_dropout recorded with a single output, its mask used"""
    x = c.input('x', [3])
    c.node('native_dropout', 'aten.native_dropout.default', [x, F(0.5), B(False)], out=[T([3])])
    c.node('getitem', '_getitem', [R('native_dropout'), I(1)])
    c.output('getitem')


@case(rc=(0, 2), expect=["'max_pool2d_with_indices'"])
def max_pool_indices_type_null(c):
    """max_pool2d_with_indices whose used indices output records null (computed: the sum of the indices is 20)"""
    x = c.input('x', [1, 1, 4, 4])
    c.node('max_pool2d_with_indices', 'aten.max_pool2d_with_indices.default', [x, Ls(2, 2)],
           out=[T([1, 1, 2, 2]), None])
    c.node('getitem', '_getitem', [R('max_pool2d_with_indices'), I(1)])
    c.output('getitem', dtype='i64')
    c.ref_out(0, 'i64', [], [20])


@case(expect=["'native_layer_norm'"])
def native_layer_norm_stats_type_null(c):
    """native_layer_norm whose used mean output records null"""
    x = c.input('x', [2, 3])
    c.node('native_layer_norm', 'aten.native_layer_norm.default', [x, Ls(3), N(), N(), F(1e-5)],
           out=[T([2, 3]), None, None])
    c.node('getitem', '_getitem', [R('native_layer_norm'), I(1)])
    c.output('getitem')


@case(expect=["'native_batch_norm'"])
def native_batch_norm_training_stats_null(c):
    """native_batch_norm (training) whose used mean output records null"""
    x = c.input('x', [2, 3])
    c.node('native_batch_norm', 'aten.native_batch_norm.default', [x, N(), N(), N(), N(), B(True), F(0.1),
                                                                    F(1e-5)], out=[T([2, 3]), None, None])
    c.node('getitem', '_getitem', [R('native_batch_norm'), I(2)])
    c.output('getitem')


@case(expect=["'transpose'"])
def sym_undefined(c):
    """a {"sym": ...} argument naming no scalar node"""
    x = c.input('x', [2, 3])
    c.node('transpose', 'aten.transpose.int', [x, {'sym': 's9'}, I(0)])
    c.output('transpose')


@case(expect=["'sym_size'"])
def sym_scalar_self_reference(c):
    """a scalar node whose recorded value is a sym naming itself"""
    c.input('x', [2])
    c.node('sym_size', 'aten.sym_size.int', [R('x'), I(0)], out={'scalar': {'sym': 'sym_size'}})
    c.node('relu', 'aten.relu.default', [R('x')])
    c.output('relu')


@case(expect=["nest"])
def arg_nesting_too_deep(c):
    """arguments nested 40 lists deep"""
    a = I(0)
    for _ in range(40):
        a = L(a)
    x = c.input('x', [2])
    c.node('relu', 'aten.relu.default', [x, a])
    c.output('relu')


@case(expect=["torch-ir.json"])
def json_nesting_100000(c):
    """torch-ir.json with 100000 nested arrays (the JSON parser's recursion)"""
    c.input('x', [2])
    c.output('x')
    c.doc_patch = lambda doc: json.dumps(doc)[:-1] + ', "junk": ' + '[' * 100000 + ']' * 100000 + '}'


@case(expect=["torch-ir.json"])
def json_empty_file(c):
    """an empty torch-ir.json"""
    c.doc_patch = lambda doc: ''


@case(expect=["torch-ir.json"])
def json_version_2(c):
    """torch-ir.json version 2"""
    c.input('x', [2])
    c.output('x')
    c.doc_patch = lambda doc: dict(doc, version=2)


@case(expect=["torch-ir.json"])
def json_top_level_array(c):
    """torch-ir.json whose top level is an array"""
    c.doc_patch = lambda doc: '[]'


@case(expect=["torch-ir.json"])
def json_nodes_not_list(c):
    """torch-ir.json with nodes: {}"""
    c.doc_patch = lambda doc: dict(doc, nodes={})


@case(expect=["torch-ir.json"])
def json_int_1e400(c):
    """an int argument 1e400 (inf as a JSON number)"""
    c.input('x', [2])
    c.node('transpose', 'aten.transpose.int', [R('x'), I(0), I(0)])
    c.output('transpose')
    c.doc_patch = lambda doc: json.dumps(doc).replace('{"int": 0}', '{"int": 1e400}', 1)


@case(expect=["torch-ir.json"])
def json_shape_dim_fraction(c):
    """an input dim of 2.5"""
    c.input('x', [2])
    c.output('x')
    c.doc_patch = lambda doc: json.dumps(doc).replace('"shape": [2]', '"shape": [2.5]', 1)


@case(expect=["torch-ir.json"])
def json_dim_2p64(c):
    """an input dim of 2^64 (clamped ints must not wrap to a small dim)"""
    c.input('x', [2])
    c.output('x')
    c.doc_patch = lambda doc: json.dumps(doc).replace('"shape": [2]', '"shape": [18446744073709551618]', 1)


@case(expect=["relu (nodes: r)"])
def op_without_namespace(c):
    """an op spelled 'relu' (no namespace)"""
    x = c.input('x', [2])
    c.node('r', 'relu', [x])
    c.output('r')


@case(expect=["'aten.'||aten."])
def op_only_namespace(c):
    """an op spelled 'aten.'"""
    x = c.input('x', [2])
    c.node('r', 'aten.', [x])
    c.output('r')


@case(expect=["does not yet support 20000 op(s)"])
def unknown_ops_20000(c):
    """20000 distinct unknown ops (the unsupported-op report must not be quadratic)"""
    x = c.input('x', [2])
    for i in range(20000):
        c.node('n%d' % i, 'aten.frob%d.default' % i, [x])
    c.output('n0')


@case(rc=0)
def chain_30000_nodes(c):
    """a chain of 30000 nodes (import, passes and memory planning must not be quadratic)"""
    x = c.input('x', [1], 'f32', [1.0])
    prev = x
    ops = ['aten.neg.default', 'aten.cumsum.default']
    for i in range(30000):
        op = ops[i % 2]
        prev = c.node('n%d' % i, op, [prev] + ([I(0)] if 'cumsum' in op else []), out=T([1]))
    c.output('n29999', [1], 'f32', [1.0])


@case(expect=["'%s%s%n%n'"])
def format_string_ids(c):
    """node ids and refs full of printf directives"""
    c.input('x', [2])
    c.node('%s%s%n%n', 'aten.relu.default', [R('%n%n%s%s%p')])
    c.output('%s%s%n%n')


@case(expect=["refers to"])
def long_ids(c):
    """a 200 KB node id and a 200 KB dangling ref"""
    c.input('x', [2])
    c.node('a' * 200000, 'aten.relu.default', [R('b' * 200000)])
    c.output('a' * 200000)


@case(expect=["\\u0000||'x'"])
def nul_in_ids(c):
    """ids that differ only after a NUL byte ("x\\u0000a" and "x\\u0000b" are both "x" in C)"""
    x = c.input('x\u0000a', [2])
    c.input('x\u0000b', [3])
    c.node('relu', 'aten.relu.default', [x])
    c.output('relu')


# ---- dtypes

@case(expect=["'mm'"])
def mm_dtype_mismatch(c):
    """mm of f32 and int64: torch refuses (expected both the same dtype)"""
    a = c.input('a', [2, 2])
    b = c.input('b', [2, 2], 'i64')
    c.node('mm', 'aten.mm.default', [a, b], out=T([2, 2]))
    c.output('mm')


@case(expect=["'where'"])
def where_condition_float(c):
    """where with an f32 condition: torch refuses (condition must be bool)"""
    m = c.input('m', [2])
    a = c.input('a', [2])
    b = c.input('b', [2])
    c.node('where', 'aten.where.self', [m, a, b], out=T([2]))
    c.output('where')


@case(expect=["'index'"])
def index_float_index(c):
    """x[idx] with a float index tensor"""
    x = c.input('x', [3])
    idx = c.input('idx', [1], 'f32')
    c.node('index', 'aten.index.Tensor', [x, L(idx)], out=T([1]))
    c.output('index')


@case(expect=["'layer_norm'"])
def layer_norm_int_input(c):
    """layer_norm of an int64 tensor"""
    unary_graph(c, 'aten.layer_norm.default', [2, 3], 'i64', [Ls(3)], None)


@case(expect=["'softmax'"])
def softmax_int_output(c):
    """softmax recorded with an int64 output"""
    unary_graph(c, 'aten._softmax.default', [2, 3], 'f32', [I(-1), B(False)], T([2, 3], 'i64'), name='softmax')


@case(expect=["'add'"])
def add_alpha_float_on_ints(c):
    """add(int64, int64, alpha=inf): torch refuses (integral alpha); (int64)inf is UB"""
    x = c.input('x', [2], 'i64')
    y = c.input('y', [2], 'i64')
    c.node('add', 'aten.add.Tensor', [x, y], out=T([2], 'i64'), kwargs={'alpha': F(INF)})
    c.output('add', [2], 'i64')


@case(expect=["'view'"])
def view_changes_dtype(c):
    """view recorded with another dtype"""
    unary_graph(c, 'aten.view.default', [2], 'f32', [Ls(2)], T([2], 'i32'))


@case(rc=(0, 2), expect=["'where'||'m'"])
def bool_input_byte_2(c):
    """a bool input whose bytes are 2 and 255 (not 0/1): no UB reading it; nonzero is true"""
    m = c.input('m', [3], 'bool')
    c.ref['in::m'] = ('bool', [3], bytes([2, 255, 0]))
    a = c.input('a', [3], 'f32', [1, 2, 3])
    b = c.input('b', [3], 'f32', [7, 8, 9])
    c.node('where', 'aten.where.self', [m, a, b], out=T([3]))
    c.output('where', [3], 'f32', [1, 2, 9])


@case(rc=(0, 2), expect=["'where'||'mask'"])
def bool_weight_byte_2(c):
    """a bool weight whose bytes are 2 and 255: no UB reading it; nonzero is true"""
    m = c.weight('p_mask', 'mask', [3], 'bool', data=bytes([2, 255, 0]))
    a = c.input('a', [3], 'f32', [1, 2, 3])
    b = c.input('b', [3], 'f32', [7, 8, 9])
    c.node('where', 'aten.where.self', [m, a, b], out=T([3]))
    c.output('where', [3], 'f32', [1, 2, 9])


@case(rc=(0, 2), expect=["'any'||'m'"])
def bool_input_byte_2_reduce(c):
    """logical ops and reductions on bool bytes of 2: no UB"""
    m = c.input('m', [3], 'bool')
    c.ref['in::m'] = ('bool', [3], bytes([2, 4, 0]))
    c.node('logical_not', 'aten.logical_not.default', [m], out=T([3], 'bool'))
    c.node('any', 'aten.any.default', [R('logical_not')], out=T([], 'bool'))
    c.output('any', [], 'bool', [1])


@case(expect=["'x'"])
def reference_input_dtype_mismatch(c):
    """reference.safetensors holds in::x as f64 for an f32 input"""
    c.input('x', [2])
    c.node('relu', 'aten.relu.default', [R('x')], out=T([2]))
    c.output('relu', [2])
    c.ref_in('x', 'f64', [2], [1, 2])


@case(expect=["'w'"])
def weight_dtype_mismatch(c):
    """a weight declared f32 that the file holds as f64"""
    w = c.weight('p_w', 'w', [2], 'f32', file_dtype='f64')
    c.node('relu', 'aten.relu.default', [w])
    c.output('relu')


@case(expect=["'w'"])
def weight_rank_mismatch(c):
    """a weight declared [4] that the file holds as [2, 2]"""
    w = c.weight('p_w', 'w', [4], file_shape=[2, 2])
    c.node('relu', 'aten.relu.default', [w])
    c.output('relu')


def misaligned(c, first):
    """x -> relu with packed safetensors files whose first tensor is `first` (1 byte)."""
    c.align = 1
    c.ref['aaa_pad'] = ('u8', [1], b'\x07')
    c.wfile['aaa_pad'] = ('u8', [1], b'\x07')
    c.input('x', [4], 'f32', [1, -2, 3, -4])
    w = c.weight('p_w', 'w', [4], 'f32', [1, 1, 1, 1])
    c.node('mul', 'aten.mul.Tensor', [R('x'), w], out=T([4]))
    c.node('relu', 'aten.relu.default', [R('mul')], out=T([4]))
    c.output('relu', [4], 'f32', [1, 0, 3, 0])


@case(rc=0)
def reference_misaligned(c):
    """in::x, out::0 and a weight at odd file offsets (safetensors does not promise alignment): no UB loads"""
    misaligned(c, 'x')


@case(rc=0)
def reference_out64_misaligned(c):
    """a float64 arbiter tensor out64::0 at an odd offset, consulted on a near miss: no UB loads"""
    misaligned(c, 'x')
    c.ref = {'in::x': c.ref['in::x'], 'out::0': ('f32', [4], pack('f32', [4], [1, 0, 3.001, 0])),
             'aaa_pad': ('u8', [1], b'\x07'), 'out64::0': ('f64', [4], pack('f64', [4], [1, 0, 3.0005, 0]))}


# ---- weights are mapped read-only: ops that could run in place must not write into them

@case(rc=0)
def weight_index_put_target(c):
    """index_put with a weight as self (an in-place kernel would write the read-only mapping)"""
    w = c.weight('p_w', 'w', [4], 'f32', [1, 2, 3, 4])
    i = c.input('i', [1], 'i64', [2])
    v = c.input('v', [1], 'f32', [9])
    c.node('index_put', 'aten.index_put.default', [w, L(i), v, B(False)], out=T([4]))
    c.output('index_put', [4], 'f32', [1, 2, 9, 4])


@case(rc=0)
def weight_scatter_and_relu_target(c):
    """scatter and relu of a weight, and the weight itself as an output"""
    w = c.weight('p_w', 'w', [4], 'f32', [1, -2, 3, -4])
    i = c.input('i', [1], 'i64', [0])
    s = c.input('s', [1], 'f32', [-9])
    c.node('scatter', 'aten.scatter.src', [w, I(0), i, s], out=T([4]))
    c.node('relu', 'aten.relu.default', [R('scatter')], out=T([4]))
    c.output('relu', [4], 'f32', [0, 0, 3, 0])
    c.output('p_w', [4], 'f32', [1, -2, 3, -4])


@case(expect=["'floor_divide'"])
def fold_int_div_by_zero(c):
    """floor_divide of constant int tensors by 0: constant folding at compile time must not SIGFPE"""
    c.node('a', 'aten.full.default', [Ls(2), I(7)], out=T([2], 'i64'), kwargs={'dtype': D('i64')})
    c.node('b', 'aten.full.default', [Ls(2), I(0)], out=T([2], 'i64'), kwargs={'dtype': D('i64')})
    c.node('floor_divide', 'aten.floor_divide.default', [R('a'), R('b')], out=T([2], 'i64'))
    c.output('floor_divide', [2], 'i64')


@case(expect=["'embedding'"])
def fold_embedding_index_oob(c):
    """embedding of constant indices past the table: folding at compile time must check the range"""
    c.node('a', 'aten.arange.default', [I(4)], out=T([4], 'i64'))
    c.node('w', 'aten.full.default', [Ls(3, 2), F(1.0)], out=T([3, 2]))
    c.node('embedding', 'aten.embedding.default', [R('w'), R('a')], out=T([4, 2]))
    c.output('embedding', [4, 2])


# ---- intermediates.safetensors (rlx verify --localize): torch's value of every node

def localize_case(c, tensors, align=8):
    x = c.input('x', [2, 3], 'f32', [-1, 2, -3, 4, -5, 6])
    c.node('relu', 'aten.relu.default', [x], out=T([2, 3]))
    c.node('neg', 'aten.neg.default', [R('relu')], out=T([2, 3]))
    c.output('neg', [2, 3], 'f32', [0, -2, 0, -4, 0, -6])
    c.extra['intermediates.safetensors'] = st_bytes(tensors, align)


LOCALIZE = 'verify {dir} --localize'


@case(rc=0, cmd=LOCALIZE)
def localize_misaligned(c):
    """an intermediate at an odd file offset: the localizer must not load it misaligned"""
    localize_case(c, {'aaa': ('u8', [1], b'\x01'), 'relu': ('f32', [2, 3], pack('f32', [2, 3], [0, 2, 0, 4, 0, 6]))},
                  align=1)


@case(rc=0, cmd=LOCALIZE)
def localize_wrong_shapes(c):
    """intermediates of the wrong shape (1 element, 16 elements) and rank 0: compared, never over-read"""
    localize_case(c, {'relu': ('f32', [1], pack('f32', [1])), 'neg': ('f32', [4, 4], pack('f32', [4, 4]))})


@case(rc=0, cmd=LOCALIZE)
def localize_wrong_dtypes(c):
    """intermediates of another dtype (i8, bool bytes of 7)"""
    localize_case(c, {'relu': ('i8', [2, 3], pack('i8', [2, 3])), 'neg': ('bool', [2, 3], bytes([7] * 6))})


@case(rc=0, cmd=LOCALIZE)
def localize_unknown_names(c):
    """intermediates named after no node (and after the input)"""
    localize_case(c, {'nope': ('f32', [2, 3], pack('f32', [2, 3])), 'x': ('f32', [1], pack('f32', [1]))})


@case(expect=["'x'"])
def dynamic_input_bigger_than_example(c):
    """a dynamic axis whose reference input is 50x the example: rlx runs at the example size, must refuse"""
    x = c.input('x', [2, 3])
    c.inputs[0]['dynamic'] = [0, -1]
    c.node('relu', 'aten.relu.default', [x], out=T([2, 3]))
    c.output('relu', [2, 3])
    c.ref_in('x', 'f32', [100, 3], [1.0] * 300)


# ---- .npy inputs to `rlx run` (tests/bad_input.sh has the header-format cases)

def npy(descr, shape, data=b'', fortran=False, version=1, header=None):
    """A .npy file image; header overrides the dict text."""
    h = header if header is not None else "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, 'True' if fortran else 'False', ''.join('%d, ' % d for d in shape))
    h = h.encode()
    if version == 1:
        return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h + data
    return b'\x93NUMPY' + bytes([version, 0]) + struct.pack('<I', len(h)) + h + data


NPY_RUN = 'run {dir} --input x={dir}/x.npy --output-dir {dir}/out'


def npy_case(c, file, dtype='f32', shape=(2, 3)):
    c.input('x', list(shape), dtype)
    c.node('relu', 'aten.relu.default' if dtype != 'bool' else 'aten.logical_not.default', [R('x')])
    c.output('relu', dtype='i64' if dtype == 'bool' else 'f32')
    c.extra['x.npy'] = file


@case(expect=["'x'"], cmd=NPY_RUN)
def npy_wrong_dtype(c):
    """an --input .npy of float64 for an f32 input"""
    npy_case(c, npy('<f8', [2, 3], bytes(48)))


@case(expect=["x.npy"], cmd=NPY_RUN)
def npy_rank9(c):
    """an --input .npy of rank 9"""
    npy_case(c, npy('<f4', [1] * 9, bytes(4)))


@case(expect=["x.npy"], cmd=NPY_RUN)
def npy_bool_byte_2(c):
    """an --input .npy of bools holding the byte 2"""
    npy_case(c, npy('|b1', [2, 3], bytes([0, 1, 2, 0, 1, 0])), dtype='bool')


@case(expect=["x.npy"], cmd=NPY_RUN)
def npy_fortran_order(c):
    """an --input .npy in Fortran order (its bytes are transposed)"""
    npy_case(c, npy('<f4', [2, 3], bytes(24), fortran=True))


@case(expect=["x.npy"], cmd=NPY_RUN)
def npy_v2_header_length_4g(c):
    """a version 2.0 .npy whose 4-byte header length is 0xffffffff"""
    npy_case(c, b'\x93NUMPY\x02\x00\xff\xff\xff\xff' + b' ' * 64)


@case(expect=["x.npy"], cmd=NPY_RUN)
def npy_shape_negative(c):
    """an --input .npy with a negative dim"""
    npy_case(c, npy('<f4', [2, 3], bytes(24), header="{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }"))


@case(expect=["x.npy"], cmd=NPY_RUN)
def npy_shape_int64_overflow_text(c):
    """an --input .npy with a dim of 99999999999999999999999 (beyond int64)"""
    npy_case(c, npy('<f4', [2, 3], bytes(24),
                    header="{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 3), }"))


@case(expect=["x.npy"], cmd=NPY_RUN)
def npy_big_endian(c):
    """a big-endian .npy ('>f4')"""
    npy_case(c, npy('>f4', [2, 3], bytes(24)))


@case(expect=["'nope'"], cmd='run {dir} --input nope={dir}/x.npy --output-dir {dir}/out')
def npy_unknown_input_name(c):
    """--input for a name the model does not have"""
    npy_case(c, npy('<f4', [2, 3], bytes(24)))


@case(expect=["x.npy"], cmd=NPY_RUN)
def npy_header_unterminated_dict(c):
    """a .npy whose header dict is cut short"""
    npy_case(c, npy('<f4', [2, 3], bytes(24), header="{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3"))


@case(expect=["x.npy"], cmd=NPY_RUN)
def npy_keys_inside_values(c):
    """a .npy whose descr value spells the other keys ("'shape': (1,)" inside a string)"""
    npy_case(c, npy('<f4', [2, 3], bytes(24),
                    header="{'descr': \"'shape': (1,) 'fortran_order': False\", 'fortran_order': False, "
                           "'shape': (2, 3), }"))


# ---- normalization, attention, distance

@case(expect=["'layer_norm'"])
def layer_norm_too_many_axes(c):
    """layer_norm with an 8-entry normalized_shape on a rank-2 input (a negative shift count)"""
    unary_graph(c, 'aten.layer_norm.default', [2, 3], 'f32', [Ls(*[1] * 8)], None)


@case(expect=["'layer_norm'"])
def layer_norm_shape_mismatch(c):
    """layer_norm normalized_shape [5] for a last dim of 3: torch refuses"""
    unary_graph(c, 'aten.layer_norm.default', [2, 3], 'f32', [Ls(5)], T([2, 3]))


@case(expect=["'layer_norm'"])
def layer_norm_weight_wrong_length(c):
    """layer_norm with a weight of 5 for a normalized dim of 3"""
    x = c.input('x', [2, 3])
    w = c.weight('p_w', 'ln.weight', [5])
    c.node('layer_norm', 'aten.layer_norm.default', [x, Ls(3), w], out=T([2, 3]))
    c.output('layer_norm')


@case(expect=["'rms_norm'"])
def rms_norm_too_many_axes(c):
    """rms_norm with an 8-entry normalized_shape on a rank-2 input"""
    unary_graph(c, 'aten.rms_norm.default', [2, 3], 'f32', [Ls(*[1] * 8)], None)


@case(expect=["'rms_norm'"])
def rms_norm_shape_mismatch(c):
    """rms_norm normalized_shape [5] for a last dim of 3: torch refuses"""
    unary_graph(c, 'aten.rms_norm.default', [2, 3], 'f32', [Ls(5)], T([2, 3]))


@case(expect=["'group_norm'"])
def group_norm_groups0(c):
    """group_norm num_groups 0"""
    unary_graph(c, 'aten.group_norm.default', [1, 4, 2], 'f32', [I(0)], None)


@case(expect=["'group_norm'"])
def group_norm_groups_neg(c):
    """group_norm num_groups -2"""
    unary_graph(c, 'aten.group_norm.default', [1, 4, 2], 'f32', [I(-2)], None)


@case(expect=["'group_norm'"])
def group_norm_groups_not_divisor(c):
    """group_norm num_groups 3 for 4 channels"""
    unary_graph(c, 'aten.group_norm.default', [1, 4, 2], 'f32', [I(3)], None)


@case(expect=["'native_group_norm'"])
def native_group_norm_groups_2p62(c):
    """native_group_norm group 2^62 (N * groups overflows in the statistics reshape)"""
    x = c.input('x', [4, 4, 2])
    c.node('native_group_norm', 'aten.native_group_norm.default', [x, N(), N(), I(4), I(4), I(2), I(P62),
                                                                    F(1e-5)], out=None)
    c.node('getitem', '_getitem', [R('native_group_norm'), I(1)])
    c.output('getitem')


@case(expect=["'batch_norm'"])
def batch_norm_stats_too_short(c):
    """batch_norm with running stats of 2 for 3 channels (an out-of-bounds read if unchecked)"""
    x = c.input('x', [2, 3])
    m = c.weight('b_mean', 'bn.running_mean', [2])
    v = c.weight('b_var', 'bn.running_var', [2])
    c.node('batch_norm', 'aten.batch_norm.default', [x, N(), N(), m, v, B(False), F(0.1), F(1e-5), B(False)],
           out=T([2, 3]))
    c.output('batch_norm')


@case(expect=["'batch_norm'"])
def batch_norm_weight_too_short(c):
    """batch_norm with a weight of 1 for 3 channels"""
    x = c.input('x', [2, 3])
    w = c.weight('p_w', 'bn.weight', [1])
    m = c.weight('b_mean', 'bn.running_mean', [3])
    v = c.weight('b_var', 'bn.running_var', [3])
    c.node('batch_norm', 'aten.batch_norm.default', [x, w, N(), m, v, B(False), F(0.1), F(1e-5), B(False)],
           out=T([2, 3]))
    c.output('batch_norm')


@case(expect=["'instance_norm'"])
def instance_norm_rank1(c):
    """instance_norm of a rank-1 tensor"""
    unary_graph(c, 'aten.instance_norm.default', [4], 'f32', [N(), N(), N(), N(), B(True), F(0.1), F(1e-5),
                                                               B(False)], None)


def sdpa(c, q, k, v, mask=None, kwargs=None):
    qv, kv, vv = c.input('q', q), c.input('k', k), c.input('v', v)
    args = [qv, kv, vv]
    if mask is not None:
        args.append(c.input('mask', mask))
    c.node('sdpa', 'aten.scaled_dot_product_attention.default', args, out=None, kwargs=kwargs)
    c.output('sdpa')


@case(expect=["'sdpa'"])
def sdpa_gqa_heads_not_divisible(c):
    """attention with 3 query heads over 2 key heads (torch refuses)"""
    sdpa(c, [1, 3, 2, 4], [1, 2, 2, 4], [1, 2, 2, 4], kwargs={'enable_gqa': B(True)})


@case(expect=["'sdpa'"])
def sdpa_head_dim_mismatch(c):
    """attention with query head dim 4 and key head dim 3"""
    sdpa(c, [1, 1, 2, 4], [1, 1, 2, 3], [1, 1, 2, 4])


@case(expect=["'sdpa'"])
def sdpa_kv_length_mismatch(c):
    """attention with 2 keys and 3 values"""
    sdpa(c, [1, 1, 2, 4], [1, 1, 2, 4], [1, 1, 3, 4])


@case(expect=["'sdpa'"])
def sdpa_mask_wrong_shape(c):
    """attention with a [5, 7] additive mask for 2 queries x 2 keys"""
    sdpa(c, [1, 1, 2, 4], [1, 1, 2, 4], [1, 1, 2, 4], mask=[5, 7])


@case(expect=["'sdpa'"])
def sdpa_batch_mismatch(c):
    """attention with query batch 2 and key batch 3"""
    sdpa(c, [2, 1, 2, 4], [3, 1, 2, 4], [3, 1, 2, 4])


@case(expect=["'cdist'"])
def cdist_p_negative(c):
    """cdist p=-1: torch refuses (p must be >= 0)"""
    a = c.input('a', [2, 3])
    b = c.input('b', [2, 3])
    c.node('cdist', 'aten.cdist.default', [a, b, F(-1.0)])
    c.output('cdist')


@case(expect=["'cdist'"])
def cdist_p_nan(c):
    """cdist p=nan: torch refuses"""
    a = c.input('a', [2, 3])
    b = c.input('b', [2, 3])
    c.node('cdist', 'aten.cdist.default', [a, b, F(NAN)])
    c.output('cdist')


@case(expect=["'cdist'"])
def cdist_feature_mismatch(c):
    """cdist of [2, 3] and [2, 4]"""
    a = c.input('a', [2, 3])
    b = c.input('b', [2, 4])
    c.node('cdist', 'aten.cdist.default', [a, b, F(2.0)])
    c.output('cdist')


@case(expect=["'linear'"])
def linear_weight_wrong_shape(c):
    """linear with a [4, 5] weight on [2, 3] inputs"""
    x = c.input('x', [2, 3])
    w = c.weight('p_w', 'fc.weight', [4, 5])
    c.node('linear', 'aten.linear.default', [x, w])
    c.output('linear')


@case(expect=["'mm'"])
def mm_inner_mismatch(c):
    """mm of [2, 3] and [4, 2]"""
    a = c.input('a', [2, 3])
    b = c.input('b', [4, 2])
    c.node('mm', 'aten.mm.default', [a, b])
    c.output('mm')


# ---- interpolation

def up_default(c, op, scales, out_data=None, x=(1, 2, 3, 4), extra=()):
    xv = c.input('x', [1, 1, 2, 2], 'f32', list(x))
    name = op.split('.')[1]
    c.node(name, op, [xv, Ls(4, 4)] + list(extra) + [F(s) for s in scales], out=T([1, 1, 4, 4]))
    c.output(name, [1, 1, 4, 4], 'f32', out_data)


NEAREST_X2 = [1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4]


def bilinear_x2():
    def src(d):
        s = (d + 0.5) * 0.5 - 0.5
        return max(s, 0.0)
    x = [[1, 2], [3, 4]]
    out = []
    for i in range(4):
        for j in range(4):
            si, sj = src(i), src(j)
            i0, j0 = int(si), int(sj)
            i1, j1 = min(i0 + 1, 1), min(j0 + 1, 1)
            li, lj = si - i0, sj - j0
            out.append((1 - li) * ((1 - lj) * x[i0][j0] + lj * x[i0][j1]) +
                       li * ((1 - lj) * x[i1][j0] + lj * x[i1][j1]))
    return out


@case(rc=(0, 2), expect=["'upsample_nearest2d'"])
def upsample_scale_nan(c):
    """upsample_nearest2d(output_size=[4,4], scales=nan): torch ignores a non-positive scale"""
    up_default(c, 'aten.upsample_nearest2d.default', [NAN, NAN], NEAREST_X2)


@case(rc=(0, 2), expect=["'upsample_nearest2d'"])
def upsample_scale_negative(c):
    """upsample_nearest2d scales -1 (negative source indices if used)"""
    up_default(c, 'aten.upsample_nearest2d.default', [-1.0, -1.0], NEAREST_X2)


@case(rc=(0, 2), expect=["'upsample_nearest2d'"])
def upsample_scale_zero(c):
    """upsample_nearest2d scales 0 (1/0 if used)"""
    up_default(c, 'aten.upsample_nearest2d.default', [0.0, 0.0], NEAREST_X2)


@case(rc=(0, 2), expect=["'upsample_nearest2d'"])
def upsample_scale_1e300(c):
    """upsample_nearest2d scales 1e300: every output reads x[0, 0]"""
    up_default(c, 'aten.upsample_nearest2d.default', [1e300, 1e300], [1] * 16)


@case(rc=(0, 2), expect=["'upsample_nearest2d'"])
def upsample_scale_inf(c):
    """upsample_nearest2d scales inf: every output reads x[0, 0]"""
    up_default(c, 'aten.upsample_nearest2d.default', [INF, INF], [1] * 16)


@case(rc=(0, 2), expect=["'upsample_nearest2d'"])
def upsample_scale_1e_300(c):
    """upsample_nearest2d scales 1e-300: dst * 1e300 does not fit int64 (UB cast, OOB read); clamped it is x[1]"""
    out = []
    for i in range(4):
        for j in range(4):
            out.append([[1, 2], [3, 4]][min(i, 1)][min(j, 1)])
    up_default(c, 'aten.upsample_nearest2d.default', [1e-300, 1e-300], out)


@case(rc=(0, 2), expect=["'upsample_bilinear2d'"])
def upsample_bilinear_scale_nan(c):
    """upsample_bilinear2d(align_corners=False, scales=nan): torch ignores a non-positive scale"""
    up_default(c, 'aten.upsample_bilinear2d.default', [NAN, NAN], bilinear_x2(), extra=[B(False)])


@case(rc=(0, 2), expect=["'upsample_bilinear2d'"])
def upsample_bilinear_scale_neg_huge(c):
    """upsample_bilinear2d scales -1e-300 (huge negative source coordinates if used)"""
    up_default(c, 'aten.upsample_bilinear2d.default', [-1e-300, -1e-300], bilinear_x2(), extra=[B(False)])


@case(rc=(0, 2), expect=["'upsample_bicubic2d'"], cmd='run {dir} --output-dir {dir}/out')
def upsample_bicubic_scale_tiny(c):
    """upsample_bicubic2d scales 1e-300 (source coordinates far out of range): no UB or OOB read"""
    up_default(c, 'aten.upsample_bicubic2d.default', [1e-300, 1e-300], None, extra=[B(False)])


@case(rc=(0, 2), expect=["'_upsample_bilinear2d_aa'"], cmd='run {dir} --output-dir {dir}/out')
def upsample_aa_scale_tiny(c):
    """_upsample_bilinear2d_aa scales 1e-300 (the antialias support grows huge): no UB, no hang"""
    up_default(c, 'aten._upsample_bilinear2d_aa.default', [1e-300, 1e-300], None, extra=[B(False)])


@case(rc=(0, 2), expect=["'upsample_nearest2d'"])
def upsample_vec_scale_nan(c):
    """upsample_nearest2d.vec(scale_factors=[nan, nan]) recorded as [1,1,4,4]"""
    xv = c.input('x', [1, 1, 2, 2], 'f32', [1, 2, 3, 4])
    c.node('upsample_nearest2d', 'aten.upsample_nearest2d.vec', [xv, N(), L(F(NAN), F(NAN))],
           out=T([1, 1, 4, 4]))
    c.output('upsample_nearest2d', [1, 1, 4, 4], 'f32', NEAREST_X2)


@case(expect=["'upsample_nearest2d'"])
def upsample_output_huge(c):
    """upsample_nearest2d recorded as [1, 1, 2^24, 2^24] (1 PiB)"""
    xv = c.input('x', [1, 1, 2, 2])
    c.node('upsample_nearest2d', 'aten.upsample_nearest2d.vec', [xv, Ls(1 << 24, 1 << 24), N()],
           out=T([1, 1, 1 << 24, 1 << 24]))
    c.output('upsample_nearest2d')


# ---- parity: the float64 arbiter must not pass a wrong output (issue item 3)

def parity_case(c, ref, ref64, got=(1, 2, 3, 4)):
    """x -> relu: rlx computes `got`; out::0 is `ref` (torch f32), out64::0 is `ref64`"""
    c.input('x', [4], 'f32', list(got))
    c.node('relu', 'aten.relu.default', [R('x')], out=T([4]))
    c.output('relu', [4], 'f32', list(ref))
    c.ref['out64::0'] = ('f64', [4], pack('f64', [4], list(ref64)))


@case(rc=1, expect=["parity: FAIL"])
def parity_out64_all_nan(c):
    """out::0 wrong, out64::0 all NaN: the arbiter must not pass it"""
    parity_case(c, [1, 2, 3, 400], [NAN] * 4)


@case(rc=1, expect=["parity: FAIL"])
def parity_out64_nan_hides_error(c):
    """out::0 wrong at one position, out64::0 right except NaN there: the arbiter must not pass it"""
    parity_case(c, [1, 2, 3, 400], [1, 2, 3, NAN])


@case(rc=1, expect=["parity: FAIL"])
def parity_out64_inf(c):
    """out::0 wrong, out64::0 all +inf"""
    parity_case(c, [1, 2, 3, 400], [INF] * 4)


@case(rc=1, expect=["parity: FAIL"])
def parity_out64_huge_value(c):
    """out::0 wrong, one out64::0 value 1e300 (torch and float64 then disagree so much any error passes)"""
    parity_case(c, [100, 2, 3, 400], [1, 2, 3, 1e300])


@case(rc=1, expect=["parity: FAIL"])
def parity_out64_denormal_scale(c):
    """out::0 wrong everywhere, out64::0 = 0: the float64 reference itself disagrees with torch"""
    parity_case(c, [5, 6, 7, 8], [0, 0, 0, 0])


@case(rc=1, expect=["parity: FAIL"])
def parity_nan_in_rlx_output(c):
    """rlx computes NaN where torch has a finite value (x holds NaN; out::0 says 0)"""
    parity_case(c, [1, 2, 3, 0], [1, 2, 3, 0], got=(1, 2, 3, NAN))


@case(rc=1, expect=["parity: FAIL"])
def parity_out64_wrong_shape(c):
    """out::0 wrong, out64::0 of another shape: no arbitration"""
    c.input('x', [4], 'f32', [1, 2, 3, 4])
    c.node('relu', 'aten.relu.default', [R('x')], out=T([4]))
    c.output('relu', [4], 'f32', [1, 2, 3, 400])
    c.ref['out64::0'] = ('f64', [2, 2], pack('f64', [2, 2], [1, 2, 3, 4]))


@case(rc=(1, 2), expect=["out::0||FAIL"])
def parity_reference_wrong_dtype(c):
    """out::0 recorded as int64 for an f32 output"""
    c.input('x', [4], 'f32', [1, 2, 3, 4])
    c.node('relu', 'aten.relu.default', [R('x')], out=T([4]))
    c.output('relu', [4])
    c.ref['out::0'] = ('i64', [4], pack('i64', [4], [1, 2, 3, 4]))


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith('-'):
        # one argument, the output directory (an option such as --help is not a directory name)
        print(__doc__.strip(), file=sys.stderr)
        return 0 if len(sys.argv) == 2 and sys.argv[1] in ('-h', '--help') else 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    names = set()
    lines = []
    for name, rc, expect, cmd, fn in CASES:
        assert name not in names, name
        names.add(name)
        rule = ' '.join((fn.__doc__ or '').split())
        c = Case(name)
        fn(c)
        c.write(os.path.join(out, name))
        for field in (rule, cmd) + expect:
            assert '\t' not in field and '\n' not in field, name
        lines.append('\t'.join([name, ','.join(str(r) for r in rc), rule, cmd] + list(expect)))
    with open(os.path.join(out, 'cases.tsv'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
