#!/usr/bin/env python3
"""kivi_anchor.py: the project's quantised KV cache against KIVI's own quantiser.

KIVI's reference code (github.com/jy-yuan/KIVI, quant/new_pack.py, commit 876b4d2) quantises
  keys   with quant_and_pack_kcache: (B, heads, T, D) viewed as groups of group_size tokens; per
         group and channel mn = min, scale = (max - mn) / (2^bits - 1);
  values with quant_and_pack_vcache: per token, groups of group_size channels, the same rule;
both as code = ((x - mn) / scale).clamp(0, 2^bits - 1).round(), and reads them back with
unpack_and_dequant_kcache / _vcache as code.to(float16) * scale + mn. That code needs triton
(a GPU) to import, so this script replays those steps in plain PyTorch, step for step, on the
keys and values of the project's model (layer 0 of data/model.bin reading a story, written by
`h2o_model_parity kv-dump`), and compares them with what the C++ cache reads back at 8, 4 and 2
bits. Where the two differ by design:
  - the C++ value groups are min(group, head_dim) channels (KIVI asserts head_dim % group == 0;
    with head_dim 16 and group 32 that fails, so the replay uses the same min);
  - tokens of the newest, unfilled group stay float32 in the C++ cache (KIVI's residual keeps up
    to R tokens in full precision too, and quantises values one token at a time as they leave
    it; the C++ cache quantises values with their key group): they are compared with the
    float32 numbers;
  - codes are packed per row of D channels, low bits first (KIVI packs keys along tokens into
    int32): the packing does not change a number, so only the numbers are compared;
  - a group of equal numbers (scale 0): KIVI divides by 0 (NaN); the C++ cache reads back the
    number itself. Such groups are counted and left out.
Passes when every number agrees bit for bit (the same float32 operations in the same order).
Without PyTorch: prints SKIPPED and exits 0.

  python3 tests/kivi_anchor.py --dump kv.bin
"""
import argparse
import struct
import sys


def kivi_round_trip(data, dim, bits, torch):
    """KIVI's quantise (min, max, scale, subtract, divide, clamp, round) over dimension `dim` of
    a grouped view, then its dequantise (codes as float16, times scale, plus min). Returns the
    numbers read back and where a group's scale is 0 (KIVI's division by 0)."""
    max_int = 2 ** bits - 1
    mn = torch.min(data, dim=dim, keepdim=True)[0]
    mx = torch.max(data, dim=dim, keepdim=True)[0]
    scale = (mx - mn) / max_int
    codes = ((data - mn) / scale).clamp(0, max_int).round()
    return codes.to(torch.float16) * scale + mn, (scale == 0).expand_as(data)


def kivi_keys(k, group, bits, torch):
    """k (heads, T, D), T a multiple of group: quant_and_pack_kcache's groups of tokens."""
    heads, T, D = k.shape
    back, flat = kivi_round_trip(k.reshape(1, heads, T // group, group, D), -2, bits, torch)
    return back.reshape(heads, T, D), flat.reshape(heads, T, D)


def kivi_values(v, group, bits, torch):
    """v (heads, T, D), D a multiple of group: quant_and_pack_vcache's groups of channels."""
    heads, T, D = v.shape
    back, flat = kivi_round_trip(v.reshape(1, heads, T, D // group, group), -1, bits, torch)
    return back.reshape(heads, T, D), flat.reshape(heads, T, D)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dump", required=True, help="file written by h2o_model_parity kv-dump")
    args = parser.parse_args()
    try:
        with open(args.dump, "rb") as f:
            blob = f.read()
    except OSError as e:
        sys.exit(f"cannot read dump file '{args.dump}': {e.strerror}")
    try:
        import torch
    except ImportError:
        print("SKIPPED: PyTorch (python3-torch) is not installed")
        return 0
    T, G, D, group = struct.unpack("<4i", blob[:16])
    size = T * G * D
    if len(blob) != 16 + 8 * size * 4:
        sys.exit(f"'{args.dump}' holds {len(blob)} bytes, not a kv-dump of {T} x {G} x {D}")
    arrays = torch.frombuffer(bytearray(blob[16:]), dtype=torch.float32).reshape(8, T, G, D)
    heads = [a.permute(1, 0, 2).contiguous() for a in arrays]  # (G, T, D) each
    raw_k, raw_v = heads[0], heads[1]
    value_group = min(group, D) if D % min(group, D) == 0 else D
    quantised = ((T - 1) // group) * group  # the newest group is still open (float32)
    print(f"layer 0 of the model: {T} tokens, {G} KV heads, head_dim {D}; key groups of "
          f"{group} tokens, value groups of {value_group} channels; {quantised} tokens "
          "quantised, the rest float32")
    ok = True
    for i, bits in enumerate((8, 4, 2)):
        cpp_k, cpp_v = heads[2 + 2 * i], heads[3 + 2 * i]
        for name, raw, cpp, replay in (("keys", raw_k, cpp_k, kivi_keys),
                                       ("values", raw_v, cpp_v, kivi_values)):
            theirs, flat = replay(raw[:, :quantised], group if name == "keys" else value_group,
                                  bits, torch)
            ours = cpp[:, :quantised]
            same = (ours == theirs) | flat
            residual_exact = bool(torch.equal(cpp[:, quantised:], raw[:, quantised:]))
            worst = float((ours - theirs)[~flat].abs().max()) if (~flat).any() else 0.0
            step_error = float((ours - raw[:, :quantised]).abs().max())
            print(f"  {bits}-bit {name:6}: {int(same.sum())} of {same.numel()} numbers equal to "
                  f"KIVI's (max |C++ - KIVI| {worst:.3g}; {int(flat.sum())} in flat groups); "
                  f"residual {'exact' if residual_exact else 'DIFFERS'}; "
                  f"max |error| {step_error:.3g}")
            ok = ok and bool(same.all()) and residual_exact
    print("agrees with KIVI bit for bit" if ok else "MISMATCH with KIVI's quantiser")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
