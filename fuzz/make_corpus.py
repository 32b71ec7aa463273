#!/usr/bin/env python3
"""Writes the seed corpus of fuzz/fuzz_import.cc into fuzz/corpus/import/.

Each seed is a byte string that the harness's FuzzedDataProvider reads as one DLPack descriptor. The provider
takes integral values from the END of the input and bytes from the front; the harness only consumes integrals, so
a seed is written back to front: `Seed` collects the values in consumption order and `Seed.bytes()` reverses them.
Ranged values are encoded as offsets from the range minimum in the fewest bytes the range needs (FuzzedDataProvider's
rule).
The values the harness reads after the descriptor (ImportOptions::read_only, the target) are left out: an input
that ends reads them as 0 (read-write, anywhere). The directory also holds finding-*: inputs a campaign found, kept
as they were (docs/reliability.md); this script leaves them alone.
Run: python3 fuzz/make_corpus.py   (deterministic; rewrites the files)
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "import")


class Seed:
    def __init__(self):
        self.tail = []  # bytes in consumption order (each value's bytes most significant first)

    def ranged(self, lo, hi, value):
        span = hi - lo
        nbytes = (span.bit_length() + 7) // 8
        off = value - lo
        assert 0 <= off <= span
        self.tail += [(off >> (8 * (nbytes - 1 - i))) & 0xFF for i in range(nbytes)]
        return self

    def boolean(self, b):
        return self.ranged(0, 255, 1 if b else 0)  # ConsumeBool: 1 & ConsumeIntegral<uint8_t>

    def bytes(self):
        return bytes(reversed(self.tail))


def seed(*, versioned=True, ndim=2, shape=(2, 3), strides=None, compact_strides=True, dtype_index=0,
         device_cpu=True, byte_offset=0, data="buffer", data_off=0, read_only=False, copied=False,
         minor=3, uint8_as_bool=False, big_dims=False):
    s = Seed()
    s.boolean(versioned)
    s.ranged(0, 7, 1).ranged(0, 4, ndim)                   # ndim: small branch
    if ndim > 0:
        s.ranged(0, 31, 1)                                 # shape not NULL
    s.ranged(0, 3, 1 if strides is not False else 0)       # strides not NULL (0 -> NULL)
    for d in shape:                                        # pick_extent: small branch (selector 4)
        if big_dims:
            s.ranged(0, 15, 3).ranged(16, 62, d)
        else:
            s.ranged(0, 15, 4).ranged(0, 6, d)
    for st in (strides or [1] * ndim):                     # pick_stride: small branch (selector 3)
        s.ranged(0, 15, 3).ranged(-8, 48, st)
    if strides is not False:
        s.boolean(compact_strides)
    s.ranged(0, 7, 1).ranged(0, 17, dtype_index)           # a valid dtype from the harness's table
    s.ranged(0, 3, 1 if device_cpu else 0)
    if not device_cpu:
        s.ranged(0, 15, 1).ranged(0, 3, 1)                 # kDLCUDA:0
    s.ranged(0, 7, 1).ranged(0, 64, byte_offset)
    if data == "null":
        s.ranged(0, 9, 0)
    else:
        s.ranged(0, 9, 2).ranged(0, 4096, data_off)
    s.boolean(read_only).boolean(copied)
    s.ranged(0, 7, 1).ranged(0, 15, 1)                     # no padded flag, no random flags
    s.ranged(0, 15, 1).ranged(0, 3, minor)
    s.boolean(uint8_as_bool)
    return s.bytes()


SEEDS = {
    "f32_2x3_compact": seed(),
    "f32_2x3_versioned_readonly": seed(read_only=True, copied=True),
    "f32_2x3_legacy": seed(versioned=False),
    "f32_3x2_transposed": seed(shape=(3, 2), strides=[1, 3], compact_strides=False),
    "i8_negative_strides": seed(dtype_index=3, shape=(4, 2), strides=[-2, -1], compact_strides=False, data_off=64),
    "f64_scalar": seed(ndim=0, shape=(), strides=False, dtype_index=2),
    "f32_empty_null_data": seed(shape=(0, 5), data="null"),
    "f32_misaligned": seed(byte_offset=1),
    "int4_packed": seed(dtype_index=13, shape=(3, 3)),
    "u8_as_bool": seed(dtype_index=7, uint8_as_bool=True, strides=False),
    "cuda_device": seed(device_cpu=False),
    "huge_dims": seed(shape=(40, 40), big_dims=True),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(SEEDS)} seeds to {OUT}")


if __name__ == "__main__":
    main()
